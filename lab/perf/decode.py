"""Constrained decoding at three vocabularies (forgeplan vs llguidance vs xgrammar) and on the tiny model.

`mask_per_step` (see lab.perf._decode_masks for exactly what each figure times): per-task setup
and per-step cost (advance + allowed set + applying it to a logits row) on the same task grammars and
token sequences for all three. Vocabularies: 32k (SentencePiece-style), 65k and 150k (byte-level BPE),
trained here on the installed Python sources once and kept in --cache (no downloads), or the 65k from
--vocab-65k. `tiny_model_decoding`: milliseconds per generated token of the tiny model, unconstrained
vs grammar vs legal, and the overhead in percent. Peers that are not installed are reported as such.
Every figure is a median: over steps or tasks within a run, then over --mask-runs / --runs runs.
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
    p.add_argument("--new-tokens", type=int, default=512, help="max new tokens in the decoding timings")
    p.add_argument("--vocab-65k", type=Path, help="anthropic-0.34.2 wheel or a tokenizer.json (65k byte-level BPE)")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "forgeplan" / "perf",
                   help="where locally trained tokenizers and the tiny model are kept")
    p.add_argument("--corpus-mb", type=float, default=60.0, help="text for training the tokenizers")
    p.add_argument("--skip-decode", action="store_true", help="only the mask comparison")
    p.add_argument("--skip-masks", action="store_true", help="only the tiny-model decoding")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads for the tiny-model decoding (on a shared machine one is steadiest)")
    p.add_argument("--mask-runs", type=int, default=3, help="repetitions of the mask comparison (median)")
    p.add_argument("--vocabs", nargs="+", default=["32k", "65k", "150k"], metavar="SIZE",
                   help="vocabularies to compare, as NNk (32k is SentencePiece-style, others byte-level)")


# --------------------------------------------------------------------------- inputs

def _tasks(n: int, assemblies=None):
    from forgeplan.io.catalog import load_assembly
    from forgeplan.semantics.faults import FaultSpec, candidates, make_task
    from forgeplan.library import BUILTIN
    from forgeplan.planners.reference import simple_reference
    from forgeplan.model.state import Tolerances
    from forgeplan.semantics.engine import World

    kinds = ("wrong_part", "interference_lock", "missing_part", "misplacement")
    out = []
    for k, aid in enumerate(assemblies or sorted(BUILTIN)):
        asm = load_assembly(aid)
        world = World(asm, Tolerances())
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

    from forgeplan.llm.tiny import _sentencepiece_bpe

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

    from forgeplan.llm.tiny import CHAT_TEMPLATE

    args.cache.mkdir(parents=True, exist_ok=True)
    out: dict = {}
    texts = None
    for name in args.vocabs:
        if not (name.endswith("k") and name[:-1].isdigit() and int(name[:-1]) >= 1):
            from forgeplan.model.errors import InputError

            raise InputError(f"must be sizes like 32k, got {name!r}", field="--vocabs")
        size = 65536 if name == "65k" else 1000 * int(name[:-1])
        kind = "sentencepiece" if name == "32k" else "byte-level"
        if name == "65k" and args.vocab_65k is not None:
            continue
        path = args.cache / f"tokenizer-{name}.json"
        if not path.is_file():
            texts = texts or _corpus(args.corpus_mb)
            _train(path, size, kind, texts)
        out[name] = PreTrainedTokenizerFast(tokenizer_file=str(path), eos_token="<|endoftext|>")
    if args.vocab_65k is not None and "65k" in args.vocabs:
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


# --------------------------------------------------------------------------- decoding overhead

class _Clock:
    """A logits processor that only notes when it is called: the gaps are whole decoding steps."""

    def __init__(self):
        self.times: list[float] = []

    def __call__(self, input_ids, scores):
        self.times.append(time.perf_counter())
        return scores

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.times, self.times[1:])]


def _decode(args, tasks) -> dict:
    """Wall time of one decoding step of the tiny model (forward pass, masks, token choice: the gap between
    two calls of a last logits processor), the three modes interleaved task by task so that a change in
    machine load falls on all of them alike, each mode compared with the unconstrained steps at the same
    positions (a step's cost grows with the sequence). The first decoding of a task builds the tables of
    the states it visits: `first_run_*` is that run alone, `step_ms` and `overhead_pct` the later runs,
    which find them built (as later tasks of an assembly find its shared states)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from forgeplan.llm.infer import generate
    from forgeplan.llm.tiny import make_tiny
    from forgeplan.llm.vocab import vocab_from_tokenizer

    torch.set_num_threads(args.threads)
    path = args.cache / "tiny-model"
    if not (path / "config.json").is_file():
        make_tiny(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    tok = AutoTokenizer.from_pretrained(path)
    vocab = vocab_from_tokenizer(tok)
    only = [t for t, _ in tasks]
    modes = ("grammar", "legal")
    steps: dict = {m: [] for m in (*modes, "none")}
    base: dict = {m: [] for m in modes}  # unconstrained steps at the same positions as each mode's
    first: dict = {m: [] for m in (*modes, "none")}
    first_base: dict = {m: [] for m in modes}
    for mode in (*modes, "none"):
        generate(model, tok, [only[0]], mode, max_new_tokens=4, vocab=vocab)  # imports and first allocations
    for run in range(args.runs):
        for task in only:
            gaps: dict[str, list] = {}
            for mode in (*modes, "none"):
                clock = _Clock()
                length = args.new_tokens if mode != "none" else max(len(gaps[m]) for m in modes) + 1
                generate(model, tok, [task], mode, max_new_tokens=length, vocab=vocab, after=[clock])
                gaps[mode] = clock.gaps()
            for mode, g in gaps.items():
                same = gaps["none"][: len(g)]
                (first if run == 0 else steps)[mode] += g
                if mode in modes:
                    (first_base if run == 0 else base)[mode] += same
    out = {"model_parameters": sum(p.numel() for p in model.parameters()), "tokenizer_size": len(tok),
           "torch_threads": torch.get_num_threads(), "new_tokens": args.new_tokens,
           "none": {"step_ms": round(1e3 * statistics.median(steps["none"]), 3), "steps": len(steps["none"])}}
    if args.runs < 2:
        from forgeplan.model.errors import InputError

        raise InputError("needs at least 2 (the first run builds the tables)", field="--runs")
    med = statistics.median
    for mode in modes:
        out[mode] = {"step_ms": round(1e3 * med(steps[mode]), 3), "steps": len(steps[mode]),
                     "unconstrained_same_positions_ms": round(1e3 * med(base[mode]), 3),
                     "overhead_pct": round(100 * (med(steps[mode]) / med(base[mode]) - 1), 1),
                     "first_run_step_ms": round(1e3 * med(first[mode]), 3),
                     "first_run_overhead_pct": round(100 * (med(first[mode]) / med(first_base[mode]) - 1), 1)}
    return out


def run(args) -> dict:
    from ._decode_masks import compare

    tasks = _tasks(args.tasks, args.assemblies)
    result: dict = {"benchmark": "decode", "tasks": [t.sample_id for t, _ in tasks], **machine()}
    if not args.skip_decode:
        import torch

        threads = torch.get_num_threads()
        try:
            result["tiny_model_decoding"] = _decode(args, tasks)
        finally:
            torch.set_num_threads(threads)
    masks = {}
    for name, tok in (_tokenizers(args) if not args.skip_masks else {}).items():
        runs = [compare(tok, tasks) for _ in range(args.mask_runs)]
        masks[name] = _median_runs(runs)
    if masks:
        result["mask_per_step"] = masks
    return result


def _median_runs(runs: list[dict]) -> dict:
    """Field by field median of several result dicts of the same shape (strings from the first)."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: _median_runs([r[k] for r in runs]) for k in first}
    if isinstance(first, (int, float)) and not isinstance(first, bool) and all(isinstance(r, (int, float)) for r in runs):
        return round(statistics.median(runs), 3)
    return first

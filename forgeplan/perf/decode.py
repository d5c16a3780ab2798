"""Constrained decoding at three vocabularies (forgeplan vs llguidance vs xgrammar) and on the tiny model.

`mask_per_step` (see forgeplan.perf._decode_masks for exactly what each figure times): per-task setup
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
    p.add_argument("--new-tokens", type=int, default=160, help="max new tokens in the decoding timings")
    p.add_argument("--vocab-65k", type=Path, help="anthropic-0.34.2 wheel or a tokenizer.json (65k byte-level BPE)")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "forgeplan" / "perf",
                   help="where locally trained tokenizers and the tiny model are kept")
    p.add_argument("--corpus-mb", type=float, default=60.0, help="text for training the tokenizers")
    p.add_argument("--skip-decode", action="store_true", help="only the mask comparison")
    p.add_argument("--skip-masks", action="store_true", help="only the tiny-model decoding")
    p.add_argument("--mask-runs", type=int, default=3, help="repetitions of the mask comparison (median)")
    p.add_argument("--vocabs", nargs="+", default=["32k", "65k", "150k"], metavar="SIZE",
                   help="vocabularies to compare, as NNk (32k is SentencePiece-style, others byte-level)")


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
    for name in args.vocabs:
        if not (name.endswith("k") and name[:-1].isdigit() and int(name[:-1]) >= 1):
            from ..model.errors import InputError

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

def _decode(args, tasks) -> dict:
    """ms per generated token (after the first) of the tiny model, the three modes interleaved task by task
    so that a change in machine load falls on all of them alike."""
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
    modes = ("none", "grammar", "legal")
    out = {"model_parameters": sum(p.numel() for p in model.parameters()), "tokenizer_size": len(tok),
           "torch_threads": torch.get_num_threads(), "new_tokens": args.new_tokens}
    per_token: dict = {m: [] for m in modes}
    proc: dict = {m: [] for m in modes}
    for mode in modes:
        generate(model, tok, only[:1], mode, max_new_tokens=4, vocab=vocab)  # imports and first allocations
    for _ in range(args.runs):
        for task in only:
            for mode in modes:
                t0 = time.perf_counter()
                generate(model, tok, [task], mode, max_new_tokens=1, vocab=vocab)
                prefill = time.perf_counter() - t0
                t0 = time.perf_counter()
                row = generate(model, tok, [task], mode, max_new_tokens=args.new_tokens, vocab=vocab)[0]
                total = time.perf_counter() - t0
                if row["new_tokens"] > 1:
                    per_token[mode].append((total - prefill) / (row["new_tokens"] - 1))
                if "mask_ms_per_step" in row:
                    proc[mode].append(row["mask_ms_per_step"] / 1000)
    for mode in modes:
        out[mode] = {"ms_per_token": round(1000 * statistics.median(per_token[mode]), 3) if per_token[mode] else None,
                     "processor_ms_per_step": round(1000 * statistics.median(proc[mode]), 4) if proc[mode] else None}
    base = out["none"]["ms_per_token"]
    for mode in ("grammar", "legal"):
        if base and out[mode]["ms_per_token"]:
            out[mode]["overhead_pct_vs_unconstrained"] = round(100 * (out[mode]["ms_per_token"] / base - 1), 1)
            out[mode]["processor_share_of_step_pct"] = round(100 * out[mode]["processor_ms_per_step"] / base, 1)
    return out


def run(args) -> dict:
    from ._decode_masks import compare

    tasks = _tasks(args.tasks, args.assemblies)
    result: dict = {"benchmark": "decode", "tasks": [t.sample_id for t, _ in tasks], **machine()}
    if not args.skip_decode:
        result["tiny_model_decoding"] = _decode(args, tasks)
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

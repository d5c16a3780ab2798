"""The CPU reference model: the whole chain on a model small enough to train on a laptop CPU.

benchmark -> in-distribution split (`iid.iid_split`) -> tokenizer + tiny random model (`tiny.make_tiny`,
compact prompts, part ids as single tokens) -> SFT (`train.train`, models/reference-cpu.toml: full
fine-tuning) -> legal-mode decoding on the in-distribution test split and on held-out assemblies ->
FORGE metrics beside the no-op baseline's. If this model does not beat no-op in distribution,
something in export, tokenisation, loss masking, training, decoding or evaluation is broken; the
held-out-assembly figure shows how far it generalises. The benchmark leaves out the expert tier (burrs
that need partial moves): legal masks over slides and insertions at offsets cost seconds per task.
(LoRA itself is checked by the tests: resume, merged weights equal to the adapter's logits.)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..bench.store import MANIFEST, build_bench
from ..library import BUILTIN, PARTIAL_MOVES
from ..evaluation.baselines import no_op
from ..evaluation.evaluate import score_split, summarise
from .bench import load_sample, split_ids
from .config import MODELS_DIR, SAVED_NAME, load_config, save_config
from .iid import iid_split

REPORTED = ("Overall-Core", "DGTR", "SSE", "SAPF", "VMRE", "MVE", "HRQ", "NoFault-Compliance")


def score(bench: Path, split: str, predictions: dict[str, str]) -> dict:
    summary = summarise(score_split(bench, predictions, split), split)
    return {k: summary["metrics"][k] for k in REPORTED} | {"samples": summary["samples"],
                                                          "fault_samples": summary["fault_samples"]}


def no_op_predictions(bench: Path, split: str) -> dict[str, str]:
    return {sid: no_op(*load_sample(bench, sid)) for sid in split_ids(bench, split)}


def model_predictions(model, tokenizer, bench: Path, split: str, out: Path, prompt: str) -> dict[str, str]:
    from .infer import run_infer  # noqa: PLC0415

    run_infer(model, tokenizer, bench, split, out, mode="legal", device="cpu", prompt=prompt, max_new_tokens=1024)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {r["sample_id"]: r["raw_output"] for r in rows}


def reference_model(out: Path, *, tasks: int = 1000, seed: int = 42, jobs: int = 2, config: Path | None = None,
                    test_fraction: float = 0.1, heldout: int = 40, max_steps: int | None = None) -> dict:
    """Run the recipe into OUT (bench/, iid/, tiny-model/, adapter/, predictions) and return the figures.

    A finished step's output (OUT/bench, OUT/tiny-model, the adapter in OUT/adapter) is reused."""
    from dataclasses import replace  # noqa: PLC0415

    from .tiny import REFERENCE_SHAPE, make_tiny  # noqa: PLC0415
    from .train import load_for_inference, train  # noqa: PLC0415

    out = Path(out)
    cfg = load_config(config or MODELS_DIR / "reference-cpu.toml")
    if max_steps is not None:
        cfg = replace(cfg, trainer={**cfg.trainer, "max_steps": max_steps})
    if not (out / "bench" / MANIFEST).is_file():   # without the expert tier: legal masks on slides are slow
        build_bench(out / "bench", tasks, seed, jobs, assemblies=[a for a in BUILTIN if a not in PARTIAL_MOVES])
    splits = iid_split(out / "bench", out / "iid", test_fraction, seed, heldout_limit=heldout)
    bench = out / "iid"
    if not (out / "tiny-model" / "config.json").is_file():
        make_tiny(out / "tiny-model", bench=bench, seed=seed, prompt=cfg.run.prompt, **REFERENCE_SHAPE)
    saved = out / "adapter" / SAVED_NAME
    if saved.is_file():
        summary = json.loads(saved.read_text(encoding="utf-8"))["summary"]
    else:
        start = time.process_time()
        summary = train(out / "tiny-model", bench, out / "adapter", cfg)
        summary["cpu_seconds"] = round(time.process_time() - start, 1)
        save_config(cfg, out / "adapter", {"summary": summary})
    model, tokenizer, _ = load_for_inference(out / "tiny-model", out / "adapter", "cpu", "float32")
    figures = {}
    for split, label in (("test", "in_distribution"), ("heldout", "heldout_assemblies")):
        preds = model_predictions(model, tokenizer, bench, split, out / f"predictions_{split}.jsonl", cfg.run.prompt)
        figures[label] = {"model": score(bench, split, preds), "no-op": score(bench, split, no_op_predictions(bench, split))}
    report = {"splits": splits, "training": summary, "figures": figures, "loss_curve": str(out / "adapter" / "loss_curve.png")}
    (out / "reference.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


def table(report: dict) -> str:
    """The figures as a small Markdown table: model and no-op, in distribution and on held-out assemblies."""
    lines = ["| split | predictions | " + " | ".join(REPORTED) + " |", "|" + "---|" * (len(REPORTED) + 2)]
    for label, pair in report["figures"].items():
        for who, m in pair.items():
            cells = ["–" if m[k] is None else f"{m[k]:.2f}" for k in REPORTED]
            lines.append(f"| {label} ({m['samples']}) | {who} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

"""Score a predictions JSONL against a benchmark split."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..task import load_task, read_json
from ..bench.store import load_manifest
from .metrics import breakdown, core_metrics, failure_breakdown
from .samples import SampleScore, score_sample

MAX_PREDICTION_LINE = 2_000_000


def read_predictions(path: Path) -> dict[str, str]:
    """sample_id -> raw output; later lines for the same id are an error (one prediction each)."""
    preds: dict[str, str] = {}
    try:
        fh = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if len(line) > MAX_PREDICTION_LINE:
                raise InputError(f"line is over {MAX_PREDICTION_LINE} characters", file=str(path), field=f"line {n}")
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc.msg}", file=str(path), field=f"line {n}") from None
            if not isinstance(row, dict) or not isinstance(row.get("sample_id"), str) or not isinstance(row.get("raw_output"), str):
                raise InputError('expected {"sample_id": str, "raw_output": str}', file=str(path), field=f"line {n}")
            if row["sample_id"] in preds:
                raise InputError(f"duplicate sample_id {row['sample_id']!r}", file=str(path), field=f"line {n}")
            preds[row["sample_id"]] = row["raw_output"]
    return preds


def score_split(bench: Path, predictions: dict[str, str], split: str = "test", progress=None) -> list[SampleScore]:
    manifest = load_manifest(bench)
    if split not in manifest["splits"]:
        raise InputError(f"no split {split!r} (have {sorted(manifest['splits'])})", field="--split")
    ids = manifest["splits"][split]
    unknown = sorted(set(predictions) - set(manifest["splits"][split]))
    if unknown:
        raise InputError(f"{len(unknown)} predictions are not in split {split!r}, e.g. {unknown[:3]}", field="--predictions")
    out = []
    for sid in ids:
        folder = bench / "tasks" / sid
        out.append(score_sample(load_task(folder), predictions.get(sid), read_json(folder / "reference.json"),
                                read_json(folder / "meta.json"), read_json(folder / "minimal_rework.json")))
        if progress:
            progress(1)
    return out


def summarise(samples: list[SampleScore], split: str) -> dict:
    return {
        "split": split, "samples": len(samples), "fault_samples": sum(s.is_fault for s in samples),
        "metrics": core_metrics(samples),
        "failures": failure_breakdown(samples),
        "per_assembly": breakdown(samples, lambda s: s.assembly_id),
        "per_fault_type": breakdown([s for s in samples if s.is_fault], lambda s: s.stratum),
        "per_difficulty": breakdown(samples, lambda s: s.difficulty),
    }

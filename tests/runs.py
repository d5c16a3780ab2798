"""A small evaluate run directory for the view tests, in the format `evaluate --out DIR` writes
(run.json and samples.jsonl, the row keys in the documented order)."""

from __future__ import annotations

import json
from pathlib import Path

from forgeplan.bench.store import load_sample_task, read_sample_file
from forgeplan.verify import verify


def write_run(bench: Path, predictions: Path, out: Path, split: str = "test") -> Path:
    """Score every prediction with `verify` and write run.json and samples.jsonl into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for line in predictions.read_text(encoding="utf-8").splitlines():
        pred = json.loads(line)
        sid, raw = pred["sample_id"], pred.get("raw_output")
        meta = read_sample_file(bench, sid, "meta.json")
        v = verify(load_sample_task(bench, sid), raw)
        category = None if v.valid and not v.over_disassembly else v.category
        rows.append({"sample_id": sid, "family": "rework", "split": split, "assembly_id": meta["assembly_id"],
                     "assembly_family": meta["family"], "fault_types": list(meta.get("fault_types", [])),
                     "stratum": (meta.get("fault_types") or ["no_fault"])[0], "difficulty": meta["difficulty"],
                     "answered": True, "extracted": False, "verdict": "correct" if category is None else "incorrect",
                     "category": category, "failing_step": v.failing_step, "reason": v.reason,
                     "SSE": None, "DGTR": 100.0 if v.valid else 0.0, "raw_output": raw})
    (out / "run.json").write_text(json.dumps({"bench": str(bench.absolute()), "predictions": str(predictions.absolute()),
                                              "split": split, "options": {}, "counts": {"samples": len(rows),
                                              "answered": len(rows), "extracted": 0}}))
    (out / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


HOSTILE = '</script><img src=x onerror="document.title=\'pwned\'"><!-- \u2028 & <b>bold</b>'


def make_run(d: Path) -> Path:
    """A 20-task benchmark, local-repair predictions (some fail at a step), one of them a hostile raw output
    (HOSTILE before its JSON), scored into d/run."""
    from forgeplan.cli import main

    assert main(["bench", "build", "--out", str(d / "bench"), "--tasks", "20", "--seed", "3", "--quiet",
                 "--assemblies", "bayonet_structure", "luban_lock_3"]) == 0
    assert main(["baseline", "local-repair", "--bench", str(d / "bench"), "--out", str(d / "preds.jsonl")]) == 0
    lines = (d / "preds.jsonl").read_text().splitlines()
    k = next(k for k, line in enumerate(lines) if '"actions": [{' in json.loads(line)["raw_output"])
    hostile = json.loads(lines[k])
    hostile["raw_output"] = HOSTILE + hostile["raw_output"]
    lines[k] = json.dumps(hostile)
    (d / "preds.jsonl").write_text("\n".join(lines) + "\n")
    return write_run(d / "bench", d / "preds.jsonl", d / "run")

"""The main job: benchmark -> Fast Downward cross-check -> baselines -> evaluation -> report.

Every stage reuses the library functions behind the individual commands, so the demo is exactly
what a user would get by running them one by one. Each file is written whole (io.output); summary.md,
written last, marks a complete demo.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from .bench.store import build_bench
from .evaluation.baselines import BASELINES
from .evaluation.evaluate import score_split, summarise
from .evaluation.report import COLUMNS, fmt as _fmt, write_report
from .bench.folder import open_bench
from .io.output import write_text
from .planners.crosscheck import compare_task, summary as crosscheck_summary

REDUCED_TASKS = 400
CROSSCHECK_SAMPLE = 12
# measured times differ from run to run: they go to timings.json so that every other file is byte-identical
TIMING_KEYS = frozenset({"seconds", "own_seconds", "ratio", "median_ratio_checker_over_prover",
                         "median_prover_seconds", "median_checker_seconds"})


@dataclass
class Stage:
    """A progress reporter per stage: `start(name, total)`, `advance()`, `done(message)`."""

    start: object
    advance: object
    done: object


def run_demo(out: Path, *, tasks: int = REDUCED_TASKS, seed: int = 42, jobs: int = 2,
             crosscheck_sample: int = CROSSCHECK_SAMPLE, stage: Stage) -> dict:
    bench = out / "bench"
    stage.start("benchmark", tasks)
    manifest = build_bench(bench, tasks, seed, jobs, progress=lambda n: stage.advance(n))
    opened = open_bench(bench)
    # a build keeps only proven references but those of partial moves, whose proof says what holds
    proofs = [opened.json(r["sample_id"], "reference.json")["proof"] for r in manifest["records"]]
    grounded = sum(not p["optimal"] and bool(p.get("grounded_optimal")) for p in proofs)
    unproved = sum(not p["optimal"] and not p.get("grounded_optimal") for p in proofs)
    exceptions = []
    if grounded:
        exceptions.append(f"{grounded} expert-tier tasks (partial moves: fewest moved parts proved, fewest actions "
                          "proved over the grounded universe only)")
    if unproved:
        exceptions.append(f"{unproved} expert-tier tasks (partial moves: valid plans, not proved minimal)")
    proved = "proven minimal but for " + " and ".join(exceptions) if exceptions else "every reference proven minimal"
    stage.done(f"{tasks} tasks, references verified, {proved}: {bench}")

    test_ids = manifest["splits"]["test"]
    sample = sorted(random.Random(seed).sample(test_ids, min(crosscheck_sample, len(test_ids))))
    stage.start("Fast Downward cross-check", len(sample))
    comparisons = []
    for sid in sample:
        comparisons.append(compare_task(opened.task(sid), time_limit=60.0, path=str(opened.folder(sid))))
        stage.advance(1)
    cross = crosscheck_summary(comparisons)
    checked, timings = split_timings({"summary": cross, "tasks": [c.to_json() for c in comparisons]})
    timings["tasks"] = [{"task_id": c.task_id, **t} for c, t in zip(comparisons, timings.get("tasks", []))]
    write_text(out / "crosscheck.json", json.dumps(checked, indent=1) + "\n")
    write_text(out / "timings.json", json.dumps({"crosscheck": timings}, indent=1) + "\n")
    stage.done(f"{cross['agree']} agree, {cross['disagree']} disagree, {cross['unknown']} unknown; "
               f"median checker/prover time ratio {cross['median_ratio_checker_over_prover']}")

    results = {}
    for name, fn in BASELINES.items():
        stage.start(f"baseline {name}", len(test_ids))
        preds = {}
        for sid in test_ids:
            rework = opened.rework(sid)
            preds[sid] = fn(rework.task, rework.reference)
            stage.advance(1)
        pred_file = out / "predictions" / f"{name}.jsonl"
        write_text(pred_file, "".join(json.dumps({"sample_id": k, "raw_output": v}) + "\n" for k, v in preds.items()))
        s = summarise(score_split(bench, preds, "test"), "test")
        write_report(s, out / "reports" / name, name)
        results[name] = s["metrics"]
        stage.done(f"Overall-Core {_fmt(s['metrics']['Overall-Core'])}, DGTR {_fmt(s['metrics']['DGTR'])}")
    _summary_md(out, manifest, cross, results)
    return {"bench": str(bench), "crosscheck": cross, "metrics": results, "report": str(out / "summary.md")}


def split_timings(obj):
    """(obj without the TIMING_KEYS, the TIMING_KEYS alone in the same nesting); lists keep their positions."""
    if isinstance(obj, dict):
        kept, timed = {}, {}
        for k, v in obj.items():
            if k in TIMING_KEYS:
                timed[k] = v
                continue
            kept[k], sub = split_timings(v)
            if sub not in (None, {}, []) and not (isinstance(sub, list) and not any(sub)):
                timed[k] = sub
        return kept, timed
    if isinstance(obj, list):
        pairs = [split_timings(v) for v in obj]
        return [a for a, _ in pairs], [b for _, b in pairs]
    return obj, None


def _summary_md(out: Path, manifest: dict, cross: dict, results: dict) -> None:
    cols = (*COLUMNS, "NoFault-Compliance", "MPA", "RCA")
    lines = ["# forgeplan demo", "", f"Benchmark: {manifest['tasks']} tasks, seed {manifest['seed']}; composition "
             + ", ".join(f"{k} {v}" for k, v in manifest["composition"].items()) + ".", "",
             f"Fast Downward cross-check on {cross['tasks']} test tasks: {cross['agree']} agree, "
             f"{cross['disagree']} disagree, {cross['unknown']} unknown (details in `crosscheck.json`; solve times "
             "in `timings.json`, the only file that differs between runs).", "",
             "## Baselines on the held-out test split", "",
             "| baseline | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for name, m in results.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(m[c]) for c in cols) + " |")
    lines += ["", "Per-baseline reports (tables per assembly, fault type, difficulty; failure categories; plots): "
              + ", ".join(f"`reports/{n}/report.md`" for n in results), ""]
    write_text(out / "summary.md", "\n".join(lines))   # last: it marks the demo complete

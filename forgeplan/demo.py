"""The main job: benchmark -> Fast Downward cross-check -> baselines -> evaluation -> report.

Every stage reuses the library functions behind the individual commands, so the demo is exactly
what a user would get by running them one by one.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from .bench.store import build_bench
from .crosscheck import compare_task, summary as crosscheck_summary
from .evaluation.baselines import BASELINES
from .evaluation.evaluate import score_split, summarise
from .evaluation.report import COLUMNS, fmt as _fmt, write_report
from .task import load_task, read_json

REDUCED_TASKS = 400
CROSSCHECK_SAMPLE = 12


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
    stage.done(f"{tasks} tasks, references proven minimal and verified: {bench}")

    test_ids = manifest["splits"]["test"]
    sample = sorted(random.Random(seed).sample(test_ids, min(crosscheck_sample, len(test_ids))))
    stage.start("Fast Downward cross-check", len(sample))
    comparisons = []
    for sid in sample:
        comparisons.append(compare_task(load_task(bench / "tasks" / sid), time_limit=60.0, path=str(bench / "tasks" / sid)))
        stage.advance(1)
    cross = crosscheck_summary(comparisons)
    (out / "crosscheck.json").write_text(json.dumps({"summary": cross, "tasks": [c.to_json() for c in comparisons]}, indent=1) + "\n")
    stage.done(f"{cross['agree']} agree, {cross['disagree']} disagree, {cross['unknown']} unknown; "
               f"median FD/clingo time ratio {cross['median_ratio_fd_over_clingo']}")

    results = {}
    for name, fn in BASELINES.items():
        stage.start(f"baseline {name}", len(test_ids))
        preds = {}
        for sid in test_ids:
            folder = bench / "tasks" / sid
            preds[sid] = fn(load_task(folder), read_json(folder / "reference.json"))
            stage.advance(1)
        pred_file = out / "predictions" / f"{name}.jsonl"
        pred_file.parent.mkdir(parents=True, exist_ok=True)
        pred_file.write_text("".join(json.dumps({"sample_id": k, "raw_output": v}) + "\n" for k, v in preds.items()))
        s = summarise(score_split(bench, preds, "test"), "test")
        write_report(s, out / "reports" / name, name)
        results[name] = s["metrics"]
        stage.done(f"Overall-Core {_fmt(s['metrics']['Overall-Core'])}, DGTR {_fmt(s['metrics']['DGTR'])}")
    _summary_md(out, manifest, cross, results)
    return {"bench": str(bench), "crosscheck": cross, "metrics": results, "report": str(out / "summary.md")}


def _summary_md(out: Path, manifest: dict, cross: dict, results: dict) -> None:
    cols = (*COLUMNS, "NoFault-Compliance", "MPA", "RCA")
    lines = ["# forgeplan demo", "", f"Benchmark: {manifest['tasks']} tasks, seed {manifest['seed']}; composition "
             + ", ".join(f"{k} {v}" for k, v in manifest["composition"].items()) + ".", "",
             f"Fast Downward cross-check on {cross['tasks']} test tasks: {cross['agree']} agree, "
             f"{cross['disagree']} disagree, {cross['unknown']} unknown (median time ratio FD/clingo "
             f"{cross['median_ratio_fd_over_clingo']}).", "", "## Baselines on the held-out test split", "",
             "| baseline | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for name, m in results.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(m[c]) for c in cols) + " |")
    lines += ["", "Per-baseline reports (tables per assembly, fault type, difficulty; failure categories; plots): "
              + ", ".join(f"`reports/{n}/report.md`" for n in results), ""]
    (out / "summary.md").write_text("\n".join(lines), encoding="utf-8")

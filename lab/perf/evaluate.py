"""Time to score 1,000 predictions (the oracle's and a greedy baseline's) on a benchmark split."""

from __future__ import annotations

import tempfile
from pathlib import Path

from . import machine, median_of

NAME = "evaluate"


def add_arguments(p) -> None:
    p.add_argument("--bench", type=Path, help="an existing benchmark (default: build one with --tasks)")
    p.add_argument("--tasks", type=int, default=4000, help="size of the benchmark built when --bench is absent")
    p.add_argument("--split", default="test", help="benchmark split to score (train or test)")
    p.add_argument("--runs", type=int, default=5, help="timed runs (the median is reported)")


def run(args) -> dict:
    from forgeplan.bench.folder import open_bench
    from forgeplan.bench.store import build_bench
    from forgeplan.evaluation.baselines import greedy_legal, oracle
    from forgeplan.evaluation.evaluate import score_split, summarise

    with tempfile.TemporaryDirectory() as tmp:
        bench = args.bench or Path(tmp) / "bench"
        if args.bench is None:
            build_bench(bench, args.tasks, 42, jobs=2)
        opened = open_bench(bench)
        ids = opened.split(args.split)
        out = {"benchmark": "evaluate", "split": args.split, "samples": len(ids), "runs": args.runs}
        for name, fn in (("oracle", oracle), ("greedy-legal", greedy_legal)):
            preds = {sid: fn(opened.task(sid), opened.reference(sid, opened.task(sid))) for sid in ids}
            med, times = median_of(lambda: summarise(score_split(bench, preds, args.split), args.split), args.runs)
            out[name] = {"seconds_median": round(med, 3), "seconds_per_1000_median": round(1000 * med / len(ids), 3),
                         "seconds_all": [round(t, 3) for t in times]}
    return {**out, "target_seconds_per_1000": 2.0, **machine()}

"""Wall time and peak memory of a benchmark build (default: the full 4,000-task build, 2 jobs)."""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path

from . import machine

NAME = "bench"


def add_arguments(p) -> None:
    p.add_argument("--tasks", type=int, default=4000, help="benchmark size")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    p.add_argument("--runs", type=int, default=1, help="repetitions (median reported); a full build takes minutes")


def run(args) -> dict:
    import statistics

    from ..bench.store import build_bench

    times, cpus = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            t0, c0 = time.perf_counter(), os.times()
            manifest = build_bench(Path(tmp) / "bench", args.tasks, 42, args.jobs)
            times.append(time.perf_counter() - t0)
            c1 = os.times()
            cpus.append(c1.user - c0.user + c1.system - c0.system + c1.children_user - c0.children_user +
                        c1.children_system - c0.children_system)
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"benchmark": "bench", "tasks": args.tasks, "jobs": args.jobs, "runs": args.runs,
            "wall_seconds_median": round(statistics.median(times), 2), "wall_seconds_all": [round(t, 2) for t in times],
            "cpu_seconds_median": round(statistics.median(cpus), 2), "load_average": [round(x, 2) for x in os.getloadavg()],
            "peak_rss_mib_main": round(peak_self, 1), "peak_rss_mib_worker": round(peak_children, 1),
            "composition": manifest["composition"], "target_wall_seconds": 60, **machine()}

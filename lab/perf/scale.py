"""Growth curves: build time and peak memory against benchmark size, clingo time per task against parts
and blocking depth, and a projection for a million tasks on N workers (JSON, and a PNG with --out)."""

from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from . import machine

NAME = "scale"


def add_arguments(p) -> None:
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000, 64000], help="benchmark sizes built")
    p.add_argument("--jobs", type=int, default=2, help="worker processes of each build (local executor)")
    p.add_argument("--parts", type=int, nargs="+", default=[10, 25, 50, 100, 200], help="synthetic assembly sizes")
    p.add_argument("--depths", type=int, nargs="+", default=[2, 5, 10], help="blocking depths of the synthetic chains")
    p.add_argument("--runs", type=int, default=3, help="solves per synthetic task (median reported)")
    p.add_argument("--workers", type=int, nargs="+", default=[2, 8, 32, 128], help="worker counts of the projection")
    p.add_argument("--out", type=Path, metavar="DIR", help="write scale.json and scale.png here")


def _build(tasks: int, jobs: int, out) -> None:
    """One build in a fresh process, so that its peak memory (and its workers') is its own."""
    from forgeplan.bench.store import build_bench

    tmp = tempfile.mkdtemp(prefix="forgeplan-scale-")
    try:
        t0, c0 = time.perf_counter(), os.times()
        build_bench(Path(tmp) / "bench", tasks, 42, jobs)
        wall, c1 = time.perf_counter() - t0, os.times()
        size = sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cpu = (c1.user - c0.user) + (c1.system - c0.system) + (c1.children_user - c0.children_user) + \
        (c1.children_system - c0.children_system)
    out.put({"tasks": tasks, "jobs": jobs, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
             "cpu_ms_per_task": round(1000 * cpu / tasks, 2), "bytes_per_task": size // tasks,
             "peak_rss_mib_main": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
             "peak_rss_mib_worker": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
             "load_average_after": [round(x, 2) for x in os.getloadavg()]})


def _in_child(target, *args) -> dict:
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, q))
    proc.start()
    row = q.get()
    proc.join()
    return row


def _cell(parts: int, depth: int, runs: int, out) -> None:
    """clingo per task on one synthetic assembly: its fault tasks on one grounding (the first solve of
    each includes the grounding), warm medians over `runs`."""
    from forgeplan.bench.synthetic import chain_task
    from forgeplan.model.errors import InputError
    from forgeplan.planners.asp.grounding import prepare
    from forgeplan.planners.asp.solve import solve_task
    from forgeplan.semantics.assembly_grounding import AssemblyGrounding
    from forgeplan.semantics.diagnosis import MISTAKE_TYPES
    from forgeplan.semantics.grounded import ground

    tasks = []
    for fault in MISTAKE_TYPES:
        try:
            tasks.append(chain_task(parts, depth, fault))
        except InputError:  # a fault type the chain's bottom bar does not admit
            continue
    shared = AssemblyGrounding(tasks[0].world)   # one compiled assembly: its tasks share one clingo grounding
    grounded = [ground(t, shared) for t in tasks]
    t0 = time.perf_counter()
    prepare(grounded)
    grounding_s = time.perf_counter() - t0
    warm, optimal = [], True
    for task in grounded:
        solve_task(task)
        times = []
        for _ in range(runs):
            w = time.perf_counter()
            optimal &= solve_task(task).optimal
            times.append(time.perf_counter() - w)
        warm.append(statistics.median(times))
    out.put({"parts": parts, "depth": depth, "tasks": len(grounded), "grounding_s": round(grounding_s, 4),
             "median_ms_per_task": round(1000 * statistics.median(warm), 2), "max_ms_per_task": round(1000 * max(warm), 2),
             "all_optimal": optimal})


def run(args) -> dict:
    builds = [_in_child(_build, n, args.jobs) for n in args.sizes]
    cells = [_in_child(_cell, p, d, args.runs) for p in args.parts for d in args.depths if d < p]
    per_task = builds[-1]["cpu_ms_per_task"] / 1000
    projection = {"tasks": 1_000_000, "from_build_of": builds[-1]["tasks"], "cpu_s_per_task": round(per_task, 4),
                  "hours_by_workers": {n: round(1_000_000 * per_task / n / 3600, 2) for n in args.workers},
                  "disk_gb": round(1_000_000 * builds[-1]["bytes_per_task"] / 1e9, 1),
                  "assumes": "CPU time per task of the largest build, spread evenly over N workers; the "
                             "per-assembly grounding is in that figure"}
    out = {"benchmark": "scale", "builds": builds, "solve_cells": cells, "projection": projection, **machine(),
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    if args.out:
        from forgeplan.io.guarded import output_folder
        from forgeplan.io.task_files import write_json

        output_folder(args.out)
        write_json(args.out / "scale.json", out)
        _plot(out, args.out / "scale.png")
    return out


def _plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b, c) = plt.subplots(1, 3, figsize=(14, 4))
    sizes = [r["tasks"] for r in data["builds"]]
    a.plot(sizes, [r["wall_s"] for r in data["builds"]], "o-", label="wall (s)")
    a.plot(sizes, [r["cpu_s"] for r in data["builds"]], "s--", label="CPU (s)")
    a.set(xscale="log", yscale="log", xlabel="tasks", ylabel="seconds", title=f"bench build, {data['builds'][0]['jobs']} jobs")
    a.legend()
    a2 = a.twinx()
    a2.plot(sizes, [r["peak_rss_mib_worker"] for r in data["builds"]], "^:", color="gray")
    a2.set_ylabel("peak RSS per worker (MiB)", color="gray")
    for depth in sorted({r["depth"] for r in data["solve_cells"]}):
        rows = [r for r in data["solve_cells"] if r["depth"] == depth]
        b.plot([r["parts"] for r in rows], [r["median_ms_per_task"] for r in rows], "o-", label=f"depth {depth}")
    b.set(xscale="log", xlabel="parts", ylabel="ms per task (warm grounding)", title="clingo per task")
    b.legend()
    hours = data["projection"]["hours_by_workers"]
    c.bar([str(n) for n in hours], list(hours.values()))
    c.set(xlabel="workers", ylabel="hours", yscale="log", title="projection: 1M tasks")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

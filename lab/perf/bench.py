"""CPU time, wall time and peak memory of a benchmark build (default: the full 4,000-task build, 2 jobs),
and the distribution of the CPU seconds each task took in its worker (median, p90, max, the slowest
tasks by name, the assemblies that take the most): what limits the build's wall time.

On a shared machine the wall time measures the other work as much as the build, so the CPU seconds
are the figure to compare; the projection for `jobs` idle cores is the serial part (the parent's CPU
before and after the workers run) plus the rest spread evenly over the cores. It assumes perfect
balance: the last batches' imbalance comes on top.
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from . import machine

NAME = "bench"


def add_arguments(p) -> None:
    p.add_argument("--tasks", type=int, default=4000, help="benchmark size")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    p.add_argument("--runs", type=int, default=1, help="repetitions (medians reported); a full build takes minutes")


def _cpu(a: os.times_result, b: os.times_result) -> float:
    """CPU seconds of this process and its waited-for children between two `os.times()`."""
    return b.user - a.user + b.system - a.system + b.children_user - a.children_user + b.children_system - a.children_system


def one_build(tasks: int, jobs: int) -> dict:
    """One build into a temporary folder: wall, CPU (parent and workers), serial CPU, load average."""
    from forgeplan.bench.store import build_bench

    phases: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0, p0 = time.perf_counter(), os.times(), time.process_time()
        manifest = build_bench(Path(tmp) / "bench", tasks, 42, jobs, phases=phases)
        wall, c1, p1 = time.perf_counter() - t0, os.times(), time.process_time()
    # the parent's own CPU outside the parallel phase, from process_time: os.times() counts 10 ms ticks,
    # which a small build's serial part can fall inside
    serial = (phases["parallel_start"] - p0) + (p1 - phases["parallel_end"])
    cpu = _cpu(c0, c1)
    return {"wall": wall, "cpu": cpu, "serial": serial, "projected": serial + (cpu - serial) / jobs,
            "load": os.getloadavg()[0], "composition": manifest["composition"], "task_cpu": phases["task_cpu"]}


SLOWEST = 10    # tasks named in the distribution


def task_distribution(task_cpu: dict[str, float], assembly_of) -> dict:
    """The per-task CPU seconds as figures: median, p90, p99, max, their sum, the slowest tasks and the
    assemblies whose tasks take the most CPU in all (`assembly_of(sample_id)` names a task's assembly)."""
    times = sorted(task_cpu.values())
    cuts = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else times * 99
    by_assembly: dict[str, list[float]] = {}
    for sid, t in task_cpu.items():
        by_assembly.setdefault(assembly_of(sid), []).append(t)
    heaviest = sorted(by_assembly.items(), key=lambda kv: (-sum(kv[1]), kv[0]))[:SLOWEST]
    return {"tasks": len(times), "sum_seconds": round(sum(times), 2), "median_seconds": round(statistics.median(times), 4),
            "p90_seconds": round(cuts[89], 4), "p99_seconds": round(cuts[98], 4), "max_seconds": round(times[-1], 3),
            "slowest": [{"task": sid, "cpu_seconds": round(t, 3)}
                        for sid, t in sorted(task_cpu.items(), key=lambda kv: (-kv[1], kv[0]))[:SLOWEST]],
            "heaviest_assemblies": [{"assembly": a, "tasks": len(ts), "cpu_seconds": round(sum(ts), 2),
                                     "max_seconds": round(max(ts), 3)} for a, ts in heaviest]}


def _assembly_of(sample_id: str) -> str:
    """The assembly id of a sample id (`ASSEMBLY_SPLIT_INDEX`, `generate.sample_id`)."""
    return sample_id.rsplit("_", 2)[0]


def run(args) -> dict:
    builds = [one_build(args.tasks, args.jobs) for _ in range(args.runs)]

    def med(key: str) -> float:
        return round(statistics.median(b[key] for b in builds), 2)

    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"benchmark": "bench", "tasks": args.tasks, "jobs": args.jobs, "runs": args.runs,
            "cpu_seconds_median": med("cpu"), "cpu_seconds_all": [round(b["cpu"], 2) for b in builds],
            "serial_cpu_seconds_median": med("serial"),
            f"projected_wall_seconds_on_{args.jobs}_idle_cores": med("projected"),
            "projection": "serial CPU + the rest of the CPU / jobs (perfect balance; imbalance of the last batches on top)",
            "wall_seconds_median": med("wall"), "wall_seconds_all": [round(b["wall"], 2) for b in builds],
            "load_average_at_end": [round(b["load"], 2) for b in builds], "load_average": [round(x, 2) for x in os.getloadavg()],
            "peak_rss_mib_main": round(peak_self, 1), "peak_rss_mib_worker": round(peak_children, 1),
            "task_cpu": task_distribution(builds[-1]["task_cpu"], _assembly_of),
            "composition": builds[-1]["composition"], "target_wall_seconds": 60, **machine()}

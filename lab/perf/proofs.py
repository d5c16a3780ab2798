"""Proof robustness: how clingo proves optimality on random tasks and the built-ins (rate, times, methods).

The random family (`forgeplan.bench.random_tasks`, seeds 0..N-1: 3-8 parts, 1-3 faults) is where the
relaxation bound is not tight by design; the built-ins are the designed library. Each task is
solved `--runs` times (median wall time, facts and grounding included); the figures are the rate
of tasks proved optimal, the median / p99 / max of those times and the mix of proof methods. The
reproducer is the shipped 7-part task whose bound was loose before supports entered the
relaxation (`--task DIR` times any task folder the same way).
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

from . import machine
from .solve import builtin_tasks, timed_solve

NAME = "proofs"
TARGETS = {"proved_rate": 1.0, "max_s": 1.0, "median_s": 0.010, "reproducer_s": 0.100}


def add_arguments(p) -> None:
    p.add_argument("--tasks", type=int, default=1000, help="size of the random family (seeds 0..N-1; default 1000)")
    p.add_argument("--runs", type=int, default=3, help="solves per task, median reported (default 3)")
    p.add_argument("--time-limit", type=float, default=60.0, help="time limit per solve in seconds (default 60)")
    p.add_argument("--no-builtin", action="store_true", help="skip the built-in assemblies")
    p.add_argument("--task", type=Path, action="append", default=[], metavar="DIR",
                   help="also time this task folder (repeatable)")


def _summary(rows: list[dict]) -> dict:
    walls = sorted(r["wall_s"] for r in rows)
    proofs: dict[str, int] = {}
    for r in rows:
        proofs[r["proof"] or r["status"]] = proofs.get(r["proof"] or r["status"], 0) + 1
    slowest = max(rows, key=lambda r: r["wall_s"])
    return {"tasks": len(rows), "proved_optimal": sum(r["optimal"] for r in rows),
            "proved_rate": round(sum(r["optimal"] for r in rows) / len(rows), 4),
            "median_s": round(statistics.median(walls), 4), "p99_s": round(walls[max(0, -(-99 * len(walls) // 100) - 1)], 4),
            "max_s": round(walls[-1], 4), "proofs": dict(sorted(proofs.items())),
            "slowest": {k: slowest[k] for k in ("task", "wall_s", "proof", "moved_parts", "actions")}}


def _rows(named_tasks, runs: int, time_limit: float, label: str) -> list[dict]:
    from tqdm import tqdm

    rows = []
    for name, task in tqdm(named_tasks, desc=label, unit="task", leave=False):
        wall, _, res = timed_solve(task, runs, time_limit)
        rows.append({"task": name, "wall_s": round(wall, 4), "optimal": res.optimal, "status": res.status.value,
                     "proof": res.proof, "moved_parts": res.moved_parts, "actions": res.actions,
                     "lower_bound": res.lower_bound})
    return rows


def _random_tasks(count: int):
    from forgeplan.bench.random_tasks import random_task

    for seed in range(count):
        task = random_task(seed)
        yield f"random/{seed} ({len(task.assembly.parts)} parts)", task


def run(args) -> dict:
    from forgeplan.io.task_files import load_task

    out: dict = {"benchmark": "proofs", "runs": args.runs, "statistic": "median wall time over runs per task",
                 "targets": TARGETS, **machine()}
    random_rows = _rows(list(_random_tasks(args.tasks)), args.runs, args.time_limit, "random family")
    out["random"] = _summary(random_rows)
    out["random"]["loose_bound"] = sum(1 for r in random_rows if r["lower_bound"] is not None
                                       and r["lower_bound"] < r["moved_parts"])
    if not args.no_builtin:
        out["builtin"] = _summary(_rows(list(builtin_tasks(1)), args.runs, args.time_limit, "built-ins"))
    reproducers = [Path(__file__).resolve().parents[2] / "tests" / "data" / "slow_proof_7part_3fault", *args.task]
    out["tasks"] = _rows([(str(p), load_task(p)) for p in reproducers if p.is_dir()], args.runs, args.time_limit,
                         "task folders")
    r = out["random"]
    out["targets_met"] = {"proved_rate": r["proved_rate"] >= TARGETS["proved_rate"], "max_s": r["max_s"] <= TARGETS["max_s"],
                          "median_s": r["median_s"] <= TARGETS["median_s"],
                          "reproducer_s": all(t["optimal"] and t["wall_s"] <= TARGETS["reproducer_s"] for t in out["tasks"])}
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out

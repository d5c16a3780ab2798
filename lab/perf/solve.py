"""clingo solve time per task over faults on the built-in assemblies, and on the synthetic scaling grid."""

from __future__ import annotations

import math
import multiprocessing
import resource
import statistics
import time
from typing import Any

from . import machine

NAME = "solve"
GRID_PARTS = (25, 50, 100, 200)
GRID_DEPTHS = (5, 10, 20)


def add_arguments(p) -> None:
    p.add_argument("--runs", type=int, default=3, help="solves per task (median reported)")
    p.add_argument("--seeds", type=int, default=2, help="fault seeds per assembly and fault type")
    p.add_argument("--time-limit", type=float, default=60.0, help="time limit per solve (s)")
    p.add_argument("--no-builtin", action="store_true", help="skip the built-in assemblies")
    p.add_argument("--assemblies", nargs="+", metavar="ID", help="only these built-in assemblies (default: all 26)")
    p.add_argument("--no-grid", action="store_true", help="skip the synthetic scaling grid")


def timed_solve(task, runs: int, time_limit: float) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of `solve_task(task)` over `runs` runs, and the last result."""
    from forgeplan.planners.asp.solve import solve_task

    walls, cpus, res = [], [], None
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        res = solve_task(task, time_limit=time_limit)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), res


def builtin_tasks(seeds: int, assemblies=None):
    """(name, task): every built-in assembly (or the listed ones) x every applicable fault type x seeds,
    plus multi-faults."""
    from forgeplan.io.catalog import load_assembly
    from forgeplan.semantics.diagnosis import MISTAKE_TYPES
    from forgeplan.semantics.faults import FaultSpec, candidates, make_task
    from forgeplan.library import BUILTIN
    from forgeplan.model.state import Tolerances
    from forgeplan.semantics.engine import World
    from forgeplan.semantics.grounded import Capability, assembly_capabilities

    clingos = [a for a in BUILTIN if Capability.SLIDES not in assembly_capabilities(load_assembly(a))]
    for asm_id in assemblies or clingos:   # clingo's figures; `perf tier` measures the tasks with slides
        asm = load_assembly(asm_id)
        world = World(asm, Tolerances())
        types = [t for t in MISTAKE_TYPES if candidates(world, t)]
        for seed in range(seeds):
            for ftype in types:
                yield f"{asm_id}/{ftype}/{seed}", make_task(asm, [FaultSpec(ftype)], seed=seed)
            if len(types) > 1:
                pair = [FaultSpec(types[seed % len(types)]), FaultSpec(types[(seed + 1) % len(types)])]
                yield f"{asm_id}/multi/{seed}", make_task(asm, pair, seed=100 + seed)


def _builtin(args) -> dict:
    """Each assembly's tasks as a batch (as `bench build` solves them): its grounding is made once,
    timed apart, and every task's solves are timed on it."""
    from forgeplan.planners.asp.grounding import prepare
    from forgeplan.semantics.assembly_grounding import AssemblyGrounding
    from forgeplan.semantics.grounded import ground

    by: dict[str, list] = {}
    for name, task in builtin_tasks(args.seeds, args.assemblies):
        by.setdefault(task.assembly.assembly_id, []).append((name, task))
    rows, grounding = [], []
    for batch in by.values():
        shared = AssemblyGrounding(batch[0][1].world)   # the batch's tasks share its answers and clingo grounding
        grounded = [(name, ground(task, shared)) for name, task in batch]
        t0 = time.perf_counter()
        prepare([g for _, g in grounded])
        grounding.append(time.perf_counter() - t0)
        rows += [_row(name, g, args) for name, g in grounded]
    return _summary(rows) | {"grounding_per_assembly_median_s": round(statistics.median(grounding), 4),
                             "grounding_per_assembly_max_s": round(max(grounding), 4)}


def _row(name: str, g, args) -> dict:
    wall, cpu, res = timed_solve(g, args.runs, args.time_limit)
    return {"task": name, "wall_s": wall, "cpu_s": cpu, "optimal": res.optimal, "proof": res.proof,
            "moved_parts": res.moved_parts, "actions": res.actions,
            "assembly": g.task.assembly.assembly_id, "groups": g.has_groups}


def _summary(rows: list[dict]) -> dict:
    walls = [r["wall_s"] for r in rows]
    cpus = [r["cpu_s"] for r in rows]
    slowest = max(rows, key=lambda r: r["wall_s"])
    proofs: dict[str, int] = {}
    for r in rows:
        proofs[r["proof"] or "none"] = proofs.get(r["proof"] or "none", 0) + 1
    return {"tasks": len(rows), "proved_optimal": sum(r["optimal"] for r in rows), "proofs": proofs,
            "median_s": round(statistics.median(walls), 4), "max_s": round(max(walls), 4),
            "p90_s": round(sorted(walls)[int(0.9 * (len(walls) - 1))], 4),
            "median_cpu_s": round(statistics.median(cpus), 4), "max_cpu_s": round(max(cpus), 4),
            "slowest_task": slowest["task"], "target_median_s": 0.015, "target_p90_s": 0.06,
            "target_met": statistics.median(walls) <= 0.015 and sorted(walls)[int(0.9 * (len(walls) - 1))] <= 0.06,
            "target_met_cpu": statistics.median(cpus) <= 0.015,
            "needs_group_moves": _group_rows([r for r in rows if r["groups"]])}


def _group_rows(rows: list[dict]) -> dict:
    """Solve times on the Luban locks that need group moves (SEMANTICS §5), per assembly."""
    by: dict[str, list[float]] = {}
    for r in rows:
        by.setdefault(r["assembly"], []).append(r["wall_s"])

    def stats(walls: list[float]) -> dict:
        return {"tasks": len(walls), "median_s": round(statistics.median(walls), 4), "max_s": round(max(walls), 4)}

    out = stats([r["wall_s"] for r in rows]) if rows else {"tasks": 0}
    out["proved_optimal"] = sum(r["optimal"] for r in rows)
    out["by_assembly"] = {a: stats(w) for a, w in sorted(by.items())}
    return out


def _cell(parts: int, depth: int, runs: int, time_limit: float, out) -> None:
    """One grid cell in a fresh process, so that its peak memory is its own: a one-off solve, then
    the median over `runs` on the assembly's shared grounding."""
    from forgeplan.bench.synthetic import chain_task

    from forgeplan.planners.asp.grounding import prepare
    from forgeplan.semantics.grounded import ground

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    task = ground(chain_task(parts, depth, "missing_part"))
    first, _, _ = timed_solve(task, 1, time_limit)  # a one-off solve: the task's own grounding
    prepare([task])
    wall, cpu, res = timed_solve(task, runs, time_limit)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out.put({"parts": parts, "depth": depth, "first_solve_s": round(first, 4), "wall_s": round(wall, 4), "cpu_s": round(cpu, 4),
             "optimal": res.optimal, "status": res.status.value, "moved_parts": res.moved_parts,
             "actions": res.actions, "horizon": res.horizon, "closure": len(res.closure),
             "peak_rss_mb": round(peak / 1024, 1), "solver_rss_mb": round((peak - base) / 1024, 1)})


def _slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(time) over log(x): time grows like x^slope."""
    pts = [(math.log(x), math.log(y)) for x, y in points if y > 0]
    if len(pts) < 2:
        return None
    mx, my = statistics.mean(p[0] for p in pts), statistics.mean(p[1] for p in pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return round(sum((p[0] - mx) * (p[1] - my) for p in pts) / den, 2) if den else None


def _grid(args) -> dict:
    ctx = multiprocessing.get_context("fork")
    cells = []
    for parts in GRID_PARTS:
        for depth in GRID_DEPTHS:
            q = ctx.Queue()
            proc = ctx.Process(target=_cell, args=(parts, depth, args.runs, args.time_limit, q))
            proc.start()
            cells.append(q.get())
            proc.join()
    key = {(c["parts"], c["depth"]): c for c in cells}
    growth = {
        "time_vs_parts_exponent_by_depth": {d: _slope([(p, key[(p, d)]["wall_s"]) for p in GRID_PARTS]) for d in GRID_DEPTHS},
        "time_vs_depth_exponent_by_parts": {p: _slope([(d, key[(p, d)]["wall_s"]) for d in GRID_DEPTHS]) for p in GRID_PARTS},
    }
    target = key[(100, 10)]
    return {"fault": "missing_part at the bottom of the chain", "cells": cells, "growth": growth,
            "target_100_parts_depth_10_s": 2.0,
            "target_met": target["optimal"] and target["wall_s"] < 2.0}


def run(args) -> dict:
    out: dict = {"benchmark": "solve", "runs": args.runs, "statistic": "median over runs per task", **machine()}
    if not args.no_builtin:
        out["builtin"] = _builtin(args)
    if not args.no_grid:
        out["scaling"] = _grid(args)
    out["load_average"] = [round(x, 2) for x in __import__("os").getloadavg()]
    return out

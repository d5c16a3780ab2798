"""`perf partial --asp`: clingo's minimal rework with partial moves (encodings/partial.lp) on every
single-fault task of a puzzle, against the moved-set search (`planners.moved_set.search`).

Per task: the grounded size, the times, clingo's (J_move, c), what it proved (over every plan length of
the radius box, or over plans of at most `horizon` steps) and how it compares with the search. Nothing
here touches the references `bench build` writes: those stay the search's.
"""

from __future__ import annotations

import statistics
import time

from ..asp.partial_compare import plan_radius, verdict


def asp_rows(asm, faults, radius: int | None, horizon: int, limit: float, first: int | None) -> dict:
    """Every single fault of the types `faults` on `asm` (the first `first` per type): clingo and the search."""
    from ..asp.partial_asp import solve_partial_asp
    from forgeplan.planners.moved_set.search import minimal_rework
    from forgeplan.semantics.assembly_grounding import AssemblyGrounding
    from forgeplan.semantics.faults import FaultSpec, candidates, make_task

    world = make_task(asm, []).world
    rows = []
    for ftype in faults:
        for i in candidates(world, ftype)[:first]:
            task = make_task(asm, [FaultSpec(ftype, world.ids[i])])
            t0 = time.perf_counter()
            r = solve_partial_asp(task, horizon, radius=radius, time_limit=limit)
            seconds = time.perf_counter() - t0
            s = minimal_rework(AssemblyGrounding(task.world), task.actual, time_limit=limit)
            rows.append({"fault": ftype, "part_id": world.ids[i], "J": r.moved, "c": r.actions, "proof": r.proof,
                         "horizon": r.horizon, "lower_bound": r.lower_bound, "timed_out": r.timed_out,
                         "atoms": r.atoms, "seconds": round(seconds, 3), "ground_seconds": round(r.ground_seconds, 3),
                         "solve_seconds": round(r.solve_seconds, 3),
                         "replays": r.plan is not None
                         and task.world.restoration(task.actual, r.plan, task.target).restored,
                         "search": [s.moved, s.actions] if s.plan is not None else None, "search_optimal": s.optimal,
                         "verdict": verdict(r, s, plan_radius(task, s.plan) if s.plan else 0, radius)})
    return _summary(rows)


def _summary(rows: list[dict]) -> dict:
    solved = [r for r in rows if r["J"] is not None]
    return {"tasks": len(rows), "solved": len(solved), "replayed": sum(r["replays"] for r in solved),
            "proved_every_length": sum(r["proof"] == "moved-lower-bound" for r in rows),
            "proved_within_horizon": sum(r["proof"] == "horizon" for r in rows),
            "verdicts": {v: sum(r["verdict"] == v for r in rows) for v in sorted({r["verdict"] for r in rows})},
            "median_seconds": round(statistics.median(r["seconds"] for r in rows), 3) if rows else None,
            "median_atoms": int(statistics.median(r["atoms"] for r in rows)) if rows else None, "rows": rows}

"""`perf partial --asp`: clingo's minimal rework with partial moves (encodings/partial.lp) on every
single-fault task of a puzzle, against the moved-set search (`planners.slide_search`).

Per task: the grounded size, the times, clingo's (J_move, c), what it proved (over every plan length of
the radius box, or over plans of at most `horizon` steps) and how it compares with the search. Nothing
here touches the references `bench build` writes: those stay the search's.
"""

from __future__ import annotations

import statistics
import time


def verdict(asp, search, search_radius: int, radius: int | None) -> str:
    """`agree`: the same (J, c). `disagree`: one side beats a value the other proved (the search's proof
    covers its whole universe; clingo's covers its radius box, so it counts only against a search plan
    that stays in the box). Otherwise which side found the better plan, unproved."""
    if asp.moved is None or search.plan is None:
        return "asp-none" if asp.moved is None and search.plan is not None else (
            "search-none" if asp.moved is not None else "both-none")
    a, s = (asp.moved, asp.actions), (search.moved, search.actions)
    if a == s:
        return "agree"
    in_box = radius is None or search_radius <= radius
    if a < s and search.optimal or s < a and in_box and (asp.optimal or len(search.plan) <= asp.horizon):
        return "disagree"
    return "asp-better" if a < s else "search-better"


def plan_radius(task, plan) -> int:
    """The largest |offset| per axis any state of the plan visits."""
    state, far = task.actual, 0
    for a in plan:
        state = task.world.apply(state, a)
        far = max([far] + [max(map(abs, s.offset)) for s in state.slots if s.present])
    return far


def asp_rows(asm, radius: int | None, horizon: int, limit: float, first: int | None) -> dict:
    """Every single-fault task of `asm` (the first `first` per fault type): clingo and the search."""
    from ..planners.asp.partial_asp import solve_partial_asp
    from ..planners.slide_search import minimal_rework
    from ..semantics.faults import FaultSpec, candidates, make_task
    from .partial import FAULTS

    world = make_task(asm, []).world
    rows = []
    for ftype in FAULTS:
        for i in candidates(world, ftype)[:first]:
            task = make_task(asm, [FaultSpec(ftype, world.ids[i])])
            t0 = time.perf_counter()
            r = solve_partial_asp(task, horizon, radius=radius, time_limit=limit)
            seconds = time.perf_counter() - t0
            s = minimal_rework(task.world, task.actual, time_limit=limit)
            replay = None if r.plan is None else task.world.replay(task.actual, r.plan)
            rows.append({"fault": ftype, "part_id": world.ids[i], "J": r.moved, "c": r.actions, "proof": r.proof,
                         "horizon": r.horizon, "lower_bound": r.lower_bound, "timed_out": r.timed_out,
                         "atoms": r.atoms, "seconds": round(seconds, 3), "ground_seconds": round(r.ground_seconds, 3),
                         "solve_seconds": round(r.solve_seconds, 3),
                         "replays": replay is not None and replay.failure is None
                         and task.world.equivalent(replay.final, task.target),
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

"""`solve` for tasks on assemblies that need partial moves (SEMANTICS.md §9), in `SolveResult` form.

The moved-set search (`slide_search.minimal_rework`) proves the lexicographic optimum (`J_move`, then
`c`) over the grounded universe of §9 and picks the tie-break plan; when it cannot finish (time limit,
or a moved set with more configurations than its cap) the best plan found is reported as FEASIBLE, or
else the repair search's plan. Nothing is claimed that the search did not exhaust.
"""

from __future__ import annotations

import time

from ..model.actions import moved_parts
from ..model.errors import InputError
from ..semantics.closure import dependency_closure
from ..semantics.diagnosis import faulty_slots
from ..semantics.task import Task
from .asp.solve import SolveResult, Status
from .partial_repair import partial_repair_plan
from .slide_search import minimal_rework

PROOF = "moved-set-search"


def solve_partial(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
                  all_optimal: bool = False) -> SolveResult:
    """The minimal rework of a partial-move task, with an honest proof status."""
    if objective != "moved-parts,actions":
        raise InputError(f"objective {objective!r}: tasks with partial moves (SEMANTICS §9) are solved for the "
                         "default moved-parts,actions only", field="--objective")
    if all_optimal:
        raise InputError("--all-optimal is not available for tasks with partial moves (SEMANTICS §9)",
                         field="--all-optimal")
    t0 = time.perf_counter()
    world = task.world
    closure = [world.ids[i] for i in dependency_closure(world, task.actual, faulty_slots(world, task.actual, task.target))]
    found = minimal_rework(world, task.actual, time_limit)
    plan, status, proof = found.plan, Status.OPTIMAL if found.optimal else Status.FEASIBLE, PROOF
    if plan is None:
        plan, status, proof = partial_repair_plan(world, task.actual, task.target), Status.FEASIBLE, "repair-search"
    if plan is None:
        status, proof, plan = Status.TIMEOUT, "", []
    replay = world.replay(task.actual, plan)
    if plan and (replay.failure is not None or not world.equivalent(replay.final, task.target)):
        raise RuntimeError(f"internal: partial-move plan does not replay in the engine: {replay.failure}")
    moved = len(moved_parts(plan))
    optimal = status is Status.OPTIMAL
    return SolveResult(status, optimal, tuple(plan), moved, len(plan), closure, time.perf_counter() - t0, None, (),
                       len(plan), objective, moved if optimal else None, proof if plan else "", optimal)

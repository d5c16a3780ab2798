"""The proving planner of tasks with partial moves (SEMANTICS.md §9), registered as `moved-set-search`
(`planners.registry`); `solve_result` gives its outcome as the `SolveResult` every proving planner returns.

The moved-set search (`slide_search.minimal_rework`) proves the lexicographic optimum (`J_move`, then
`c`) over the grounded universe of §9 and picks the tie-break plan. OPTIMAL claims more: no plan the
engine accepts is better (§9 "One universe"), so it is reported only where both levels are proved over
every engine plan; a grounded optimum proved over the engine in `J_move` only is FEASIBLE, with
`proved: [moved-parts]` and `grounded_optimal`. When the search cannot finish (time limit, or a moved set
with more configurations than its cap) the better (J_move, then c) of the best plan it found and the
repair search's plan is reported as FEASIBLE. Nothing is claimed that the search did not exhaust.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from ...model.actions import Action, moved_parts
from ...model.errors import InputError
from ...semantics.closure import dependency_closure
from ...semantics.diagnosis import faulty_slots
from ...semantics.task import Task
from ..partial_repair import partial_repair_plan
from .search import LEVELS, minimal_rework

PROOF = "moved-set-search"

# Results of budget-bound searches, per (world, actual state). Such a search is deterministic (the state
# budget, not the clock, stops it), so a benchmark's many tasks with the same fault on the same assembly
# share one search; the plan depends on nothing else.
_FOUND: dict = {}
_FOUND_MAX = 4096


class PartialOutcome(NamedTuple):
    """`status` is one of asp.solve.Status's values; `proof` names what the plan rests on; `proved` the
    levels of the objective proved over every engine plan; `grounded` whether no plan of the grounded
    universe is better."""

    status: str
    plan: tuple[Action, ...]
    proof: str
    closure: list[str]
    seconds: float
    proved: tuple[str, ...] = ()
    grounded: bool = False


def solve_partial(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
                  all_optimal: bool = False) -> PartialOutcome:
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
    found = _minimal_rework(world, task.actual, time_limit)
    plan, proof = found.plan, PROOF
    status = "optimal" if found.optimal and found.proved == LEVELS else "feasible"
    if plan is None or not found.optimal:
        fallback = partial_repair_plan(world, task.actual, task.target)
        if fallback is not None and (plan is None or _cost(fallback) < _cost(plan)):
            plan, status, proof = fallback, "feasible", "repair-search"
    if plan is None:
        status, proof, plan = "timeout", "", []
    grounded = proof == PROOF and found.optimal
    return PartialOutcome(status, tuple(plan), proof, closure, time.perf_counter() - t0,
                          found.proved if grounded else (), grounded)


def _cost(plan) -> tuple[int, int]:
    """(J_move, c): an unproved search's plan is kept only when the repair search's is not better."""
    return len(moved_parts(plan)), len(plan)


def _minimal_rework(world, actual, time_limit: float | None):
    """`minimal_rework`, memoised when no clock limit makes its outcome depend on the machine."""
    if time_limit is not None:
        return minimal_rework(world, actual, time_limit)
    key = (world, actual)
    found = _FOUND.get(key)
    if found is None:
        if len(_FOUND) >= _FOUND_MAX:
            _FOUND.clear()
        found = _FOUND[key] = minimal_rework(world, actual, None)
    return found


def solve_result(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
                 all_optimal: bool = False):
    """`solve_partial` as a `SolveResult`; the plan replays or it is a bug."""
    from ..asp.solve import SolveResult, Status, check_arguments

    check_arguments(objective, all_optimal, time_limit)
    out = solve_partial(task, objective, time_limit, all_optimal)
    replay = task.world.restoration(task.actual, out.plan, task.target)
    if out.plan and not replay.restored:
        raise RuntimeError(f"internal: partial-move plan does not replay in the engine: {replay.failure}")
    status, moved = Status(out.status), len(moved_parts(out.plan))
    optimal = status is Status.OPTIMAL
    return SolveResult(status, optimal, out.plan, moved, len(out.plan), out.closure, out.seconds, None, (),
                       len(out.plan), objective, moved if "moved-parts" in out.proved else None, out.proof, optimal,
                       proved=out.proved, grounded_optimal=out.grounded)

"""The proving planner of tasks with partial moves (SEMANTICS.md §9), registered as `moved-set-search`
(`planners.registry`); `solve_result` gives its outcome as the `SolveResult` every proving planner returns.

The moved-set search (`search.minimal_rework`) proves the lexicographic optimum (`J_move`, then `c`)
over the grounded universe of §9 and picks the tie-break plan; for the objective `actions` (FORGE's c*)
`actions.minimal_actions` proves the fewest actions. OPTIMAL claims more: no plan the engine accepts is
better (§9 "One universe"), so it is reported only where every level of the objective is proved over
every engine plan; a grounded optimum that is not is FEASIBLE, with the levels that are in `proved` and
`grounded_optimal`. Where the search over every engine move finds a plan shorter than the grounded optimum,
that plan is the outcome (`proved_by`: "engine-search"), optimal when that search proves none of one action
less exists. When the search cannot finish (time limit, or more configurations than its caps) the
better, in the objective, of the best plan it found and the repair search's plan is reported as
FEASIBLE. Nothing is claimed that the search did not exhaust.
"""

from __future__ import annotations

import time
from typing import Callable, NamedTuple

from ...model.actions import Action, moved_parts
from ...model.choices import OBJECTIVES
from ...model.errors import InputError
from ...semantics.closure import dependency_closure
from ...semantics.diagnosis import faulty_slots
from ...semantics.grounded import GroundedTask, objective_value
from ..partial_repair import partial_repair_plan
from ..result import Options, SolveResult, Status
from .actions import minimal_actions
from .search import SlideResult, minimal_rework

PROOF = "moved-set-search"

# Results of budget-bound searches, per actual state, kept by the assembly grounding (`FOUND`). Such a
# search is deterministic (the state budget, not the clock, stops it), so a benchmark's many tasks with
# the same fault on the same assembly share one search; the plan depends on nothing else.
FOUND = "moved-set results"
FOUND_MAX = 4096


class PartialOutcome(NamedTuple):
    """`status` is one of planners.result.Status's values; `proof` names what the plan rests on; `proved` the
    levels of the objective proved over every engine plan; `grounded` whether no plan of the grounded
    universe is better."""

    status: str
    plan: tuple[Action, ...]
    proof: str
    closure: list[str]
    seconds: float
    proved: tuple[str, ...] = ()
    grounded: bool = False
    proved_by: str = ""


def solve_partial(g: GroundedTask, objective: str = "moved-parts,actions", time_limit: float | None = None,
                  all_optimal: bool = False) -> PartialOutcome:
    """The minimal rework of a partial-move task, with an honest proof status: lexicographic (J_move, then
    c) by the moved-set search, or, for `actions` (FORGE's c*), the fewest actions (`actions`)."""
    if objective not in OBJECTIVES_SOLVED:
        raise InputError(f"objective {objective!r}: tasks with partial moves (SEMANTICS §9) are solved for "
                         f"{' and '.join(OBJECTIVES_SOLVED)} only", field="--objective")
    if all_optimal:
        raise InputError("--all-optimal is not available for tasks with partial moves (SEMANTICS §9)",
                         field="--all-optimal")
    t0 = time.perf_counter()
    world, task = g.world, g.task
    closure = [world.ids[i] for i in dependency_closure(world, task.actual, faulty_slots(world, task.actual, task.target))]
    found = _minimal_rework(g, objective, time_limit)
    plan, proof = found.plan, PROOF
    status = "optimal" if found.optimal and found.proved == OBJECTIVES[objective] else "feasible"
    if plan is None or not found.optimal:
        fallback = partial_repair_plan(world, task.actual, task.target)
        if fallback is not None and (plan is None or _cost(objective, fallback) < _cost(objective, plan)):
            plan, status, proof = fallback, "feasible", "repair-search"
    if plan is None:
        status, proof, plan = "timeout", "", []
    grounded = proof == PROOF and found.optimal
    return PartialOutcome(status, tuple(plan), proof, closure, time.perf_counter() - t0,
                          found.proved if grounded else (), grounded, found.proved_by if grounded else "")


def _cost(objective: str, plan) -> tuple[int, ...]:
    """The objective's value of a plan: an unproved search's plan is kept only when the repair search's
    is not better."""
    return objective_value(objective, len(moved_parts(plan)), len(plan))


def _minimal_rework(g: GroundedTask, objective: str, time_limit: float | None):
    """The objective's search (`minimal_rework` or `minimal_actions`), memoised per objective and actual
    state when no clock limit makes its outcome depend on the machine."""
    search, actual = SEARCHES[objective], g.task.actual
    if time_limit is not None:
        return search(g.shared, actual, time_limit)
    kept = g.shared.memo(FOUND)
    found = kept.get((objective, actual))
    if found is None:
        if len(kept) >= FOUND_MAX:
            kept.clear()
        found = kept[objective, actual] = search(g.shared, actual, None)
    return found


# objective -> the search that proves it over the grounded universe
SEARCHES: dict[str, Callable[..., SlideResult]] = {"moved-parts,actions": minimal_rework, "actions": minimal_actions}
OBJECTIVES_SOLVED = tuple(SEARCHES)


def solve_result(g: GroundedTask, options: Options = Options()) -> SolveResult:
    """`solve_partial` as a `SolveResult`; the plan replays or it is a bug."""
    objective, time_limit = options.check().objective, options.time_limit
    out = solve_partial(g, objective, time_limit, options.all_optimal)
    task = g.task
    replay = task.world.restoration(task.actual, out.plan, task.target)
    if out.plan and not replay.restored:
        raise RuntimeError(f"internal: partial-move plan does not replay in the engine: {replay.failure}")
    status, moved = Status(out.status), len(moved_parts(out.plan))
    optimal = status is Status.OPTIMAL
    return SolveResult(status, optimal, out.plan, moved, len(out.plan), out.closure, out.seconds, None, (),
                       len(out.plan), objective, moved if "moved-parts" in out.proved else None, out.proof,
                       optimal and not out.proved_by, proved=out.proved, grounded_optimal=out.grounded,
                       proved_by=out.proved_by)

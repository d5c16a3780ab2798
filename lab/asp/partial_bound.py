"""A lower bound on the moved parts of every plan with partial moves (SEMANTICS.md §9), for clingo's proof.

A plan that moves `J` distinct parts moves only the slots of one set `M` of size `J`, holding every
missing, faulty and displaced slot. Whether *any* plan moves only `M` is decided exactly by
`moved_set.reach.has_plan` (§9 "Exact arguments", item 2), over every engine move inside the position
bound: a superset of the moves of clingo's domain, whole or cut to a radius. So the smallest size at
which some such set is not proved planless bounds `J_move` from below in every box of the domain; when
each smaller set was decided it is the fewest parts over every engine plan inside the position bound
(the moved-set search's `J_move*` wherever that universe holds such a plan). A set whose decision passes
its cap, the task's budget or the deadline counts as possibly having a plan: the bound stays a bound,
only weaker.

The cheap test first (`moved_set.search.escapes`): a missing or faulty slot that cannot slide alone from
its target position to a clear ray past the slots outside `M` proves `M` planless without a search.
"""

from __future__ import annotations

from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.task import Task
from forgeplan.planners.moved_set.search import PROOF_BUDGET, PROOF_CAP, candidate_sets, set_verdict, start_node


def moved_lower_bound(task: Task, cap: int = PROOF_CAP, budget: int = PROOF_BUDGET,
                      deadline: float | None = None) -> int:
    """The fewest slots any plan moves: the size of the smallest moved set holding the forced slots that
    is not proved planless, each decision within `cap` configurations, all of them within `budget`
    (as in the moved-set search, whose verdicts these are: the escape sets `has_plan` keeps serve both)
    and `deadline`."""
    shared = AssemblyGrounding(task.world)
    start = start_node(task.world, task.actual)
    exact = [min(cap, budget), budget]      # per decision, and what is left for this task
    for size, sets in candidate_sets(shared, start):
        if any(set_verdict(shared, start, m, exact, deadline) is not False for m in sets):
            return size     # a plan, or no decision: it may have one
    return len(start[0])   # no set has a plan: nothing to bound

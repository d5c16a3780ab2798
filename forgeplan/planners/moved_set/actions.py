"""The fewest actions over the grounded universe of partial moves (objective `actions`, FORGE's c*).

A plan that moves only the slots of a set moves only the slots of every larger set, so the shortest plan
of all is the shortest plan with every slot movable: one moved set, searched by the moved-set search's
bounded searches (from its lower bound up, dropping what cannot end in time) or, for one faulty part at
its target place, by the mirror argument (SEARCH.md §2). Among the shortest plans the canonical
tie-break plan (SEMANTICS §4) is taken. The optimum is lifted to every plan the engine accepts as the
default objective's action count is (`search.lift`: the mirror argument, the lower bound at the start,
or the search over every engine move); where none does, it is a grounded optimum only.
"""

from __future__ import annotations

import time

from ...model.actions import moved_parts
from ...model.state import State
from ...semantics.assembly_grounding import AssemblyGrounding
from .search import LEVELS, PROOF_BUDGET, PROOF_CAP, SlideResult, _bounded, _mirror, _mirrored, lift, start_node


def minimal_actions(ag: AssemblyGrounding, actual: State, time_limit: float | None = None,
                    proof_cap: int = PROOF_CAP) -> SlideResult:
    """The c-minimal plan of the universe from `actual` back to the target, with its proof: `optimal` when
    no plan of the grounded universe is shorter, `proved` holding `actions` when no plan the engine accepts
    is. Searches past `proof_cap` configurations, the task's budget or the time limit give no plan (the
    caller falls back on a valid one)."""
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    start = start_node(ag.world, actual, spares=True)
    everything = [(1 << len(start[0])) - 1]
    exact = [min(proof_cap, PROOF_BUDGET), PROOF_BUDGET]
    found = (_mirror(ag, actual, start, everything, [], exact, deadline) if _mirrored(start)
             else _bounded(ag, actual, start, everything, [], exact, deadline))
    if found is None:
        return SlideResult(None, 0, 0, False, 0, time.perf_counter() - t0)
    plan, states = found
    plan, levels, by = lift(ag, actual, start, everything, plan, True, exact, deadline)
    proved = ("actions",) if levels == LEVELS else ()
    return SlideResult(plan, len(moved_parts(plan)), len(plan), True, states, time.perf_counter() - t0, proved, by)

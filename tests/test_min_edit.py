"""The closest valid plan (clingo, encodings/edit.lp) against an independent search over the engine.

The search is a uniform-cost search over (state, given steps consumed): insert a legal grounded action
of the state (`legal_actions`: a rotate only as the repairing turn of the current rotation)
(cost 1), delete a given step (cost 1), or take a legal grounded action for the next given step (cost 0
when it is that step, 1 otherwise); the goal is every given step consumed in a target-equivalent state.
Its optimum is the edit distance to the closest valid plan over all plan lengths, so it also checks the
horizon argument of min_edit.py.
"""

from __future__ import annotations

import heapq
import itertools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from forgeplan.model.actions import Insert, Remove, Rotate, RotateToLock
from forgeplan.planners.asp.facts import task_facts
from forgeplan.planners.asp.min_edit import closest_valid_plan, edit_distance, same_action
from forgeplan.planners.asp.solve import solve_task
from forgeplan.semantics.legal import legal_actions
from cases import grounding
from test_bruteforce import TASKS

SMALL = [t for _, t in TASKS if len(t.world.ids) <= 6][::3]
NODE_LIMIT = 200_000


def brute_min_edit(task, given_plan) -> int:
    world, target = task.world, task.target
    n = len(given_plan)
    tie = itertools.count()
    frontier = [(0, next(tie), task.actual, 0)]
    seen = set()
    while frontier:
        cost, _, state, j = heapq.heappop(frontier)
        if (state, j) in seen:
            continue
        seen.add((state, j))
        assert len(seen) < NODE_LIMIT, "too large for the brute force"
        if j == n and world.equivalent(state, target):
            return cost
        if j < n:
            heapq.heappush(frontier, (cost + 1, next(tie), state, j + 1))               # delete step j
        for a in legal_actions(grounding(world), state):
            nxt = world.apply(state, a)
            heapq.heappush(frontier, (cost + 1, next(tie), nxt, j))                     # insert a
            if j < n:
                heapq.heappush(frontier, (cost + (not same_action(world, given_plan[j], a)), next(tie), nxt, j + 1))
    raise AssertionError("no valid plan")


@st.composite
def anchored(draw):
    """A small task and a plan written from its reference by random edits (some steps not grounded)."""
    task = draw(st.sampled_from(SMALL))
    plan = list(solve_task(task).plan)
    universe = sorted(task_facts(task).actions.values(), key=str)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["delete", "insert", "substitute", "swap", "unknown"]))
        k = draw(st.integers(0, max(0, len(plan) - 1)))
        if op == "delete" and plan:
            plan.pop(k)
        elif op == "insert":
            plan.insert(k, draw(st.sampled_from(universe)))
        elif op == "substitute" and plan:
            plan[k] = draw(st.sampled_from(universe))
        elif op == "swap" and len(plan) > 1:
            k = min(k, len(plan) - 2)
            plan[k], plan[k + 1] = plan[k + 1], plan[k]
        elif op == "unknown":
            plan.insert(k, Remove("NoSuchPart"))
    return task, plan


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anchored())
def test_clingo_finds_a_valid_plan_at_the_brute_force_minimum(case):
    task, plan = case
    closest = closest_valid_plan(task, plan)
    w = task.world
    assert w.restoration(task.actual, closest.plan, task.target).restored
    assert closest.distance == edit_distance(w, plan, closest.plan) == brute_min_edit(task, plan)


def test_a_valid_plan_is_its_own_closest_plan_and_an_empty_one_gets_an_action_optimal_plan():
    for task in SMALL[:6]:
        ref = solve_task(task).plan
        assert closest_valid_plan(task, ref).plan == ref
        shortest = solve_task(task, "actions").actions
        assert closest_valid_plan(task, []).distance == shortest


def test_same_action_compares_parameters_within_tolerance():
    task = SMALL[0]
    w = task.world
    tol = w.tol.rot_tol
    a = Rotate("P", "y", 90.0)
    assert same_action(w, a, Rotate("P", "y", 90.0 + tol / 2))
    assert same_action(w, a, Rotate("P", "y", -270.0))
    assert not same_action(w, a, Rotate("P", "y", 90.0 + 2 * tol))
    assert not same_action(w, a, Rotate("P", "z", 90.0))
    assert not same_action(w, a, RotateToLock("P", "y", 90.0))             # same shape, another kind
    assert not same_action(w, Insert("P"), Remove("P"))

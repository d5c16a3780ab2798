"""Proofs on tasks nobody designed: random assemblies against brute force, the completeness query and
Fast Downward.

The built-in library's relaxation bounds are tight by design; random pieces, removal directions,
supports, locks, spares and faults (forgeplan.bench.random_tasks, drawn here by hypothesis) are not. On
every drawn task clingo must prove the brute-force optimum, name how it proved it, and pick the
tie-break plan; the completeness query (loop-free, canonical, no local loops, forced parts counted)
must keep a shortest plan's prefixes; Fast Downward must agree on a sample.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clingo import Function, Number
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forgeplan.bench.random_tasks import Shape, random_task, shape_of
from forgeplan.io.task_files import load_task
from forgeplan.planners.asp import solve as asp
from forgeplan.planners.asp.grounding import grounding_for
from forgeplan.planners.asp.solve import solve_task
from forgeplan.planners.result import Status
from forgeplan.planners.crosscheck import compare_task
from forgeplan.semantics.grounded import ground
from test_bruteforce import brute_optimum, brute_plans, tie_break_key

REPRODUCER = Path(__file__).parent / "data" / "slow_proof_7part_3fault"
PROOFS = {"relaxation-bound", "loop-free-paths", "horizon-contains-shorter"}


def shapes(max_parts: int = 7) -> st.SearchStrategy[Shape]:
    """Pieces, removal directions, supports, locks, spares and faults, each drawn by hypothesis."""
    return st.builds(Shape, parts=st.integers(3, max_parts), support_rate=st.floats(0.0, 1.0),
                     dir_rate=st.floats(0.2, 0.9), locks=st.integers(0, 2), spare=st.booleans(),
                     faults=st.integers(1, 3))


SEEDS = st.integers(0, 10**6)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DEEP = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_against_brute_force(seed: int, shape: Shape) -> None:
    task = random_task(seed, shape)
    res = solve_task(task)
    assert res.status is Status.OPTIMAL and res.proof in PROOFS, (task.sample_id, res.status, res.proof)
    assert res.lower_bound is not None and res.lower_bound <= res.moved_parts
    assert (res.moved_parts, res.actions) == brute_optimum(task, "moved-parts,actions"), task.sample_id
    assert not asp.check_plan(task, res.plan), "the ASP plan checker rejects the reference"


@FAST
@pytest.mark.slow
@given(seed=SEEDS, shape=shapes())
def test_random_tasks_are_proved_at_the_brute_force_optimum(seed, shape):
    _check_against_brute_force(seed, shape)


@pytest.mark.slow
@DEEP
@given(seed=SEEDS, shape=shapes(max_parts=8))
def test_random_tasks_are_proved_at_the_brute_force_optimum_deep(seed, shape):
    _check_against_brute_force(seed, shape)


@pytest.mark.slow
@FAST
@given(seed=SEEDS, shape=shapes(max_parts=5))
def test_random_tasks_pick_the_tie_break_plan(seed, shape):
    """With the canonical order on, the reference is still the smallest optimal plan by key."""
    task = random_task(seed, shape)
    res = solve_task(task)
    plans = brute_plans(task, res.moved_parts, res.actions)
    assert res.canonical and res.plan == min(plans, key=lambda p: tie_break_key(p, task.world))


def _query(g, horizon: int, cap: int) -> bool:
    """The completeness query alone: a canonical loop-free path of exactly `horizon` steps, <= cap parts?
    (`g` grounded: its first query runs on the task's own grounding, the next ones on a shared one.)"""
    task = g.task
    planner = asp._Planner(grounding_for(g, reduce=True), task, True, asp._Clock(None))
    planner.lower_bound(task)
    planner.extend(horizon)
    exists = planner.loop_free_path_exists(cap)
    assert exists is not None
    return exists


@FAST
@pytest.mark.slow
@given(seed=SEEDS, shape=shapes(max_parts=6))
def test_completeness_query_keeps_the_prefixes_of_a_shortest_plan(seed, shape):
    """The proof's premise: if a plan touching <= K parts exists, the query finds a path of every
    length up to a shortest such plan's (here K = J*, the shortest plan has c* actions)."""
    task = random_task(seed, shape)
    j, c = brute_optimum(task, "moved-parts,actions")
    g = ground(task)
    for h in sorted({1, (c + 1) // 2, c} - {0}):
        assert _query(g, h, j), (task.sample_id, h, j)


@pytest.mark.slow
def test_completeness_query_alone_proves_random_optima(monkeypatch):
    """With the relaxation made uninformative, the loop-free proof still lands on the brute-force optimum."""
    real = asp._Planner.lower_bound
    monkeypatch.setattr(asp._Planner, "lower_bound",
                        lambda planner, task: asp._Bound("bound", 0, 0) if real(planner, task).status == "bound"
                        else real(planner, task))
    proved = 0
    for seed in range(40):
        task = random_task(seed, Shape(4, 0.5, 0.5, seed % 2, seed % 3 == 0, 1 + seed % 2))
        res = solve_task(task, time_limit=60)
        assert res.status is Status.OPTIMAL and res.proof == "loop-free-paths", (task.sample_id, res.status)
        assert (res.moved_parts, res.actions) == brute_optimum(task, "moved-parts,actions"), task.sample_id
        proved += 1
    assert proved == 40


def test_the_family_is_fixed_by_its_seeds():
    assert random_task(7).sample_id == random_task(7).sample_id
    assert shape_of(7) == shape_of(7)
    a, b = random_task(7), random_task(7)
    assert (a.assembly, a.actual) == (b.assembly, b.actual)


def test_a_loose_relaxation_case_is_proved_by_supports():
    """7 parts, 3 faults (wrong orientation, misplacement, under-insertion), optimum 6 parts / 9 actions.

    Part 03 can come out only along +z, where part 01 blocks it, and 01 also supports it: 03 can
    never go back in, so the misplacement must be reset in place, and turning part 02 then needs part
    06 out of the way. Without supports in the relaxation the bound is 5 and the proof falls to the
    completeness query.
    """
    task = load_task(REPRODUCER)
    res = solve_task(task)
    assert res.status is Status.OPTIMAL and res.proof == "relaxation-bound"
    assert (res.lower_bound, res.moved_parts, res.actions) == (6, 6, 9)
    assert brute_optimum(task, "moved-parts,actions") == (6, 9)


@pytest.mark.parametrize("seed", [*range(2), *(pytest.param(s, marks=pytest.mark.slow) for s in range(2, 6))])
def test_fast_downward_agrees_on_random_tasks(seed):
    task = random_task(seed, Shape(5, 0.5, 0.5, seed % 3, seed % 2 == 0, 1 + seed % 3))
    c = compare_task(task, time_limit=120)
    assert c.verdict == "agree", c.reason


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 140))
def test_fast_downward_agrees_on_the_random_family(seed):
    c = compare_task(random_task(seed), time_limit=120)
    assert c.verdict == "agree", c.reason

"""Group moves (separate/join, SEMANTICS §5) in the ASP encoding, on the real level-1 burrs of
../shared/data/burr: faults on an inner piece get plans proved optimal that replay in the engine and
pass the ASP plan checker; Fast Downward proves the same optimum; and an independent uniform-cost
search over the engine (forgeplan.semantics.legal.legal_actions, group actions included) agrees."""

from __future__ import annotations

import heapq
import itertools
import random

import pytest

from forgeplan.bench.burr_faults import fault_task
from forgeplan.io.importers import import_puzzle
from forgeplan.model.actions import GroupMove
from forgeplan.planners.asp.facts import task_facts
from forgeplan.planners.asp.solve import check_plan, solve_task
from forgeplan.planners.crosscheck import compare_task
from forgeplan.semantics.legal import legal_actions
from cases import grounding

from burrdata import EXAMPLES, HAVE_SHARED, SHARED, burr, level1, needs_shared

LEVEL1 = level1(SHARED) if HAVE_SHARED else level1(EXAMPLES)
FAULTS = ("missing_part", "wrong_orientation")
_TASKS: dict = {}


def burr_task(name: str, fault: str):
    key = (name, fault)
    if key not in _TASKS:
        made = fault_task(import_puzzle(burr(name)), fault)
        _TASKS[key] = None if made is None else made[1]
    return _TASKS[key]


def group_burrs() -> list[str]:
    return [n for n in LEVEL1 if burr_task(n, "missing_part").world.moves.groups]


@needs_shared
def test_four_level1_burrs_need_group_moves():
    assert len(LEVEL1) == 7 and len(group_burrs()) == 4


@pytest.mark.parametrize("name, fault", [pytest.param(n, f, id=f"{f}-{n}", marks=() if k == 0 else pytest.mark.slow)
                                         for k, n in enumerate(LEVEL1) for f in FAULTS])
def test_inner_faults_in_level1_burrs_get_proved_optimal_plans(name, fault):
    task = burr_task(name, fault)
    assert task is not None
    r = solve_task(task, time_limit=120)
    assert r.optimal and r.proof, (r.status, r.proof)
    world = task.world
    assert world.restoration(task.actual, r.plan, task.target).restored
    assert check_plan(task, r.plan) == []
    assert r.lower_bound is not None and r.lower_bound <= r.moved_parts
    moved = {x for a in r.plan for x in a.touched}
    assert r.moved_parts == len(moved)
    if world.moves.groups:
        assert "separate(" in task_facts(task).text
    else:
        assert not any(isinstance(a, GroupMove) for a in r.plan) and "separate(" not in task_facts(task).text


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_fast_downward_agrees_on_group_move_burrs(fault):
    for name in group_burrs():
        c = compare_task(burr_task(name, fault), time_limit=120)
        assert c.verdict == "agree", (name, c.reason, c.clingo, c.fd)


def brute_optimum(task) -> tuple[int, int]:
    """Uniform-cost search over the engine for (J_move, c): every member of a group move counts."""
    world, target = task.world, task.target
    tie = itertools.count()
    frontier = [((0, 0), next(tie), task.actual, frozenset())]
    seen: set = set()
    memo: dict = {}
    while frontier:
        cost, _, state, moved = heapq.heappop(frontier)
        if (state, moved) in seen:
            continue
        seen.add((state, moved))
        assert len(seen) < 200_000
        if world.equivalent(state, target):
            return cost
        if state not in memo:
            memo[state] = [(a, world.apply(state, a)) for a in legal_actions(grounding(world), state)]
        for a, nxt in memo[state]:
            parts = a.touched
            m = moved | set(parts)
            heapq.heappush(frontier, ((len(m), cost[1] + 1), next(tie), nxt, m))
    raise AssertionError("no plan")


@pytest.mark.parametrize("fault", [FAULTS[0], *(pytest.param(f, marks=pytest.mark.slow) for f in FAULTS[1:])])
def test_brute_force_agrees_on_small_group_move_burrs(fault):
    for name in group_burrs()[:2]:
        task = burr_task(name, fault)
        r = solve_task(task, time_limit=120)
        assert r.optimal
        assert (r.moved_parts, r.actions) == brute_optimum(task), name


@pytest.mark.parametrize("fault, seed", [pytest.param(f, s, id=f"{f}-{s}", marks=() if s == 0 else pytest.mark.slow)
                                         for f in FAULTS for s in range(3)])
def test_checker_legality_equals_engine_with_group_moves(fault, seed):
    """Random walks over the grounded actions (group moves included): the ASP plan checker finds the
    engine's first failing step and reason code, and nothing on a legal walk."""
    rng = random.Random(seed)
    for name in group_burrs():
        task = burr_task(name, fault)
        world, state, seq = task.world, task.actual, []
        grounded = sorted(task_facts(task).actions.values(), key=str)
        for _ in range(rng.randint(1, 8)):
            legal = [a for a in grounded if world.check(state, a) is None]
            a = rng.choice(legal) if legal and rng.random() < 0.8 else rng.choice(grounded)
            seq.append(a)
            if world.check(state, a) is not None:
                break
            state = world.apply(state, a)
        errs = [e for e in check_plan(task, seq) if e[0] not in ("not_restored", "not_locked")]
        replay = world.replay(task.actual, seq)
        if replay.failure is None:
            assert errs == [], (name, seq)
        else:
            first = min(e[2] for e in errs)
            assert first == replay.failure.step + 1, (name, seq)
            assert replay.failure.reason.code in {e[0] for e in errs if e[2] == first}, (name, seq, errs)


MECHANISED = [(["wrong_part"], 1), (["wrong_part", "misplacement"], 2), (["missing_part"], 2)]


@pytest.mark.parametrize("faults,seed", [pytest.param(f, s, id="+".join(f), marks=() if f == ["missing_part"] else pytest.mark.slow)
                                         for f, s in MECHANISED])
def test_group_moves_meet_spares_locks_and_supports(faults, seed):
    """The mechanised burr of tests/test_pddl_groups.py (a rotate lock, a support, a wrong stick for the
    core piece): clingo's optimum equals the brute force's, and Fast Downward's where a spare is involved."""
    from test_pddl_groups import mechanised_burr

    from forgeplan.semantics.faults import FaultSpec, make_task

    task = make_task(mechanised_burr(), [FaultSpec(f) for f in faults], seed=seed)
    r = solve_task(task, time_limit=120)
    assert r.optimal and check_plan(task, r.plan) == []
    assert (r.moved_parts, r.actions) == brute_optimum(task)
    if faults == ["wrong_part"]:
        assert compare_task(task, time_limit=120).verdict == "agree"


@pytest.mark.parametrize("aid, fault", [pytest.param(a, f, id=f"{f}-{a}", marks=() if (a, f) == ("burr_6_pairs", "missing_part")
                                                      else pytest.mark.slow)
                                         for a in ("burr_6_split", "burr_6_pairs")
                                         for f in ("missing_part", "wrong_orientation", "misplacement", "wrong_part")])
def test_dropping_outranked_directions_keeps_the_reference(aid, fault):
    """The planner skips group moves whose direction is dominated (closure.lp); enumerating every optimal
    plan keeps them. Both must prove the same optimum and pick the same tie-break reference."""
    from forgeplan.semantics.faults import FaultSpec, make_task
    from forgeplan.library import build

    task = make_task(build(aid), [FaultSpec(fault)], seed=4)
    pruned, full = solve_task(task), solve_task(task, all_optimal=True)
    assert pruned.optimal and full.optimal
    assert (pruned.moved_parts, pruned.actions) == (full.moved_parts, full.actions)
    assert pruned.plan == full.plan
    assert full.n_optimal >= 1 and pruned.plan in full.optimal_plans

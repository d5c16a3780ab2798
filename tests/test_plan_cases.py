"""One behavioural test set, run against every implementation of the semantics: the engine's replay, the
ASP plan checker (encodings/check.lp) and unified-planning's validator on the grounded and the lifted
PDDL. Each case of cases.plan_cases carries plans that all must accept and plans that all must reject;
clingo must prove the case's optimum and Fast Downward must reach it."""

from __future__ import annotations

from functools import lru_cache

import pytest
from unified_planning.shortcuts import get_environment

from cases import PlanCase, plan_cases
from forgeplan.model.actions import moved_parts
from forgeplan.planners.asp.solve import check_plan, solve_task
from forgeplan.planners.result import Status
from forgeplan.planners.pddl.fd import solve_fd
from forgeplan.planners.pddl.problem import build_problem

get_environment().credits_stream = None
CASES = {c.name: c for c in plan_cases()}


def engine_accepts(case: PlanCase, plan) -> bool:
    return case.task.world.restoration(case.task.actual, plan, case.task.target).restored


def asp_accepts(case: PlanCase, plan) -> bool:
    return check_plan(case.task, plan) == []


@lru_cache(maxsize=None)
def encoding(name: str, grounded: bool):
    return build_problem(CASES[name].task, grounded=grounded)


def pddl_grounded_accepts(case: PlanCase, plan) -> bool:
    return encoding(case.name, True).validate(plan)


def pddl_lifted_accepts(case: PlanCase, plan) -> bool:
    return encoding(case.name, False).validate(plan)


IMPLEMENTATIONS = {"engine": engine_accepts, "asp": asp_accepts, "pddl-grounded": pddl_grounded_accepts,
                   "pddl-lifted": pddl_lifted_accepts}


# the slow lane's share: the grounded PDDL of the group-move burr (its group moves stay in the fast lane
# through test_pddl's and test_pddl_groups' expanded problems, and the engine and ASP run it here)
SLOW_PAIRS = {("pddl-grounded", "burr_6_split/misplaced")}


def combinations():
    """(implementation, case) pairs; the lifted domain has no group moves, so it skips cases that need them."""
    for impl in IMPLEMENTATIONS:
        for name, case in CASES.items():
            if impl == "pddl-lifted" and case.task.world.moves.groups:
                continue
            yield pytest.param(impl, name, id=f"{impl}-{name}",
                               marks=pytest.mark.slow if (impl, name) in SLOW_PAIRS else ())


@pytest.mark.parametrize("impl, name", combinations())
def test_valid_plans_are_accepted(impl, name):
    case = CASES[name]
    for plan in case.valid_plans:
        assert IMPLEMENTATIONS[impl](case, plan), [str(a) for a in plan]


@pytest.mark.parametrize("impl, name", combinations())
def test_invalid_plans_are_rejected(impl, name):
    case = CASES[name]
    for plan, _ in case.invalid_plans:
        assert not IMPLEMENTATIONS[impl](case, plan), [str(a) for a in plan]


@pytest.mark.parametrize("name", CASES)
def test_the_engine_rejects_for_the_stated_reason(name):
    case = CASES[name]
    world = case.task.world
    for plan, why in case.invalid_plans:
        replay = world.replay(case.task.actual, plan)
        got = "final_state" if replay.failure is None else replay.failure.reason.code
        assert got == why, [str(a) for a in plan]
        if why == "final_state":
            assert not world.equivalent(replay.final, case.task.target)


@pytest.mark.parametrize("name", CASES)
def test_valid_plans_are_no_better_than_the_optimum(name):
    case = CASES[name]
    assert min((len(moved_parts(p)), len(p)) for p in case.valid_plans) == case.optimum


@pytest.mark.parametrize("name", CASES)
def test_clingo_proves_the_optimum(name):
    case = CASES[name]
    r = solve_task(case.task)
    assert r.status == Status.OPTIMAL and (r.moved_parts, r.actions) == case.optimum
    assert engine_accepts(case, r.plan)


# Fast Downward runs in the fast lane on the deepest fixture case, in the slow lane on every case
FD_FAST = ("fixture/missing_pin",)


@pytest.mark.parametrize("name", [n if n in FD_FAST else pytest.param(n, marks=pytest.mark.slow) for n in CASES])
def test_fast_downward_reaches_the_optimum(name):
    case = CASES[name]
    r = solve_fd(case.task)
    assert r.optimal and (len(moved_parts(r.plan)), len(r.plan)) == case.optimum
    assert engine_accepts(case, r.plan)

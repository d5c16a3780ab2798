"""clingo's cross-check of partial-move tasks (encodings/partial_check.lp, forgeplan.planners.asp.partial_check)
against a brute-force search over the engine and against the moved-set search, through `crosscheck`."""

from __future__ import annotations

import pytest

from cases import zigzag_puzzle
from forgeplan.planners.asp.partial_check import check_facts, check_partial
from forgeplan.planners.crosscheck import Side, compare_task, judge_partial, plan_box
from forgeplan.semantics.faults import FaultSpec, make_task
from test_pddl_partial import brute_optimum, value

OBJECTIVE = "moved-parts,actions"


def test_clingo_finds_the_engine_optimum_of_its_box_and_agrees_with_the_search():
    """The zigzag puzzle with its base plate: the optimum slides the core out of the way (2 parts, 6
    actions, the brute force's over the engine: test_pddl_partial); clingo finds it over the box of radius
    1 and 6 steps, and `crosscheck` calls it an agreement with the moved-set search."""
    task = make_task(zigzag_puzzle(True), [FaultSpec("misplacement", "Core")])
    r = check_partial(task, 1, 6, 120)
    assert r.exhausted and r.plan is not None
    assert task.world.restoration(task.actual, r.plan, task.target).restored
    assert value(r.plan) == (2, 6)
    c = compare_task(task, OBJECTIVE, 120)
    assert (c.prover.planner, c.checker.planner) == ("moved-set-search", "clingo-partial")
    assert c.checker.box == plan_box(task, c.prover.plan) and c.checker.horizon == len(c.prover.plan)
    assert c.verdict == "agree", c.reason


def test_a_horizon_too_short_for_any_plan_is_exhausted_without_a_plan():
    """The misplaced core is shut in: no one-step plan mends it (two steps take the whole puzzle out and back)."""
    task = make_task(zigzag_puzzle(True), [FaultSpec("misplacement", "Core")])
    r = check_partial(task, 1, 1, 120)
    assert r.exhausted and r.plan is None


@pytest.mark.slow
@pytest.mark.parametrize("base,fault", [(False, ("missing_part", "Core")), (False, ("misplacement", "Cap")),
                                        (False, ("under_insertion", "Core")), (False, ("wrong_orientation", "Shell")),
                                        (True, ("misplacement", "Core"))])
def test_clingo_optimum_equals_brute_force_over_the_engine(base, fault):
    task = make_task(zigzag_puzzle(base), [FaultSpec(*fault)])
    best = brute_optimum(task)
    r = check_partial(task, 1, best[1], 120)
    assert r.exhausted and r.plan is not None and value(r.plan) == best
    assert task.world.restoration(task.actual, r.plan, task.target).restored


@pytest.mark.slow
@pytest.mark.parametrize("assembly", ["burr_6_level4", "burr_6_level5"])
def test_the_expert_tier_burrs_agree_including_a_spare_that_slides(assembly):
    """The built-in burrs of the expert tier with a spare stick in a slot: the optimum slides the spare out
    of the way before it leaves (the plans name the spare), and clingo agrees with the moved-set search."""
    from forgeplan.io.catalog import load_assembly

    task = make_task(load_assembly(assembly), [FaultSpec("wrong_part")], seed=0)
    c = compare_task(task, OBJECTIVE, 120)
    assert c.verdict == "agree", c.reason
    spare = next(s.occupant for s, pid in zip(task.actual.slots, task.world.ids) if s.present and s.occupant != pid)
    assert any(a.name == "slide" and spare in a.part_ids for a in c.checker.plan)


def test_the_facts_name_the_box_and_the_objective():
    task = make_task(zigzag_puzzle(True), [FaultSpec("misplacement", "Core")])
    facts = check_facts(task, (2, 1, 1), "actions")
    assert "domv(1,-2..2)." in facts and "dist(1,1..4)." in facts and "domv(2,-1..1)." in facts
    assert "minimise(steps,1)." in facts and "minimise(moved" not in facts


def _side(name, value_, optimal=True, valid=True, relaxed=False, exhausted=True):
    plan = None if value_ is None else ()
    j, c = (None, None) if value_ is None else value_
    return Side(name, "x", optimal, False, plan, j, c, 0.0, valid=valid, box=(1, 1, 1), horizon=8,
                exhausted=exhausted, relaxed=relaxed)


def test_the_verdict_over_a_universe_that_holds_the_search_plan():
    search = _side("moved-set-search", (3, 8))
    assert judge_partial(OBJECTIVE, search, _side("clingo-partial", (3, 8)))[0] == "agree"
    v, why = judge_partial(OBJECTIVE, search, _side("clingo-partial", (3, 9)))
    assert v == "disagree" and "above" in why
    v, why = judge_partial(OBJECTIVE, search, _side("clingo-partial", None, optimal=False))
    assert v == "disagree" and "no plan" in why
    v, why = judge_partial(OBJECTIVE, search, _side("clingo-partial", (2, 9)))
    assert v == "disagree" and "beats" in why
    v, why = judge_partial(OBJECTIVE, search, _side("clingo-partial", (2, 9), valid=False, relaxed=True))
    assert v == "unknown" and "separable" in why
    assert judge_partial(OBJECTIVE, search, _side("clingo-partial", (2, 9), valid=False))[0] == "disagree"
    assert judge_partial(OBJECTIVE, search, _side("clingo-partial", None, optimal=False, exhausted=False))[0] == "unknown"

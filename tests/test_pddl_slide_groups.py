"""The group rendering of the partial-move problem (forgeplan.planners.pddl.slide_groups: one action
per group move, blocking as derived atoms) and its output.sas (forgeplan.planners.pddl.sas) against the
engine, against a brute-force search over the engine's moves and against the same problem solved from PDDL."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cases import zigzag_puzzle
from forgeplan.model.actions import Join, Separate, moved_parts
from forgeplan.planners.pddl import slides
from forgeplan.planners.pddl.slide_groups import build_group_problem
from forgeplan.semantics.faults import FaultSpec, make_task
from test_pddl_partial import accepted_walk, brute_optimum, fd_optimum, tables, value

W = 1000


@pytest.fixture(scope="module")
def zigzag():
    task = make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Core")])
    return task, build_group_problem(task, tables(task))


def _offsets(sp, state: set) -> dict:
    """Slot -> the offsets its `at` atoms name."""
    return {pid: {a.split()[2][:-1] for a in state if a.startswith(f"(at {sp.names[pid]} ")} for pid in sp.task.world.ids}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choices=st.lists(st.integers(min_value=0, max_value=10 ** 6), min_size=1, max_size=8))
def test_random_sequences_are_legal_in_the_group_problem_exactly_when_the_engine_allows_them(zigzag, choices):
    """Each step a random candidate (slides of every set, removals, inserts at every offset; legal or not):
    the problem accepts it exactly when the engine does, and every slot's offset agrees afterwards."""
    task, sp = zigzag
    world = task.world
    for names, state in accepted_walk(sp, world, task.actual, choices):
        atoms = set(sp.init)
        for n in names:
            atoms = slides.apply(sp, atoms, sp.by_name[n])
        assert _offsets(sp, atoms) == {pid: {slides.pos_name(s.offset)} if s.present else set()
                                       for pid, s in zip(world.ids, state.slots)}


def test_blocking_needs_every_pair_of_a_member_and_a_non_member(zigzag):
    """Mutation check: without its derived blocking atoms the problem lets the shell slide into the core."""
    task, sp = zigzag
    from forgeplan.model.actions import Slide

    into_core = [Slide(("Shell",), "+x", 1)]
    assert task.world.check(task.actual, into_core[0]).code == "blocked"
    assert slides.encode(sp, into_core) is None
    saved = dict(sp.derived)
    try:
        sp.derived, sp.derived_cache = {a: b for a, b in saved.items() if not a.startswith("(blk_")}, {}
        assert slides.encode(sp, into_core) is not None
    finally:
        sp.derived, sp.derived_cache = saved, {}


def test_separation_and_join_at_offsets_decode_back(zigzag):
    """A separation is one action, a join at offsets a transaction; both go through and decode back."""
    from forgeplan.model.actions import Insert, Remove, Slide

    task, sp = zigzag
    plan = [Remove("Cap"), Slide(("Core",), "+y", 1), Separate(("Shell", "Core"), "-x"),
            Join(("Shell", "Core"), "+x", [(0, 0, 0), (0, 1, 0)]), Slide(("Core",), "-y", 1), Insert("Cap")]
    assert task.world.replay(task.actual, plan).failure is None
    names = slides.encode(sp, plan)
    assert names is not None and slides.decode(sp, names) == tuple(plan)
    assert slides.run_steps(sp, names) == (True, W * 3 + len(plan))


def _same_optimum(base: bool, fault, tmp_path) -> None:
    task = make_task(zigzag_puzzle(base), [FaultSpec(*fault)])
    plan, cost = fd_optimum(task, tables(task), tmp_path)
    assert cost == W * len(moved_parts(plan)) + len(plan)
    assert task.world.restoration(task.actual, plan, task.target).restored
    assert value(plan) == brute_optimum(task)


def test_group_rendering_has_the_engine_optimum(tmp_path):
    """Fast Downward's optimum on the PDDL text equals a brute-force search over the engine's moves in
    the same box, and the plan replays."""
    _same_optimum(False, ("missing_part", "Cap"), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("base,fault", [(False, ("missing_part", "Core")), (False, ("misplacement", "Core")),
                                        (False, ("under_insertion", "Shell")), (True, ("missing_part", "Cap")),
                                        (True, ("misplacement", "Core")), (True, ("wrong_orientation", "Base"))])
def test_group_rendering_has_the_engine_optimum_on_more_tasks(base, fault, tmp_path):
    _same_optimum(base, fault, tmp_path)


@pytest.mark.slow
def test_a_spare_in_its_slot_slides_in_the_rendering_as_the_search_slides_it():
    """A slot holding its spare slides it (§9: a spare moves as its slot's part does): the moved-set
    search's plan for a level-4 burr with a spare stick, whose first step slides the spare, runs in the
    group problem step by step."""
    from forgeplan.io.catalog import load_assembly
    from forgeplan.planners.pddl.positions import position_tables
    from forgeplan.planners.registry import solve

    task = make_task(load_assembly("burr_6_level4"), [FaultSpec("wrong_part")], seed=0)
    plan = solve(task).plan
    spare = next(s.occupant for s, pid in zip(task.actual.slots, task.world.ids) if s.present and s.occupant != pid)
    assert any(a.name == "slide" and spare in a.part_ids for a in plan)
    assert slides.validate(build_group_problem(task, position_tables(task, 1)), plan)

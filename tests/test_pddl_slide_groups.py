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
from forgeplan.planners.pddl.external import fast_downward_script, run_planner, solve_files
from forgeplan.planners.pddl.fd import PARTIAL_CONFIG, solve_fd_partial
from forgeplan.planners.pddl.sas import sas_text
from forgeplan.planners.pddl.slide_groups import build_group_problem
from forgeplan.semantics.faults import FaultSpec, make_task
from test_pddl_partial import accepted_walk, brute_optimum, tables, value

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


def _fd_on_sas(sp) -> str:
    import tempfile
    from pathlib import Path
    import sys

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "output.sas").write_text(sas_text(sp), encoding="utf-8")
        code = run_planner([sys.executable, str(fast_downward_script()), "--plan-file", "sas_plan", "output.sas",
                            "--search", PARTIAL_CONFIG], Path(tmp), 120)
        assert code == 0
        return Path(tmp, "sas_plan").read_text(encoding="utf-8")


def _cost(text: str) -> int:
    import re

    return int(re.search(r"cost = (\d+)", text).group(1))


@pytest.mark.slow
def test_output_sas_and_pddl_of_the_group_problem_have_the_same_optimum(tmp_path):
    """Fast Downward on the written output.sas and on the PDDL text through its own translator: the same
    optimal cost, and the output.sas plan reaches the goal in the problem's own semantics."""
    task = make_task(zigzag_puzzle(), [FaultSpec("missing_part", "Core")])
    sp = build_group_problem(task, tables(task))
    text = _fd_on_sas(sp)
    names = [line.strip()[1:-1].strip() for line in text.splitlines() if line.startswith("(")]
    assert slides.run_steps(sp, names) == (True, _cost(text))
    domain, problem = slides.pddl_text(sp)
    (tmp_path / "d.pddl").write_text(domain)
    (tmp_path / "p.pddl").write_text(problem)
    code, translated = solve_files("fd", tmp_path / "d.pddl", tmp_path / "p.pddl", PARTIAL_CONFIG, 120)
    assert code == 0 and _cost(translated) == _cost(text)


def _same_optimum(base: bool, fault) -> None:
    task = make_task(zigzag_puzzle(base), [FaultSpec(*fault)])
    r = solve_fd_partial(task, tables(task), time_limit=300)
    assert r.plan is not None and r.cost == r.reported_cost == W * len(moved_parts(r.plan)) + len(r.plan)
    assert task.world.restoration(task.actual, r.plan, task.target).restored
    assert value(r.plan) == brute_optimum(task)


def test_group_rendering_has_the_engine_optimum():
    """Fast Downward's optimum equals a brute-force search over the engine's moves in the same box, and
    the plan replays."""
    _same_optimum(False, ("missing_part", "Cap"))


@pytest.mark.slow
@pytest.mark.parametrize("base,fault", [(False, ("missing_part", "Core")), (False, ("misplacement", "Core")),
                                        (False, ("under_insertion", "Shell")), (True, ("missing_part", "Cap")),
                                        (True, ("misplacement", "Core")), (True, ("wrong_orientation", "Base"))])
def test_group_rendering_has_the_engine_optimum_on_more_tasks(base, fault):
    _same_optimum(base, fault)

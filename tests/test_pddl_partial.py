"""The grounded partial-move problem (SEMANTICS.md §9, forgeplan.planners.pddl.slides) against the engine:
random action sequences judged by both, Fast Downward's optimum against a brute-force search over the
engine, and plans carried through decode, encode and replay."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cases import uniform_cost_optimum, zigzag_puzzle
from forgeplan.model.actions import Insert, Join, Remove, Separate, Slide, moved_parts
from forgeplan.model.assembly import DIRECTIONS
from forgeplan.planners.pddl import slides
from forgeplan.planners.pddl.fd import solve_fd_partial
from forgeplan.planners.pddl.positions import PositionTables
from forgeplan.planners.pddl.slide_groups import build_group_problem
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.legal import legal_actions

W = 1000
RADIUS, DISTANCES = 1, (1, 2)
BOX = tuple(sorted(itertools.product(range(-RADIUS, RADIUS + 1), repeat=3), key=lambda o: (o != (0, 0, 0), o)))


def tables(task) -> PositionTables:
    """A small position box for every slot (the test's domain: every offset within RADIUS per axis)."""
    return PositionTables(task.world, {i: BOX for i in range(len(task.world.ids))}, DISTANCES)


def inside(state) -> bool:
    return all(not s.present or s.offset in BOX for s in state.slots)


def random_steps(world, state, choices):
    """A random walk judged by the engine: each choice picks a candidate step (slides, removals, inserts at
    every offset; no separate/join), legal or not. Yields (the plan so far, the step, whether the engine
    allows it, the state after it); the walk goes on from a legal step. Steps that leave the box are
    outside the problems' domain and skipped."""
    plan: list = []
    for c in choices:
        cands = [a for a in candidate_actions(world, state) if not isinstance(a, (Separate, Join))]
        a = cands[c % len(cands)]
        allowed = world.check(state, a) is None
        if allowed and not inside(world.apply(state, a)):
            continue
        after = world.apply(state, a) if allowed else state
        yield list(plan), a, allowed, after
        if allowed:
            plan.append(a)
            state = after


def accepted_walk(sp, world, state, choices):
    """`random_steps` checked against a problem: each step must be accepted by `sp` (after the walk so
    far) exactly when the engine allows it. Yields each legal step's action names and the state after it."""
    for plan, a, legal, after in random_steps(world, state, choices):
        names = slides.encode(sp, [*plan, a])
        assert (names is not None) == legal, (plan, a)
        if legal:
            yield names, after


def candidate_actions(world, state) -> list:
    """Every slide, removal, separation, insertion and join this test's domain allows, legal or not:
    slides of every set of present slots, inserts and two-member joins at every offset of the box."""
    present = [i for i, s in enumerate(state.slots) if s.present]
    occ = {i: state.slots[i].occupant for i in present}
    out: list = []
    for n in range(1, len(present) + 1):
        for g in itertools.combinations(present, n):
            for d in DIRECTIONS:
                out += [Slide(tuple(occ[i] for i in g), d, k) for k in DISTANCES]
                out.append(Remove(occ[g[0]]) if n == 1 else Separate(tuple(occ[i] for i in g), d))
    absent = [i for i, s in enumerate(state.slots) if not s.present]
    out += [Insert(world.ids[i], o) for i in absent for o in BOX]
    for g in itertools.combinations(absent, 2):
        for d in DIRECTIONS:
            out += [Join(tuple(world.ids[i] for i in g), d, [a, b]) for a in BOX for b in BOX]
    return out


def engine_moves(world, state) -> list:
    return [a for a in candidate_actions(world, state) if world.check(state, a) is None]


def brute_optimum(task) -> tuple[int, int]:
    """(J_move, c) of an optimal plan over the engine's legal actions (plus the single-part repairs
    `legal_actions` offers) whose states stay inside the box. Knows nothing of PDDL."""
    def successors(world, state):
        acts = engine_moves(world, state) + [a for a in legal_actions(world, state)
                                             if a.name in ("reset_pose", "rotate", "replace")]
        return [(a, nxt) for a in dict.fromkeys(acts) if inside(nxt := world.apply(state, a))]
    return uniform_cost_optimum(task, successors, (W, 1))


def value(plan) -> tuple[int, int]:
    return len(moved_parts(plan)), len(plan)


# ----------------------------------------------------------------------------- engine vs the problem

@pytest.fixture(scope="module")
def zigzag():
    task = make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Core")])
    return task, build_group_problem(task, tables(task))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choices=st.lists(st.integers(min_value=0, max_value=10 ** 6), min_size=1, max_size=8))
def test_random_sequences_are_legal_in_the_problem_exactly_when_the_engine_allows_them(zigzag, choices):
    """Each step: a random candidate (legal or not in the engine); the problem must accept the prefix
    plus that step exactly when the engine does, and agree on every slot's offset afterwards."""
    task, sp = zigzag
    world = task.world
    for names, state in accepted_walk(sp, world, task.actual, choices):
        atoms = _final_atoms(sp, names)
        for i, pid in enumerate(world.ids):
            at = {x for x in atoms if x.startswith(f"(at {sp.names[pid]} ")}
            s = state.slots[i]
            assert at == ({f"(at {sp.names[pid]} {slides.pos_name(s.offset)})"} if s.present else set())


def _final_atoms(sp, names) -> set:
    state = set(sp.init)
    for n in names:
        state = slides.apply(sp, state, sp.by_name[n])   # conditional effects included
    return state


# ----------------------------------------------------------------------------- Fast Downward vs brute force

@pytest.mark.slow
@pytest.mark.parametrize("base,fault", [(False, ("missing_part", "Core")), (False, ("misplacement", "Cap")),
                                        (False, ("under_insertion", "Core")), (False, ("wrong_orientation", "Shell")),
                                        (True, ("misplacement", "Core"))])
def test_fast_downward_optimum_equals_brute_force_over_the_engine(base, fault):
    """On the three-part puzzle the optima separate the shell with the core inside and join it back;
    with the base plate that is blocked and the optimum slides the core out of the way (2 parts, 6 actions:
    two slides, a separation and a join at offsets, two slides back)."""
    task = make_task(zigzag_puzzle(base), [FaultSpec(*fault)])
    tab = tables(task)
    r = solve_fd_partial(task, tab, time_limit=120)
    assert r.optimal and r.plan is not None
    assert task.world.restoration(task.actual, r.plan, task.target).restored
    assert r.cost == r.reported_cost == W * len(moved_parts(r.plan)) + len(r.plan)
    assert value(r.plan) == brute_optimum(task)
    sp = build_group_problem(task, tab)
    assert slides.validate(sp, r.plan)
    if base:
        assert any(isinstance(a, Slide) for a in r.plan)


# ----------------------------------------------------------------------------- files, command line, crosscheck

@pytest.mark.slow
def test_export_and_import_a_partial_move_task(tmp_path, capsys):
    """export-pddl (grounded, a radius-1 sub-domain) -> Fast Downward -> import-plan -> the engine."""
    from forgeplan.cli import main
    from forgeplan.io.task_files import write_task
    from forgeplan.planners.pddl.external import solve_files

    task = make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Cap")])
    write_task(task, tmp_path / "task")
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "lifted"), "--radius", "1"]) == 2
    assert "--grounded" in capsys.readouterr().err
    out = tmp_path / "grounded"
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(out), "--grounded", "--radius", "1"]) == 0
    code, text = solve_files("fd", out / "domain.pddl", out / "problem.pddl", "astar(blind())", 120)
    assert code == 0 and text
    (tmp_path / "sas_plan").write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["import-plan", str(tmp_path / "task"), str(tmp_path / "sas_plan"), "--grounded", "--radius", "1"]) == 0
    assert '"reset_pose"' in capsys.readouterr().out
    (tmp_path / "bad").write_text("(no_such_step)\n", encoding="utf-8")
    assert main(["import-plan", str(tmp_path / "task"), str(tmp_path / "bad"), "--grounded", "--radius", "1"]) == 2
    assert "no_such_step" in capsys.readouterr().err


def test_the_whole_position_domain_of_a_small_puzzle_is_refused_as_too_large_not_misjudged():
    """The grounded task's domain (every offset up to the assembly's extent) makes the zigzag problem too
    large to write: Fast Downward's side declines it, which can only make a comparison unknown."""
    from forgeplan.planners import crosscheck as cc

    task = make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Core")])
    side = cc.fd_partial_side(task, "moved-parts,actions", 60, None)
    assert side.status.startswith("unsupported") and "too large" in side.status and side.plan is None
    prover = cc.prover_side(task, "moved-parts,actions", 60)
    assert cc.judge_sub_domain("moved-parts,actions", prover, side, True)[0] == "unknown"


@pytest.mark.slow
def test_crosscheck_on_a_sub_domain_agrees_only_where_it_holds_the_search_plan():
    """Over a radius-1 sub-domain Fast Downward's optimum is a plan, not a proof: the comparison agrees
    when that sub-domain holds the moved-set search's proven plan and the values are equal."""
    from forgeplan.planners.crosscheck import compare_task, plan_radius

    task = make_task(zigzag_puzzle(True), [FaultSpec("misplacement", "Core")])
    c = compare_task(task, time_limit=120, radius=1)
    assert c.checker.valid and value(c.checker.plan) == (2, 6) and not c.checker.optimal
    assert c.prover.planner == "moved-set-search" and c.prover.valid
    held = c.prover.optimal and plan_radius(task, c.prover.plan) <= 1 and value(c.prover.plan) == (2, 6)
    assert c.verdict == ("agree" if held else "unknown"), c.reason


def test_the_zigzag_data_files_are_the_fixtures():
    from pathlib import Path

    from forgeplan.io.importers import import_puzzle

    folder = Path(__file__).resolve().parent / "data" / "partial_fd"
    for base in (False, True):
        mine, theirs = zigzag_puzzle(base), import_puzzle(folder / f"{zigzag_puzzle(base).assembly_id}.json")
        shift = [min(v[k] for p in mine.parts for v in p.voxels) for k in range(3)]
        assert [sorted((x - shift[0], y - shift[1], z - shift[2]) for x, y, z in p.voxels) for p in mine.parts] == \
               [sorted(p.voxels) for p in theirs.parts]


def test_a_sub_domain_optimum_agrees_only_with_equal_values_inside_it_and_disagrees_below_a_proof():
    from forgeplan.planners.crosscheck import Side, judge_sub_domain

    def side(name, optimal, value, valid=True):
        return Side(name, "x", optimal, False, (), value[0], value[1], 0.0, valid=valid, radius=1)

    search, objective = side("moved-set-search", True, (3, 8)), "moved-parts,actions"
    v, why = judge_sub_domain(objective, search, side("fast-downward", False, (3, 8)), True)
    assert v == "agree" and "within 1" in why
    assert judge_sub_domain(objective, search, side("fast-downward", False, (3, 8)), False)[0] == "unknown"
    assert judge_sub_domain(objective, search, side("fast-downward", False, (4, 2)), True)[0] == "unknown"
    v, why = judge_sub_domain(objective, search, side("fast-downward", False, (2, 9)), True)
    assert v == "disagree" and "beats" in why
    assert judge_sub_domain(objective, search, side("fast-downward", False, (3, 8), valid=False), True)[0] == "disagree"

"""The grounded partial-move problem (SEMANTICS.md §9, forgeplan.planners.pddl.slides) against the engine:
random action sequences judged by both, Fast Downward's optimum on its PDDL against a brute-force search
over the engine, and plans carried through decode, encode and replay."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cases import grounding, uniform_cost_optimum, zigzag_puzzle
from forgeplan.model.actions import Insert, Join, Remove, Separate, Slide, moved_parts
from forgeplan.model.assembly import DIRECTIONS
from forgeplan.planners.pddl import slides
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
        acts = engine_moves(world, state) + [a for a in legal_actions(grounding(world), state)
                                             if a.name in ("reset_pose", "rotate", "replace")]
        return [(a, nxt) for a in dict.fromkeys(acts) if inside(nxt := world.apply(state, a))]
    return uniform_cost_optimum(task, successors, (W, 1))


def value(plan) -> tuple[int, int]:
    return len(moved_parts(plan)), len(plan)


def fd_optimum(task, tab, tmp_path):
    """Fast Downward's astar(blind()) (the rendering has axioms and conditional effects, which lmcut
    refuses) on the group problem written as PDDL: (the decoded plan, the cost Fast Downward reports)."""
    import re

    from forgeplan.planners.pddl.external import solve_files

    sp = build_group_problem(task, tab)
    domain, problem = slides.pddl_text(sp)
    (tmp_path / "d.pddl").write_text(domain, encoding="utf-8")
    (tmp_path / "p.pddl").write_text(problem, encoding="utf-8")
    code, text = solve_files("fd", tmp_path / "d.pddl", tmp_path / "p.pddl", "astar(blind())", 300)
    assert code == 0 and text
    names = [line.strip()[1:-1].strip() for line in text.splitlines() if line.startswith("(")]
    assert slides.run_steps(sp, names)[0]
    return slides.decode(sp, names), int(re.search(r"cost = (\d+)", text).group(1))


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
def test_fast_downward_optimum_equals_brute_force_over_the_engine(base, fault, tmp_path):
    """On the three-part puzzle the optima separate the shell with the core inside and join it back;
    with the base plate that is blocked and the optimum slides the core out of the way (2 parts, 6 actions:
    two slides, a separation and a join at offsets, two slides back)."""
    task = make_task(zigzag_puzzle(base), [FaultSpec(*fault)])
    tab = tables(task)
    plan, cost = fd_optimum(task, tab, tmp_path)
    assert task.world.restoration(task.actual, plan, task.target).restored
    assert cost == W * len(moved_parts(plan)) + len(plan)
    assert value(plan) == brute_optimum(task)
    assert slides.validate(build_group_problem(task, tab), plan)
    if base:
        assert any(isinstance(a, Slide) for a in plan)


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


def test_the_zigzag_data_files_are_the_fixtures():
    from pathlib import Path

    from forgeplan.io.importers import import_puzzle

    folder = Path(__file__).resolve().parent / "data" / "partial_fd"
    for base in (False, True):
        mine, theirs = zigzag_puzzle(base), import_puzzle(folder / f"{zigzag_puzzle(base).assembly_id}.json")
        shift = [min(v[k] for p in mine.parts for v in p.voxels) for k in range(3)]
        assert [sorted((x - shift[0], y - shift[1], z - shift[2]) for x, y, z in p.voxels) for p in mine.parts] == \
               [sorted(p.voxels) for p in theirs.parts]


def test_a_radius_past_the_budget_is_refused_before_the_problem_is_built(tmp_path, capsys):
    """A six-piece burr at radius 2 would take 1.7 GB and most of a minute to write (docs/limits.md)."""
    from forgeplan.cli import main
    from forgeplan.planners.pddl.partial_files import MAX_POSITION_PAIRS
    from forgeplan.planners.pddl.positions import position_tables

    task = tmp_path / "task"
    assert main(["task", "make", "burr_6_level4", "--out", str(task), "--fault", "misplacement", "--no-proof"]) == 0
    from forgeplan.io.task_files import load_task

    assert position_tables(load_task(task), 1).pairs() <= MAX_POSITION_PAIRS < position_tables(load_task(task), 2).pairs()
    capsys.readouterr()
    for radius in ("2", None):
        argv = ["export-pddl", str(task), "--out", str(tmp_path / "x"), "--grounded"] + (["--radius", radius] if radius else [])
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "--radius" in err and "pairs of positions" in err and err.count("\n") == 1
    assert not (tmp_path / "x").exists()

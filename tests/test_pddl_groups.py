"""Group moves in the PDDL export (SEMANTICS §5) on the real level-1 burrs (tests/burrdata.py): the
candidate groups, Fast Downward's optimum against a brute-force search over the engine, the export
command, and UP's validator agreeing with the engine on group plans (also with a spare and a lock)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from concurrent.futures import ProcessPoolExecutor

import pytest
from unified_planning.shortcuts import get_environment

from forgeplan.bench.burr_faults import FAULTS, fault_task, level1_puzzles
from forgeplan.cli import main
from forgeplan.geometry.checks import check_geometry
from forgeplan.geometry.separation import is_separable
from forgeplan.io.importers import import_puzzle
from forgeplan.model.actions import KIND, GroupMove, Join
from forgeplan.model.assembly import DIRECTIONS, LockMechanism, SparePart, validate_assembly
from forgeplan.planners.pddl.fd import solve_fd
from forgeplan.planners.pddl.groups import candidate_counts, candidate_groups
from forgeplan.planners.pddl.problem import build_problem
from forgeplan.semantics.faults import FaultSpec, make_task
from burrdata import FOLDER as BURR, HAVE_SHARED, burr, needs_shared, param
from forgeplan.io.task_files import write_task
from forgeplan.planners.repair import repair_plan
from cases import grounding, uniform_cost_optimum
from test_pddl import burr_jobs, engine_legal, walk_expanded_problem

get_environment().credits_stream = None
W = 1000


def brute_optimum(task, objective: str = "moved-parts,actions") -> tuple[int, int]:
    """(J_move, c) of an optimal plan over the engine's legal actions (every group move `World.check`
    accepts). Knows nothing of PDDL; J_move counts every member of a group move."""
    weights = {"moved-parts,actions": (W, 1), "actions": (0, 1), "moved-parts": (1, 0)}[objective]
    return uniform_cost_optimum(task, lambda world, state: [(a, world.apply(state, a)) for a in engine_legal(world, state)],
                                weights)


def burr_task(puzzle: str, fault: str):
    return fault_task(import_puzzle(BURR / puzzle), fault)[1]


def value(plan) -> tuple[int, int]:
    return len({p for a in plan for p in a.touched}), len(plan)


# ----------------------------------------------------------------------------- candidate groups

def test_candidate_groups_are_the_separable_sets_and_the_export_drops_only_dominated_directions():
    """Against the definition over all 2^n subsets; an exported move along d' stands for each dropped
    direction d of the same group (its blockers are a subset of d's)."""
    for path in level1_puzzles(BURR):
        asm = import_puzzle(path)
        world = make_task(asm, []).world
        found = candidate_groups(grounding(world))
        if not world.moves.groups:
            assert not any(found.groups.values()) and not any(found.moves.values()), path.name
            continue
        subsets = [g for k in range(2, len(asm.parts) + 1) for g in itertools.combinations(asm.part_ids, k)]
        separable = [g for g in subsets if is_separable(asm, g)]
        for d in DIRECTIONS:
            along = {g for g in separable if all(d in asm.part(p).removal_dirs for p in g)}
            assert set(found.groups[d]) == along and set(found.moves[d]) <= along, (path.name, d)

        def blockers(g, d):
            return {b for p in g for j, b in enumerate(world.ids) if world.blockers_along[world.index[p]][d] >> j & 1} - set(g)
        for d, groups in found.groups.items():
            for g in groups:
                assert any(blockers(g, e) <= blockers(g, d) for e in DIRECTIONS if g in found.moves[e]), (path.name, g, d)


@needs_shared
def test_candidate_group_counts_of_solid6burr_a():
    task = burr_task("solid6burr_a_asm386.json", "missing_part")
    assert candidate_counts(task) == {"candidates": {d: 57 for d in DIRECTIONS},  # every subset of 2..6 pieces
                                      "exported": {"+x": 32, "-x": 11, "+y": 10, "-y": 9, "+z": 4, "-z": 11}}


@needs_shared
def test_export_command_prints_and_records_the_counts(tmp_path, capsys):
    write_task(burr_task("solid6burr_a_asm386.json", "missing_part"), tmp_path / "task")
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "pddl"), "--grounded"]) == 0
    out = capsys.readouterr().out
    assert "candidate groups per direction, for separate and for join: +x 57, -x 57, +y 57, -y 57, +z 57, -z 57" in out
    assert "(dominated directions dropped) per direction, for separate and for join: +x 32, -x 11" in out
    recorded = json.loads((tmp_path / "pddl" / "groups.json").read_text())
    assert recorded["counts"]["exported"]["+z"] == len(recorded["exported"]["+z"]) == 4
    actions = (tmp_path / "pddl" / "domain.pddl").read_text().split("(:action", 1)[1]  # plain STRIPS: no variables
    assert not any(k in actions for k in ("forall", "exists", "when", "?"))
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "lifted")]) == 2
    assert "--grounded" in capsys.readouterr().err


# ----------------------------------------------------------------------------- Fast Downward's optimum

def _solve(args: tuple[str, str]) -> tuple:
    task = burr_task(*args)
    r = solve_fd(task, time_limit=60)
    world = task.world
    valid = r.plan is not None and world.restoration(task.actual, r.plan, task.target).restored
    return (args, r.optimal, valid, r.cost == r.reported_cost, r.plan and value(r.plan), brute_optimum(task),
            world.moves.groups, r.plan)


@pytest.mark.slow
def test_fast_downward_solves_a_fault_inside_every_level1_burr_optimally():
    """A fault of the inner piece in every level-1 burr: optimal, valid in the engine, the cost Fast
    Downward reports is the plan's, and the optimum is the brute-force one."""
    jobs = burr_jobs()
    assert {p for p, _ in jobs} == {p.name for p in level1_puzzles(BURR)} and {f for _, f in jobs} == set(FAULTS)
    with ProcessPoolExecutor(max_workers=2) as pool:  # each solve mostly waits on Fast Downward
        results = list(pool.map(_solve, jobs))
    for args, optimal, valid, same_cost, found, brute, needs_groups, plan in results:
        assert optimal and valid and same_cost, args
        assert found == brute, (args, found, brute)
        assert any(isinstance(a, GroupMove) for a in plan) == needs_groups, args
    # both faults of each puzzle that needs group moves: 4 of the 7 in ../shared/data/burr, 1 of the 3 shipped
    assert sum(r[6] for r in results) == (8 if HAVE_SHARED else 2)


@pytest.mark.slow
@needs_shared
def test_other_objectives_on_a_group_burr():
    """`actions` has no touch atoms; `moved-parts` makes group moves free and each `touch` cost 1."""
    task = burr_task("solid6burr_d_asm919.json", "wrong_orientation")
    for objective, pick in (("actions", 1), ("moved-parts", 0)):
        r = solve_fd(task, objective, time_limit=60)
        assert r.optimal and r.cost == r.reported_cost, objective
        assert value(r.plan)[pick] == brute_optimum(task, objective)[pick], objective


# ----------------------------------------------------------------------------- a burr with a spare, a lock, a support

def mechanised_burr():
    """mj_burr6_puzzle4 (a shipped burr that needs group moves) with a rotate lock on piece 0 holding piece 3,
    piece 2 supporting piece 5, and a wrong stick for piece 2: group moves then meet spares, engaged locks
    and supports."""
    asm = import_puzzle(burr("mj_burr6_puzzle4"))
    ids = asm.part_ids
    lock = LockMechanism("rotate", holds=(ids[3],), axis="x", angle_deg=90.0)
    parts = tuple(dataclasses.replace(p, lock=lock) if p.part_id == ids[0] else
                  dataclasses.replace(p, supports=(ids[2],)) if p.part_id == ids[5] else p for p in asm.parts)
    out = dataclasses.replace(asm, assembly_id="mechanised_burr", parts=parts,
                              spares=(SparePart(ids[2] + " wrong", "stick", ids[2], "notch on the wrong side"),))
    validate_assembly(out)
    check_geometry(out)
    return out


@pytest.mark.parametrize("faults", [["interference_lock"], ["wrong_part", "misplacement"]])
def test_mechanised_burr_expanded_problem_has_exactly_the_engines_legal_actions(faults):
    task = make_task(mechanised_burr(), [FaultSpec(f) for f in faults], seed=1)
    assert task.world.moves.groups
    assert walk_expanded_problem(task, str(faults), steps=6) > 0


@pytest.mark.slow
def test_mechanised_burr_spare_leaves_with_its_group():
    """Optimal against brute force, and the spare is named by the separate that moves it."""
    task = make_task(mechanised_burr(), [FaultSpec("wrong_part")], seed=1)
    r = solve_fd(task, time_limit=60)
    assert r.optimal and value(r.plan) == brute_optimum(task)
    spare = task.assembly.spares[0].part_id
    assert any(a.name == "separate" and spare in a.touched for a in r.plan)


# ----------------------------------------------------------------------------- second opinion on group plans

def plan_variants(task, plan):
    """The valid plan and others: the last step dropped, the first two swapped, the last group move
    first (its members are not all absent), the first group move along an illegal direction, naming a
    slot's target part where a spare sits, and a valid detour: a group separated and joined back along a
    direction the default export drops (legal in the engine, so the validator must accept it)."""
    world = task.world
    out = [plan, plan[:-1], (plan[1], plan[0], *plan[2:])]
    moves = [a for a in plan if isinstance(a, GroupMove)]
    out.append((Join(moves[-1].part_ids, moves[-1].direction), *plan))
    first = moves[0]
    legal = engine_legal(world, task.actual)
    odd = next(d for d in DIRECTIONS if KIND[first.name](first.part_ids, d) not in legal)
    out.append(tuple(KIND[a.name](a.part_ids, odd) if a == first else a for a in plan))
    slots = slots_of(world, first)
    if slots != list(first.part_ids):
        out.append(tuple(KIND[a.name](slots, a.direction) if a == first else a for a in plan))
    return out + [d for d in [_detour(task, plan)] if d is not None]


def _detour(task, plan):
    """A valid plan with a group move along a direction the default export drops: a step of `plan` moved
    along such a direction, or else a group separated and joined back that way; None if the engine
    allows neither on the way."""
    world, state = task.world, task.actual
    kept = candidate_groups(grounding(world)).moves
    for k, a in enumerate(plan):
        for b in engine_legal(world, state):
            if isinstance(b, GroupMove) and tuple(slots_of(world, b)) not in kept[b.direction]:
                if (b.name, b.touched) == (a.name, a.touched):
                    return (*plan[:k], b, *plan[k + 1:])
                if b.name == "separate":
                    return (*plan[:k], b, Join(slots_of(world, b), b.direction), *plan[k:])
        state = world.apply(state, a)
    return None


def slots_of(world, a: GroupMove) -> list[str]:
    return [world.ids[world._slot_of(p)] for p in a.part_ids]


def engine_valid(task, plan) -> bool:
    """Legal in the engine at every step (single-part moves inside the grounded set) and target-equivalent."""
    world, state = task.world, task.actual
    for a in plan:
        if a not in engine_legal(world, state):
            return False
        state = world.apply(state, a)
    return world.equivalent(state, task.target)


@pytest.mark.slow
@pytest.mark.parametrize("which, detour", [pytest.param("solid6burr_b_asm392.json/wrong_orientation", True,
                                                        marks=needs_shared),
                                           ("mechanised/wrong_part", False)])  # its lock and support leave no detour
def test_validator_agrees_with_engine_on_group_plans(which, detour):
    puzzle, fault = which.split("/")
    task = (make_task(mechanised_burr(), [FaultSpec(fault)], seed=1) if puzzle == "mechanised"
            else burr_task(puzzle, fault))
    plan = tuple(repair_plan(task.world, task.actual, task.target))
    enc = build_problem(task, grounded=True)  # validates on its every-direction twin
    verdicts = [(engine_valid(task, p), enc.validate(p)) for p in plan_variants(task, plan)]
    assert verdicts[0] == (True, True)
    assert (verdicts[-1] == (True, True)) == detour  # the detour along a dropped direction
    assert sum(not e for e, _ in verdicts) >= 4  # the variants do include invalid plans
    assert all(e == v for e, v in verdicts), verdicts

"""Group moves in the PDDL export (SEMANTICS §5) on the real level-1 burrs of ../shared/data/burr: the
candidate groups, Fast Downward's optimum against a brute-force search over the engine, the export
command, and UP's validator agreeing with the engine on group plans (also with a spare and a lock)."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import json
from concurrent.futures import ProcessPoolExecutor

import pytest
from unified_planning.shortcuts import get_environment

from forgeplan.actions import Action
from forgeplan.assembly import DIRECTIONS, LockMechanism, SparePart, validate_assembly
from forgeplan.cli import main
from forgeplan.faults import FaultSpec, make_task
from forgeplan.geometry import check_geometry
from forgeplan.grounding import legal_actions
from forgeplan.groups import group_moves
from forgeplan.importers import import_puzzle
from forgeplan.pddl import build_problem, candidate_counts, candidate_groups, solve_fd
from forgeplan.perf.pddl_groups import BURR, FAULTS, fault_task, level1_puzzles
from forgeplan.repair import repair_plan
from forgeplan.task import write_task

get_environment().credits_stream = None
W = 1000


def brute_optimum(task, objective: str = "moved-parts,actions") -> tuple[int, int]:
    """(J_move, c) of an optimal plan: uniform-cost search over the engine's legal grounded actions.

    Knows nothing of PDDL; J_move counts every member of a group move (Action.touched)."""
    world, tie = task.world, itertools.count()
    weight = {"moved-parts,actions": (W, 1), "actions": (0, 1), "moved-parts": (1, 0)}[objective]
    frontier, seen, memo = [(0, next(tie), task.actual, frozenset(), 0)], set(), {}
    while frontier:
        _, _, state, moved, length = heapq.heappop(frontier)
        if (state, moved) in seen:
            continue
        seen.add((state, moved))
        if world.equivalent(state, task.target):
            return len(moved), length
        if state not in memo:
            memo[state] = [(a, world.apply(state, a)) for a in legal_actions(world, state)]
        for a, nxt in memo[state]:
            m = moved | set(a.touched)
            cost = weight[0] * len(m) + weight[1] * (length + 1)
            heapq.heappush(frontier, (cost, next(tie), nxt, frozenset(m), length + 1))
    raise AssertionError("no plan")


def burr_task(puzzle: str, fault: str):
    return fault_task(import_puzzle(BURR / puzzle), fault)[1]


# ----------------------------------------------------------------------------- candidate groups

def test_candidate_groups_are_every_group_some_present_set_can_separate():
    """Against the definition: the union over all 2^n sets of present parts of groups.group_moves."""
    for path in level1_puzzles(BURR):
        asm = import_puzzle(path)
        world = make_task(asm, []).world
        found = candidate_groups(world)
        if not world.needs_groups:
            assert not any(found.separate.values()) and not any(found.join.values()), path.name
            continue
        brute = {d: set() for d in DIRECTIONS}
        for k in range(2, len(asm.parts) + 1):
            for present in itertools.combinations(asm.part_ids, k):
                for step in group_moves(asm, present):
                    if len(step.move) >= 2:
                        brute[step.direction].add(step.move)
        assert {d: set(g) for d, g in found.separate.items()} == brute, path.name
        whole = {d: {s.move for s in group_moves(asm) if len(s.move) >= 2 and s.direction == d} for d in DIRECTIONS}
        assert {d: set(g) for d, g in found.join.items()} == whole, path.name


def test_candidate_group_counts_of_solid6burr_a():
    task = burr_task("solid6burr_a_asm386.json", "missing_part")
    assert candidate_counts(task) == {"separate": {"+x": 17, "-x": 17, "+y": 17, "-y": 17, "+z": 8, "-z": 15},
                                      "join": {"+x": 1, "-x": 1, "+y": 0, "-y": 0, "+z": 0, "-z": 0}}


def test_export_command_prints_and_records_the_counts(tmp_path, capsys):
    write_task(burr_task("solid6burr_a_asm386.json", "missing_part"), tmp_path / "task")
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "pddl"), "--grounded"]) == 0
    out = capsys.readouterr().out
    assert "candidate groups for separate per direction: +x 17, -x 17, +y 17, -y 17, +z 8, -z 15 (total 91)" in out
    recorded = json.loads((tmp_path / "pddl" / "groups.json").read_text())
    assert recorded["counts"]["join"]["+x"] == 1 and len(recorded["separate"]["+z"]) == 8
    domain = (tmp_path / "pddl" / "domain.pddl").read_text()
    assert not any(k in domain for k in ("forall", "exists", "when", "?"))
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "lifted")]) == 2
    assert "--grounded" in capsys.readouterr().err


# ----------------------------------------------------------------------------- Fast Downward's optimum

def _solve(args: tuple[str, str]) -> tuple:
    puzzle, fault = args
    task = burr_task(puzzle, fault)
    r = solve_fd(task, time_limit=60)
    world = task.world
    replay = world.replay(task.actual, r.plan or ())
    valid = r.plan is not None and replay.failure is None and world.equivalent(replay.final, task.target)
    value = None if r.plan is None else (len({p for a in r.plan for p in a.touched}), len(r.plan))
    return args, r.optimal, valid, r.cost == r.reported_cost, value, brute_optimum(task), world.needs_groups, r.plan


def burr_jobs() -> list[tuple[str, str]]:
    """Both faults of the inner piece in the puzzles that need group moves, one (rotating) in the others."""
    out = []
    for k, path in enumerate(level1_puzzles(BURR)):
        needs = make_task(import_puzzle(path), []).world.needs_groups
        out += [(path.name, f) for f in (FAULTS if needs else FAULTS[k % 2:k % 2 + 1])]
    return out


def test_fast_downward_solves_a_fault_inside_every_level1_burr_optimally():
    """A fault of the inner piece in every level-1 burr: optimal, valid in the engine, the cost Fast
    Downward reports is the plan's, and the optimum is the brute-force one."""
    jobs = burr_jobs()
    assert {p for p, _ in jobs} == {p.name for p in level1_puzzles(BURR)} and {f for _, f in jobs} == set(FAULTS)
    with ProcessPoolExecutor(max_workers=2) as pool:  # each solve mostly waits on Fast Downward
        results = list(pool.map(_solve, jobs))
    for args, optimal, valid, same_cost, value, brute, needs_groups, plan in results:
        assert optimal and valid and same_cost, args
        assert value == brute, (args, value, brute)
        if needs_groups:
            assert any(a.part_ids is not None for a in plan), args
    assert sum(r[6] for r in results) == 8  # 4 of the 7 puzzles need group moves


def test_other_objectives_on_a_group_burr():
    """`actions` has no touch atoms; `moved-parts` makes group moves free and each `touch` cost 1."""
    task = burr_task("solid6burr_a_asm386.json", "wrong_orientation")
    for objective, value in (("actions", lambda j, c: c), ("moved-parts", lambda j, c: j)):
        r = solve_fd(task, objective, time_limit=60)
        assert r.optimal and r.cost == r.reported_cost, objective
        plan = r.plan
        assert value(len({p for a in plan for p in a.touched}), len(plan)) == value(*brute_optimum(task, objective))


# ----------------------------------------------------------------------------- a burr with a spare, a lock, a support

def mechanised_burr():
    """solid6burr_a with a rotate lock on piece 0 holding piece 3, piece 2 supporting piece 5, and a
    wrong stick for the core piece 2: group moves then meet spares, engaged locks and supports."""
    asm = import_puzzle(BURR / "solid6burr_a_asm386.json")
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
    from test_pddl import walk_expanded_problem

    task = make_task(mechanised_burr(), [FaultSpec(f) for f in faults], seed=1)
    assert task.world.needs_groups
    assert walk_expanded_problem(task, str(faults), steps=8) > 0


def test_mechanised_burr_spare_leaves_with_its_group():
    """Optimal against brute force, and the spare is named by the separate that moves it."""
    task = make_task(mechanised_burr(), [FaultSpec("wrong_part")], seed=1)
    r = solve_fd(task, time_limit=60)
    assert r.optimal and (len({p for a in r.plan for p in a.touched}), len(r.plan)) == brute_optimum(task)
    spare = task.assembly.spares[0].part_id
    assert any(a.name == "separate" and spare in a.part_ids for a in r.plan)


# ----------------------------------------------------------------------------- second opinion on group plans

def plan_variants(task, plan):
    """The valid plan and invalid ones: dropped steps, swapped steps, a group move whose members are not
    all absent first, a group move along another direction, a group move naming a slot's target part
    where a spare sits."""
    world = task.world
    out = [plan, plan[1:], plan[:-1], (plan[1], plan[0], *plan[2:])]
    moves = [a for a in plan if a.part_ids is not None]
    out.append((Action.group("join", moves[-1].part_ids, moves[-1].direction), *plan))
    first = moves[0]
    odd = next(d for d in DIRECTIONS if d != first.direction)
    out.append(tuple(Action.group(a.name, a.part_ids, odd) if a == first else a for a in plan))
    slots = [world.ids[world._slot_of(p)] for p in first.part_ids]
    if slots != list(first.part_ids):
        out.append(tuple(Action.group(a.name, slots, a.direction) if a == first else a for a in plan))
    return out


def engine_valid(task, plan) -> bool:
    """Legal, inside the grounded action set at every step (group moves too), and ends target-equivalent."""
    world, state = task.world, task.actual
    for a in plan:
        if a not in legal_actions(world, state):
            return False
        state = world.apply(state, a)
    return world.equivalent(state, task.target)


@pytest.mark.parametrize("which", ["solid6burr_b_asm392.json/wrong_orientation", "mj_burr6_puzzle4.json/missing_part",
                                   "mechanised/wrong_part"])
def test_validator_agrees_with_engine_on_group_plans(which):
    puzzle, fault = which.split("/")
    task = (make_task(mechanised_burr(), [FaultSpec(fault)], seed=1) if puzzle == "mechanised"
            else burr_task(puzzle, fault))
    plan = tuple(repair_plan(task.world, task.actual, task.target))
    enc = build_problem(task, grounded=True)
    verdicts = [(engine_valid(task, p), enc.validate(p)) for p in plan_variants(task, plan)]
    assert verdicts[0] == (True, True)
    assert sum(not e for e, _ in verdicts) >= 4  # the variants do include invalid plans
    assert all(e == v for e, v in verdicts), verdicts

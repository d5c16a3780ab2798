"""The clingo side: every case of the shared registry, the plan checker against the engine, proofs, errors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import clingo
import pytest

from burrdata import burr
from cases import all_cases, lane
from forgeplan.bench.synthetic import chain_assembly, chain_task
from forgeplan.cli import main
from forgeplan.io.importers import import_puzzle
from forgeplan.io.task_files import write_task
from forgeplan.library.voxels import box, part
from forgeplan.model.actions import Action, Rotate, moved_parts
from forgeplan.model.assembly import Assembly
from forgeplan.model.errors import InputError
from forgeplan.model.state import Tolerances
from forgeplan.planners.asp import solve as asp
from forgeplan.planners.asp.facts import task_facts
from forgeplan.planners.asp.solve import ENCODINGS, check_plan, solve_task
from forgeplan.planners.reference import reference_output
from forgeplan.planners.result import Status
from forgeplan.semantics.closure import dependency_closure
from forgeplan.semantics.diagnosis import faulty_slots
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.legal import slot_actions
from forgeplan.semantics.engine import World
from forgeplan.semantics.task import Task
from forgeplan.verify import verify

CASES = all_cases()
FINAL_CODES = ("not_restored", "not_locked")


def _slot_of(task, x: str) -> str:
    return {w.part_id: w.variant_of for w in task.assembly.spares}.get(x, x)


@pytest.mark.parametrize("name,task", lane(CASES, every=12))  # the fast lane samples every assembly
def test_every_case_solves_optimally_and_replays_in_the_engine(name, task):
    res = solve_task(task)
    assert res.status is Status.OPTIMAL and res.optimal and res.canonical
    assert task.world.restoration(task.actual, res.plan, task.target).restored
    assert res.actions == len(res.plan) and res.moved_parts == len(moved_parts(res.plan))
    assert {_slot_of(task, x) for x in moved_parts(res.plan)} <= set(res.closure)
    assert res.lower_bound is not None and res.lower_bound <= res.moved_parts
    if name.endswith(("/nofault", "/boundary")):
        assert res.plan == () and res.proof == "relaxation-bound"


def _asp_closure(task) -> list[str]:
    ctl = clingo.Control(logger=lambda code, msg: None)
    ctl.load(str(ENCODINGS / "bound.lp"))
    ctl.add("base", [], task_facts(task).text)
    ctl.ground([("base", [])])
    return sorted(a.symbol.arguments[0].string for a in ctl.symbolic_atoms.by_signature("closure", 1))


@pytest.mark.parametrize("name,task", lane(CASES[::3], every=4))
def test_asp_closure_equals_python_closure(name, task):
    world = task.world
    py = dependency_closure(world, task.actual, faulty_slots(world, task.actual, task.target))
    assert _asp_closure(task) == sorted(world.ids[i] for i in py)


# ----------------------------------------------------------------------------- plan checker vs engine

def _random_sequence(task, rng: random.Random, length: int) -> list[Action]:
    """A walk over grounded actions: mostly legal ones, sometimes any grounded one (it ends the walk)."""
    world, state, seq = task.world, task.actual, []
    for _ in range(length):
        grounded = [a for i in range(len(world.ids)) for a in slot_actions(world, state, i)]
        legal = [a for a in grounded if world.check(state, a) is None]
        a = rng.choice(legal) if legal and rng.random() < 0.85 else rng.choice(grounded)
        seq.append(a)
        if world.check(state, a) is not None:
            break
        state = world.apply(state, a)
    return seq


WALKS = [(name, task, k) for k, (name, task) in enumerate(CASES[::2])]


@pytest.mark.parametrize("name,task,seed", [pytest.param(n, t, s, id=f"{n}/{s}", marks=() if s % 8 == 0 else pytest.mark.slow)
                                            for n, t, s in WALKS])
def test_checker_legality_equals_engine(name, task, seed):
    rng = random.Random(seed)
    seq = _random_sequence(task, rng, rng.randint(1, 14))
    world = task.world
    errs = check_plan(task, seq)
    action_errs = [e for e in errs if e[0] not in FINAL_CODES]
    replay = world.replay(task.actual, seq)
    if replay.failure is None:
        assert action_errs == []
        unrestored = {e[1].strip('"') for e in errs if e[0] == "not_restored"}
        unlocked = {e[1].strip('"') for e in errs if e[0] == "not_locked"}
        assert unrestored == {world.ids[i] for i in range(len(world.ids)) if not world.restored(replay.final, i)}
        assert unlocked == {world.ids[i] for i in range(len(world.ids))
                            if world.lock[i] is not None and not replay.final.slots[i].locked}
        assert (not unrestored and not unlocked) == world.equivalent(replay.final, task.target)
    else:
        first = min(e[2] for e in action_errs)
        assert first == replay.failure.step + 1
        assert replay.failure.reason.code in {e[0] for e in action_errs if e[2] == first}


def test_checker_rejects_actions_outside_the_grounded_set():
    task = chain_task(4, 2, "wrong_orientation")
    with pytest.raises(InputError, match="grounded action set"):
        check_plan(task, [Rotate("Chain_Bar001", axis="x", angle_deg=33.0)])


# ----------------------------------------------------------------------------- proofs and statuses

def _trap_task() -> Task:
    """A missing part whose blocker can only come back another way: J* = 3, c* = 5.

    p (missing) leaves up; b above it leaves down (into p's empty place) or along +x, where c sits;
    c leaves up. Remove b down, insert p: now b can come back only along +x, so c must move too.
    """
    asm = Assembly("trap", "test", (
        part("P", "bar", box(0, 0, 0, 1, 1, 1), dirs=("+y",)),
        part("B", "bar", box(0, 1, 0, 1, 2, 1), dirs=("-y", "+x")),
        part("C", "bar", box(1, 1, 0, 2, 2, 1), dirs=("+y",)),
    ))
    return make_task(asm, [FaultSpec("missing_part", "P")])


def test_relaxation_sees_the_way_back():
    res = solve_task(_trap_task())
    assert res.proof == "relaxation-bound" and res.lower_bound == 3 and (res.moved_parts, res.actions) == (3, 5)


def _uninformative_bound(monkeypatch):
    """Pretend the relaxation only knows J_move >= 0, so that every proof must come from elsewhere."""
    real = asp._Planner.lower_bound

    def weak(planner, task):
        b = real(planner, task)
        return asp._Bound(b.status, 0, 0) if b.status == "bound" else b
    monkeypatch.setattr(asp._Planner, "lower_bound", weak)


LOOP_FREE_TASKS = [("trap", _trap_task())] + [
    (f"chain_{n}_{d}/{f}", chain_task(n, d, f)) for n, d in ((3, 1), (4, 2)) for f in ("missing_part", "wrong_part")]


@pytest.mark.parametrize("name,task", LOOP_FREE_TASKS, ids=[n for n, _ in LOOP_FREE_TASKS])
def test_loop_free_completeness_alone_proves_the_optimum(name, task, monkeypatch):
    expected = solve_task(task, all_optimal=True)
    _uninformative_bound(monkeypatch)
    res = solve_task(task, all_optimal=True)
    assert res.status is Status.OPTIMAL and res.proof == "loop-free-paths"
    assert (res.moved_parts, res.actions, res.plan, res.n_optimal) == \
        (expected.moved_parts, expected.actions, expected.plan, expected.n_optimal)


def _interlocked(fault_on_p: str) -> Task:
    """Two parts that block each other in every direction they may use (not a valid assembly)."""
    asm = Assembly("interlock", "test", (
        part("P", "bar", box(0, 0, 0, 1, 1, 1), dirs=("+y",)),
        part("B", "bar", box(0, 1, 0, 1, 2, 1), dirs=("-y",)),
    ))
    world = World(asm, Tolerances())
    target = world.target_state()
    s = target.slots[0]
    actual = target.replace(0, world.empty_slot(0) if fault_on_p == "missing" else s._replace(seated=0.5))
    return Task(f"interlock_{fault_on_p}", asm, Tolerances(), actual, actual, target)


@pytest.mark.parametrize("fault", ["under_insertion", "missing"])
def test_unsolvable_by_relaxation(fault):
    # under-inserted P cannot be reached; missing P can go in once B has left downwards, but then
    # B can never come back
    res = solve_task(_interlocked(fault))
    assert res.status is Status.UNSOLVABLE and not res.optimal and res.plan == ()
    assert res.proof == "relaxation-infeasible"


def test_unsolvable_by_loop_free_paths(monkeypatch):
    monkeypatch.setattr(asp._Planner, "lower_bound", lambda planner, task: asp._Bound("bound", 0, 0))
    res = solve_task(_interlocked("missing"))
    assert res.status is Status.UNSOLVABLE and res.proof == "loop-free-paths"


def test_a_plan_without_proof_is_feasible_not_optimal(monkeypatch, capsys):
    # the bound cannot close and the completeness query is "cut by the time limit"
    _uninformative_bound(monkeypatch)
    monkeypatch.setattr(asp._Planner, "loop_free_path_exists", lambda planner, cap: None)
    task = _trap_task()
    res = solve_task(task)
    assert res.status is Status.FEASIBLE and not res.optimal and not res.canonical and res.proof == ""
    assert task.world.replay(task.actual, res.plan).failure is None and res.moved_parts == 3
    out = reference_output(task, res)
    assert out["proof"]["optimal"] is False and out["proof"]["proved"] == []
    assert out["rework_plan"]["actions"] and out["annotation"]["pass"] is False


@pytest.mark.slow
def test_time_limit_never_claims_optimality():
    task = chain_task(200, 20, "misplacement")
    res = solve_task(task, time_limit=0.05)
    assert res.status in (Status.TIMEOUT, Status.FEASIBLE) and not res.optimal
    if res.status is Status.FEASIBLE:
        assert task.world.restoration(task.actual, res.plan, task.target).restored


@pytest.mark.parametrize("parts,depth", [(6, 2), (25, 5), (40, 10)])
def test_synthetic_chain_optimum_in_closed_form(parts, depth):
    res = solve_task(chain_task(parts, depth, "missing_part"))
    assert res.optimal and (res.moved_parts, res.actions) == (depth + 1, 2 * depth + 1)
    assert len(res.closure) == depth + 1 and len(chain_assembly(parts, depth).parts) == parts


def test_objectives_and_all_optimal_on_a_wrong_part():
    task = next(t for n, t in CASES if n.startswith("shaft_stack/wrong_part/"))
    default = solve_task(task, all_optimal=True)
    actions = solve_task(task, objective="actions", all_optimal=True)
    moved = solve_task(task, objective="moved-parts")
    assert actions.actions <= default.actions and moved.moved_parts == default.moved_parts
    assert default.plan in default.optimal_plans and actions.plan in actions.optimal_plans
    for res in (default, actions):
        for p in res.optimal_plans:
            assert task.world.replay(task.actual, p).failure is None and len(p) == res.actions
    assert json.loads(json.dumps(default.to_json()))["n_optimal"] == default.n_optimal


@pytest.mark.slow
def test_reference_output_passes_the_verifier():
    for name, task in CASES[1::15]:
        out = reference_output(task, solve_task(task))
        assert out["proof"]["optimal"] is True and out["proof"]["method"] == "clingo"
        verdict = verify(task, json.dumps({k: out[k] for k in ("annotation", "rework_plan")}))
        assert verdict.valid and verdict.diagnosis_exact and not verdict.over_disassembly, (name, verdict.reason)


def test_facts_are_deterministic_and_readable():
    task = next(t for n, t in CASES if n.startswith("bayonet_structure/wrong_part/"))
    a, b = task_facts(task), task_facts(task)
    assert a.text == b.text
    for pred in ("slot(", "spare(", "removal_dir(", "blocks(", "supports(", "lock(", "rot_value(", "action(", "init(in("):
        assert pred in a.text
    assert all(t in a.text for t in a.actions)


# ----------------------------------------------------------------------------- bad input

def test_bad_arguments_are_input_errors():
    task = CASES[0][1]
    with pytest.raises(InputError, match="objective"):
        solve_task(task, objective="fewest-parts")
    with pytest.raises(InputError, match="all-optimal"):
        solve_task(task, objective="moved-parts", all_optimal=True)
    with pytest.raises(InputError, match="time limit"):
        solve_task(task, time_limit=0)




def test_assemblies_needing_group_moves_are_planned_with_group_moves():
    """(More in tests/test_asp_groups.py.)"""
    asm = import_puzzle(burr("mj_burr6_puzzle4"))
    assert World(asm, Tolerances()).moves.groups
    task = make_task(asm, [FaultSpec("missing_part")], seed=3)
    r = solve_task(task)
    assert r.optimal and any(a.name == "join" for a in r.plan) and check_plan(task, r.plan) == []


def test_non_target_target_state_is_rejected():
    task = CASES[2][1]
    odd = Task(task.sample_id, task.assembly, task.tolerances, task.initial, task.actual, task.actual)
    with pytest.raises(InputError, match="target"):
        solve_task(odd)


def test_cli_solve_closure_facts(tmp_path, capsys):
    task = make_task(chain_assembly(8, 3), [FaultSpec("wrong_part", "Chain_Bar000")], seed=1)
    write_task(task, tmp_path / "t")
    assert main(["solve", str(tmp_path / "t"), "--json", "--all-optimal"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["proof"]["optimal"] and out["proof"]["moved_parts"] == 5 and out["proof"]["n_optimal"] >= 1
    assert main(["solve", str(tmp_path / "t")]) == 0
    assert "optimal" in capsys.readouterr().out
    assert main(["closure", str(tmp_path / "t")]) == 0
    assert capsys.readouterr().out.split() == ["Chain_Bar000", "Chain_Bar001", "Chain_Bar002", "Chain_Bar003"]
    assert main(["facts", str(tmp_path / "t")]) == 0
    assert 'spare("Chain_Bar000_Warped","Chain_Bar000")' in capsys.readouterr().out
    assert main(["solve", str(tmp_path / "t"), "--time-limit", "1e-6"]) == 1
    assert capsys.readouterr().out.startswith("timeout")
    assert main(["solve", str(tmp_path / "missing")]) == 2
    (tmp_path / "t" / "actual_state.json").write_text("{")
    assert main(["solve", str(tmp_path / "t")]) == 2

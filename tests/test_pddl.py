"""PDDL side: committed domain = generated domain, export/import round trips through files and real
Fast Downward, reversible names, the weight argument, and UP's validator agreeing with the engine."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import random
from pathlib import Path

import pytest
from unified_planning.engines import PlanGenerationResultStatus as S
from unified_planning.io import PDDLReader, PDDLWriter
from unified_planning.shortcuts import OneshotPlanner, get_environment

from cases import PARTIAL_MOVES, all_cases, grounding
from forgeplan.bench.burr_faults import FAULTS, fault_task, level1_puzzles
from forgeplan.cli import main
from forgeplan.geometry.checks import check_geometry
from forgeplan.io.importers import import_puzzle
from forgeplan.library import BUILTIN, build
from forgeplan.model.actions import KIND, Action, GroupMove, Rotate
from forgeplan.model.assembly import DIRECTIONS, Assembly, validate_assembly
from forgeplan.planners.pddl.fd import solve_fd
from forgeplan.planners.pddl.files import domain_text, pddl_writer, read_plan
from forgeplan.planners.pddl.problem import build_problem
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.legal import legal_actions, slot_actions
from burrdata import FOLDER as BURR
from forgeplan.io.task_files import load_task, write_task
from forgeplan.planners.repair import repair_plan

DOMAINS = Path(__file__).resolve().parent.parent / "domains"
get_environment().credits_stream = None


def case(name: str):
    return dict(all_cases())[name]


def engine_valid(task, plan) -> bool:
    """Legal, inside the grounded action set at every step, and ends target-equivalent."""
    world, state = task.world, task.actual
    for a in plan:
        i = world._slot_of(a.part_id)
        if i is None or a not in slot_actions(world, state, i) or world.check(state, a) is not None:
            return False
        state = world.apply(state, a)
    return world.equivalent(state, task.target)


def solve_file_problem(folder: Path, **engine):
    """Parse an export back with UP's PDDL reader and solve it with a real Fast Downward."""
    problem = PDDLReader().parse_problem(str(folder / "domain.pddl"), str(folder / "problem.pddl"))
    with contextlib.chdir(folder), OneshotPlanner(**engine) as planner:
        res = planner.solve(problem, timeout=60)
    assert res.plan is not None, res.status
    lines = [f"({ai.action.name} {' '.join(p.object().name for p in ai.actual_parameters)})" for ai in res.plan.actions]
    return res, "; written like Fast Downward's sas_plan\n" + "\n".join(lines) + "\n; cost = ? (general cost)\n"


# ----------------------------------------------------------------------------- the committed domain

def test_committed_domain_is_generated():
    assert (DOMAINS / "rework.pddl").read_text(encoding="utf-8") == domain_text()


def test_every_lifted_export_uses_the_committed_domain():
    committed = (DOMAINS / "rework.pddl").read_text(encoding="utf-8")
    objectives = ("moved-parts,actions", "actions", "moved-parts")
    for k, asm_id in enumerate(a for a in BUILTIN if a not in PARTIAL_MOVES):
        task = case(f"{asm_id}/multi/0")
        if task.world.moves.groups:  # the lifted domain has no group moves (see the last test)
            continue
        assert PDDLWriter(build_problem(task, objectives[k % 3]).problem).get_domain() == committed, asm_id


# ----------------------------------------------------------------------------- round trips

def _value(plan):
    return len({p for a in plan for p in a.touched}), len(plan)


def test_import_plan_rejects_what_the_export_does_not_name(tmp_path, capsys):
    task = case("shaft_stack/missing_part/0")
    write_task(task, tmp_path / "task")
    bad = tmp_path / "plan"
    bad.write_text("(insert_first nosuchpart)\n")
    assert main(["import-plan", str(tmp_path / "task"), str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err
    bad.write_text("insert_first\n")
    assert main(["import-plan", str(tmp_path / "task"), str(bad)]) == 2
    # a lifted plan given to the grounded import is rejected, not misread
    enc = build_problem(task)
    names = pddl_writer(enc)
    pid = names.get_pddl_name(enc.objects[task.world.ids[0]])
    bad.write_text(f"(remove_first {pid} {pid})\n")
    assert main(["import-plan", str(tmp_path / "task"), str(bad), "--grounded"]) == 2


def test_import_plan_says_when_the_plan_is_illegal(tmp_path, capsys):
    task = case("bayonet_structure/interference_lock/0")
    write_task(task, tmp_path / "task")
    enc = build_problem(task)
    names = pddl_writer(enc)
    base = names.get_pddl_name(enc.objects["BayonetStructure_Part00_Base"])
    (tmp_path / "plan").write_text(f"(remove_first {base} {base})\n")  # buried under everything
    assert main(["import-plan", str(tmp_path / "task"), str(tmp_path / "plan")]) == 1
    err = capsys.readouterr().err
    assert f"not a valid plan of that PDDL task: step 1 (remove_first {base} {base}) is not applicable" in err
    assert "(present ?blocker)" in err and len(err.splitlines()) == 1


# ----------------------------------------------------------------------------- reversible names

def renamed(asm: Assembly, names: dict[str, str]) -> Assembly:
    """The same assembly with part ids replaced (supports, locks and spares follow)."""
    def lock(lk):
        return None if lk is None else dataclasses.replace(lk, holds=tuple(names[h] for h in lk.holds))

    parts = tuple(dataclasses.replace(p, part_id=names[p.part_id], supports=tuple(names[s] for s in p.supports),
                                      lock=lock(p.lock)) for p in asm.parts)
    spares = tuple(dataclasses.replace(w, part_id=names[w.part_id], variant_of=names[w.variant_of]) for w in asm.spares)
    out = dataclasses.replace(asm, parts=parts, spares=spares)
    validate_assembly(out)
    check_geometry(out)
    return out


# printable (ids are checked at load: no control, separator or format character, no space but U+0020), yet
# illegal or colliding as PDDL names
UGLY = ["Gehäuse.01", "shaft shaft", "Lager ü.β", "gear.v2", "GEAR.V2", "x", "☃ clip", "nut (M6);(:goal)", "gear.v2 wrong"]


@pytest.mark.slow
@pytest.mark.parametrize("grounded", [True, False])
def test_round_trip_with_names_that_need_sanitising(tmp_path, grounded, capsys):
    """export-pddl -> UP's PDDL reader -> Fast Downward -> sas_plan -> import-plan -> the engine says valid."""
    asm = build("shaft_stack")
    ids = [*asm.part_ids, *(w.part_id for w in asm.spares)]
    asm = renamed(asm, dict(zip(ids, UGLY)))
    task = make_task(asm, [FaultSpec("wrong_part"), FaultSpec("misplacement", "Lager ü.β")], seed=3)
    write_task(task, tmp_path / "task")
    flag = ["--grounded"] if grounded else []
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "pddl"), *flag]) == 0
    domain = (tmp_path / "pddl" / "domain.pddl").read_text()
    text = (tmp_path / "pddl" / "problem.pddl").read_text() + domain
    assert text.isascii() and "shaft shaft" not in text and "(M6)" not in text
    if grounded:  # plain STRIPS: atoms over constants, no variables in any action
        assert not any(k in domain.split("(:action", 1)[1] for k in ("forall", "exists", "when", "?"))
        engine = {"name": "fast-downward-opt"}
    else:
        assert domain == (DOMAINS / "rework.pddl").read_text()
        # blind A* is optimal too, and accepts the lifted domain's axioms and conditional effects
        engine = {"name": "fast-downward", "params": {"fast_downward_search_config": "astar(blind())"}}
    res, plan_text = solve_file_problem(tmp_path / "pddl", **engine)
    assert res.status == (S.SOLVED_OPTIMALLY if grounded else S.SOLVED_SATISFICING)
    (tmp_path / "sas_plan").write_text(plan_text)
    capsys.readouterr()
    # exit 0: import-plan replayed the plan in the engine and it restores the target
    assert main(["import-plan", str(tmp_path / "task"), str(tmp_path / "sas_plan"), *flag]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["annotation"]["assembly_id"] == task.assembly.assembly_id
    named = {a.get("part_id") or a["wrong_part_id"] for a in out["rework_plan"]["actions"]}
    assert named <= set(UGLY) and {"gear.v2 wrong", "Lager ü.β"} <= named  # exact ids came back
    plan = read_plan(build_problem(load_task(tmp_path / "task"), grounded=grounded), plan_text)
    assert [a.to_json() for a in plan] == out["rework_plan"]["actions"]
    if not grounded:  # the lifted domain's optimum (blind A*) is the expanded problem's (lmcut)
        assert _value(plan) == _value(solve_fd(task).plan)


# ----------------------------------------------------------------------------- objectives and the weight

def test_objectives_are_what_the_costs_minimise():
    task = case("shaft_stack/multi/0")
    lex, act, mov = (solve_fd(task, o) for o in ("moved-parts,actions", "actions", "moved-parts"))
    assert all(r.status == S.SOLVED_OPTIMALLY and engine_valid(task, r.plan) for r in (lex, act, mov))
    assert len(act.plan) <= len(lex.plan)
    assert _value(mov.plan)[0] == _value(lex.plan)[0]
    assert lex.cost == lex.reported_cost == 1000 * _value(lex.plan)[0] + len(lex.plan)


def test_weight_check_refuses_to_call_a_long_plan_lexicographically_optimal():
    task = case("shaft_stack/multi/0")
    res = solve_fd(task, weight=3)  # the optimal plan has more than 3 actions
    assert res.plan is not None and len(res.plan) >= 3
    assert res.status == S.SOLVED_SATISFICING and not res.optimal


# ----------------------------------------------------------------------------- exactness of what Fast Downward searches

def engine_legal(world, state) -> list[Action]:
    """The engine's legal actions over the grounded parameters: single-part moves as grounded, and for an
    assembly that needs group moves every separate/join of two or more slots along every direction that
    `World.check` accepts (SEMANTICS §5; enumerated here without forgeplan.geometry.separation or forgeplan.planners.pddl)."""
    out = [a for a in legal_actions(grounding(world), state) if not isinstance(a, GroupMove)]
    if not world.moves.groups:
        return out
    occupant = [s.occupant if s.present else pid for pid, s in zip(world.ids, state.slots)]
    for k in range(2, len(world.ids) + 1):
        for group in itertools.combinations(range(len(world.ids)), k):
            for d in DIRECTIONS:
                for name in ("separate", "join"):
                    ids = [occupant[i] if name == "separate" else world.ids[i] for i in group]
                    a = KIND[name](ids, d)
                    if world.check(state, a) is None:
                        out.append(a)
    return out


def walk_expanded_problem(task, seed: str, steps: int = 16, objective: str = "moved-parts,actions",
                          every_direction: bool = False) -> int:
    """A random walk over the engine's legal actions on which UP's simulator of the expanded problem
    offers exactly those actions and reaches the goal exactly when the engine's state is target-equivalent;
    returns the number of group moves taken.

    The default export keeps a group move only along its undominated directions (pddl.GroupCandidates):
    there every offered action is legal and every legal group move is offered along some direction.
    `touch` actions only pay first-touch costs: every applicable one is taken before comparing, so that a
    group move is not hidden by its members' untouched atoms."""
    from unified_planning.shortcuts import SequentialSimulator

    world, rng = task.world, random.Random(seed)
    enc = build_problem(task, objective, grounded=True, every_direction=every_direction)
    groups, touches = 0, [enc.problem.action(name) for name in enc.touches]
    with SequentialSimulator(enc.problem) as sim:
        state, es = sim.get_initial_state(), task.actual
        for _ in range(steps):
            for act in touches:
                if sim.is_applicable(state, act):
                    state = sim.apply(state, act)
            offered: dict = {}
            for act, _params in sim.get_applicable_actions(state):
                a = enc.steps[act.name]
                offered.setdefault(a, act)
                offered.setdefault((a.name, a.touched), act)
            legal = engine_legal(world, es)
            actions = {a for a in offered if isinstance(a, Action)}
            if every_direction:
                assert actions == set(legal), actions ^ set(legal)
            else:
                assert actions <= set(legal), actions - set(legal)
                assert {a for a in legal if not isinstance(a, GroupMove) or (a.name, a.touched) in offered} == set(legal)
            assert sim.is_goal(state) == world.equivalent(es, task.target)
            a = rng.choice(legal)
            groups += isinstance(a, GroupMove)
            state = sim.apply(state, offered[a] if a in offered else offered[(a.name, a.touched)])
            es = world.apply(es, a)
    return groups


EXPANDED_CASES = [f"{a}/multi/{k % 2}" for k, a in enumerate(a for a in BUILTIN if a not in PARTIAL_MOVES)] + ["shaft_stack/wrong_orientation/1"]


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if k % 4 == 0 or n.startswith("burr_6_split") else pytest.mark.slow)
                                  for k, n in enumerate(EXPANDED_CASES)])
def test_expanded_problem_has_exactly_the_engines_legal_actions(name):
    walk_expanded_problem(case(name), name)


def burr_jobs() -> list[tuple[str, str]]:
    """(puzzle, fault) over the level-1 burrs: both faults of the inner piece where the puzzle needs group
    moves, one (rotating) where it does not."""
    out = []
    for k, path in enumerate(level1_puzzles(BURR)):
        needs = make_task(import_puzzle(path), []).world.moves.groups
        out += [(path.name, f) for f in (FAULTS if needs else FAULTS[k % 2:k % 2 + 1])]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("puzzle, fault", burr_jobs())
def test_expanded_problem_has_exactly_the_engines_legal_actions_on_real_burrs(puzzle, fault):
    """The same on the imported level-1 burrs, with the fault on the inner piece; where the puzzle needs
    group moves the walk takes some (random choice among the legal actions, most of them group moves)."""
    asm = import_puzzle(BURR / puzzle)
    _, task = fault_task(asm, fault)
    groups = walk_expanded_problem(task, puzzle + fault, steps=8 if task.world.moves.groups else 4)
    assert (groups > 0) == task.world.moves.groups


@pytest.mark.slow
def test_with_every_direction_the_expanded_problem_has_exactly_the_engines_group_moves():
    _, task = fault_task(import_puzzle(BURR / "mj_burr6_puzzle4.json"), "missing_part")
    assert walk_expanded_problem(task, "every direction", steps=6, objective="actions", every_direction=True) > 0


# ----------------------------------------------------------------------------- second opinion

VALIDATOR_CASES = ["shaft_stack/wrong_part/0", "shaft_stack/wrong_orientation/0", "bayonet_structure/multi/0",
                   "bayonet_structure/under_insertion/1", "bayonet_structure/interference_lock/0"]


def plan_variants(task, plan):
    """The valid plan, and invalid ones: dropped, swapped, and with an illegal grounded action."""
    world = task.world
    out = [plan, plan[1:], plan[:-1]]
    if len(plan) > 1:
        out.append((plan[1], plan[0], *plan[2:]))
    illegal = [a for i in range(len(world.ids)) for a in slot_actions(world, task.actual, i)
               if world.check(task.actual, a) is not None]
    if illegal:
        out.append((illegal[0], *plan))
    out.append((*plan, Rotate(world.ids[-1], axis="x", angle_deg=37.0)))  # outside the grounded set
    return out


@pytest.mark.parametrize("name", VALIDATOR_CASES)
def test_validator_agrees_with_engine(name):
    task = case(name)
    enc = build_problem(task)
    plan = tuple(repair_plan(task.world, task.actual, task.target))
    verdicts = [(engine_valid(task, p), enc.validate(p)) for p in plan_variants(task, plan)]
    assert verdicts[0] == (True, True)
    assert any(not e for e, _ in verdicts[1:])  # the variants do include invalid plans
    assert all(e == v for e, v in verdicts), verdicts



def test_group_move_assemblies_are_exported_grounded_and_refused_lifted():
    """Fast Downward on the grounded export: tests/test_pddl_groups.py."""
    from forgeplan.model.errors import InputError

    _, task = fault_task(import_puzzle(BURR / "mj_burr6_puzzle4.json"), "missing_part")
    with pytest.raises(InputError, match="--grounded"):
        build_problem(task)
    enc = build_problem(task, grounded=True)
    assert enc.groups is not None and set(enc.touches.values()) == set(task.world.ids)
    assert {a.name for a in enc.steps.values() if isinstance(a, GroupMove)} == {"separate", "join"}


@pytest.mark.slow
def test_grounded_export_is_byte_identical_across_hash_seeds(tmp_path):
    """The writer gathers constants in sets: their order must not follow the process's hash seed."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    assert main(["task", "make", "burr_6_split", "--out", str(tmp_path / "t"), "--seed", "3", "--no-proof"]) == 0
    texts = []
    for seed in ("1", "2", "3"):
        out = tmp_path / f"e{seed}"
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "forgeplan", "export-pddl", str(tmp_path / "t"), "--out", str(out),
                        "--grounded"], env=env, check=True, capture_output=True)
        texts.append(((out / "domain.pddl").read_bytes(), (out / "problem.pddl").read_bytes()))
    assert b"(:constants" in texts[0][0]
    assert texts[0] == texts[1] == texts[2]

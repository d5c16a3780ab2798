"""Strict `import-plan`: a planner's plan is replayed in the PDDL task it was written for before it is mapped
to forgeplan actions. Damaged copies of reference plans (a step dropped, two adjacent steps swapped, one
repeated) get import-plan's verdict, and unified-planning's validator judges the same steps on the files
as written (read back by its PDDL reader): the two agree on every copy."""

from __future__ import annotations

import csv
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest
from unified_planning.engines import ValidationResultStatus
from unified_planning.io import PDDLReader
from unified_planning.plans import SequentialPlan
from unified_planning.shortcuts import PlanValidator, get_environment

from cases import all_cases
from forgeplan.bench.store import load_sample_task, read_reference
from forgeplan.cli import main
from forgeplan.io.contract import parse_output
from forgeplan.io.task_files import write_task
from forgeplan.planners.pddl.files import plan_instances, write_pddl
from forgeplan.planners.pddl.profiles import build_export
from forgeplan.planners.pddl.replay import Replay, damaged_copies
from forgeplan.planners.repair import repair_plan

get_environment().credits_stream = None
# (folder, profile, grounded) of the suite; the lifted folder only for assemblies without group moves
PROFILES = (("lifted", "full", False), ("grounded", "full", True), ("strips-costs", "strips-costs", True),
            ("strips", "strips", True))


def validator_says(problem, plan) -> bool:
    """unified-planning's SequentialPlanValidator."""
    with PlanValidator(name="sequential_plan_validator") as validator:
        return validator.validate(problem, plan).status == ValidationResultStatus.VALID


def up_valid(replay: Replay, steps: list[str]) -> bool:
    """The validator on the problem as written, the plan's lines read through the writer's names."""
    text = "\n".join(steps) + "\n"
    return validator_says(replay.enc.problem, SequentialPlan([ai for _, ai in plan_instances(replay.writer, text)]))


def sweep(task, plan, profile: str, grounded: bool, only=None) -> dict[str, int]:
    """Every damaged copy of `plan` in one export: import-plan's PDDL verdict, and the engine's on what it
    maps, against the validator's. Returns how many copies were valid and invalid."""
    replay = Replay(build_export(task, profile, grounded=grounded))
    steps = replay.steps_of(plan)
    assert steps is not None and up_valid(replay, steps)
    counts = {"valid": 0, "invalid": 0}
    for name, copy in damaged_copies(steps)[slice(None) if only is None else only]:
        expected = up_valid(replay, copy)
        verdict, actions = replay.read("\n".join(copy) + "\n")
        assert verdict.valid == expected, (name, verdict.reason())
        if expected:  # mapped back, the valid ones repair the task (the engine judges what verdict accepted)
            assert task.world.restoration(task.actual, actions, task.target).restored, name
        counts["valid" if expected else "invalid"] += 1
    return counts


def case(name: str):
    return dict(all_cases())[name]


def repair(task):
    return repair_plan(task.world, task.actual, task.target)


# ----------------------------------------------------------------------------- the fast lane's sample

@pytest.mark.parametrize("name,profile,grounded", [
    ("luban_lock_3/multi/0", "strips-costs", True), pytest.param("luban_lock_3/multi/0", "full", False, marks=pytest.mark.slow),
    pytest.param("burr_6_split/missing_part/0", "full", True, marks=pytest.mark.slow)])
def test_damaged_plans_get_the_validators_verdict(name, profile, grounded):
    task = case(name)
    assert sweep(task, repair(task), profile, grounded, only=slice(None, None, 3))["invalid"]


@pytest.mark.parametrize("profile,grounded", [pytest.param("full", False, marks=pytest.mark.slow), ("strips", True)])
def test_the_validator_reads_the_written_files_alike(profile, grounded, tmp_path):
    """The written files, read back by unified-planning's PDDL reader, give the same verdicts."""
    task = case("luban_lock_3/multi/0")
    export = build_export(task, profile, grounded=grounded)
    write_pddl(export, tmp_path)
    replay = Replay(export)
    reader = PDDLReader()
    problem = reader.parse_problem(str(tmp_path / "domain.pddl"), str(tmp_path / "problem.pddl"))
    steps = replay.steps_of(repair(task))
    for _, copy in [("as it is", steps), *damaged_copies(steps)]:
        read = reader.parse_plan_string(problem, "\n".join(copy) + "\n")
        assert validator_says(problem, read) == up_valid(replay, copy) == replay.read("\n".join(copy))[0].valid


@lru_cache(maxsize=None)
def grounded_repair(name: str):
    """A task's grounded export, ready to replay plans, and the steps of a repair there."""
    task = case(name)
    replay = Replay(build_export(task, "full", grounded=True))
    return task, replay, replay.steps_of(repair(task))


def import_plan(task, steps: list[str], folder: Path) -> int:
    write_task(task, folder / "task")
    (folder / "plan").write_text("\n".join(steps) + "\n")
    return main(["import-plan", str(folder / "task"), str(folder / "plan"), "--grounded"])


def test_a_repeated_first_touch_is_refused_with_its_step(tmp_path, capsys):
    """A first-touch variant twice (a reset_pose, which the engine may repeat) maps to a valid repair; PDDL
    refuses it, and so does import-plan."""
    task, replay, steps = grounded_repair("shaft_stack/misplacement/1")
    first = next(i for i, s in enumerate(steps) if s.startswith("(reset_pose_first_"))
    bad = [*steps[:first + 1], steps[first], *steps[first + 1:]]
    assert not up_valid(replay, bad)
    actions = replay.enc.decode([ai for _, ai in plan_instances(replay.writer, "\n".join(bad))])
    assert task.world.restoration(task.actual, actions, task.target).restored  # mapped back, a valid repair
    assert import_plan(task, bad, tmp_path) == 1
    out = capsys.readouterr()
    assert out.out == ""   # refused before it is mapped to the output contract
    assert out.err.startswith(f"forgeplan: not a valid plan of that PDDL task: step {first + 2} {steps[first]} "
                              "is not applicable: precondition (not (touched ")


def test_a_group_move_without_its_touch_is_refused(tmp_path, capsys):
    task, replay, steps = grounded_repair("burr_6_split/missing_part/0")
    touch = next(i for i, s in enumerate(steps) if s.startswith("(touch_"))
    bad = [*steps[:touch], *steps[touch + 1:]]
    assert not up_valid(replay, bad)
    assert import_plan(task, bad, tmp_path) == 1
    dropped = steps[touch][len("(touch_"):-1]   # the group move that names it fails: its member is untouched
    assert re.search(rf"step \d+ \((separate|join)_\S*{dropped}\S*\) is not applicable: precondition \(touched {dropped}\) false",
                     capsys.readouterr().err)


def test_a_plan_that_stops_short_names_the_goal(tmp_path, capsys):
    task, _, steps = grounded_repair("burr_6_split/missing_part/0")
    assert import_plan(task, steps[:-1], tmp_path) == 1
    err = capsys.readouterr().err
    assert f"not a valid plan of that PDDL task: after its {len(steps) - 1} steps the goal" in err
    assert import_plan(task, steps, tmp_path) == 0
    assert json.loads(capsys.readouterr().out)["rework_plan"]["actions"]


# ----------------------------------------------------------------------------- the whole suite (slow lane)

@pytest.mark.slow
def test_every_damaged_reference_of_the_suite_gets_the_validators_verdict(pddl_suite, tiny_bench):
    """Each problem of a suite in each of its folders: every damaged copy of its reference plan."""
    totals = {"valid": 0, "invalid": 0}
    with (pddl_suite / "costs.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        task = load_sample_task(tiny_bench, row["sample_id"])
        plan = parse_output(json.dumps(read_reference(tiny_bench, row["sample_id"], task)), strict=False).actions
        for folder, profile, grounded in PROFILES:
            if folder == "lifted" and row["lifted"] != "1":
                continue
            counts = sweep(task, plan, profile, grounded)
            for k in totals:
                totals[k] += counts[k]
    assert totals["valid"] and totals["invalid"] > len(rows)


def test_a_partial_move_plan_is_replayed_in_its_own_problem(tmp_path, capsys):
    """A partial-move export (derived atoms: its own simulator) refuses a repeated first touch, and a plan
    that stops short, like the others."""
    from cases import zigzag_puzzle
    from forgeplan.planners.partial_repair import partial_repair_plan
    from forgeplan.planners.pddl.positions import position_tables
    from forgeplan.planners.pddl.slide_groups import build_group_problem
    from forgeplan.planners.pddl.slides import encode
    from forgeplan.semantics.faults import FaultSpec, make_task

    task = make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Cap")])
    sp = build_group_problem(task, position_tables(task, 1))
    steps = [f"({n})" for n in encode(sp, partial_repair_plan(task.world, task.actual, task.target))]
    touch = next(i for i, s in enumerate(steps) if s.startswith("(touch_"))
    write_task(task, tmp_path / "task")
    plans = {"good": steps, "twice": [*steps[:touch + 1], *steps[touch:]], "short": steps[:-1]}
    codes = {}
    for name, lines in plans.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        codes[name] = main(["import-plan", str(tmp_path / "task"), str(tmp_path / name), "--grounded", "--radius", "1"])
    assert codes == {"good": 0, "twice": 1, "short": 1}
    err = capsys.readouterr().err.splitlines()
    part = steps[touch][len("(touch_"):-1]
    assert err[0] == (f"forgeplan: not a valid plan of that PDDL task: step {touch + 2} {steps[touch]} is not applicable: "
                      f"precondition (not (touched {part})) false")
    assert err[1].startswith(f"forgeplan: not a valid plan of that PDDL task: after its {len(steps) - 1} steps the goal")


@pytest.mark.slow
def test_lab_counts_damaged_plans_and_agreement(pddl_suite, tiny_bench, capsys):
    from lab.cli import main as lab_main

    assert lab_main(["pddl-import", str(pddl_suite), "--bench", str(tiny_bench), "--limit", "1", "--folders", "strips"]) == 0
    counts = json.loads(capsys.readouterr().out)["folders"]["strips"]
    assert counts["copies"] == counts["agree"] and counts["invalid"] > 0


def test_damaged_partial_move_plans_get_the_engines_confirmation():
    """A partial-move problem (no outside validator reads its derived predicates): every damaged copy of a
    plan that the PDDL replay accepts maps to a plan the engine restores with, and the mapping alone,
    without the replay, accepts some copies the replay refuses."""
    from cases import zigzag_puzzle
    from forgeplan.planners.partial_repair import partial_repair_plan
    from forgeplan.planners.pddl.positions import position_tables
    from forgeplan.planners.pddl.replay import read_partial
    from forgeplan.planners.pddl.slide_groups import build_group_problem
    from forgeplan.planners.pddl.slides import decode, encode
    from forgeplan.semantics.faults import FaultSpec, make_task

    task = make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Cap")])
    sp = build_group_problem(task, position_tables(task, 1))
    restored = lambda actions: task.world.restoration(task.actual, actions, task.target).restored  # noqa: E731
    refused_but_mapped = 0
    for _, copy in damaged_copies(encode(sp, partial_repair_plan(task.world, task.actual, task.target))):
        verdict, actions = read_partial(sp, "".join(f"({s})\n" for s in copy))
        assert (actions is not None) == verdict.valid and (actions is None or restored(actions))
        refused_but_mapped += not verdict.valid and restored(decode(sp, copy))
    assert refused_but_mapped

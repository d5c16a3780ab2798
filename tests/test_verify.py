"""The verifier's verdicts and failure categories on every registered case."""

import json

import pytest

from cases import all_cases, fault_cases, lane
from fixtures import COVER, fixture_assembly
from forgeplan.io.contract import output_json
from forgeplan.planners.repair import repair_plan
from forgeplan.semantics.diagnosis import diagnose
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.verify import verify

CASES = dict(all_cases())


def expected_output(task, plan):
    return output_json(task.sample_id, task.assembly.assembly_id, diagnose(task.world, task.actual, task.target), plan)


@pytest.mark.parametrize("name, task", lane(all_cases()))   # the fast lane: every 8th case, every family
def test_repair_plans_verify_as_valid(name, task):
    plan = repair_plan(task.world, task.actual, task.target)
    assert plan is not None
    v = verify(task, json.dumps(expected_output(task, plan)))
    assert v.valid, v.reason
    if name.endswith(("/nofault", "/boundary")):
        assert plan == []


@pytest.mark.parametrize("name", [n for n, _ in fault_cases()])
def test_dropping_the_last_action_never_verifies(name):
    task = CASES[name]
    plan = repair_plan(task.world, task.actual, task.target)
    v = verify(task, json.dumps(expected_output(task, plan[:-1])))
    assert not v.valid and v.category == "incomplete_restoration"


def test_categories():
    name = next(n for n, t in fault_cases() if "missing_part" in n
                and not diagnose(t.world, t.actual, t.target)[0]["visible"])
    task = CASES[name]
    plan = repair_plan(task.world, task.actual, task.target)
    out = expected_output(task, plan)
    assert verify(task, "{").category == "schema_failure"
    # dependency omission: act on the hidden part first
    bad = json.loads(json.dumps(out))
    bad["rework_plan"]["actions"] = [{"action": "insert", "part_id": out["annotation"]["mistakes"][0]["part_id"]}]
    v = verify(task, json.dumps(bad))
    assert v.category == "dependency_omission" and v.failing_step == 1 and v.reason.startswith("step 1 ")
    # illegal grounding: an unknown part
    bad["rework_plan"]["actions"] = [{"action": "remove", "part_id": "NoSuchPart"}]
    assert verify(task, json.dumps(bad)).category == "illegal_grounding"
    # misdiagnosis: wrong fault type; the visibility flag is not part of the diagnosis (Table 9: type and part)
    bad = json.loads(json.dumps(out))
    bad["annotation"]["mistakes"][0]["type"] = "misplacement"
    assert verify(task, json.dumps(bad)).category == "misdiagnosis"
    bad["annotation"]["mistakes"][0].update(type="missing_part", visible=True)
    assert verify(task, json.dumps(bad)).valid
    # wrong assembly id is a contract failure
    bad = json.loads(json.dumps(out))
    bad["annotation"]["assembly_id"] = "other"
    assert verify(task, json.dumps(bad)).category == "schema_failure"


def test_parameter_error_on_a_wrong_unlock_angle():
    task = make_task(fixture_assembly(), [FaultSpec("misplacement", COVER)], seed=3)
    plan = repair_plan(task.world, task.actual, task.target)
    assert [a.name for a in plan] == ["rotate_to_unlock", "reset_pose", "rotate_to_lock"]
    out = expected_output(task, plan)
    assert verify(task, json.dumps(out)).valid
    out["rework_plan"]["actions"][0]["angle_deg"] += 45
    v = verify(task, json.dumps(out))
    assert v.category == "parameter_error" and v.failing_step == 1


def test_pass_must_match_the_mistakes():
    task = make_task(fixture_assembly(), [FaultSpec("misplacement", COVER)], seed=3)
    out = expected_output(task, repair_plan(task.world, task.actual, task.target))
    out["annotation"]["pass"] = True
    assert verify(task, json.dumps(out)).category == "misdiagnosis"


def test_no_fault_tasks_need_the_empty_plan():
    task = CASES["bayonet_structure/nofault"]
    empty = expected_output(task, [])
    assert verify(task, json.dumps(empty)).valid
    busy = json.loads(json.dumps(empty))
    busy["rework_plan"]["actions"] = [{"action": "remove", "part_id": task.world.ids[-1]}]
    assert verify(task, json.dumps(busy)).category == "no_fault_intervention"
    wrong = json.loads(json.dumps(empty))
    wrong["annotation"].update({"pass": False, "mistakes": [{"type": "missing_part", "part_id": task.world.ids[0], "visible": True}]})
    assert verify(task, json.dumps(wrong)).category == "misdiagnosis"


def test_group_moves_are_illegal_grounding_where_the_assembly_needs_none():
    """Proven optima cover the nine FORGE actions only there, so a group move never verifies (SEMANTICS §5)."""
    from forgeplan.model.actions import Separate

    task = CASES["shaft_stack/missing_part/0"]
    plan = repair_plan(task.world, task.actual, task.target)
    present = [s.occupant for s in task.actual.slots if s.present]
    group = Separate(present[-2:], "+y")
    v = verify(task, json.dumps(expected_output(task, [group, *plan])))
    assert not v.valid and v.category == "illegal_grounding" and v.failing_step == 1
    assert "one part at a time" in v.reason


def test_forgeplans_own_files_verify_unless_strict(tmp_path, capsys):
    """reference.json and `solve --json` carry keys beside the contract (sample_id, proof): `verify` ignores
    them with a note on stderr; `--strict` rejects them; inside the contract's objects nothing is relaxed."""
    from forgeplan.cli import main

    t = tmp_path / "t"
    assert main(["task", "make", "bayonet_structure", "--out", str(t), "--fault", "missing_part"]) == 0
    capsys.readouterr()
    assert main(["solve", str(t), "--json"]) == 0
    solved = tmp_path / "p.json"
    solved.write_text(capsys.readouterr().out)
    for path, extra in ((t / "reference.json", "proof, sample_id"), (solved, "proof")):
        assert main(["verify", str(t), str(path)]) == 0
        cap = capsys.readouterr()
        assert cap.out.startswith("valid:") and f"note: ignored top-level keys outside the output contract: {extra}" in cap.err
        assert main(["verify", str(t), str(path), "--strict"]) == 1
        assert "invalid [schema_failure]: field " in capsys.readouterr().out
    doc = json.loads(solved.read_text())
    doc["rework_plan"]["note"] = "x"
    solved.write_text(json.dumps(doc))
    assert main(["verify", str(t), str(solved)]) == 1
    assert "field rework_plan.note: Extra inputs are not permitted" in capsys.readouterr().out



def test_verify_reads_a_fenced_output_only_with_extract_json(tmp_path, capsys):
    from forgeplan.cli import main

    t = tmp_path / "t"
    assert main(["task", "make", "bayonet_structure", "--out", str(t), "--fault", "missing_part"]) == 0
    reference = json.loads((t / "reference.json").read_text())
    fenced = tmp_path / "answer.md"
    fenced.write_text("```json\n" + json.dumps({k: reference[k] for k in ("annotation", "rework_plan")}, indent=2) + "\n```\n")
    capsys.readouterr()
    assert main(["verify", str(t), str(fenced)]) == 1
    assert "wrapped in a ``` fence; pass --extract-json" in capsys.readouterr().out
    assert main(["verify", str(t), str(fenced), "--extract-json", "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["extracted"] is True and "taken out of a ``` fence" in cap.err

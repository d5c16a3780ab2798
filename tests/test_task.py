"""Task files: write/load round trip and clear errors naming file and field."""

import json

import pytest

from cases import all_cases, grounding
from forgeplan.io.task_files import PUBLIC_FILES, load_task, write_task
from forgeplan.model.errors import InputError


@pytest.mark.parametrize("name,task", all_cases()[:12])
def test_round_trip(tmp_path, name, task):
    write_task(task, tmp_path)
    back = load_task(tmp_path)
    assert back.assembly == task.assembly
    assert (back.initial, back.actual, back.target) == (task.initial, task.actual, task.target)
    assert back.tolerances == task.tolerances
    for f in PUBLIC_FILES:
        data = json.loads((tmp_path / f).read_text())
        assert data["schema_version"] == "1.0" and data["assembly_id"] == task.assembly.assembly_id


def corrupt(folder, file, edit):
    path = folder / file
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("file,edit,match", [
    ("actual_state.json", lambda d: d["slots"][next(iter(d["slots"]))].update(present="yes"), r"actual_state.json: slots\..*present"),
    ("actual_state.json", lambda d: d["slots"].pop(next(iter(d["slots"]))), "is missing"),
    ("actual_state.json", lambda d: d["slots"][next(iter(d["slots"]))].update(occupant="Ghost"), "occupant 'Ghost'"),
    ("actual_state.json", lambda d: d["slots"][next(iter(d["slots"]))].update(position=[0, 0]), "position"),
    ("target_state.json", lambda d: d.update(schema_version="7.0"), "schema_version"),
    ("blocking_graph.json", lambda d: d["edges"]["+y"].pop(), r"edges\.\+y: edges disagree with the voxel geometry"),
    ("part_catalog.json", lambda d: d["parts"][0]["voxels"].append(d["parts"][1]["voxels"][0]), "overlap"),
    ("contact_graph.json", lambda d: d.update(assembly_id="other"), "disagree on assembly_id"),
])
def test_corrupted_files_name_file_and_field(tmp_path, file, edit, match):
    task = all_cases()[0][1]
    write_task(task, tmp_path)
    corrupt(tmp_path, file, edit)
    with pytest.raises(InputError, match=match):
        load_task(tmp_path)


def test_malformed_json_and_nan_are_rejected(tmp_path):
    task = all_cases()[0][1]
    write_task(task, tmp_path)
    (tmp_path / "actual_state.json").write_text('{"schema_version": "1.0", "assembly_id": ')
    with pytest.raises(InputError, match="actual_state.json: malformed JSON"):
        load_task(tmp_path)
    write_task(task, tmp_path)
    text = (tmp_path / "actual_state.json").read_text().replace('"seated": 0.0', '"seated": NaN', 1)
    (tmp_path / "actual_state.json").write_text(text)
    with pytest.raises(InputError, match="NaN is not allowed"):
        load_task(tmp_path)
    (tmp_path / "initial_state.json").unlink()
    with pytest.raises(InputError, match="missing task files"):
        load_task(tmp_path)


def test_task_make_writes_a_proven_reference_unless_no_proof(tmp_path, capsys):
    """The default reference is clingo's proved optimum (the plan `solve` finds); --no-proof writes the repair
    search's plan and says it is not proved; both messages say which."""
    from forgeplan.planners.asp.solve import solve_task
    from forgeplan.cli import main

    fault = ["--fault", "wrong_orientation", "--seed", "1"]
    assert main(["task", "make", "luban_lock_3", "--out", str(tmp_path / "p"), *fault]) == 0
    said = capsys.readouterr().out
    assert "1 mistake)" in said and "proved minimal by clingo (moved-parts,actions)" in said
    ref = json.loads((tmp_path / "p" / "reference.json").read_text())
    assert ref["proof"]["optimal"] is True and "seconds" not in ref["proof"]
    best = solve_task(load_task(tmp_path / "p"))
    assert len(ref["rework_plan"]["actions"]) == best.actions and ref["proof"]["moved_parts"] == best.moved_parts
    assert main(["task", "make", "luban_lock_3", "--out", str(tmp_path / "q"), *fault, "--no-proof"]) == 0
    assert "NOT proved minimal (repair search" in capsys.readouterr().out
    quick = json.loads((tmp_path / "q" / "reference.json").read_text())
    assert quick["proof"] == {**quick["proof"], "method": "repair-search", "optimal": False}
    assert len(quick["rework_plan"]["actions"]) >= best.actions


@pytest.mark.parametrize("fault, cause", [("interference_lock", "has no locks"), ("wrong_part", "has no spare parts")])
def test_a_fault_the_assembly_cannot_take_names_the_cause(fault, cause, tmp_path, capsys):
    """A real burr has neither locks nor spares."""
    from forgeplan.cli import main

    burr = tmp_path / "burr.json"
    assert main(["import", "--example", "mj_burr6_puzzle0", "--out", str(burr)]) == 0
    capsys.readouterr()
    assert main(["task", "make", str(burr), "--out", str(tmp_path / "t"), "--fault", fault]) == 2
    err = capsys.readouterr().err
    assert f"--fault: assembly mj_burr6_puzzle0 {cause}" in err and err.count("\n") == 1


def test_action_space_names_the_fields_the_contract_writes(tmp_path):
    """action_space.json lists, per action kind, exactly the JSON fields of that kind's actions in an output."""
    from cases import plan_cases
    from forgeplan.semantics.legal import legal_actions

    case = next(c for c in plan_cases() if c.task.world.moves.groups)
    tasks = [case.task] + [t for _, t in all_cases()[::7]]
    fields = {}
    for task in tasks:
        actions = [*legal_actions(grounding(task.world), task.actual), *(a for plan in case.valid_plans for a in plan)]
        for a in actions:
            fields.setdefault(a.name, set(a.to_json()) - {"action"})
    assert {"separate", "join", "rotate", "replace"} <= set(fields)
    write_task(case.task, tmp_path)
    space = json.loads((tmp_path / "action_space.json").read_text())["actions"]
    for entry in space:
        if entry["action"] in fields:
            assert set(entry["params"]) == fields[entry["action"]], entry

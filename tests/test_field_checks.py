"""Every field checked by type and by meaning (docs/limits.md): numbers are JSON numbers within documented
ranges, symmetries are cube rotations and the part's own, contacts touch, displaced parts do not
interpenetrate, what the voxels decide is what the files say, a model's answer under --strict has no
unknown or mistyped key, and no JSON anywhere holds a key twice. Each refusal is one line naming the
file and the field, exit 2 (a model's answer: a schema_failure verdict, exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cases import zigzag_puzzle
from lab.fuzzing import judge, run_cli
from forgeplan.evaluation.evaluate import read_predictions
from forgeplan.io.task_files import write_task
from forgeplan.model.errors import InputError
from forgeplan.semantics.faults import make_task


@pytest.fixture(scope="module")
def bayonet(tmp_path_factory) -> Path:
    """A task with a rotate lock, and a valid answer (output.json)."""
    folder = tmp_path_factory.mktemp("fields") / "bayonet"
    assert run_cli(["task", "make", "bayonet_structure", "--out", folder, "--fault",
                    "missing_part:BayonetStructure_Part02_Pin"]).code == 0
    ref = json.loads((folder / "reference.json").read_text())
    (folder.parent / "output.json").write_text(json.dumps({k: ref[k] for k in ("annotation", "rework_plan")}))
    return folder


@pytest.fixture(scope="module")
def coupled(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fields") / "shaft"
    assert run_cli(["task", "make", "shaft_stack", "--out", folder, "--fault", "missing_part", "--no-proof"]).code == 0
    return folder


def copy(task: Path, tmp_path: Path) -> Path:
    """The task's files in TMP/t, and its answer beside them (TMP/output.json) when it has one."""
    out = tmp_path / "t"
    out.mkdir()
    for f in task.glob("*.json"):
        (out / f.name).write_bytes(f.read_bytes())
    if (task.parent / "output.json").is_file():
        (tmp_path / "output.json").write_bytes((task.parent / "output.json").read_bytes())
    return out


def edit(folder: Path, name: str, change) -> None:
    data = json.loads((folder / name).read_text())
    change(data)
    (folder / name).write_text(json.dumps(data))


def refused(folder: Path, file: str, field: str, text: str = "") -> str:
    """`solve` and `verify` refuse the task folder: exit 2, one line naming the file and the field."""
    for argv in (["solve", folder, "--time-limit", "20"], ["verify", folder, folder.parent / "output.json"]):
        o = run_cli(argv)
        assert o.code == 2 and judge(o) is None, (argv, o.code, o.err)
        assert f"{file}: " in o.err and (f".{field}:" in o.err or f": {field}:" in o.err) and text in o.err, o.err
    return o.err


def _lock(data: dict) -> dict:
    return next(p["lock"] for p in data["parts"] if p["lock"])


def _lock_field(data: dict) -> str:
    return f"parts.{next(k for k, p in enumerate(data['parts']) if p['lock'])}.lock"


# ----------------------------------------------------------------------------- locks

@pytest.mark.parametrize("value,text", [(1e308, "less than or equal to 360"), (-400.0, "greater than or equal to -360"),
                                        (0.0, "must not be zero"), ("30", "valid number"), (True, "valid number")])
def test_a_lock_angle_out_of_its_range_is_refused_at_load(bayonet, tmp_path, value, text):
    """1e308 made `solve` prove "optimal" a plan that `verify` then refused (its angle breaks the contract)."""
    folder = copy(bayonet, tmp_path)
    edit(folder, "part_catalog.json", lambda d: _lock(d).update(angle_deg=value))
    field = _lock_field(json.loads((folder / "part_catalog.json").read_text()))
    refused(folder, "part_catalog.json", f"{field}.angle_deg", text)


@pytest.mark.parametrize("change,where", [
    (lambda lk: lk["unlocked_pose"].update(rotation=[0, 1e308, 0]), "unlocked_pose.rotation.1"),
    (lambda lk: lk["unlocked_pose"].update(position=["1", 0, 0]), "unlocked_pose.position.0"),
    (lambda lk: lk.update(axis="y"), ""),                              # a coupled lock has no axis
    (lambda lk: lk.pop("unlocked_pose"), ""),
])
def test_a_coupled_lock_pose_is_checked(coupled, tmp_path, change, where):
    folder = copy(coupled, tmp_path)
    (folder.parent / "output.json").write_text("{}")
    edit(folder, "part_catalog.json", lambda d: change(_lock(d)))
    field = _lock_field(json.loads((folder / "part_catalog.json").read_text()))
    refused(folder, "part_catalog.json", f"{field}{'.' + where if where else ''}")


def test_a_lock_angle_from_an_assembly_file_is_checked_too(tmp_path):
    from forgeplan.io.catalog import assembly_to_json
    from forgeplan.library import build

    data = assembly_to_json(build("bayonet_structure"))
    _lock(data)["angle_deg"] = 1e308
    (tmp_path / "a.json").write_text(json.dumps(data))
    o = run_cli(["task", "make", tmp_path / "a.json", "--out", tmp_path / "t"])
    assert o.code == 2 and judge(o) is None and "lock.angle_deg" in o.err and "360" in o.err, o.err
    assert not (tmp_path / "t").exists()


# ----------------------------------------------------------------------------- numbers are numbers

@pytest.mark.parametrize("file,change,field", [
    ("actual_state.json", lambda d: next(iter(d["slots"].values())).update(seated=True), "seated"),
    ("actual_state.json", lambda d: next(iter(d["slots"].values())).update(rotation=["0", 0, 0]), "rotation.0"),
    ("initial_state.json", lambda d: next(iter(d["slots"].values())).update(position=[0, 0, False]), "position.2"),
    ("target_state.json", lambda d: d["tolerances"].update(rot_tol_deg="2"), "tolerances.rot_tol_deg"),
    ("contact_graph.json", lambda d: d["edges"][0].__setitem__(2, "3"), "edges.0.2"),
    ("part_catalog.json", lambda d: d["parts"][0]["symmetry"][0][0].__setitem__(0, True), "parts.0.symmetry.0.0.0"),
    ("part_catalog.json", lambda d: d["parts"][0]["voxels"][0].__setitem__(0, 1.0), "parts.0.voxels.0.0"),
])
def test_a_number_given_as_a_string_or_a_boolean_is_refused(bayonet, tmp_path, file, change, field):
    folder = copy(bayonet, tmp_path)
    edit(folder, file, change)
    refused(folder, file, field)


@pytest.mark.parametrize("key,value,text", [("pos_tol", 0.5, "less than 0.5"), ("rot_tol_deg", 45, "less than 45"),
                                            ("pos_tol", 0, "greater than 0")])
def test_tolerances_are_within_their_documented_range(bayonet, tmp_path, key, value, text):
    folder = copy(bayonet, tmp_path)
    edit(folder, "target_state.json", lambda d: d["tolerances"].update({key: value}))
    refused(folder, "target_state.json", f"tolerances.{key}", text)


def test_a_misspelt_key_in_a_task_file_is_refused_not_ignored(bayonet, tmp_path):
    folder = copy(bayonet, tmp_path)
    edit(folder, "target_state.json", lambda d: d.update(tolerance=d.pop("tolerances")))
    refused(folder, "target_state.json", "tolerance", "Extra inputs are not permitted")


# ----------------------------------------------------------------------------- what the voxels decide

def test_a_symmetry_that_is_not_a_rotation_is_refused(bayonet, tmp_path):
    folder = copy(bayonet, tmp_path)
    edit(folder, "part_catalog.json", lambda d: d["parts"][0]["symmetry"].append([[1, 0, 0], [0, 1, 0], [0, 0, -1]]))
    k = len(json.loads((folder / "part_catalog.json").read_text())["parts"][0]["symmetry"]) - 1
    refused(folder, "part_catalog.json", f"parts.0.symmetry.{k}", "not a rotation of the cube")


def test_a_symmetry_the_part_does_not_have_is_refused(bayonet, tmp_path):
    from forgeplan.model.rotations import cube_rotations

    folder = copy(bayonet, tmp_path)
    data = json.loads((folder / "part_catalog.json").read_text())
    k, part = next((k, p) for k, p in enumerate(data["parts"]) if len(p["symmetry"]) < 24)
    other = next([list(r) for r in m] for m in cube_rotations() if [list(r) for r in m] not in part["symmetry"])
    edit(folder, "part_catalog.json", lambda d: d["parts"][k]["symmetry"].append(other))
    refused(folder, "part_catalog.json", f"parts.{k}.symmetry", "symmetry group")


def test_a_contact_between_parts_that_do_not_touch_is_refused(bayonet, tmp_path):
    folder = copy(bayonet, tmp_path)
    data = json.loads((folder / "contact_graph.json").read_text())
    ids = [p["part_id"] for p in json.loads((folder / "part_catalog.json").read_text())["parts"]]
    touching = {frozenset(e[:2]) for e in data["edges"]}
    a, b = next((a, b) for a in ids for b in ids if a < b and frozenset((a, b)) not in touching)
    edit(folder, "contact_graph.json", lambda d: d["edges"].append([a, b, 1]))
    refused(folder, "contact_graph.json", "edges", "disagree with the voxel geometry")


@pytest.mark.parametrize("change,field", [
    (lambda d: d["applicable"][next(iter(d["applicable"]))].pop(), "applicable"),
    (lambda d: d["actions"][0]["params"].append("distance"), "actions"),
])
def test_an_action_space_that_is_not_the_assembly_s_is_refused(bayonet, tmp_path, change, field):
    folder = copy(bayonet, tmp_path)
    edit(folder, "action_space.json", change)
    refused(folder, "action_space.json", field, "is not the action space of the assembly")


def test_an_assembly_sequence_against_the_supports_is_refused(bayonet, tmp_path):
    folder = copy(bayonet, tmp_path)
    edit(folder, "assembly_graph.json", lambda d: d.update(sequence=d["sequence"][::-1]))
    refused(folder, "assembly_graph.json", "sequence.0", "before its support")


# ----------------------------------------------------------------------------- displaced parts (SEMANTICS §9)

@pytest.fixture(scope="module")
def zigzag(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fields") / "zigzag"
    write_task(make_task(zigzag_puzzle(), [], seed=1, sample_id="zigzag"), folder)
    (folder.parent / "output.json").write_text(json.dumps({
        "annotation": {"sample_id": "zigzag", "assembly_id": "zigzag3", "pass": True, "mistakes": []},
        "rework_plan": {"objective": "restore_to_target_state", "actions": []}}))
    return folder


@pytest.mark.parametrize("offset,text", [([1, 0, 0], "Core and Shell interpenetrate"),
                                         ([0, 6, 0], "past the position bound")])
def test_a_state_whose_parts_interpenetrate_is_bad_input(zigzag, tmp_path, offset, text):
    folder = copy(zigzag, tmp_path)
    o = run_cli(["verify", folder, folder.parent / "output.json"])
    assert o.code == 0, o.err
    edit(folder, "actual_state.json", lambda d: d["slots"]["Core"].update(offset=[0, 1, 0]))   # along the tunnel: a state
    o = run_cli(["verify", folder, folder.parent / "output.json"])
    assert o.code == 1 and judge(o) is None, o.err   # a valid state the empty plan does not restore
    edit(folder, "actual_state.json", lambda d: d["slots"]["Core"].update(offset=offset))
    refused(folder, "actual_state.json", "slots.Core.offset", text)


def test_an_offset_in_an_assembly_without_partial_moves_is_refused(bayonet, tmp_path):
    folder = copy(bayonet, tmp_path)
    pid = json.loads((folder / "part_catalog.json").read_text())["parts"][-1]["part_id"]
    edit(folder, "actual_state.json", lambda d: d["slots"][pid].update(offset=[0, 1, 0]))
    refused(folder, "actual_state.json", f"slots.{pid}.offset", "straight moves")


# ----------------------------------------------------------------------------- a model's answer under --strict

@pytest.mark.parametrize("extra,field", [
    ({"minimal_rework": {"moved_parts": ["A"], "moved_part_count": "1", "route_id": "R-x"}}, "minimal_rework.moved_part_count"),
    ({"minimal_rework": {"moved_parts": ["A"], "moved_part_count": True, "route_id": "R-x"}}, "minimal_rework.moved_part_count"),
    ({"minimal_rework": {"moved_parts": ["A"], "moved_part_count": 1.0, "route_id": "R-x"}}, "minimal_rework.moved_part_count"),
    ({"minimal_rework": {"moved_parts": [1], "moved_part_count": 1, "route_id": "R-x"}}, "minimal_rework.moved_parts.0"),
    ({"minimal_rework": {"moved_part": ["A"], "moved_part_count": 1, "route_id": "R-x"}}, "minimal_rework.moved_part"),
    ({"minimal_rewrok": {}}, "minimal_rewrok"),
])
def test_strict_refuses_unknown_and_mistyped_keys_of_an_answer(bayonet, tmp_path, extra, field):
    answer = {**json.loads((bayonet.parent / "output.json").read_text()), **extra}
    (tmp_path / "a.json").write_text(json.dumps(answer))
    o = run_cli(["verify", bayonet, tmp_path / "a.json", "--strict", "--json"])
    assert o.code == 1 and judge(o, True) is None, o.err
    verdict = json.loads(o.out)
    assert verdict["category"] == "schema_failure" and f"field {field}" in verdict["reason"], verdict


def test_a_mistake_offset_is_a_number_or_a_vector(bayonet, tmp_path):
    answer = json.loads((bayonet.parent / "output.json").read_text())
    answer["annotation"]["mistakes"][0]["offset"] = "x"
    (tmp_path / "a.json").write_text(json.dumps(answer))
    o = run_cli(["verify", bayonet, tmp_path / "a.json", "--json"])
    assert o.code == 1 and "annotation.mistakes.0.offset" in json.loads(o.out)["reason"], o.out


# ----------------------------------------------------------------------------- duplicate keys, anywhere

def test_a_duplicate_key_is_refused_in_every_kind_of_json(bayonet, tmp_path):
    folder = copy(bayonet, tmp_path)
    text = (folder / "target_state.json").read_text()
    (folder / "target_state.json").write_text(text.replace('"slots"', '"slots": {}, "slots"', 1))
    refused(folder, "target_state.json", "slots", "duplicate key 'slots'")
    answer = (bayonet.parent / "output.json").read_text()
    (tmp_path / "a.json").write_text(answer.replace('"rework_plan"', '"annotation": {}, "rework_plan"', 1))
    o = run_cli(["verify", bayonet, tmp_path / "a.json", "--json"])
    assert o.code == 1 and "duplicate key 'annotation'" in json.loads(o.out)["reason"], o.out
    (tmp_path / "p.jsonl").write_text('{"sample_id": "a", "sample_id": "b", "raw_output": ""}\n')
    with pytest.raises(InputError, match="line 1.sample_id: duplicate key 'sample_id'"):
        read_predictions(tmp_path / "p.jsonl")

"""Task files: write/load round trip and clear errors naming file and field."""

import json

import pytest

from cases import all_cases
from forgeplan.errors import InputError
from forgeplan.task import PUBLIC_FILES, load_task, write_task


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

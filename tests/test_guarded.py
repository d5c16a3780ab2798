"""The guarded reader, the escaping of echoed text, exit code 3, and the hostile-input reproducers."""

import gzip
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeplan.cli import main
from lab.fuzzing import judge, run_cli
from forgeplan.io import guarded, quoting
from forgeplan.model.errors import InputError

# ----------------------------------------------------------------------------- files


def test_only_regular_files_are_read(tmp_path):
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero", tmp_path):
        with pytest.raises(InputError, match="not a regular file"):
            guarded.read_bytes(path, "output")  # returns at once: a FIFO without a writer does not block


def test_symlinks_must_stay_inside_the_folder_being_read(tmp_path):
    (tmp_path / "outside.json").write_text("{}")
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "inside.json").write_text("{}")
    (folder / "a.json").symlink_to(tmp_path / "outside.json")
    (folder / "b.json").symlink_to(folder / "inside.json")
    with pytest.raises(InputError, match="leads outside the folder"):
        guarded.read_json(folder / "a.json", "task file", root=folder)
    with pytest.raises(InputError, match="leads outside the folder"):
        guarded.read_json(folder / ".." / "outside.json", "task file", root=folder)
    assert guarded.read_json(folder / "b.json", "task file", root=folder) == {}


def test_size_limit_per_kind_and_head_reading(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b" " * (guarded.LIMITS["plan file"] + 1))
    with pytest.raises(InputError, match="over the 10000000-byte limit"):
        guarded.read_bytes(big, "plan file")
    assert len(guarded.read_bytes(big, "output", head=True)) == guarded.LIMITS["output"] + 1


@pytest.mark.parametrize("text, reason", [
    ('{"pass": true, "pass": false}', "duplicate key 'pass'"),
    ("[" * 100_000, "nests deeper than"),
    ("[" * 65 + "]" * 65, "nests deeper than 64"),
    ("9" * 5000, "an integer of 5000 digits"),
    ("[1e400]", "out of range"),
    ("[NaN]", "NaN is not allowed"),
    ('["\\ud800"]', "lone surrogate"),
    ('{"\\udc00": 1}', "lone surrogate"),
    ('{"a": ', "malformed JSON"),
])
def test_json_limits_are_one_line_errors_naming_the_file(text, reason):
    with pytest.raises(InputError) as err:
        guarded.loads(text, "f.json")
    assert reason in str(err.value) and str(err.value).startswith("f.json") and "\n" not in str(err.value)


def test_duplicate_key_names_the_field():
    with pytest.raises(InputError) as err:
        guarded.loads('{"slots": {"a": 1, "a": 2}}', "s.json")
    assert err.value.field == "a"


@pytest.mark.parametrize("data", [b"\xed\xa0\x80", b"\xc0\xaf", b"\xff", b"ok\x80"])
def test_strict_utf8(data):
    with pytest.raises(InputError, match="not UTF-8"):
        guarded.decode(data, "f")


def test_a_bom_and_escaped_non_ascii_are_fine():
    assert guarded.loads(guarded.decode(b'\xef\xbb\xbf{"a": "\\u00e9\xc3\xa9"}', "f"), "f") == {"a": "éé"}


# ----------------------------------------------------------------------------- escaping

@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)))
def test_one_line_is_one_printable_line(text):
    s = quoting.one_line(text)
    assert "\n" not in s and "\r" not in s and "\x1b" not in s
    s.encode("utf-8")  # no lone surrogate left


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF)),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=10))
def test_json_text_is_valid_printable_json_for_any_strings(data):
    text = quoting.json_text(data)
    text.encode("utf-8")
    assert json.loads(text) == data


def test_a_lone_surrogate_in_a_prediction_is_that_samples_verdict(small_bench, tmp_path):
    sid = json.loads((small_bench / "manifest.json").read_text())["splits"]["test"][0]
    preds = tmp_path / "p.jsonl"
    ref = json.loads((small_bench / "tasks" / sid / "reference.json").read_text())
    raw = json.dumps({k: ref[k] for k in ("annotation", "rework_plan")}).replace(sid, "\ud800", 1)  # a literal lone surrogate
    preds.write_text(json.dumps({"sample_id": sid, "raw_output": raw}) + "\n")
    o = run_cli(["evaluate", "--bench", small_bench, "--predictions", preds, "--json"])
    assert o.code == 0 and judge(o, True) is None
    examples = json.loads(o.out)["failures"]["schema_failure"]["examples"]
    assert any(e["sample_id"] == sid and "lone surrogate" in e["reason"] for e in examples)


def test_markdown_cells_cannot_start_a_heading_or_a_column():
    cell = quoting.markdown_cell("X |\n\n# ALL TESTS PASSED")
    assert "\n" not in cell and "\\|" in cell and cell.count("|") == cell.count("\\|")
    assert quoting.markdown_cell("FORGE (Qwen3.5-9B + LoRA), paper") == "FORGE (Qwen3.5-9B + LoRA), paper"


# ----------------------------------------------------------------------------- exit codes

def test_an_internal_error_is_exit_3_never_a_verdict(monkeypatch, capsys):
    import forgeplan.verify

    monkeypatch.setattr(forgeplan.verify, "verify", lambda task, raw: 1 / 0)
    assert main(["verify", "/nonexistent", "x"]) == 2  # bad input is still exit 2
    capsys.readouterr()
    from forgeplan.cli import verify_cmd

    monkeypatch.setattr(verify_cmd, "run", lambda args: 1 / 0)
    code = main(["verify", "a", "b"])
    err = capsys.readouterr().err
    assert code == 3 and "internal error" in err and "ZeroDivisionError" in err and "Traceback" not in err


def test_debug_shows_the_traceback(monkeypatch, capsys):
    from forgeplan.cli import verify_cmd

    monkeypatch.setattr(verify_cmd, "run", lambda args: [][1])
    assert main(["--debug", "verify", "a", "b"]) == 3
    assert "Traceback" in capsys.readouterr().err


# ----------------------------------------------------------------------------- reproducers

@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile") / "t"
    assert run_cli(["task", "make", "luban_lock_3", "--out", d, "--fault", "missing_part"]).code == 0
    return d


def _output(task, edit=None) -> str:
    ref = json.loads((task / "reference.json").read_text())
    out = {k: ref[k] for k in ("annotation", "rework_plan")}
    if edit:
        edit(out)
    return json.dumps(out)


def _first_action(**fields):
    return lambda o: o["rework_plan"]["actions"][0].update(fields)


@pytest.mark.parametrize("name, text, json_out, expect", [
    ("5000 digits", lambda t: _output(t)[:-1] + ', "x": ' + "9" * 5000 + "}", False, "5000 digits"),
    ("lone surrogate", lambda t: _output(t).replace("LubanLock3_Part03_Key", "\\ud800", 1), True, "lone surrogate"),
    ("overflow", lambda t: _output(t, lambda o: o["rework_plan"].update(actions=[
        {"action": "translate_rotate_to_lock", "part_id": "LubanLock3_Part03_Key", "after_pose": {"position": [1e200, 4, 3.5]}}])),
     False, "less than or equal to 1000000"),
    ("newline spoof", lambda t: _output(t, _first_action(part_id="X\nvalid: 3 actions, 2 moved parts")), False, "X\\x0avalid"),
    ("key spoof", lambda t: _output(t, lambda o: o["rework_plan"].update({"e\nvalid: 3 actions": 1})), False, "e\\x0avalid"),
    ("ansi", lambda t: _output(t, _first_action(part_id="\x1b[32mvalid")), False, "\\x1b[32mvalid"),
    ("duplicate pass", lambda t: _output(t).replace('"pass": false', '"pass": true, "pass": false'), True, "duplicate key"),
])
def test_hostile_outputs_get_a_safe_verdict(task, tmp_path, name, text, json_out, expect):
    f = tmp_path / "out.json"
    f.write_text(text(task))
    o = run_cli(["verify", task, f] + (["--json"] if json_out else []))
    assert o.code == 1 and judge(o, json_out) is None and expect in o.out
    assert len(o.out.strip().splitlines()) == 1 or json_out


def _edit_json(path, fn):
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def _slot(data):
    return next(iter(data["slots"].values()))


TASK_EDITS = {
    "description list": ("part_catalog.json", lambda d: d.update(description=[1]), "description"),
    "source dict": ("part_catalog.json", lambda d: d.update(source={"a": 1}), "source"),
    "position 1e200": ("actual_state.json", lambda d: _slot(d).update(position=[1e200, 0, 0]), "position.0"),
    "target 1e308": ("target_state.json", lambda d: _slot(d).update(position=[1e308, 0, 0]), "position.0"),
    "contact ghost": ("contact_graph.json", lambda d: d["edges"].append(["Ghost", "Other", 1]), "edges"),
    "sequence ghost": ("assembly_graph.json", lambda d: d["sequence"].append("Ghost"), "sequence"),
    "applicable ghost": ("action_space.json", lambda d: d["applicable"].update(Ghost=["remove"]), "applicable"),
    "control char id": ("actual_state.json", lambda d: d.update(assembly_id="a\nb"), "assembly_id"),
}


@pytest.mark.parametrize("case", TASK_EDITS, ids=list(TASK_EDITS))
@pytest.mark.parametrize("command", [["verify", "{t}", "{t}/reference.json"], ["closure", "{t}"], ["solve", "{t}"]])
def test_hostile_task_files_are_one_line_errors(task, tmp_path, case, command):
    import shutil

    t = tmp_path / "t"
    shutil.copytree(task, t)
    name, edit, field = TASK_EDITS[case]
    _edit_json(t / name, edit)
    o = run_cli([a.replace("{t}", str(t)) for a in command])
    assert o.code == 2 and judge(o) is None and name in o.err and field in o.err


def test_deep_or_long_task_files_and_symlinks(task, tmp_path):
    import shutil

    for name, text in (("contact_graph.json", "[" * 100_000), ("part_catalog.json", "1" * 5000)):
        t = tmp_path / name
        shutil.copytree(task, t)
        (t / name).write_text(text)
        o = run_cli(["closure", t])
        assert o.code == 2 and judge(o) is None
    t = tmp_path / "linked"
    shutil.copytree(task, t)
    (t / "actual_state.json").unlink()
    (t / "actual_state.json").symlink_to(task / "actual_state.json")
    o = run_cli(["closure", t])
    assert o.code == 2 and "leads outside the folder" in o.err


def test_fifos_and_devices_never_hang(task, tmp_path):
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    for argv in (["verify", task, fifo], ["import", fifo, "--out", tmp_path / "a.json"], ["import-plan", task, fifo],
                 ["assemblies", "--check", "/dev/zero"], ["task", "make", fifo, "--out", tmp_path / "x"]):
        o = run_cli(argv)
        assert o.code == 2 and judge(o) is None, argv


def test_out_on_a_file_or_an_unwritable_place_is_exit_2(tmp_path):
    (tmp_path / "file").write_text("x")
    for argv in (["task", "make", "luban_lock_3", "--out", tmp_path / "file"],
                 ["task", "make", "luban_lock_3", "--out", tmp_path / "file" / "sub"],
                 ["bench", "build", "--out", tmp_path / "file", "--tasks", "20"],
                 ["demo", "--out", tmp_path / "file"], ["export-pddl", tmp_path, "--out", tmp_path / "file"]):
        o = run_cli(argv)
        assert o.code == 2 and judge(o) is None and "--out" in o.err, argv


def test_resource_caps_are_exit_2(task, tmp_path):
    (tmp_path / "plan").write_bytes(b"(" + b"a" * 11_000_000 + b")")
    xm = tmp_path / "grid.xmpuzzle"
    xm.write_bytes(gzip.compress(b'<puzzle version="2"><shapes><voxel x="126" y="126" z="126" type="0">'
                                 + b"#" * 126 ** 3 + b"</voxel></shapes></puzzle>"))
    count = tmp_path / "count.xmpuzzle"
    count.write_text('<puzzle version="2"><shapes><voxel x="1" y="1" z="1" type="0">#</voxel></shapes><problems><problem>'
                     '<shapes><shape id="0" count="100000000"/></shapes><result id="0"/></problem></problems></puzzle>')
    for argv, expect in ((["import-plan", task, tmp_path / "plan"], "byte limit"),
                         (["import", xm, "--out", tmp_path / "a.json"], "1000000-cell limit"),
                         (["import", count, "--out", tmp_path / "a.json"], "count='100000000'"),
                         (["bench", "build", "--out", tmp_path / "b", "--tasks", "1000000000"], "at most 100000 tasks"),
                         (["bench", "build", "--out", tmp_path / "b", "--jobs", "0"], "--jobs")):
        o = run_cli(argv)
        assert o.code == 2 and judge(o) is None and expect in o.err, argv


def test_xml_entities_are_refused_in_any_encoding(tmp_path):
    f = tmp_path / "u16.xmpuzzle"
    f.write_bytes('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE p [<!ENTITY a "b">]><puzzle version="2">&a;</puzzle>'
                  .encode("utf-16"))
    o = run_cli(["import", f, "--out", tmp_path / "a.json"])
    assert o.code == 2 and "DTDs and entities" in o.err


def test_silent_acceptances_are_refused(tmp_path):
    asm = {"schema_version": "9.0", "assembly_id": "v9", "family": "f", "parts": [{"part_id": "A", "kind": "k", "voxels": [[0, 0, 0]]}]}
    (tmp_path / "v9.json").write_text(json.dumps(asm))
    for argv, expect in ((["assemblies", "--check", tmp_path / "v9.json"], "schema_version"),
                         (["assemblies", "--check", ""], "unknown assembly")):
        o = run_cli(argv)
        assert o.code == 2 and expect in o.err, argv
    o = run_cli(["verify"])
    assert o.code == 2 and len(o.err.strip().splitlines()) == 1


def test_time_limit_inf_is_no_limit(task):
    for limit in ("inf", "1e300"):
        o = run_cli(["solve", task, "--time-limit", limit])
        assert o.code == 0 and o.out.startswith("optimal"), limit
    for limit in ("nan", "0", "-1"):
        assert run_cli(["solve", task, "--time-limit", limit]).code == 2
    o = run_cli(["crosscheck", task, "--time-limit", "1e300"])  # Fast Downward too
    assert o.code == 0 and "1 agree" in o.out


def test_plan_external_time_limits(task, tmp_path):
    assert run_cli(["export-pddl", task, "--out", tmp_path / "p", "--grounded"]).code == 0
    assert run_cli(["plan-external", tmp_path / "p", "--time-limit", "inf"]).code == 0
    assert (tmp_path / "p" / "sas_plan").is_file()
    for limit in ("nan", "-1"):
        o = run_cli(["plan-external", tmp_path / "p", "--time-limit", limit])
        assert o.code == 2 and judge(o) is None


def _not_an_int(s: str) -> bool:
    try:
        int(s)
    except ValueError:
        return True
    return False


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(["--tasks", "--jobs", "--seed"]), st.text(max_size=12).filter(_not_an_int))
def test_argparse_errors_are_one_escaped_line(tmp_path_factory, flag, value):
    o = run_cli(["bench", "build", "--out", tmp_path_factory.mktemp("never"), flag, value])
    assert o.code == 2 and judge(o) is None

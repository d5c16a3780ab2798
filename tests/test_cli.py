"""The command line: exit codes 0/1/2 and one-line errors, end to end."""

import json
import subprocess
import sys

import pytest

from forgeplan.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_task_make_then_verify_reference(tmp_path, capsys):
    d = tmp_path / "t"
    code, out, _ = run(capsys, "task", "make", "bayonet_structure", "--out", str(d),
                       "--fault", "missing_part:BayonetStructure_Part02_Pin", "--fault", "under_insertion", "--seed", "4")
    assert code == 0 and "reference plan" in out
    ref = json.loads((d / "reference.json").read_text())
    assert {m["type"] for m in ref["annotation"]["mistakes"]} == {"missing_part", "under_insertion"}
    pin = next(m for m in ref["annotation"]["mistakes"] if m["type"] == "missing_part")
    assert pin["visible"] is False          # under the engaged lock ring
    (tmp_path / "out.json").write_text(json.dumps({k: ref[k] for k in ("annotation", "rework_plan")}))
    code, out, _ = run(capsys, "verify", str(d), str(tmp_path / "out.json"), "--json")
    assert code == 0 and json.loads(out)["valid"] is True
    ref["rework_plan"]["actions"] = ref["rework_plan"]["actions"][1:]
    (tmp_path / "bad.json").write_text(json.dumps({k: ref[k] for k in ("annotation", "rework_plan")}))
    code, out, _ = run(capsys, "verify", str(d), str(tmp_path / "bad.json"))
    assert code == 1 and out.startswith("invalid [")


def test_verify_rejects_oversized_and_truncated_outputs(tmp_path, capsys):
    d = tmp_path / "t"
    assert run(capsys, "task", "make", "shaft_stack", "--out", str(d))[0] == 0
    (tmp_path / "big.json").write_text("{" + " " * 1_100_000 + "}")
    code, out, _ = run(capsys, "verify", str(d), str(tmp_path / "big.json"))
    assert code == 1 and "schema_failure" in out and "limit" in out
    (tmp_path / "cut.json").write_text('{"annotation": {"sample_id": "x", "assembly_id": "shaft_stack", "pass": tr')
    code, out, _ = run(capsys, "verify", str(d), str(tmp_path / "cut.json"))
    assert code == 1 and "truncated" in out


@pytest.mark.parametrize("argv,match", [
    (["task", "make", "no_such_assembly", "--out", "X"], "unknown assembly"),
    (["task", "make", "bayonet_structure", "--out", "X", "--fault", "melted"], "fault type 'melted'"),
    (["task", "make", "bayonet_structure", "--out", "X", "--fault", "missing_part:Nope"], "unknown part 'Nope'"),
    (["task", "make", "bayonet_structure", "--out", "X", "--fault", "interference_lock:BayonetStructure_Part07_Cap"], "cannot carry a fault of type interference_lock"),
    (["verify", "/nonexistent", "x.json"], "not a task folder"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv, match):
    argv = [str(tmp_path / a) if a == "X" else a for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1


def test_usage_errors_exit_2_without_traceback():
    p = subprocess.run([sys.executable, "-m", "forgeplan", "verify"], capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "usage" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_assemblies_lists_the_library(capsys):
    code, out, _ = run(capsys, "assemblies", "--json")
    rows = json.loads(out)
    assert code == 0 and {"bayonet_structure", "shaft_stack"} <= {r["assembly_id"] for r in rows}
    assert all(r["blocking_depth"] >= 1 and r["parts"] >= 2 for r in rows)
    assert {r["assembly_id"] for r in rows if r["moves"] == "group_moves"} == {"burr_6_split", "burr_6_pairs"}
    assert {r["assembly_id"]: r["level"] for r in rows if r["moves"] == "partial_moves"} == {"burr_6_level4": "4", "burr_6_level5": "5"}
    assert {r["moves"] for r in rows} == {"single_part", "group_moves", "partial_moves"}


def test_evaluate_with_the_papers_reference_cost(small_bench, tmp_path, capsys):
    preds = tmp_path / "oracle.jsonl"
    assert run(capsys, "baseline", "oracle", "--bench", str(small_bench), "--out", str(preds))[0] == 0
    code, out, _ = run(capsys, "evaluate", "--bench", str(small_bench), "--predictions", str(preds),
                       "--reference-cost", "paper", "--json")
    assert code == 0 and json.loads(out)["rules"]["reference_cost"] == "paper"
    code = main(["evaluate", "--bench", str(small_bench), "--predictions", str(preds), "--reference-cost", "lexicographic"])
    assert code == 2 and "invalid choice" in capsys.readouterr().err

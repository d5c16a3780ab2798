"""`forgeplan perf solve` prints its figures as JSON, with the group-move Luban locks reported apart."""

import json

from forgeplan.cli import main


def test_perf_solve_reports_group_move_burrs_apart(capsys):
    assert main(["perf", "solve", "--runs", "1", "--seeds", "1", "--no-grid",
                 "--assemblies", "burr_6_pairs", "jigsaw_panel"]) == 0
    out = json.loads(capsys.readouterr().out)["builtin"]
    assert out["tasks"] == out["proved_optimal"] > 0
    groups = out["needs_group_moves"]
    assert list(groups["by_assembly"]) == ["burr_6_pairs"]
    assert 0 < groups["tasks"] < out["tasks"] and groups["proved_optimal"] == groups["tasks"]
    assert groups["median_s"] <= groups["max_s"]


def test_perf_solve_unknown_assembly_is_bad_input(capsys):
    assert main(["perf", "solve", "--no-grid", "--assemblies", "no_such_lock"]) == 2
    assert "no_such_lock" in capsys.readouterr().err

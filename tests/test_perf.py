"""`python -m lab solve` prints its figures as JSON, with the group-move Luban locks reported apart."""

import json

import pytest

from lab.cli import main


@pytest.mark.slow
def test_perf_solve_reports_group_move_burrs_apart(capsys):
    assert main(["solve", "--runs", "1", "--seeds", "1", "--no-grid",
                 "--assemblies", "burr_6_pairs", "jigsaw_panel"]) == 0
    out = json.loads(capsys.readouterr().out)["builtin"]
    assert out["tasks"] == out["proved_optimal"] > 0
    groups = out["needs_group_moves"]
    assert list(groups["by_assembly"]) == ["burr_6_pairs"]
    assert 0 < groups["tasks"] < out["tasks"] and groups["proved_optimal"] == groups["tasks"]


@pytest.mark.slow
def test_perf_scale_writes_growth_curves_and_a_projection(capsys, tmp_path):
    assert main(["scale", "--sizes", "20", "40", "--jobs", "2", "--parts", "10", "25", "--depths", "2",
                 "--runs", "1", "--workers", "1", "10", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [b["tasks"] for b in out["builds"]] == [20, 40] and all(b["peak_rss_mib_worker"] > 0 for b in out["builds"])
    assert [(c["parts"], c["depth"]) for c in out["solve_cells"]] == [(10, 2), (25, 2)]
    assert all(c["all_optimal"] and c["tasks"] > 1 for c in out["solve_cells"])
    hours = out["projection"]["hours_by_workers"]
    assert hours["1"] == pytest.approx(10 * hours["10"], rel=0.02)
    assert json.loads((tmp_path / "scale.json").read_text()) == out
    assert (tmp_path / "scale.png").read_bytes()[:4] == b"\x89PNG"


def test_perf_solve_unknown_assembly_is_bad_input(capsys):
    assert main(["solve", "--no-grid", "--assemblies", "no_such_lock"]) == 2
    assert "no_such_lock" in capsys.readouterr().err


@pytest.mark.slow
def test_perf_pddl_groups_covers_the_built_in_group_burrs(capsys, tmp_path):
    """One real puzzle plus the built-in group burrs: Fast Downward solves every fault, clingo agrees."""
    import shutil

    from burrdata import burr

    shutil.copy(burr("mj_burr6_puzzle2"), tmp_path)
    assert main(["pddl-groups", "--data", str(tmp_path), "--runs", "1", "--builtin", "--clingo"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["puzzle"] for r in out["builtin_rows"]] == ["built-in burr_6_split", "built-in burr_6_pairs"]
    assert out["builtin"]["tasks"] == out["builtin"]["agree"] == 4
    for row in out["builtin_rows"]:
        assert row["mode"] == "group_moves" and all(f["group_moves"] >= 1 and f["valid_in_engine"] for f in row["faults"])
        assert all(0 < row["group_moves_exported"][d] <= row["candidate_groups"][d] for d in row["candidate_groups"])


@pytest.mark.slow
def test_perf_fuzz_counts_cases_per_entry_point_and_finds_no_crash(capsys, small_bench):
    from lab.fuzzing import ENTRY_POINTS

    assert main(["fuzz", "--cases", "4", "--runs", "1", "--bench", str(small_bench)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["entry_points"]) == list(ENTRY_POINTS) and out["crashes"] == 0
    for e in out["entry_points"].values():
        assert e["cases"] == 4 == e["verdicts"] + e["clean_errors"] + e["crashes"]
    assert set(out["time_limit_overshoot_s"]["median_by_limit"]) == {"1e-06", "0.05", "0.2"} and out["peak_rss_mb"] > 0


@pytest.mark.slow
def test_perf_decode_compares_all_three_on_a_small_vocabulary(capsys, tmp_path):
    """Setup and per-step figures for forgeplan, llguidance and xgrammar on one tokenizer trained here,
    and the tiny model's step time in the three modes."""
    pytest.importorskip("torch")
    pytest.importorskip("llguidance")
    pytest.importorskip("xgrammar")
    assert main(["decode", "--vocabs", "4k", "--tasks", "1", "--runs", "2", "--mask-runs", "1",
                 "--new-tokens", "48", "--corpus-mb", "0.3", "--cache", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["mask_per_step"]["4k"]
    ours = row["forgeplan"]
    assert ours["setup"]["same_assembly_ms"] > 0 and ours["setup_dfa_compiled"]["first_of_assembly_ms"] > 0
    for mode in ("grammar", "legal"):
        assert ours[mode]["steps"] > 10 and ours[mode]["step_us"] > 0 and ours[mode]["step_warm_us"] > 0
    for peer in ("llguidance", "xgrammar"):
        assert row[peer]["status"] == "ok" and row[peer]["step_us"] > 0 and row[peer]["per_task_setup_ms"] > 0
    assert row["grammar_step_over_fastest_peer"] > 0
    tiny = out["tiny_model_decoding"]
    assert tiny["none"]["steps"] > 0 and all(tiny[m]["steps"] > 0 and "overhead_pct" in tiny[m] for m in ("grammar", "legal"))
    assert main(["decode", "--vocabs", "32", "--skip-decode", "--cache", str(tmp_path)]) == 2
def test_perf_partial_finds_and_replays_every_shipped_burr_at_its_level(capsys):
    assert main(["partial", "--runs", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["puzzles"] == out["first_separation_matches"] == out["replayed"] == out["fully_disassembled"] == 5
    levels = {r["puzzle"]: r["level"] for r in out["rows"]}
    assert levels["mj_burr6_puzzle3.json"] == "6" and levels["mj_burr6_puzzle1.json"] == "5.4"
    assert set(out["time_vs_level"]) == {"mj_burr6_puzzle1.json", "mj_burr6_puzzle3.json"}
    assert out["rework_tasks"] == out["rework_valid"] == 48      # 6 parts x 4 fault types x 2 burrs


@pytest.mark.slow
def test_perf_partial_proof_section_reports_every_fault_with_an_honest_status(capsys, tmp_path):
    from forgeplan.io.resources import examples_dir

    (tmp_path / "mj_burr6_puzzle3.json").write_text((examples_dir() / "mj_burr6_puzzle3.json").read_text())
    assert main(["partial", "--runs", "1", "--data", str(tmp_path), "--proof", "--proof-limit", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    proofs = out["rows"][0]["proofs"]
    assert set(proofs) == {"missing_part", "wrong_orientation", "misplacement", "under_insertion"}
    for ftype in proofs.values():
        assert ftype["tasks"] == 6 == len(ftype["rows"])
        for row in ftype["rows"]:
            assert row["status"] in ("optimal", "feasible") and row["c"] >= 1 and row["J"] >= 1
            allowed = ("moved-set-search",) if row["status"] == "optimal" else ("moved-set-search", "repair-search")
            assert row["proof"] in allowed
    summary = out["proof_summary"]["mj_burr6_puzzle3.json"]
    assert summary["tasks"] == 24 and summary["proved"] == sum(f["proved"] for f in proofs.values())


def test_perf_bench_separates_the_serial_part_and_projects_the_idle_wall(capsys):
    assert main(["bench", "--tasks", "20", "--jobs", "2", "--runs", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["cpu_seconds_all"]) == len(out["wall_seconds_all"]) == 2
    cpu, serial = out["cpu_seconds_median"], out["serial_cpu_seconds_median"]
    assert 0 < serial < cpu
    assert out["projected_wall_seconds_on_2_idle_cores"] == pytest.approx(serial + (cpu - serial) / 2, abs=0.02)
    assert out["composition"]["tasks"] == 20 and out["peak_rss_mib_worker"] > 0
    dist = out["task_cpu"]
    assert dist["tasks"] == 20 and 0 < dist["median_seconds"] <= dist["p90_seconds"] <= dist["max_seconds"]
    assert dist["slowest"][0]["cpu_seconds"] == dist["max_seconds"] and dist["sum_seconds"] < cpu
    assert sum(a["tasks"] for a in dist["heaviest_assemblies"]) <= 20

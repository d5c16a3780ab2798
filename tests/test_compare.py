"""`forgeplan compare RUN_DIR...`: two real baselines on a real small benchmark, each figure with its interval,
the paired test, the strata, the plot, and one-line errors for run folders that are missing or broken."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import numpy as np
import pytest

from forgeplan.cli import main
from forgeplan.evaluation.figures import Columns, figure_arrays
from forgeplan.evaluation.resampling import PERMUTATIONS, _swapped, coefficients, permuted_differences


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def evaluated(bench, name: str, root, split="train"):
    preds, folder = root / f"{name}.jsonl", root / name
    code, _, err = run("baseline", name, "--bench", bench, "--split", split, "--out", preds)
    assert code == 0, err
    code, _, err = run("evaluate", "--bench", bench, "--predictions", preds, "--split", split, "--out", folder)
    assert code == 0, err
    return folder


@pytest.fixture(scope="module")
def runs(small_bench, tmp_path_factory):
    """`baseline oracle` and `baseline greedy-legal` on the train split, each evaluated with --out."""
    root = tmp_path_factory.mktemp("runs")
    return {name: evaluated(small_bench, name, root) for name in ("oracle", "greedy-legal")}


@pytest.fixture(scope="module")
def compared(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("compared") / "cmp"
    code, stdout, err = run("compare", runs["oracle"], runs["greedy-legal"], "--out", out)
    assert code == 0, err
    assert "compare.md" in stdout and "30 shared samples" in stdout
    return out, json.loads((out / "compare.json").read_text())


def test_each_interval_holds_its_value_and_the_oracle_beats_greedy_legal(compared):
    _, result = compared
    assert result["shared_samples"] == 30 and not result["notes"]
    assert [r["name"] for r in result["runs"]] == ["oracle", "greedy-legal"]
    for figure, table in result["overall"].items():
        for r in table["runs"]:
            if r["value"] is not None:
                assert r["low"] - 1e-9 <= r["value"] <= r["high"] + 1e-9, (figure, r)
    for figure in ("DGTR", "SSE", "VMRE", "MVE", "Overall-Core", "MPA"):
        pair = result["overall"][figure]["pairs"][0]
        assert (pair["a"], pair["b"]) == ("oracle", "greedy-legal")
        assert pair["difference"] > 0 and pair["low"] > 0 and pair["p"] < 0.01, (figure, pair)
    # no-fault compliance: both runs answer every no-fault sample with an empty plan
    tie = result["overall"]["NoFault-Compliance"]["pairs"][0]
    assert tie["difference"] == 0 and tie["p"] == 1.0


def test_the_figures_are_the_runs_own_reports(compared, runs):
    _, result = compared
    for k, name in enumerate(("oracle", "greedy-legal")):
        metrics = json.loads((runs[name] / "metrics.json").read_text())["metrics"]
        for figure, table in result["overall"].items():
            assert table["runs"][k]["value"] == pytest.approx(metrics[figure], abs=1e-9) if metrics[figure] is not None \
                else table["runs"][k]["value"] is None


def test_a_run_compared_with_itself_differs_by_zero_with_p_one(runs):
    code, stdout, err = run("compare", runs["greedy-legal"], runs["greedy-legal"], "--names", "a", "b", "--format", "json")
    assert code == 0, err
    result = json.loads(stdout)
    tables = [result["overall"], *(t for groups in result["strata"].values() for t in groups.values())]
    for table in tables:
        for figure, t in table.items():
            pair = t["pairs"][0]
            if pair["difference"] is not None:
                assert (pair["difference"], pair["low"], pair["high"], pair["p"]) == (0.0, 0.0, 0.0, 1.0), figure


def test_strata_tables_sum_to_n(compared, runs):
    _, result = compared
    assert set(result["strata"]) == {"fault type", "difficulty", "assembly"}
    for label, groups in result["strata"].items():
        for figure, table in result["overall"].items():
            for k, r in enumerate(table["runs"]):
                assert sum(g[figure]["runs"][k]["n"] for g in groups.values()) == r["n"], (label, figure)
    rows = [json.loads(x) for x in (runs["oracle"] / "samples.jsonl").read_text().splitlines()]
    assert set(result["strata"]["assembly"]) == {r["assembly_id"] for r in rows}
    assert "no_fault" in result["strata"]["fault type"] and "easy" in result["strata"]["difficulty"]


def test_the_outputs_markdown_json_and_a_png(compared):
    out, result = compared
    md = (out / "compare.md").read_text()
    for figure in result["figures"]:
        assert f"### {figure}\n" in md and f"### {figure} per fault type" in md
    assert "p (sign-flip)" in md and "| oracle − greedy-legal |" in md
    png = (out / "compare.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.pyplot as plt

    height, width = plt.imread(out / "compare.png").shape[:2]
    assert width > 600 and height > 400


def test_markdown_on_stdout_without_out(runs):
    code, stdout, err = run("compare", runs["oracle"], runs["greedy-legal"], "--names", "ceiling", "greedy")
    assert code == 0, err
    assert stdout.startswith("# forgeplan comparison") and "| ceiling − greedy |" in stdout


def test_only_shared_samples_are_compared_and_the_result_says_so(runs, tmp_path):
    part = tmp_path / "part"
    shutil.copytree(runs["greedy-legal"], part)
    rows = (part / "samples.jsonl").read_text().splitlines()
    (part / "samples.jsonl").write_text("\n".join(rows[:12]) + "\n")
    code, stdout, err = run("compare", runs["oracle"], part, "--format", "json")
    assert code == 0, err
    result = json.loads(stdout)
    assert result["shared_samples"] == 12
    assert any("18 of its 30 samples are not shared" in n for n in result["notes"])


def test_magar_runs_compare_on_both_families(magar_bench, tmp_path):
    a = evaluated(magar_bench, "oracle", tmp_path)
    b = evaluated(magar_bench, "no-op", tmp_path)
    code, stdout, err = run("compare", a, b, "--format", "json")
    assert code == 0, err
    result = json.loads(stdout)
    assert result["figures"][-3:] == ["Assembly Decision", "Minimal Rework", "Overall"]
    overall = result["overall"]["Overall"]
    assert overall["runs"][0]["value"] == 100.0 and overall["pairs"][0]["difference"] > 0


def test_bad_run_folders_get_one_line_and_exit_2(runs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = tmp_path / "broken"
    shutil.copytree(runs["oracle"], broken)
    lines = (broken / "samples.jsonl").read_text().splitlines()
    row = json.loads(lines[3])
    row["DGTR"] = "high"
    (broken / "samples.jsonl").write_text("\n".join(lines[:3] + [json.dumps(row)] + lines[4:]) + "\n")
    garbled = tmp_path / "garbled"
    shutil.copytree(runs["oracle"], garbled)
    (garbled / "samples.jsonl").write_text("{not json\n")
    other = tmp_path / "other"
    shutil.copytree(runs["oracle"], other)
    (other / "samples.jsonl").write_text("".join(json.dumps(json.loads(x) | {"sample_id": "x" + json.loads(x)["sample_id"]}) + "\n"
                                                 for x in lines))
    cases = [((tmp_path / "nope", runs["oracle"]), "no such run folder"),
             ((empty, runs["oracle"]), "no samples.jsonl"),
             ((broken, runs["oracle"]), "line 4.DGTR: expected a number or null"),
             ((garbled, runs["oracle"]), "line 1"),
             ((other, runs["oracle"]), "share no sample")]
    for folders, message in cases:
        code, stdout, err = run("compare", *folders)
        assert code == 2 and not stdout and err.count("\n") == 1 and message in err, (folders, err)
    code, _, err = run("compare", runs["oracle"], runs["greedy-legal"], "--names", "one")
    assert code == 2 and "--names" in err and "2 runs" in err
    code, _, err = run("compare", runs["oracle"], runs["greedy-legal"], "--names", "x", "x")
    assert code == 2 and "same name" in err


# ----------------------------------------------------------------------------- the test itself

def columns(rng, n: int, nulls: bool) -> Columns:
    def metric():
        v = rng.choice([0.0, 50.0, 100.0], size=n)
        if nulls:
            v[rng.random(n) < 0.3] = np.nan
        return v
    groups = {"assembly_id": np.sort(rng.integers(0, 3, n)), "stratum": rng.integers(0, 3, n)}
    return Columns(tuple(f"s{i}" for i in range(n)), {m: metric() for m in ("SSE", "DGTR", "MPA")}, groups)


@pytest.mark.parametrize("seed", range(4))
def test_the_permutations_weighted_sums_equal_recomputed_figures(seed):
    rng = np.random.default_rng(seed)
    a = columns(rng, 25, nulls=True)
    b = Columns(a.sample_ids, {m: np.where(np.isnan(v), np.nan, rng.choice([0.0, 100.0], size=a.n))
                               for m, v in a.values.items()}, a.groups)
    for m in a.values:
        assert np.nansum(coefficients(a, m) * a.values[m]) == pytest.approx(figure_arrays(a)[m][0])
    fast = permuted_differences(a, b)
    flips = np.random.default_rng(0).random((PERMUTATIONS, a.n)) < 0.5
    for m in a.values:
        assert np.allclose(fast[m], _swapped(a, b, m, flips))


def test_the_p_value_of_k_discordant_samples_is_near_two_over_two_to_the_k():
    from forgeplan.evaluation.resampling import draws, paired

    k = 6
    a = Columns(tuple(f"s{i}" for i in range(10)), {"MPA": np.array([100.0] * k + [50.0] * 4)},
                {"assembly_id": np.zeros(10, dtype=np.int64), "stratum": np.zeros(10, dtype=np.int64)})
    b = Columns(a.sample_ids, {"MPA": np.array([0.0] * k + [50.0] * 4)}, a.groups)
    result = paired(draws(a), draws(b))["MPA"]
    assert result["difference"] == 60.0 and result["p"] == pytest.approx(2 / 2 ** k, abs=0.01)

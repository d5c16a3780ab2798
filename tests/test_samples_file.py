"""`evaluate --out DIR` keeps every sample: run.json, samples.jsonl (and samples.parquet), rows that load in
pandas and `datasets` as they are, and from which every figure of metrics.json is recomputed by the formulas
docs/metrics.md gives (written here with pandas, independently of forgeplan's own code)."""

from __future__ import annotations

import contextlib
import io
import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from forgeplan.bench.store import load_manifest, load_sample_task, read_sample_file
from forgeplan.cli import main
from forgeplan.evaluation.baselines import BASELINES
from forgeplan.evaluation.decision_baselines import magar_answer
from forgeplan.evaluation.decisions import DecisionScore, decision_metrics, overall
from forgeplan.evaluation.figures import figures
from forgeplan.evaluation.metrics import core_metrics
from forgeplan.evaluation.rows import FORGE_COLUMNS, MAGAR_COLUMNS, sample_row
from forgeplan.evaluation.samples import SampleScore
from forgeplan.io.tables import jsonl_text

IDS = ["sample_id", "family", "split", "assembly_id", "assembly_family", "fault_types", "stratum", "difficulty",
       "answered", "extracted", "verdict", "category", "failing_step", "reason"]
FORGE = ["SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ", "SSE-any", "MVE-any", "NoFault-Compliance", "MPA", "RCA"]
MAGAR = ["OPG", "OBA", "SGF", "IBC", "OPG-any", "OBA-any", "SGF-any", "IBC-any", "valid_decisions", "MPA", "RCA"]
# docs/metrics.md, "samples.jsonl": the groupings each figure is averaged in, innermost last
MACRO = {"SSE": ["assembly_id"], "HRQ": ["assembly_id"], "SSE-any": ["assembly_id"],
         "SAPF": ["assembly_id", "stratum"], "VMRE": ["assembly_id", "stratum"], "DGTR": ["assembly_id", "stratum"],
         "MVE": ["assembly_id", "stratum"], "MVE-any": ["assembly_id", "stratum"], "OBA": ["stratum"], "OBA-any": ["stratum"]}
STEP_CATEGORIES = {"illegal_grounding", "dependency_omission", "parameter_error"}


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def write_predictions(path, answers: dict) -> None:
    path.write_text("".join(json.dumps({"sample_id": k, "raw_output": v}) + "\n" for k, v in answers.items()))


def evaluate(bench, preds, out, split="train") -> dict:
    code, _, err = run("evaluate", "--bench", bench, "--predictions", preds, "--split", split, "--out", out)
    assert code == 0, err
    return json.loads((out / "metrics.json").read_text())


@pytest.fixture(scope="module")
def forge_run(small_bench, tmp_path_factory):
    """greedy-legal on the train split, two samples unanswered, one garbled, one oracle answer with its
    actions reversed (an illegal step), one in a markdown fence."""
    root = tmp_path_factory.mktemp("forge_run")
    ids = load_manifest(small_bench)["splits"]["train"]
    answers, reversed_ = {}, False
    for sid in ids:
        task, ref = load_sample_task(small_bench, sid), read_sample_file(small_bench, sid, "reference.json")
        answers[sid] = BASELINES["greedy-legal"](task, ref)
        if sid not in ids[:4] and len(ref["rework_plan"]["actions"]) > 2 and not reversed_:
            oracle = json.loads(BASELINES["oracle"](task, ref))
            oracle["rework_plan"]["actions"].reverse()
            answers[sid], reversed_ = json.dumps(oracle), True
    for sid in ids[:2]:
        del answers[sid]
    answers[ids[2]] = "not json at all ü"
    answers[ids[3]] = "```json\n" + answers[ids[3]] + "\n```"
    preds = root / "preds.jsonl"
    write_predictions(preds, answers)
    return root / "run", evaluate(small_bench, preds, root / "run"), answers


@pytest.fixture(scope="module")
def magar_run(magar_bench, tmp_path_factory):
    """no-op on the train split of a magar-profile benchmark (both families), one sample unanswered."""
    root = tmp_path_factory.mktemp("magar_run")
    ids = load_manifest(magar_bench)["splits"]["train"]
    answers = {sid: magar_answer("no-op", magar_bench, sid) for sid in ids[1:]}
    preds = root / "preds.jsonl"
    write_predictions(preds, answers)
    return root / "run", evaluate(magar_bench, preds, root / "run"), answers


def read_rows(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("which", ["forge_run", "magar_run"])
def test_rows_follow_the_run_directory_contract(which, request):
    folder, summary, answers = request.getfixturevalue(which)
    rows = read_rows(folder)
    metrics = FORGE if which == "forge_run" else MAGAR
    assert all(list(r) == IDS + metrics + ["raw_output"] for r in rows)
    assert len(rows) == summary["samples"] and len({r["sample_id"] for r in rows}) == len(rows)
    for r in rows:
        assert r["answered"] == (r["sample_id"] in answers) and r["raw_output"] == answers.get(r["sample_id"])
        assert r["verdict"] == ("unanswered" if not r["answered"] else "correct" if r["category"] is None else "incorrect")
        assert (r["failing_step"] is not None) == (r["category"] in STEP_CATEGORIES)
        assert r["extracted"] is False and r["split"] == "train"
        assert all(r[m] is None or 0.0 <= r[m] <= 100.0 for m in metrics)
    info = json.loads((folder / "run.json").read_text())
    assert info["counts"] == {"samples": len(rows), "answered": len(answers), "extracted": 0}
    assert info["split"] == "train" and info["options"]["reference_cost"] == "forgeplan"
    assert info["predictions"] == str((folder.parent / "preds.jsonl").absolute())


def test_a_failing_step_and_the_reasons_are_kept(forge_run):
    folder, _, answers = forge_run
    rows = {r["sample_id"]: r for r in read_rows(folder)}
    stepped = [r for r in rows.values() if r["failing_step"] is not None]
    assert stepped and all(r["failing_step"] >= 1 and f"step {r['failing_step']}" in r["reason"] for r in stepped)
    garbled = next(r for r in rows.values() if r["raw_output"] == "not json at all ü")
    assert garbled["category"] == "schema_failure" and garbled["verdict"] == "incorrect"
    missing = [r for r in rows.values() if not r["answered"]]
    assert len(missing) == 2 and all(r["category"] == "schema_failure" and r["raw_output"] is None for r in missing)


def macro(df: pd.DataFrame, metric: str) -> float | None:
    """A figure by docs/metrics.md's formula: the mean of the non-null values within the innermost groups,
    then unweighted means of the group means up to one figure."""
    d = df[df[metric].notna()]
    if d.empty:
        return None
    levels = MACRO.get(metric, [])
    if not levels:
        return float(d[metric].mean())
    s = d.groupby(levels)[metric].mean()
    for depth in range(len(levels) - 1, 0, -1):
        s = s.groupby(level=list(range(depth))).mean()
    return float(s.mean())


def recompute(df: pd.DataFrame, metrics: list[str]) -> dict:
    m = {k: macro(df, k) for k in metrics}
    if "DGTR" in metrics:
        m["Overall-Core"] = sum(m[k] or 0.0 for k in ("SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ")) / 6
    else:
        ad = None if all(m[k] is None for k in MAGAR[:4]) else sum(m[k] or 0.0 for k in MAGAR[:4]) / 4
        mr = None if m["MPA"] is None and m["RCA"] is None else ((m["MPA"] or 0.0) + (m["RCA"] or 0.0)) / 2
        present = [v for v in (ad, mr) if v is not None]
        m |= {"Assembly Decision": ad, "Minimal Rework": mr, "Overall": sum(present) / len(present) if present else None}
    return m


def close(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all((a[k] is None) == (b[k] is None) and (a[k] is None or math.isclose(a[k], b[k], abs_tol=1e-9))
                                        for k in a)


def load_both(folder, tmp_path) -> list[pd.DataFrame]:
    import datasets

    data = datasets.load_dataset("json", data_files=str(folder / "samples.jsonl"), split="train",
                                 cache_dir=str(tmp_path / "hf"))
    return [pd.read_json(folder / "samples.jsonl", lines=True), data.to_pandas()]


def test_every_forge_figure_recomputes_from_the_rows(forge_run, tmp_path):
    folder, summary, _ = forge_run
    for df in load_both(folder, tmp_path):
        assert close(recompute(df, FORGE), summary["metrics"])
        faults = df[df["DGTR"].notna()]
        assert summary["fault_samples"] == len(faults) and summary["samples"] == len(df)
        assert {c: f["count"] for c, f in summary["failures"].items() if f["count"]} == df["category"].value_counts().to_dict()
        for key, column, rows in (("per_assembly", "assembly_id", df), ("per_fault_type", "stratum", faults),
                                  ("per_difficulty", "difficulty", df)):
            table = {g: recompute(part, FORGE) | {"samples": len(part)} for g, part in rows.groupby(column)}
            assert table.keys() == summary[key].keys()
            assert all(close(table[g], summary[key][g]) for g in table)


def test_every_magar_figure_recomputes_from_the_rows(magar_run, tmp_path):
    folder, summary, _ = magar_run
    for df in load_both(folder, tmp_path):
        assert close(recompute(df, MAGAR), summary["metrics"])
        decisions = df[df["family"] == "decision"]
        assert (len(decisions), len(df) - len(decisions)) == (summary["assembly_decision_samples"],
                                                             summary["minimal_rework_samples"])
        recall = {op: {"samples": len(g), "recall": g["OBA"].mean()} for op, g in decisions.groupby("stratum")}
        assert recall.keys() == summary["per_operation"].keys()
        assert all(close(recall[op], summary["per_operation"][op]) for op in recall)


@pytest.mark.parametrize("which", ["forge_run", "magar_run"])
def test_intervals_hold_each_figure_and_count_its_samples(which, request):
    folder, summary, _ = request.getfixturevalue(which)
    df = pd.read_json(folder / "samples.jsonl", lines=True)
    figures_ = summary["intervals"]["figures"]
    assert figures_.keys() == summary["metrics"].keys()
    for k, v in figures_.items():
        if k in df:
            assert v["n"] == df[k].notna().sum()
        value = summary["metrics"][k]
        assert (value is None) == (v["low"] is None)
        if value is not None:
            assert v["low"] - 1e-9 <= value <= v["high"] + 1e-9
    assert summary["intervals"]["method"]["resamples"] == 2000
    report = (folder / "report.md").read_text()
    assert "## Uncertainty" in report and "95 % interval" in report


@pytest.mark.parametrize("which", ["forge_run", "magar_run"])
def test_parquet_holds_the_same_rows(which, request):
    folder = request.getfixturevalue(which)[0]
    a = pd.read_json(folder / "samples.jsonl", lines=True, dtype=False)
    b = pd.read_parquet(folder / "samples.parquet")
    assert list(a.columns) == list(b.columns)
    assert json.loads(a.to_json(orient="records")) == json.loads(b.to_json(orient="records"))


# ----------------------------------------------------------------------------- the formulas against the scorers

rework_scores = st.builds(
    lambda asm, stratum, hard, g, sse, sse_any, p, vmre, mve, mve_any, hrq, ok, mpa, rca: SampleScore(
        sample_id="", assembly_id=asm, family="f", stratum=stratum, difficulty="hard" if hard else "easy",
        is_fault=stratum != "no_fault", category=None, g=g, sse=sse, sse_any=sse_any, p=p, vmre=vmre, mve=mve,
        mve_any=mve_any, hrq=hrq if hard and stratum != "no_fault" else None,
        nofault_ok=ok if stratum == "no_fault" else None, mpa=mpa, rca=rca),
    st.sampled_from("ABC"), st.sampled_from(["missing_part", "wrong_part", "multi_fault", "no_fault"]), st.booleans(),
    st.booleans(), st.booleans(), st.booleans(), st.none() | st.floats(0, 1), st.floats(0, 1), st.booleans(),
    st.booleans(), st.floats(0, 1), st.booleans(), st.booleans(), st.sampled_from([0.0, 1 / 3, 0.5, 2 / 3, 0.75, 1.0]))

decision_scores = st.builds(
    lambda op, applicable, valid, flags: DecisionScore("", "A", op, applicable, valid, "",
                                                       *(f and valid for f in flags)),
    st.sampled_from(["Place", "Remove", "Inspect"]), st.booleans(), st.booleans(), st.lists(st.booleans(), min_size=8, max_size=8))


def rows_of(scores, columns) -> list[dict]:
    out = []
    for k, s in enumerate(scores):
        s.sample_id = f"s{k}"
        meta = {"assembly_id": s.assembly_id, "family": "f", "fault_types": [], "difficulty": getattr(s, "difficulty", "easy")}
        out.append(sample_row(s, meta, "test", True, columns))
    return out


@settings(max_examples=30, deadline=None)
@given(st.lists(rework_scores, min_size=1, max_size=12))
def test_the_row_formulas_give_the_scorers_figures(scores):
    got = figures(rows_of(scores, FORGE_COLUMNS), list(FORGE_COLUMNS))
    assert close(got, core_metrics(scores))


@settings(max_examples=30, deadline=None)
@given(st.lists(decision_scores, min_size=1, max_size=12), st.lists(rework_scores, max_size=4))
def test_the_row_formulas_give_the_magar_figures(decisions, rework):
    rework = [s for s in rework if s.is_fault]
    m = decision_metrics(decisions) | {"MPA": None, "RCA": None}
    if rework:
        m |= {"MPA": 100 * sum(s.mpa for s in rework) / len(rework), "RCA": 100 * sum(s.rca for s in rework) / len(rework)}
    m |= overall(m)
    got = figures(rows_of([*decisions, *rework], MAGAR_COLUMNS), list(MAGAR_COLUMNS))
    assert close(got, {k: m[k] for k in got})


@pytest.mark.slow
def test_a_large_file_whose_first_rows_lack_a_column_still_loads_in_datasets(tmp_path):
    import datasets

    rows = [{"sample_id": f"s{i}", "fault_types": ["x"] if i > 50_000 else [], "HRQ": 50.0 if i > 50_000 else None,
             "reason": "z" * 200} for i in range(60_000)]
    (tmp_path / "rows.jsonl").write_text(jsonl_text(rows), encoding="utf-8")
    assert (tmp_path / "rows.jsonl").stat().st_size > 12_000_000
    data = datasets.load_dataset("json", data_files=str(tmp_path / "rows.jsonl"), split="train", cache_dir=str(tmp_path / "hf"))
    # the witnesses first: s0 (sample_id, reason), s50001 (fault_types, HRQ); then every other row in order
    assert len(data) == 60_000 and data[1]["HRQ"] == 50.0 and data[1]["fault_types"] == ["x"]
    assert [data[k]["sample_id"] for k in (0, 1, 2, 50_001)] == ["s0", "s50001", "s1", "s50000"]


def test_extract_json_marks_the_rows_it_took_out_of_a_fence(forge_run, small_bench, tmp_path):
    folder, _, answers = forge_run
    code, _, err = run("evaluate", "--bench", small_bench, "--predictions", folder.parent / "preds.jsonl", "--split",
                       "train", "--out", tmp_path / "loose", "--extract-json")
    assert code == 0, err
    rows = {r["sample_id"]: r for r in read_rows(tmp_path / "loose")}
    fenced = [sid for sid, raw in answers.items() if raw.startswith("```")]
    assert fenced and [sid for sid, r in rows.items() if r["extracted"]] == fenced
    assert rows[fenced[0]]["category"] != "schema_failure" and rows[fenced[0]]["raw_output"].startswith("```")
    info = json.loads((tmp_path / "loose" / "run.json").read_text())
    assert info["counts"]["extracted"] == 1 and info["options"]["extract_json"] is True


def test_a_predictions_file_name_with_dollar_signs_is_plotted_as_text(small_bench, tmp_path):
    """Plot titles name the predictions file; `$...$` in it is text, never a matplotlib formula."""
    ids = load_manifest(small_bench)["splits"]["test"]
    preds = tmp_path / "p$\\bad{$.jsonl"
    write_predictions(preds, {ids[0]: "{}"})
    code, _, err = run("evaluate", "--bench", small_bench, "--predictions", preds, "--out", tmp_path / "r")
    assert code == 0, err
    assert (tmp_path / "r" / "dgtr_per_assembly.png").stat().st_size > 0

"""`forgeplan judge`: the papers' subsets (FORGE's 60 stratified by fault type, MAGAR's 40 per family), the
rubric sent to a keyed stand-in server (tests/standin.py) through the cached client of `infer --endpoint`,
its answers read as data (a fence tolerated; prose, a score out of range or an oversized answer recorded as
unparsed), per-sample scores beside the automatic metrics, and Pearson's r recomputed from the rows."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter

import numpy as np
import pytest

from forgeplan.bench.store import load_manifest
from forgeplan.cli import main
from forgeplan.evaluation.decision_baselines import magar_answer
from forgeplan.llm.judge import (FORGE_CRITERIA, MAGAR_CRITERIA, MAX_VERDICT, judge_subset, pearson, read_verdict,
                                 stratum_of)
from standin import KEY, serving

ENV = "FORGEPLAN_JUDGE_KEY"


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


# ----------------------------------------------------------------------------- the subsets

def manifest_of(strata: dict[str, int], decisions: int = 0) -> dict:
    records = [{"sample_id": f"{s}_{k}", "fault_types": [] if s == "no_fault" else [s],
                "condition": "multi" if s == "multi_fault" else "single"} for s, n in strata.items() for k in range(n)]
    records += [{"sample_id": f"d_{k}", "task_family": "assembly_decision", "fault_types": []} for k in range(decisions)]
    return {"splits": {"test": [r["sample_id"] for r in records]}, "records": records}


def test_forge_takes_60_stratified_by_fault_type_and_magar_40_per_family():
    m = manifest_of({"missing_part": 100, "misplacement": 60, "multi_fault": 30, "no_fault": 10})
    ids = judge_subset(m, "test", "forge", seed=3)
    strata = Counter(stratum_of(r) for r in m["records"] if r["sample_id"] in ids)
    assert strata == {"missing_part": 30, "misplacement": 18, "multi_fault": 9, "no_fault": 3}
    assert ids == [sid for sid in m["splits"]["test"] if sid in ids]              # in split order
    assert judge_subset(m, "test", "forge", seed=3) == ids != judge_subset(m, "test", "forge", seed=4)
    small = manifest_of({"a": 20, "b": 20, "c": 20})
    assert Counter(s.split("_")[0] for s in judge_subset(small, "test", "forge")) == {"a": 20, "b": 20, "c": 20}
    m2 = manifest_of({"missing_part": 50}, decisions=100)
    magar = judge_subset(m2, "test", "magar")
    assert sum(s.startswith("d_") for s in magar) == 40 and sum(s.startswith("missing") for s in magar) == 40
    assert judge_subset(manifest_of({"x": 5}, decisions=3), "test", "magar") == manifest_of({"x": 5}, 3)["splits"]["test"]


def test_the_allocation_is_proportional_with_largest_remainders():
    m = manifest_of({"a": 35, "b": 35, "c": 30})   # 60 * (.35, .35, .30) = 21, 21, 18
    assert Counter(s.split("_")[0] for s in judge_subset(m, "test", "forge")) == {"a": 21, "b": 21, "c": 18}
    m = manifest_of({"a": 50, "b": 25, "c": 25, "d": 1})   # 29.70, 14.85, 14.85, 0.59: b, c, a get the 3 left
    assert Counter(s.split("_")[0] for s in judge_subset(m, "test", "forge")) == {"a": 30, "b": 15, "c": 15}


# ----------------------------------------------------------------------------- answers as data

@pytest.mark.parametrize("text, score", [
    ('{"score": 4, "reason": "fine"}', 4.0),
    ('Sure.\n```json\n{"score": 2.5, "reason": "half"}\n```', 2.5),
    ('{"score": 0}', 0.0),
    ('{"score": 5.0, "reason": 7}', 5.0),
])
def test_a_judge_answer_is_read_as_data(text, score):
    v = read_verdict(text)
    assert v.score == score and v.error is None


@pytest.mark.parametrize("text, error", [
    ("I would give it a four.", "no single JSON object"),
    ('{"score": 6}', "from 0 to 5"),
    ('{"score": -1}', "from 0 to 5"),
    ('{"score": true}', "from 0 to 5"),
    ('{"score": "4"}', "from 0 to 5"),
    ('{"reason": "no score"}', "from 0 to 5"),
    ('[4]', "not a JSON object"),
    ('{"score": NaN}', ""),
    ('{"score": 1} {"score": 2}', "no single JSON object"),
    ('{"score": 4, "reason": "' + "x" * MAX_VERDICT + '"}', "at most"),
    (None, "no answer"),
])
def test_an_answer_without_a_score_in_range_has_none(text, error):
    v = read_verdict(text)
    assert v.score is None and error in v.error


def test_pearson():
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0) and pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert pearson([1, 2], [1, 2]) is None and pearson([1, 1, 1], [1, 2, 3]) is None
    xs, ys = [0.5, 3.0, 1.0, 4.5, 2.0], [10.0, 80.0, 0.0, 100.0, 50.0]
    assert pearson(xs, ys) == pytest.approx(np.corrcoef(xs, ys)[0, 1])


# ----------------------------------------------------------------------------- the command against a stand-in

@pytest.fixture
def judged(magar_bench, tmp_path, monkeypatch):
    """A magar run judged: the reference answer for every other sample of the test split, an empty object
    (a schema failure) for the others; the judge says 5 to the first and 1 to the others, one of its answers
    in a fence, one in prose."""
    test = load_manifest(magar_bench)["splits"]["test"]
    oracle = set(test[::2])
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": sid, "raw_output": magar_answer("oracle", magar_bench, sid)
                                         if sid in oracle else "{}"}) + "\n" for sid in test))
    verdicts = {sid: json.dumps({"score": 5 if sid in oracle else 1, "reason": "checked"}) for sid in test}
    verdicts[test[-1]] = "It looks fine to me."
    monkeypatch.setenv(ENV, KEY)
    with serving(verdicts) as server:
        server.fence = {test[0]}
        argv = ["judge", "--endpoint", server.url, "--served-model", "judge-model", "--api-key-env", ENV,
                "--predictions", preds, "--bench", magar_bench, "--out", tmp_path / "j", "--concurrency", 2]
        code, out, err = run(*argv)
        assert code == 0, err
        assert f"1 of {len(test)} judge answers did not parse" in err
        yield server, argv, json.loads(out), test, oracle, tmp_path / "j"


def test_judge_scores_each_sample_of_the_subset_and_correlates_with_the_metrics(judged):
    server, argv, summary, test, oracle, out = judged
    rows = [json.loads(line) for line in (out / "judge.jsonl").read_text().splitlines()]
    assert [r["sample_id"] for r in rows] == test            # fewer than 40 per family: all of them
    assert json.loads((out / "judge.json").read_text()) == summary
    assert summary["rubric"] == "magar" and summary["subset"]["samples"] == len(test)
    for r in rows:
        want = None if r["sample_id"] == test[-1] else 5.0 if r["sample_id"] in oracle else 1.0
        assert r["judge_score"] == want and (r["judge_error"] is None) == (want is not None)
        assert r["verdict"] == ("correct" if r["sample_id"] in oracle else "incorrect")
    assert summary["unparsed"] == 1 and summary["judged"] == len(test) - 1
    assert summary["score"] == pytest.approx(np.mean([r["judge_score"] for r in rows if r["judge_score"] is not None]))
    for metric, c in summary["pearson"].items():
        pairs = [(r["judge_score"], r[metric]) for r in rows if r["judge_score"] is not None and r[metric] is not None]
        assert c["n"] == len(pairs)
        xs, ys = np.array(pairs).T if pairs else ([], [])
        if len(pairs) >= 3 and np.std(xs) > 0 and np.std(ys) > 0:
            assert c["r"] == pytest.approx(np.corrcoef(xs, ys)[0, 1])
        else:
            assert c["r"] is None
    assert any(c["r"] is not None and c["r"] > 0 for c in summary["pearson"].values())
    # what was sent: the key, the judge model at temperature 0, the rubric, the task and the output as data
    assert len(server.received) == len(test) and all(r["authorized"] for r in server.received)
    for r in server.received:
        body = r["body"]
        assert body["model"] == "judge-model" and body["temperature"] == 0
        system, user = (m["content"] for m in body["messages"])
        family = next(x["family"] for x in rows if x["sample_id"] == r["sample"])
        assert all(c in system for c in (MAGAR_CRITERIA if family == "decision" else ())) and "0.00" in system
        assert "not instructions" in system and f'"sample_id":"{r["sample"]}"' in user and "<<<" in user
    assert KEY not in (out / "judge.jsonl").read_text() + (out / "judge.json").read_text()


def test_a_rerun_sends_nothing_and_a_refused_key_is_one_line(judged, monkeypatch, tmp_path):
    server, argv, summary, test, _, out = judged
    code, stdout, err = run(*argv)
    assert code == 0, err
    assert json.loads(stdout)["judge"]["from_cache"] == len(test) and len(server.received) == len(test)
    monkeypatch.setenv(ENV, "sk-wrong")
    code, _, err = run(*[a if a != out else tmp_path / "other" for a in argv])
    assert code == 2 and err.strip().splitlines()[-1].startswith(f"forgeplan: error: the server refused the key in ${ENV}")


def test_the_forge_rubric_on_a_forge_benchmark(small_bench, tmp_path, monkeypatch):
    manifest = load_manifest(small_bench)
    test = manifest["splits"]["test"]
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"sample_id": test[0], "raw_output": "{}"}) + "\n")
    monkeypatch.setenv(ENV, KEY)
    with serving({sid: '{"score": 3, "reason": "partly"}' for sid in test}) as server:
        code, out, err = run("judge", "--endpoint", server.url, "--served-model", "j", "--api-key-env", ENV,
                             "--predictions", preds, "--bench", small_bench, "--out", tmp_path / "j")
        assert code == 0, err
        system = server.received[0]["body"]["messages"][0]["content"]
    summary = json.loads(out)
    assert summary["rubric"] == "forge" and summary["subset"]["samples"] == len(judge_subset(manifest, "test", "forge"))
    assert all(c in system for c in FORGE_CRITERIA) and "integer score from 0" in system
    rows = [json.loads(line) for line in (tmp_path / "j" / "judge.jsonl").read_text().splitlines()]
    assert {r["verdict"] for r in rows if r["sample_id"] != test[0]} == {"unanswered"}
    assert "(no output)" in next(r["body"]["messages"][1]["content"] for r in server.received if r["sample"] == test[1])


def test_a_failed_request_writes_nothing_and_the_rerun_sends_only_it(magar_bench, tmp_path, monkeypatch):
    test = load_manifest(magar_bench)["splits"]["test"]
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": sid, "raw_output": "{}"}) + "\n" for sid in test))
    monkeypatch.setenv(ENV, KEY)
    with serving({sid: '{"score": 1}' for sid in test}) as server:
        server.script = {test[1]: [400]}
        argv = ["judge", "--endpoint", server.url, "--served-model", "j", "--api-key-env", ENV, "--predictions", preds,
                "--bench", magar_bench, "--out", tmp_path / "j", "--concurrency", 1]
        code, _, err = run(*argv)
        assert code == 2 and f"1 of {len(test)} requests failed" in err and not (tmp_path / "j").exists()
        code, out, err = run(*argv)
        assert code == 0, err
        assert json.loads(out)["judge"]["sent"] == 1 and len(server.received) == len(test) + 1
    assert json.loads((tmp_path / "j" / "judge.json").read_text())["judged"] == len(test)

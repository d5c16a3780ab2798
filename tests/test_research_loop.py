"""The researcher's loop, end to end, as a user runs it: a `--profile magar` benchmark (both families), a
hosted model behind a keyed OpenAI-compatible server (the stand-in of tests/standin.py, answering every
sample with its reference and one sample of each family inside a ``` fence), `infer --endpoint` with two
requests in flight, interrupted and resumed without any request sent twice, `evaluate --out` strictly and
with `--extract-json`, `forgeplan compare` of the two runs and `forgeplan view` of one.

That samples.jsonl loads as it is in pandas and `datasets.load_dataset("json", ...)` and that its rows give
every figure of the report is tested on both families by tests/test_samples_file.py; here the rows are
checked against what the server answered."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import threading
import time

import pytest

from forgeplan.bench.store import load_manifest
from forgeplan.cli import main
from forgeplan.evaluation.decision_baselines import magar_answer
from standin import KEY, serving

ENV = "FORGEPLAN_LOOP_KEY"


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def rows_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def families(bench, ids) -> dict[str, str]:
    kinds = {r["sample_id"]: r["task_family"] for r in load_manifest(bench)["records"]}
    return {sid: "decision" if kinds[sid] == "assembly_decision" else "rework" for sid in ids}


@pytest.fixture
def loop(magar_bench, tmp_path, monkeypatch):
    """The served predictions of the test split: an interrupted run, then the same command resumed."""
    test = load_manifest(magar_bench)["splits"]["test"]
    family = families(magar_bench, test)
    assert set(family.values()) == {"decision", "rework"}
    monkeypatch.setenv(ENV, KEY)
    preds = tmp_path / "served.jsonl"
    with serving({sid: magar_answer("oracle", magar_bench, sid) for sid in test}) as server:
        server.fence = {next(s for s in test if family[s] == f) for f in ("decision", "rework")}
        server.barrier = threading.Barrier(2)   # the first two are answered only once both have arrived

        def stop(n):
            if n == 3:   # Ctrl-C as the third request arrives; what is in flight is answered and kept
                os.kill(os.getpid(), signal.SIGINT)
            if n >= 3:   # held until Ctrl-C has stopped the run, so that no further request is sent
                time.sleep(1.0)

        server.on_request = stop
        infer = ["infer", "--endpoint", server.url, "--api-key-env", ENV, "--served-model", "hosted",
                 "--bench", magar_bench, "--out", preds, "--constrained", "none", "--concurrency", 2]
        code, _, err = run(*infer)
        assert code == 130 and "the same command resumes" in err and not preds.exists()
        assert server.max_in_flight == 2 and not server.barrier.broken
        first = len(server.received)
        assert 3 <= first < len(test)
        server.on_request = None
        code, out, err = run(*infer)
        assert code == 0, err
        summary = json.loads(out)
        assert summary["from_cache"] == first and summary["sent"] == len(test) - first
        bodies = server.bodies()
        assert len(bodies) == len(set(bodies)) == len(test)        # each request sent exactly once
        assert sorted(server.answered()) == sorted(test) and all(r["authorized"] for r in server.received)
        return preds, family, server.fence, {sid: server.content(sid, {}) for sid in test}


def test_a_served_run_interrupted_and_resumed_keeps_every_answer_of_both_families(loop):
    """The fast lane's sample of the loop: the served, interrupted and resumed run (the fixture's checks)."""
    preds, family, _, sent = loop
    rows = rows_of(preds)
    assert [r["sample_id"] for r in rows] == list(family) and {r["sample_id"]: r["raw_output"] for r in rows} == sent
    assert all(r["prompt_tokens"] > 0 for r in rows)


@pytest.mark.slow   # the fast lane's sample: the test above
def test_the_loop_from_a_served_model_to_compared_runs(magar_bench, loop, tmp_path):
    preds, family, fenced, sent = loop
    for name, extra in (("strict", ()), ("loose", ("--extract-json",))):
        code, _, err = run("evaluate", "--bench", magar_bench, "--predictions", preds, "--out", tmp_path / name, *extra)
        assert code == 0, err
    strict, loose = ({r["sample_id"]: r for r in rows_of(tmp_path / name / "samples.jsonl")} for name in ("strict", "loose"))
    assert strict.keys() == loose.keys() == family.keys()
    for sid, f in family.items():
        for rows in (strict, loose):
            assert rows[sid]["family"] == f and rows[sid]["raw_output"] == sent[sid] and rows[sid]["answered"]
        if sid in fenced:   # a fence is a schema failure when parsing is strict, the answer once taken out
            assert (strict[sid]["verdict"], strict[sid]["category"], strict[sid]["extracted"]) == ("incorrect", "schema_failure", False)
            assert "fence" in strict[sid]["reason"]
            assert (loose[sid]["verdict"], loose[sid]["extracted"]) == ("correct", True)
        else:
            assert strict[sid]["verdict"] == loose[sid]["verdict"] == "correct" and not loose[sid]["extracted"]
    counts = [json.loads((tmp_path / name / "run.json").read_text())["counts"] for name in ("strict", "loose")]
    assert counts == [{"samples": len(family), "answered": len(family), "extracted": e} for e in (0, 2)]
    metrics = [json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("strict", "loose")]
    assert metrics[1]["metrics"]["Assembly Decision"] == metrics[1]["metrics"]["Minimal Rework"] == 100.0
    assert metrics[0]["metrics"]["Assembly Decision"] < 100.0 and metrics[0]["metrics"]["Minimal Rework"] < 100.0
    assert metrics[0]["answers"]["needs_extraction"] == 2 and metrics[1]["answers"]["extracted"] == 2
    reports = [(tmp_path / name / "report.md").read_text(encoding="utf-8") for name in ("strict", "loose")]
    assert "2 failed only because of a ``` fence" in reports[0] and "2 answers were taken out of a ``` fence" in reports[1]

    code, out, err = run("compare", tmp_path / "strict", tmp_path / "loose", "--out", tmp_path / "cmp")
    assert code == 0, err
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert result["shared_samples"] == len(family) and [r["name"] for r in result["runs"]] == ["strict", "loose"]
    overall = result["overall"]["Overall"]
    low, high = (r["value"] for r in overall["runs"])
    assert low < high == 100.0 and overall["pairs"][0]["difference"] == low - high
    assert (overall["pairs"][0]["n"], overall["pairs"][0]["a"], overall["pairs"][0]["b"]) == (len(family), "strict", "loose")
    code, _, err = run("view", tmp_path / "loose", "--out", tmp_path / "view.html")
    assert code == 0, err
    assert all(sid in (tmp_path / "view.html").read_text(encoding="utf-8") for sid in fenced)

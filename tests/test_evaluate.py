"""End-to-end scoring on a real small benchmark: oracle 100, and each failure counted where it belongs."""

import json

import pytest

from forgeplan.bench.store import load_manifest
from forgeplan.evaluation.baselines import BASELINES
from forgeplan.evaluation.evaluate import score_split, summarise
from forgeplan.evaluation.report import write_report
from forgeplan.io.task_files import load_task, read_json
from forgeplan.model.errors import InputError


def predictions(bench, name, split="test"):
    out = {}
    for sid in load_manifest(bench)["splits"][split]:
        folder = bench / "tasks" / sid
        out[sid] = BASELINES[name](load_task(folder), read_json(folder / "reference.json"))
    return out


def test_oracle_scores_100_on_every_defined_metric(small_bench, tmp_path):
    for split in ("train", "test"):
        s = summarise(score_split(small_bench, predictions(small_bench, "oracle", split), split), split)
        assert all(v == 100.0 for v in s["metrics"].values() if v is not None), s["metrics"]
        assert s["metrics"]["DGTR"] == 100.0 and s["metrics"]["Overall-Core"] == 100.0
        assert sum(f["count"] for f in s["failures"].values()) == 0
    files = write_report(s, tmp_path / "r", "oracle")
    assert all(f.exists() and f.stat().st_size > 0 for f in files)


def test_dropping_one_action_loses_dgtr_on_that_sample_only(small_bench):
    preds = predictions(small_bench, "oracle", "train")
    victim = next(sid for sid, raw in preds.items() if json.loads(raw)["rework_plan"]["actions"])
    out = json.loads(preds[victim])
    out["rework_plan"]["actions"].pop()
    preds[victim] = json.dumps(out)
    samples = score_split(small_bench, preds, "train")
    assert [s.sample_id for s in samples if not s.g and s.is_fault] == [victim]
    assert next(s for s in samples if s.sample_id == victim).category == "incomplete_restoration"


def test_intervening_on_a_no_fault_task_and_unparseable_output(small_bench):
    preds = predictions(small_bench, "oracle", "train")
    records = {r["sample_id"]: r for r in load_manifest(small_bench)["records"]}
    nofault = next(sid for sid in preds if records[sid]["condition"] in ("nofault", "boundary"))
    task = load_task(small_bench / "tasks" / nofault)
    out = json.loads(preds[nofault])
    out["rework_plan"]["actions"] = [{"action": "remove", "part_id": task.world.ids[-1]}]
    preds[nofault] = json.dumps(out)
    broken = next(sid for sid in preds if records[sid]["condition"] == "single")
    preds[broken] = '{"annotation": '
    samples = {s.sample_id: s for s in score_split(small_bench, preds, "train")}
    assert samples[nofault].category == "no_fault_intervention" and samples[nofault].nofault_ok is False
    assert samples[broken].category == "schema_failure" and not samples[broken].g
    s = summarise(list(samples.values()), "train")
    assert s["metrics"]["DGTR"] < 100 and s["metrics"]["NoFault-Compliance"] < 100
    assert s["failures"]["schema_failure"]["count"] == 1


def test_missing_predictions_count_as_schema_failures(small_bench):
    samples = score_split(small_bench, {}, "test")
    assert all(s.category == "schema_failure" for s in samples)
    assert summarise(samples, "test")["metrics"]["DGTR"] == 0.0


def test_baselines_frame_the_scale(small_bench):
    m = {n: summarise(score_split(small_bench, predictions(small_bench, n, "train"), "train"), "train")["metrics"]
         for n in ("oracle", "local-repair", "no-op")}
    assert m["oracle"]["Overall-Core"] > m["local-repair"]["Overall-Core"] > m["no-op"]["Overall-Core"] == 0.0


def test_report_names_its_rules_and_paper_cost_keeps_the_oracle_exact(small_bench, tmp_path):
    """Under FORGE's reference cost (fewest actions, proved by clingo per fault sample) the oracle still
    matches: on this benchmark every (moved parts, actions) optimum is also action-optimal."""
    preds = predictions(small_bench, "oracle", "test")
    ours = summarise(score_split(small_bench, preds, "test"), "test")
    paper = summarise(score_split(small_bench, preds, "test", reference_cost="paper"), "test", "paper")
    assert paper["rules"] == {"reference_cost": "paper", "magar_profile_samples": 0}
    assert paper["metrics"] == ours["metrics"]
    report = write_report(paper, tmp_path / "r", "oracle")[1].read_text(encoding="utf-8")
    assert "Reference cost `paper`" in report and '"–" counted as 0' in report


def test_report_explains_itself(small_bench, tmp_path):
    """Every metric column and baseline has a glossary line; the papers' rows sit in their own context table
    after ours, both papers are cited, "–" is explained, and each plot has a caption."""
    from forgeplan.evaluation.report import COLUMNS, GLOSSARY, PAPER_ROWS, PLOT_CAPTIONS

    s = summarise(score_split(small_bench, predictions(small_bench, "no-op"), "test"), "test")
    write_report(s, tmp_path / "r", "no-op")
    text = (tmp_path / "r" / "report.md").read_text()
    glossary = text[text.index("## Glossary"):text.index("## References")]
    for key in (*COLUMNS, "SSE-any", "MVE-any", "NoFault-Compliance", "MPA", "RCA", *BASELINES):
        assert any(key in k for k in GLOSSARY) and key in glossary, key
    core, context = text.index("## Core metrics"), text.index("## Context from the papers")
    assert core < context and all(row not in text[:context] for row in PAPER_ROWS)
    assert all(row in text[context:] for row in PAPER_ROWS)
    assert "arXiv:2611.02536v2" in text and "arXiv:2611.02472v2" in text and "FORGE [1]" in text
    assert '"–" marks a metric no sample was eligible for' in text
    assert all(f"`{f}`: {c}" in text and (tmp_path / "r" / f).stat().st_size > 10_000 for f, c in PLOT_CAPTIONS.items())


def test_large_outputs_are_read_back_per_sample_with_the_same_scores(small_bench, tmp_path):
    """Outputs of STORED_BYTES or more stay in the predictions file while it is read (a StoredOutput) and
    are read back when their sample is scored: the scores equal those of holding every output."""
    from dataclasses import asdict

    from forgeplan.evaluation.evaluate import STORED_BYTES, StoredOutput, read_predictions

    preds = predictions(small_bench, "oracle")
    ids = list(preds)
    preds[ids[0]] = preds[ids[0]] + " " * STORED_BYTES                 # still the oracle's answer
    preds[ids[1]] = preds[ids[1]][:-1] + ', "x": "' + "\U0001F600" * STORED_BYTES + '"}'  # non-ASCII, not the contract
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"sample_id": s, "raw_output": r}) + "\n" for s, r in preds.items()))
    held = read_predictions(path, compact=True)
    stored = read_predictions(path, compact=True, stored=True)
    assert {s for s, r in stored.items() if isinstance(r, StoredOutput)} == set(ids[:2])
    assert not any(isinstance(r, StoredOutput) for r in held.values())
    assert [asdict(s) for s in score_split(small_bench, stored)] == [asdict(s) for s in score_split(small_bench, held)]
    path.write_text(path.read_text().replace(ids[0], ids[2], 1))   # the file changed under the scorer
    with pytest.raises(InputError, match="changed while it was being scored"):
        stored[ids[0]].load()


def _evaluate(argv, capsys):
    from forgeplan.cli import main

    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_evaluate_reads_fenced_answers_only_when_asked_and_says_what_is_missing(small_bench, tmp_path, capsys):
    raw = predictions(small_bench, "oracle")
    ids = list(raw)
    fenced, dropped = ids[:3], ids[3:5]
    lines = [{"sample_id": sid, "raw_output": f"Here it is:\n```json\n{raw[sid]}\n```" if sid in fenced else raw[sid]}
             for sid in ids if sid not in dropped]
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    n, answered = len(ids), len(ids) - 2
    base = ["evaluate", "--bench", small_bench, "--predictions", preds, "--json"]

    code, out, err = _evaluate(base, capsys)
    assert code == 0 and err.strip() == (f"forgeplan: 2 of {n} samples have no prediction; they are scored as "
                                         f"schema failures; --only-predicted scores only the {answered} answered")
    strict = json.loads(out)
    assert strict["answers"] == {"split_samples": n, "answered": answered, "unanswered": 2, "scored": n,
                                      "only_predicted": False, "extract_json": False, "extracted": 0,
                                      "needs_extraction": 3}
    assert strict["failures"]["schema_failure"]["count"] == 5

    code, out, _ = _evaluate(base + ["--extract-json", "--out", tmp_path / "r"], capsys)
    loose = json.loads(out)
    assert code == 0 and loose["answers"]["extracted"] == 3 and loose["answers"]["needs_extraction"] == 0
    assert loose["failures"]["schema_failure"]["count"] == 2     # the missing ones only
    report = (tmp_path / "r" / "report.md").read_text()
    assert "## Answers" in report and "3 answers were taken out of a ``` fence" in report
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["answers"] == loose["answers"]

    code, out, err = _evaluate(base + ["--extract-json", "--only-predicted", "--out", tmp_path / "o"], capsys)
    only = json.loads(out)
    assert code == 0 and f"--only-predicted scores only the {answered} answered" in err
    assert only["samples"] == only["answers"]["scored"] == answered and only["answers"]["only_predicted"]
    assert all(v == 100.0 for v in only["metrics"].values() if v is not None)   # the answered are the oracle's
    assert f"only the {answered} samples of the split's {n} that have a prediction" in (tmp_path / "o" / "report.md").read_text()


def test_evaluate_refuses_a_repeated_predictions_file(small_bench, tmp_path, capsys):
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    code, out, err = _evaluate(["evaluate", "--bench", small_bench, "--predictions", preds, "--predictions", preds],
                               capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--predictions is given more than once" in err

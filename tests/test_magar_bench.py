"""`bench build --profile magar`: both families, the family-disjoint split, references that replay, the
baselines (oracle 100 on every metric, a perturbed oracle less), evaluate's MAGAR columns."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import pytest

from forgeplan.cli import main
from forgeplan.bench.magar import family_split, plan_magar
from forgeplan.bench.store import load_manifest, load_sample_task
from forgeplan.evaluation.decision_baselines import magar_answer
from forgeplan.bench.digests import seal_folder
from forgeplan.evaluation.magar_eval import magar_summary, read_decision, score_magar_split
from forgeplan.library import BUILTIN, build
from forgeplan.semantics.intents import decision_of, subgoal_holds
from forgeplan.model.actions import Action
from cases import PARTIAL_MOVES

TASKS = 24


def run(*argv) -> tuple[int, str, str]:
    """`forgeplan ARGV` in this process (the entry point's own exit path is tested in test_cli*):
    (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("magar") / "bench"
    code, stdout, stderr = run("bench", "build", "--profile", "magar", "--out", out, "--tasks", TASKS, "--seed", 7,
                               "--jobs", 1, "--quiet")
    assert code == 0, stderr
    assert "family-disjoint" in stdout
    return out


def test_proportions_and_family_disjoint_split():
    families = {a: build(a).family for a in BUILTIN}   # the profile's default library, the expert tier included
    train, test = family_split(families, 42)
    assert len(test) == 6 and not {families[a] for a in train} & {families[a] for a in test}
    slots = plan_magar(families, 1574, 42, frozenset(families) - PARTIAL_MOVES)
    decided = {s.assembly_id for s in slots if type(s).__name__ == "DecisionSlot"}
    reworked = {s.assembly_id for s in slots if type(s).__name__ == "Slot"}
    assert not decided & PARTIAL_MOVES and PARTIAL_MOVES & set(train) <= reworked   # the expert tier: rework only
    kinds = [type(s).__name__ for s in slots]
    assert kinds.count("DecisionSlot") == 974 and kinds.count("Slot") == 600
    assert sum(s.split == "test" for s in slots if type(s).__name__ == "DecisionSlot") == 238
    assert sum(s.split == "test" for s in slots if type(s).__name__ == "Slot") == 100
    assert all(s.assembly_id in test for s in slots if s.split == "test")
    assert [s.index for s in slots] == list(range(1574))           # every sample its own index, so its own seed
    ids = [s.sample_id if type(s).__name__ == "DecisionSlot" else f"{s.assembly_id}_{s.split}_{s.index:06d}" for s in slots]
    assert len(set(ids)) == len(ids)


def test_every_decision_reference_is_valid_and_replays(bench):
    manifest = load_manifest(bench)
    fams = {r["task_family"] for r in manifest["records"]}
    assert fams == {"assembly_decision", "minimal_rework"}
    assert not set(manifest["families"]["train"]) & set(manifest["families"]["test"])
    for r in manifest["records"]:
        if r["task_family"] != "assembly_decision":
            continue
        d, task = read_decision(bench, r["sample_id"]), load_sample_task(bench, r["sample_id"])
        assert d["reference"] in d["valid"]
        w = task.world
        state = task.actual
        for k, a in enumerate(d["reference_plan"]):
            act = _action(a)
            if k == 0:
                assert decision_of(act).to_json() == d["reference"]
            assert w.check(state, act) is None
            state = w.apply(state, act)
        assert w.equivalent(state, task.target)
        if not d["reference_plan"]:
            assert d["reference"]["operation"] == "Inspect" and w.equivalent(task.actual, task.target)
        for a in d["first_steps"]:
            act = _action(a)
            assert w.check(task.actual, act) is None
            assert subgoal_holds(w, w.apply(task.actual, act), task.target, decision_of(act).subgoal)


def _action(a: dict) -> Action:
    from forgeplan.io.contract import parse_output
    out = parse_output(json.dumps({"annotation": {"sample_id": "x", "assembly_id": "x", "pass": True, "mistakes": []},
                                   "rework_plan": {"objective": "restore_to_target_state", "actions": [a]}}))
    return out.actions[0]


def _predictions(bench, name, split="test"):
    return {sid: magar_answer(name, bench, sid) for sid in load_manifest(bench)["splits"][split]}


@pytest.mark.parametrize("split", ["train", "test"])
def test_oracle_scores_100_on_every_metric_and_a_perturbed_oracle_less(bench, split):
    oracle = _predictions(bench, "oracle", split)
    m = magar_summary(score_magar_split(bench, oracle, split), split)["metrics"]
    for k in ("OPG", "OBA", "SGF", "IBC", "OPG-any", "OBA-any", "SGF-any", "IBC-any", "MPA", "RCA", "Overall"):
        assert m[k] == 100.0, k
    perturbed = dict(oracle)
    for sid, text in oracle.items():
        out = json.loads(text)
        if "next_subgoal" in out:        # drop the last involved part, or name a part that is not there
            out["involved_parts"] = out["involved_parts"][:-1] or ["NoSuchPart"]
            perturbed[sid] = json.dumps(out)
            break
    p = magar_summary(score_magar_split(bench, perturbed, split), split)["metrics"]
    assert p["IBC"] < 100.0 and p["Overall"] < 100.0


def test_evaluate_extracts_fenced_answers_of_both_families_and_counts_them(bench, tmp_path):
    oracle = _predictions(bench, "oracle")
    fenced = {sid: f"```json\n{text}\n```" for sid, text in oracle.items()}
    families = {_family(bench, sid) for sid in fenced}
    assert families == {"assembly_decision", "minimal_rework"}
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": sid, "raw_output": t}) + "\n" for sid, t in fenced.items()))
    code, out, err = run("evaluate", "--bench", bench, "--predictions", preds, "--json")
    strict = json.loads(out)
    assert code == 0 and strict["metrics"]["Overall"] == 0.0 and strict["answers"]["needs_extraction"] == len(fenced)
    code, out, err = run("evaluate", "--bench", bench, "--predictions", preds, "--json", "--extract-json",
                         "--out", tmp_path / "r")
    loose = json.loads(out)
    assert code == 0 and loose["metrics"]["Overall"] == 100.0 and loose["answers"]["extracted"] == len(fenced)
    assert "## Answers" in (tmp_path / "r" / "report.md").read_text()


def _family(bench, sid):
    return json.loads((bench / "tasks" / sid / "meta.json").read_text())["task_family"]


@pytest.mark.slow
def test_evaluate_prints_magar_columns_and_baselines_order(bench, tmp_path):
    overall = {}
    for name in ("oracle", "local-heuristic", "no-op"):
        preds = tmp_path / f"{name}.jsonl"
        cli = [sys.executable, "-m", "forgeplan"]
        assert subprocess.run(cli + ["baseline", name, "--bench", str(bench), "--out", str(preds),
                                     "--split", "train"],
                              capture_output=True).returncode == 0
        done = subprocess.run(cli + ["evaluate", "--bench", str(bench), "--predictions", str(preds), "--json",
                                    "--split", "train"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        overall[name] = json.loads(done.stdout)["metrics"]["Overall"]
    assert overall["oracle"] == 100.0 > overall["local-heuristic"] >= overall["no-op"]
    done = subprocess.run(cli + ["baseline", "greedy-legal", "--bench", str(bench), "--out", str(tmp_path / "g.jsonl")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "magar-profile" in done.stderr


@pytest.mark.slow
def test_the_build_is_deterministic(bench, tmp_path):
    again = tmp_path / "again"
    cmd = [sys.executable, "-m", "forgeplan", "bench", "build", "--profile", "magar", "--out", str(again),
           "--tasks", str(TASKS), "--seed", "7", "--jobs", "2", "--quiet"]
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    first = sorted(p.relative_to(bench) for p in bench.rglob("*.json"))
    assert first == sorted(p.relative_to(again) for p in again.rglob("*.json"))
    differ = [p for p in first if p.name != "manifest.json" and (bench / p).read_bytes() != (again / p).read_bytes()]
    assert not differ
    a, b = (json.loads((d / "manifest.json").read_text()) for d in (bench, again))
    assert {k: v for k, v in a.items() if k != "versions"} == {k: v for k, v in b.items() if k != "versions"}


# ------------------------------------------------------------------ verifier-gated intervention

def _broken_plans(bench, split="train"):
    """The oracle with each rework plan's first two actions swapped and its last one dropped."""
    out = {}
    for sid, text in _predictions(bench, "oracle", split).items():
        obj = json.loads(text)
        acts = obj.get("rework_plan", {}).get("actions")
        if acts and len(acts) > 1:
            acts[0], acts[1] = acts[1], acts[0]
            del acts[-1]
        out[sid] = json.dumps(obj)
    return out


# the fast lane runs the broken plans under both modes (every failure a planning error, each corrected) and the
# oracle under one (nothing to correct); the slow lane runs every pair
FAST_INTERVENTIONS = {("minimal-edit", "oracle"), ("plan-from-diagnosis", "broken-plans"), ("minimal-edit", "broken-plans")}


@pytest.mark.parametrize("mode, answers", [
    pytest.param(m, a, id=f"{a}-{m}", marks=() if (m, a) in FAST_INTERVENTIONS else pytest.mark.slow)
    for a in ("oracle", "local-heuristic", "no-op", "broken-plans") for m in ("plan-from-diagnosis", "minimal-edit")])
def test_intervention_never_lowers_a_score_and_introduces_no_error(bench, mode, answers):
    from forgeplan.evaluation.intervene import InterventionReport, correct, intervene_one, metric_vector
    from forgeplan.evaluation.magar_eval import score_one

    preds = _broken_plans(bench) if answers == "broken-plans" else _predictions(bench, answers, "train")
    report = InterventionReport(mode)
    for sid, raw in preds.items():
        final = intervene_one(bench, sid, raw, mode, report)
        before, after = score_one(bench, sid, raw), score_one(bench, sid, final)
        assert all(y >= x for x, y in zip(metric_vector(before), metric_vector(after))), sid
        assert correct(after) or not correct(before)
        assert (final != raw) == (metric_vector(after) != metric_vector(before))
    assert report.introduced_errors == 0
    assert report.interventions == report.corrections + report.unchanged_correctness
    assert sum(report.failures_before.values()) == sum(report.failures_after.values()) == len(preds)
    if answers == "oracle":
        assert report.interventions == 0
    if answers == "broken-plans":      # the diagnosis is right: only planning errors, and every one is fixed
        assert set(report.failures_before) == {"correct", "planning"} and report.corrections > 0
        if mode == "plan-from-diagnosis":
            assert set(report.failures_after) == {"correct"}
    if answers == "no-op":             # an empty diagnosis: its failures are diagnosis errors, which stay
        assert report.failures_after["diagnosis"] == report.failures_before["diagnosis"] > 0


def test_intervene_command(bench, tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": s, "raw_output": r}) + "\n" for s, r in _broken_plans(bench).items()))
    out = tmp_path / "final.jsonl"
    code, stdout, stderr = run("intervene", "--bench", bench, "--predictions", preds, "--out", out,
                               "--mode", "minimal-edit", "--split", "train", "--json")
    assert code == 0, stderr
    counts = json.loads(stdout)
    assert counts["introduced_errors"] == 0 and counts["corrections"] > 0
    assert set(counts["gates"]) == {"oracle", "deployed"} and counts["gate"] == "oracle"
    assert counts["corrections"] == counts["gates"]["oracle"]["corrections"]
    assert len(out.read_text().splitlines()) == len(preds.read_text().splitlines())
    code, stdout, stderr = run("intervene", "--bench", bench, "--predictions", preds, "--out", out, "--gate", "deployed",
                               "--mode", "minimal-edit", "--split", "train", "--report", tmp_path / "r")
    assert code == 0, stderr
    assert "oracle gate:" in stdout and "deployed gate:" in stdout and "(deployed gate)" in stdout
    report = (tmp_path / "r" / "report.md").read_text()
    assert "| oracle gate |" in report and "| deployed gate |" in report and "not comparable" in report
    for bad, why in ((["--time-limit", "0"], "--time-limit"), (["--time-limit", "nan"], "--time-limit"),
                     (["--reference-cost", "paper"], "--reference-cost")):
        code, _, stderr = run("intervene", "--bench", bench, "--predictions", preds, "--out", tmp_path / "y.jsonl",
                              "--mode", "minimal-edit", "--split", "train", *bad)
        assert code == 2 and why in stderr and stderr.count("\n") == 1, (bad, stderr)
    code, _, stderr = run("intervene", "--bench", bench, "--predictions", preds, "--out", tmp_path,
                          "--mode", "minimal-edit", "--split", "train")
    assert code == 2 and stderr.count("\n") == 1       # --out a folder: one line, no traceback
    code, _, stderr = run("intervene", "--bench", bench, "--predictions", preds, "--out", tmp_path / "x.jsonl",
                          "--mode", "minimal-edit")
    assert code == 2 and "not in split 'test'" in stderr


def test_bad_input_gets_one_line_and_exit_2(bench, tmp_path):
    cases = [
        (["bench", "build", "--profile", "magar", "--out", str(tmp_path / "a"), "--tasks", "5"], "--tasks"),
        (["bench", "build", "--profile", "magar", "--out", str(tmp_path / "b"), "--assemblies", "luban_lock_3",
          "luban_lock_3_offset"], "two or more families"),
        (["bench", "build", "--profile", "magar", "--out", str(bench)], "not empty"),
        (["bench", "build", "--profile", "magar", "--out", str(tmp_path / "c"), "--assemblies", "luban_lock_3",
          "bayonet_structure", "burr_6_level4", "--seed", "7"],   # seed 7 puts the burr family alone in test
         "Assembly Decision needs an assembly without slides (SEMANTICS §9) in the test split, which holds only "
         "burr_6_level4"),
    ]
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    cases.append((["evaluate", "--bench", str(bench), "--predictions", str(preds), "--reference-cost", "paper"],
                  "--reference-cost"))
    for args, why in cases:
        code, _, stderr = run(*args)
        assert code == 2 and why in stderr and stderr.count("\n") == 1, (args, stderr)


def test_report_lists_operation_recall(bench, tmp_path):
    from forgeplan.evaluation.magar_eval import write_magar_report

    summary = magar_summary(score_magar_split(bench, _predictions(bench, "no-op", "train"), "train"), "train")
    ops = summary["per_operation"]
    assert ops and all(v["recall"] == (100.0 if op == "Inspect" else 0.0) for op, v in ops.items())
    assert summary["metrics"]["OBA"] == pytest.approx(sum(v["recall"] for v in ops.values()) / len(ops))
    report = write_magar_report(summary, tmp_path / "r")[1].read_text()
    assert "| OPG | OBA | SGF | IBC | MPA | RCA | Overall |" in report and "Atomic Action" in report


def test_export_writes_decision_rows_the_grammar_accepts(bench, tmp_path):
    from forgeplan.bench.export import export_jsonl
    from forgeplan.llm.automaton import DEAD, compile_lark
    from forgeplan.llm.decision_grammar import decision_grammar

    counts = export_jsonl(bench, tmp_path / "x")
    manifest = load_manifest(bench)
    assert counts == {s: len(ids) for s, ids in manifest["splits"].items()}
    fams = {r["sample_id"]: r["task_family"] for r in manifest["records"]}
    for line in (tmp_path / "x" / "test.jsonl").read_text().splitlines():
        row = json.loads(line)
        answer = row["completion"][0]["content"]
        if fams[row["sample_id"]] == "assembly_decision":
            assert json.loads(answer) == read_decision(bench, row["sample_id"])["reference"]
            dfa = compile_lark(decision_grammar(load_sample_task(bench, row["sample_id"])))
            q = dfa.run(answer.encode())
            assert q != DEAD and dfa.accepting[q]
            assert "next_subgoal" in row["prompt"][0]["content"]
        else:
            assert set(json.loads(answer)) == {"annotation", "rework_plan"}


@pytest.mark.parametrize("mode", [pytest.param("plan-from-diagnosis", marks=pytest.mark.slow), "minimal-edit"])
def test_intervention_on_a_forge_profile_benchmark(small_bench, mode):
    """FORGE-shaped benchmarks (no-fault samples included) take the same intervention."""
    from forgeplan.evaluation.baselines import BASELINES
    from forgeplan.evaluation.intervene import InterventionReport, intervene_one, metric_vector
    from forgeplan.evaluation.magar_eval import score_one
    from forgeplan.bench.store import read_sample_file

    report = InterventionReport(mode)
    for sid in load_manifest(small_bench)["splits"]["test"]:
        for name in ("greedy-legal", "no-op"):
            raw = BASELINES[name](load_sample_task(small_bench, sid), read_sample_file(small_bench, sid, "reference.json"))
            final = intervene_one(small_bench, sid, raw, mode, report)
            before, after = metric_vector(score_one(small_bench, sid, raw)), metric_vector(score_one(small_bench, sid, final))
            assert all(y >= x for x, y in zip(before, after))
    assert report.introduced_errors == 0 and report.interventions > 0
    assert report.failures_after["correct"] > report.failures_before["correct"]


def test_family_split_of_a_large_library_is_seeded_and_family_disjoint():
    families = {f"a{k:03d}": f"f{k % 40:02d}" for k in range(120)}     # 40 families: the seeded greedy path
    train, test = family_split(families, 3)
    assert family_split(families, 3) == (train, test)
    assert test and not {families[a] for a in train} & {families[a] for a in test}
    assert len(test) <= round(120 * 6 / 26)


def test_a_damaged_decision_file_is_a_one_line_error(bench, tmp_path):
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bench, copy)
    sid = next(r["sample_id"] for r in load_manifest(copy)["records"]
               if r["task_family"] == "assembly_decision" and r["split"] == "test")
    path = copy / "tasks" / sid / "decision.json"
    data = json.loads(path.read_text())
    data["valid"][0] = {"operation": "Place"}
    path.write_text(json.dumps(data))
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    code, _, stderr = run("evaluate", "--bench", copy, "--predictions", preds)
    assert code == 2 and f"{sid}/decision.json: changed since the build (digest mismatch)" in stderr
    assert stderr.count("\n") == 1
    seal_folder(copy, json.loads((copy / "manifest.json").read_text()))   # the digests forged too: the schema refuses it
    code, _, stderr = run("evaluate", "--bench", copy, "--predictions", preds)
    assert code == 2 and "decision.json" in stderr and "valid" in stderr
    assert stderr.count("\n") == 1

"""FORGE's Table 3 on the CPU reference model (`reference-model --ablation`, llm.ablation): a minimal run end
to end (one optimizer step per variant, a few tasks), kept by the laboratory as the docs keep it."""

from __future__ import annotations

import json
import shutil

import pytest

from forgeplan.cli import main
from forgeplan.llm.ablation import PAPER, TABLE3, VARIANTS, above_rules, table
from forgeplan.llm.config import SAVED_NAME
from forgeplan.llm.grounding import strip_states
from lab.cli import main as lab_main


# the fast lane runs Table 3's first and last rows (plain targets without grounding, structured targets with
# it: both options each way); the slow lane all four
@pytest.mark.parametrize("variants", [("vanilla-sft", "full"),
                                      pytest.param(tuple(VARIANTS), marks=pytest.mark.slow)], ids=["first-and-last", "all"])
def test_a_minimal_ablation_trains_and_scores_each_variant_from_one_tiny_model(small_bench, tmp_path, capsys, variants):
    out, docs = tmp_path / "abl", tmp_path / "results"
    shutil.copytree(small_bench, out / "bench")   # the benchmark a run builds first, here the session's small one
    argv = ["reference-model", "--ablation", "--out", str(out), "--max-steps", "1", "--heldout", "1",
            "--test-fraction", "0.07", "--seeds", "1", "--modes", "legal", "--max-new-tokens", "200",
            "--variants", ",".join(variants)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "ablation.json").read_text(encoding="utf-8"))
    assert report["leaking_test_tasks"] == 0 and report["seeds"] == [1] and report["modes"] == ["legal"]
    assert list(report["model"]) == list(variants) == list(report["above_rule_baselines"])
    assert sorted(p.name for p in (out / "seed-1").iterdir()) == sorted([*variants, "tiny-model"])
    for name in variants:
        label, targets, grounding = VARIANTS[name]
        saved = json.loads((out / "seed-1" / name / "adapter" / SAVED_NAME).read_text(encoding="utf-8"))
        assert (saved["run"]["targets"], saved["run"]["grounding"]) == (targets, grounding)
        assert saved["summary"]["steps"] == 1 and saved["summary"]["base_model"] == str(out / "seed-1" / "tiny-model")
        for split, label_ in (("test", "in_distribution"), ("heldout", "heldout_assemblies")):
            fig = report["model"][name][label_]["legal"]
            assert fig["illegal_plan"]["mean"] == 0.0 and fig["samples"] == report["splits"][split]
            rows = [json.loads(line) for line in
                    (out / "seed-1" / name / f"predictions_{split}_legal.jsonl").read_text(encoding="utf-8").splitlines()]
            assert all(("grounded_output" in r) == grounding for r in rows)
            assert all(strip_states(r["grounded_output"]) == r["raw_output"] != r["grounded_output"]
                       for r in rows if grounding)
        assert f"| in_distribution ({report['splits']['test']}) | legal | {label} |" in printed
    assert "| FORGE's Table 3 (Qwen3.5-9B, FORGE-Bench: another model and data) |" in printed
    assert lab_main(["reference-ablation", "--run", str(out), "--store", str(docs)]) == 0
    assert json.loads(capsys.readouterr().out) == report
    kept = json.loads((docs / "reference-ablation.json").read_text(encoding="utf-8"))
    assert kept["result"] == report and (docs / "reference-ablation.md").read_text(encoding="utf-8") == printed


def test_the_paper_rows_are_table_3_and_overall_core_is_their_mean():
    for row in PAPER.values():
        assert round(sum(row[:-1]) / 6, 2) == row[-1]
    assert TABLE3[-1] == "Overall-Core" and set(PAPER) == set(VARIANTS)


def test_a_variant_is_above_the_rule_baselines_only_when_it_beats_both_on_that_seed():
    def run(seed, core):
        return {"seed": seed, "figures": {"in_distribution": {"legal": {"Overall-Core": core}}}}

    baselines = {"in_distribution": {"local-repair": {"Overall-Core": 26.29}, "greedy-legal": {"Overall-Core": 25.47}}}
    got = above_rules({"full": [run(42, 27.21), run(43, 26.29), run(44, 25.91)]}, baselines)
    assert got == {"full": {"legal": [True, False, False]}}


def test_reference_model_refuses_unknown_variants_and_modes(tmp_path, capsys):
    out = str(tmp_path / "x")
    assert main(["reference-model", "--out", out, "--ablation", "--variants", "full,full"]) == 2
    assert main(["reference-model", "--out", out, "--variants", "full"]) == 2
    assert main(["reference-model", "--out", out, "--modes", "beam"]) == 2
    err = capsys.readouterr().err
    assert "--variants" in err and "needs --ablation" in err and "--modes" in err
    assert not (tmp_path / "x").exists()


def test_the_table_labels_the_papers_rows_as_another_model_and_data():
    model = {"full": {"in_distribution": {"legal": {"samples": 3, **{k: {"mean": 1.0, "sd": 0.5, "runs": [0.5, 1.5]}
                                                                      for k in (*TABLE3, "NoFault-Compliance",
                                                                                "schema_valid", "illegal_plan")}}}}}
    base = {k: 2.0 for k in (*TABLE3, "NoFault-Compliance", "schema_valid", "illegal_plan")}
    report = {"modes": ["legal"], "model": model, "variants": {"full": {"label": "full method (FORGE)"}},
              "baselines": {label: {"local-repair": {**base, "samples": 3}, "greedy-legal": {**base, "samples": 3}}
                            for label in ("in_distribution", "heldout_assemblies")},
              "paper_table3": PAPER}
    text = table(report)
    assert "| in_distribution (3) | legal | full method (FORGE) | 1.00 ± 0.50 |" in text
    assert "| full method (FORGE) | 71.54 | 61.11 | 72.60 | 75.93 | 72.13 | 83.17 | 72.75 |" in text

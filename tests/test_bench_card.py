"""A benchmark folder carries its dataset card (README.md) and tasks.jsonl: one row per task with its
reference, loadable in pandas and `datasets`, the composition counted from the manifest, the licence per
source. (Byte-identical reruns and merged shards: tests/test_bench.py and tests/test_bench_scale.py compare
whole folders, these two files included.)"""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from forgeplan.bench.store import build_bench, load_manifest
from forgeplan.io.catalog import load_assembly

KEYS = ["sample_id", "family", "split", "assembly_id", "assembly_family", "condition", "fault_types", "faults",
        "hidden", "difficulty", "counterfactual_pair", "counterfactual_role", "reference_actions",
        "reference_moved_parts", "proof_method", "proof_optimal", "annotation", "plan", "route_id", "decision",
        "valid_decisions"]


def rows_of(bench) -> list[dict]:
    return [json.loads(line) for line in (bench / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]


def test_tasks_jsonl_holds_every_task_with_its_reference(small_bench):
    rows = rows_of(small_bench)
    records = load_manifest(small_bench)["records"]
    assert sorted(r["sample_id"] for r in rows) == sorted(r["sample_id"] for r in records)
    by_id = {r["sample_id"]: r for r in rows}
    for rec in records:
        row = by_id[rec["sample_id"]]
        assert list(row) == KEYS and row["family"] == "rework"
        folder = small_bench / "tasks" / rec["sample_id"]
        ref = json.loads((folder / "reference.json").read_text())
        meta = json.loads((folder / "meta.json").read_text())
        assert json.loads(row["plan"]) == ref["rework_plan"]["actions"]
        assert json.loads(row["annotation"]) == ref["annotation"]
        assert (row["proof_method"], row["proof_optimal"]) == (ref["proof"]["method"], ref["proof"]["optimal"])
        assert row["reference_actions"] == rec["reference_actions"] and row["reference_moved_parts"] == rec["reference_moved_parts"]
        assert {k: row[k] for k in ("split", "condition", "fault_types", "difficulty", "counterfactual_pair")} == \
               {k: meta[k] for k in ("split", "condition", "fault_types", "difficulty", "counterfactual_pair")}
    # the witnesses first (for each field, the first task in manifest order with a value in it), then manifest order
    order = [by_id[r["sample_id"]] for r in records]
    first = sorted({next(k for k, r in enumerate(order) if r[key] not in (None, [])) for key in KEYS
                    if any(r[key] not in (None, []) for r in order)})
    expected = [order[k] for k in first] + [r for k, r in enumerate(order) if k not in first]
    assert [r["sample_id"] for r in rows] == [r["sample_id"] for r in expected] and len(first) > 1


def test_tasks_jsonl_loads_in_pandas_and_datasets(small_bench, tmp_path):
    import datasets

    df = pd.read_json(small_bench / "tasks.jsonl", lines=True)
    assert len(df) == len(load_manifest(small_bench)["records"]) and list(df.columns) == KEYS
    folder = datasets.load_dataset(str(small_bench), split="tasks", cache_dir=str(tmp_path / "hf"))
    files = datasets.load_dataset("json", data_files=str(small_bench / "tasks.jsonl"), split="train",
                                  cache_dir=str(tmp_path / "hf"))
    assert folder.to_pandas().equals(files.to_pandas()) and files.column_names == KEYS
    assert json.loads(files[0]["plan"]) is not None


def card_table(card: str, title: str) -> dict[str, list[int]]:
    lines = card[card.index(f"| {title} |"):].split("\n\n")[0].splitlines()[2:]
    return {cells[0].replace("\\", ""): [int(x) for x in cells[1:]]
            for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines)}


def test_the_card_counts_the_composition_and_names_the_fields_and_the_licence(small_bench):
    card = (small_bench / "README.md").read_text(encoding="utf-8")
    records = load_manifest(small_bench)["records"]
    for title, key in (("difficulty", "difficulty"), ("condition", "condition")):
        counts = {s: Counter(r[key] for r in records if r["split"] == s) for s in ("train", "test")}
        assert card_table(card, title) == {k: [counts["train"][k], counts["test"][k], counts["train"][k] + counts["test"][k]]
                                          for k in sorted(set(counts["train"]) | set(counts["test"]))}
    faults = card_table(card, "fault type (tasks with it)")
    assert sum(v[2] for v in faults.values()) == sum(len(r["fault_types"]) for r in records)
    assert card.startswith("---\nlicense: mit\n") and "Imported puzzles" not in card
    assert all(f"`{k}`" in card for k in KEYS) and "load_dataset(" in card and "pd.read_json(" in card


def test_an_imported_puzzle_carries_its_own_licence(tmp_path):
    from forgeplan.cli import main

    assert main(["import", "--example", "mj_burr6_puzzle4", "--out", str(tmp_path / "burr.json")]) == 0
    out = tmp_path / "b"
    build_bench(out, tasks=20, seed=3, assemblies=["bayonet_structure", "luban_lock_3", str(tmp_path / "burr.json")])
    card = (out / "README.md").read_text(encoding="utf-8")
    asm = load_assembly(str(tmp_path / "burr.json"))
    assert card.startswith("---\nlicense: other\n")
    line = next(x for x in card.splitlines() if x.startswith("| mj\\_burr6\\_puzzle4 |"))
    assert "burr.json" in line and "matajoh/burr-solver" in line and "licence: MIT" in line
    assert asm.source in line.replace("\\", "")
    assert "2 assemblies are forgeplan's built-ins" in card


def test_a_magar_benchmark_lists_both_families(magar_bench):
    rows = {r["sample_id"]: r for r in rows_of(magar_bench)}
    decisions = [r for r in rows.values() if r["family"] == "decision"]
    assert decisions and len(decisions) < len(rows)
    for r in decisions:
        d = json.loads((magar_bench / "tasks" / r["sample_id"] / "decision.json").read_text())
        assert json.loads(r["decision"]) == d["reference"] and json.loads(r["valid_decisions"]) == d["valid"]
        assert json.loads(r["plan"]) == d["reference_plan"] and r["annotation"] is None and r["proof_optimal"]
    card = (magar_bench / "README.md").read_text(encoding="utf-8")
    assert card_table(card, "family")["decision"][2] == len(decisions)


@pytest.mark.slow
def test_a_rerun_writes_the_same_card_and_tasks(magar_bench, tmp_path):
    from forgeplan.bench.magar import build_magar_bench

    from conftest import MAGAR_BENCH_TASKS

    build_magar_bench(tmp_path / "again", tasks=MAGAR_BENCH_TASKS, seed=7)
    for name in ("README.md", "tasks.jsonl", "manifest.json"):
        assert (tmp_path / "again" / name).read_bytes() == (magar_bench / name).read_bytes()

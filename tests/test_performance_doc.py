"""docs/performance.md is the rendering of the stored `python -m lab` results, and README's figures are theirs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lab.cli import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"


def test_performance_md_is_the_rendering_of_the_stored_results(capsys):
    assert sorted(RESULTS.glob("*.json")), "no stored result"
    code = main(["report", "--results", str(RESULTS), "--out", str(ROOT / "docs" / "performance.md"), "--check"])
    assert code == 0, capsys.readouterr().err


def test_a_changed_figure_is_caught(tmp_path):
    stored = tmp_path / "verify.json"
    stored.write_text(json.dumps({"command": "python -m lab verify", "result": {"figure": 1}}), encoding="utf-8")
    page = tmp_path / "performance.md"
    assert main(["report", "--results", str(tmp_path), "--out", str(page)]) == 0
    assert main(["report", "--results", str(tmp_path), "--out", str(page), "--check"]) == 0
    stored.write_text(json.dumps({"command": "python -m lab verify", "result": {"figure": 2}}), encoding="utf-8")
    assert main(["report", "--results", str(tmp_path), "--out", str(page), "--check"]) == 1


def lookup(data, path: str):
    """`result.commands.1.wall_s_median` -> the value at that path (list items by index)."""
    for key in path.split("."):
        data = data[int(key)] if isinstance(data, list) else data[key]
    return data


def test_every_readme_figure_is_a_stored_value():
    """README's headline table cites, per figure, the stored file and the path of the value it shows."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Figures"):]
    cited = re.findall(r"\| \*\*([^*|]+)\*\*[^|]*\| `([\w-]+)\.json: ([\w.-]+)` \|", section)
    assert len(cited) == section.count(".json: ") >= 5   # every cited figure is checked
    for shown, name, path in cited:
        value = lookup(json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8")), path)
        assert shown == f"{value:,}" if isinstance(value, int) else shown == str(value), (name, path, value)


def test_store_writes_the_command_the_machine_and_the_printed_result(tmp_path, capsys):
    argv = ["verify", "--runs", "1", "--actions", "500", "--store", str(tmp_path)]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads((tmp_path / "verify.json").read_text(encoding="utf-8"))
    assert stored["command"] == "python -m lab verify --runs 1 --actions 500"
    assert stored["result"] == printed and stored["machine"]["cpus"] >= 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", stored["date"]) and len(stored["load"]) == 3


def test_unknown_shapes_render_as_tables(tmp_path):
    result = {"rate": 0.5, "rows": [{"a": 1, "b": "x|y"}, {"a": 2, "c": [1, 2]}],
              "by_assembly": {"k1": {"n": 1}, "k2": {"n": 2}}, "nested": {"deep": {"v": 3}}}
    (tmp_path / "odd.json").write_text(json.dumps({"command": "python -m lab odd", "result": result}), encoding="utf-8")
    page = tmp_path / "p.md"
    assert main(["report", "--results", str(tmp_path), "--out", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "machine: not recorded; date: not recorded; load average: not recorded" in text
    assert "| rate | 0.5 |" in text and "| 1 | x\\|y |  |" in text and "| 2 |  | \\[1, 2\\] |" in text
    assert "| k2 | 2 |" in text and "| v | 3 |" in text


def test_a_known_benchmark_gets_its_headline_table(tmp_path):
    result = {"benchmark": "verify", "assembly": "wheel_hub_dual", "actions_per_second_median": 123}
    (tmp_path / "verify.json").write_text(json.dumps({"command": "python -m lab verify", "result": result}),
                                          encoding="utf-8")
    page = tmp_path / "p.md"
    assert main(["report", "--results", str(tmp_path), "--out", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "| headline | value |\n|---|---|\n| engine replay, actions/s (median) | 123 |\n| assembly | wheel\\_hub\\_dual |" in text


def test_the_reference_model_table_in_the_training_guide_is_the_stored_run():
    from forgeplan.llm.reference import table

    report = json.loads((RESULTS / "reference-model.json").read_text(encoding="utf-8"))["result"]
    guide = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    assert table(report) in guide
    assert (RESULTS / "reference-model.md").read_text(encoding="utf-8").startswith(table(report))


def test_the_ablation_table_in_the_training_guide_is_the_stored_run():
    from forgeplan.llm.ablation import table

    report = json.loads((RESULTS / "reference-ablation.json").read_text(encoding="utf-8"))["result"]
    guide = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    assert set(report["variants"]) == {"vanilla-sft", "without-ag", "without-rs", "full"} and report["seeds"] == [42, 43, 44]
    assert table(report) in guide
    assert (RESULTS / "reference-ablation.md").read_text(encoding="utf-8").startswith(table(report))

"""The main job: rerunning it into the same folder works, and every file but timings.json is byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forgeplan.cli import main
from forgeplan.demo import split_timings

ARGS = ["--tasks", "40", "--crosscheck", "2", "--jobs", "2"]


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_demo_reruns_and_only_timings_differ(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), *ARGS]) == 0
    first = files(out)
    assert {"summary.md", "crosscheck.json", "timings.json", "bench/manifest.json"} <= set(first)
    assert main(["demo", "--out", str(out), *ARGS]) == 0          # the same command again
    second = files(out)
    assert set(first) == set(second)
    assert [k for k in first if first[k] != second[k]] in ([], ["timings.json"])
    cross = json.loads(first["crosscheck.json"])
    assert "seconds" not in first["crosscheck.json"].decode() and "ratio" not in first["summary.md"].decode()
    timings = json.loads(first["timings.json"])["crosscheck"]
    assert [t["task_id"] for t in timings["tasks"]] == [t["task_id"] for t in cross["tasks"]]
    # a side that declines a task (e.g. Fast Downward on an expert-tier task too large to write) takes no time
    ran = [t for t, c in zip(timings["tasks"], cross["tasks"])
           if not any(c[side]["status"].startswith("unsupported") for side in ("prover", "checker"))]
    assert ran and all(t["prover"]["seconds"] > 0 and t["checker"]["seconds"] > 0 for t in ran)
    capsys.readouterr()


def test_demo_refuses_a_folder_that_holds_something_else(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep me")
    assert main(["demo", "--out", str(tmp_path), *ARGS]) == 2
    err = capsys.readouterr().err
    assert "holds no earlier demo (use --force" in err and (tmp_path / "mine.txt").is_file()


def test_split_timings_keeps_the_shape():
    kept, timed = split_timings({"a": 1, "seconds": 2.0, "xs": [{"ratio": 3, "b": 4}, {"b": 5}]})
    assert kept == {"a": 1, "xs": [{"b": 4}, {"b": 5}]} and timed == {"seconds": 2.0, "xs": [{"ratio": 3}, {}]}


def test_zero_tasks_is_refused_in_one_line_and_leaves_an_earlier_demo(tmp_path, capsys):
    for argv in (["demo", "--out", str(tmp_path / "d"), "--tasks", "0"], ["bench", "build", "--out", str(tmp_path / "b"),
                                                                         "--tasks", "0", "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == "forgeplan: error: --tasks: must be at least 20 to keep every stratum, got 0\n", err
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "summary.md").write_text("earlier")
    (tmp_path / "d" / "bench").mkdir()
    (tmp_path / "d" / "bench" / "manifest.json").write_text("{}")
    assert main(["demo", "--out", str(tmp_path / "d"), "--tasks", "0"]) == 2
    assert (tmp_path / "d" / "summary.md").read_text() == "earlier"

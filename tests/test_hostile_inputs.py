"""Hostile inputs of every class issue #30's second round found, each with fixed bytes: a verdict or a
one-line error with README's exit code, nothing written outside --out, and (slow lane) every command
line of `fuzzing.hostile_inputs` under 300 MB in a fresh process.

Searches with budgets (an interlocked shell), output places that are not files (a FIFO, a device),
structural caps before parsing (millions of JSON values, an XML element bomb), the endpoint client
against a server that misbehaves (lab.fuzzing.HostileEndpoint), and training configurations."""

from __future__ import annotations

import json
import os

import pytest

from lab.fuzzing import (ENDPOINT_BEHAVIOURS, HostileEndpoint, Outcome, corrupt_deflate, element_bomb,
                               hostile_inputs, interlocked_shell, judge, many_values, peak_rss, run_cli)
from forgeplan.geometry.partial import Budget, partial_verdict
from forgeplan.io.guarded import Rejected, count_items
from forgeplan.io.importers import import_puzzle
from forgeplan.model.errors import InputError


def _one_line_error(o, code=2):
    """The error line (a progress bar before it, written with carriage returns, is not a second line)."""
    last = o.err.rstrip("\n").split("\r")[-1].split("\n")[-1]
    assert o.code == code and judge(Outcome(o.code, o.out, last + "\n")) is None, (o.code, o.err[-400:])
    assert o.err.count(": error:") == 1, o.err[-400:]
    return last


@pytest.fixture
def shell12(tmp_path):
    path = tmp_path / "shell12.json"
    path.write_text(json.dumps(interlocked_shell(12, 2)))
    return path


# ----------------------------------------------------------------------------- search budgets

def test_a_shell_with_loose_cubes_is_undecided_within_the_budget(shell12):
    asm = import_puzzle(shell12)
    v = partial_verdict(asm, budget=Budget(positions=30_000))
    assert v["mode"] == "undecided" and v["disassemblable"] is None
    assert v["verdict"].startswith("undecided within the budget") and "30,000 part positions" in v["verdict"]
    assert v["budget"]["part_positions"] > 30_000 and "--time-limit" not in v["verdict"]
    timed = partial_verdict(asm, budget=Budget(seconds=1e-9))
    assert timed["mode"] == "undecided" and timed["budget"]["limit"].endswith(" s")
    assert "--time-limit" in timed["verdict"]


def test_an_enclosed_core_is_still_proved_inseparable_under_a_budget(tmp_path):
    path = tmp_path / "shell3.json"
    path.write_text(json.dumps(interlocked_shell(3, 1)))
    v = partial_verdict(import_puzzle(path), budget=Budget(positions=30_000, seconds=60))
    assert v["mode"] == "inseparable" and v["disassemblable"] is False


def test_many_loose_parts_stop_at_the_group_cap(tmp_path):
    path = tmp_path / "shell.json"
    path.write_text(json.dumps(interlocked_shell(30, 20)))
    v = partial_verdict(import_puzzle(path), budget=Budget(positions=10 ** 9, seconds=60))
    assert v["mode"] == "undecided" and "movable groups in one state" in v["verdict"]


def test_check_and_import_take_a_time_limit(shell12, tmp_path):
    o = run_cli(["assemblies", "--check", shell12, "--time-limit", "0.05", "--json"])
    assert o.code == 1 and judge(o, True) is None
    row = json.loads(o.out)
    assert row["mode"] == "undecided" and row["disassemblable"] is None
    o = run_cli(["import", shell12, "--out", tmp_path / "a.json", "--time-limit", "0.05"])
    assert o.code == 1 and "undecided within the budget" in o.out and (tmp_path / "a.json").is_file()
    for bad in ("-1", "nan"):
        assert "--time-limit" in _one_line_error(run_cli(["assemblies", "--check", shell12, "--time-limit", bad]))


def test_loading_refuses_what_its_clockless_budget_leaves_undecided(shell12):
    from forgeplan.geometry.checks import check_geometry
    from forgeplan.geometry.partial import LOAD_POSITIONS
    from forgeplan.model.errors import AssemblyError

    asm = import_puzzle(shell12)
    with pytest.raises(AssemblyError, match="stopped at 30,000 part positions"):
        check_geometry(asm, partial_moves=True, budget=Budget(30_000))
    assert LOAD_POSITIONS < 1_000_000   # what a task folder or assembly file may make the search store


@pytest.mark.slow
def test_a_task_on_an_undecided_assembly_is_refused(shell12, tmp_path):
    assert run_cli(["import", shell12, "--out", tmp_path / "a.json", "--time-limit", "0.05"]).code == 1
    err = _one_line_error(run_cli(["task", "make", tmp_path / "a.json", "--out", tmp_path / "task"]))
    assert "partial-move search stopped at" in err and not (tmp_path / "task").exists()


# ----------------------------------------------------------------------------- --out

@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def test_out_that_is_not_a_file_is_refused_before_any_work(shell12, fifo, tmp_path):
    for out in (fifo, "/dev/full", "/dev/null", tmp_path / "shell12.json" / "x"):
        err = _one_line_error(run_cli(["import", shell12, "--out", out]))
        assert "--out" in err
    assert "--out" in _one_line_error(run_cli(["import-answers", shell12, "--out", fifo]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "shell12.json"]


def test_out_fifo_of_bench_commands(small_bench, fifo):
    for argv in (["requests", "--bench", small_bench, "--out", fifo],
                 ["baseline", "no-op", "--bench", small_bench, "--out", fifo],
                 ["infer", "--endpoint", "http://127.0.0.1:9/v1", "--bench", small_bench, "--out", fifo],
                 ["intervene", "--bench", small_bench, "--predictions", fifo.parent / "p.jsonl", "--out", fifo, "--mode",
                  "plan-from-diagnosis"]):
        assert "not a regular file or folder" in _one_line_error(run_cli(argv))


def test_import_answers_reads_through_the_guarded_reader(fifo, tmp_path):
    for src in (fifo, "/dev/zero"):
        assert "not a regular file" in _one_line_error(run_cli(["import-answers", src, "--out", tmp_path / "p.jsonl"]))


# ----------------------------------------------------------------------------- structural caps

def test_values_are_counted_before_parsing():
    count_items(many_values("[", 999), 1_000)
    with pytest.raises(Rejected, match="more than 1,000 JSON values"):
        count_items(many_values("[", 2_000), 1_000)
    count_items(json.dumps(["a, [b, {c"] * 100), 1_000)   # commas and brackets inside strings do not count


def test_millions_of_values_in_an_assembly_or_puzzle_are_refused(tmp_path):
    (tmp_path / "dicts.json").write_text(many_values("[", 2_600_000))
    assert "JSON values" in _one_line_error(run_cli(["assemblies", "--check", tmp_path / "dicts.json"]))
    (tmp_path / "lists.json").write_text(many_values('{"pieces": [', 1_100_000, "[]"))
    assert "JSON values" in _one_line_error(run_cli(["import", tmp_path / "lists.json", "--out", tmp_path / "o.json"]))


def test_xml_bombs_and_broken_streams_are_one_line_errors(tmp_path):
    cases = {"bomb.xmpuzzle": (element_bomb(300_000), "XML elements"),
             "deflate.xmpuzzle": (corrupt_deflate(), "gzip"),
             "encoding.xmpuzzle": (b'<?xml version="1.0" encoding="x-unknown"?><puzzle/>', "encoding")}
    for name, (data, words) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert words in _one_line_error(run_cli(["import", tmp_path / name, "--out", tmp_path / "o.json"]))
    assert not (tmp_path / "o.json").exists()


def test_deep_training_config_is_one_error(tmp_path):
    from forgeplan.llm.config import load_config

    (tmp_path / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "nested.toml").write_text("[run]\nname = " + "[" * 80 + "]" * 80 + "\n")
    for name in ("deep", "nested"):
        with pytest.raises(InputError, match="nests deeper than 64"):
            load_config(tmp_path / f"{name}.toml")


@pytest.mark.slow
def test_training_config_types_are_checked_before_any_model_loads(tmp_path):
    pytest.importorskip("trl")
    from forgeplan.llm.config import load_config

    (tmp_path / "lr.toml").write_text('[trainer]\nlearning_rate = "abc"\n')
    (tmp_path / "ok.toml").write_text("[trainer]\nlearning_rate = 1\nbf16 = false\n[lora]\nr = 8\n")
    with pytest.raises(InputError, match="trainer.learning_rate: must be float"):
        load_config(tmp_path / "lr.toml")
    assert load_config(tmp_path / "ok.toml").trainer["learning_rate"] == 1


# ----------------------------------------------------------------------------- the endpoint client

@pytest.fixture(scope="module")
def endpoint():
    with HostileEndpoint(lifetime=600) as srv:
        yield srv


@pytest.mark.parametrize("behaviour", [b for b in ENDPOINT_BEHAVIOURS if b != "free-text"])
def test_a_misbehaving_endpoint_is_one_line_exit_2(small_bench, endpoint, behaviour, tmp_path):
    out = tmp_path / "p.jsonl"
    o = run_cli(["infer", "--endpoint", endpoint.url(behaviour), "--bench", small_bench, "--out", out,
                 "--limit", "1", "--timeout", "0.5", "--retries", "0"])
    err = _one_line_error(o)
    assert "1 of 1 requests failed" in err
    assert out.read_text() == ""   # nothing but the answers that came back


def test_an_endpoint_ignoring_the_grammar_is_noticed(small_bench, endpoint, tmp_path):
    out = tmp_path / "p.jsonl"
    o = run_cli(["infer", "--endpoint", endpoint.url("free-text"), "--bench", small_bench, "--out", out,
                 "--limit", "2", "--timeout", "5"])
    assert o.code == 1 and "2 of 2 outputs sent a grammar do not parse under it" in o.err
    assert json.loads(o.out)["grammar_parse_rate"] == 0.0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["constrained"] == "grammar" for r in rows)
    o = run_cli(["infer", "--endpoint", endpoint.url("free-text"), "--bench", small_bench, "--out", out,
                 "--limit", "2", "--constrained", "none"])
    assert o.code == 0 and "grammar_parse_rate" not in json.loads(o.out)
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps({"custom_id": r["sample_id"], "response": {"body": {
        "choices": [{"message": {"content": r["raw_output"]}, "finish_reason": "stop"}]}}}) + "\n" for r in rows))
    o = run_cli(["import-answers", batch, "--out", tmp_path / "a.jsonl", "--constrained", "grammar",
                 "--bench", small_bench])
    assert o.code == 1 and "2 of 2 outputs" in o.err
    assert "--bench" in _one_line_error(run_cli(["import-answers", batch, "--out", tmp_path / "b.jsonl",
                                                 "--constrained", "grammar"]))


def test_client_settings_are_validated(small_bench, tmp_path):
    base = ["infer", "--bench", small_bench, "--out", tmp_path / "p.jsonl", "--limit", "1"]
    for extra, words in ((["--endpoint", "file:///dev/zero"], "--endpoint"),
                         (["--endpoint", "ftp://127.0.0.1/v1"], "--endpoint"),
                         (["--endpoint", "http://127.0.0.1:9/v1", "--timeout", "-1"], "--timeout"),
                         (["--endpoint", "http://127.0.0.1:9/v1", "--timeout", "nan"], "--timeout"),
                         (["--endpoint", "http://127.0.0.1:9/v1", "--timeout", "inf"], "--timeout"),
                         (["--endpoint", "http://127.0.0.1:9/v1", "--retries", "40"], "--retries")):
        assert words in _one_line_error(run_cli(base + extra))
    assert not (tmp_path / "p.jsonl").exists()


def test_answer_rows_refuse_wrong_shapes():
    from forgeplan.llm.endpoint import EndpointError
    from forgeplan.llm.serving import answer_row

    good = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}], "usage": {"completion_tokens": 3}}
    assert answer_row("s", good)["new_tokens"] == 3
    for bad in ({"choices": [{"message": {"content": 5}}]}, {"choices": [{"message": {"content": "x"}}], "usage": []},
                {"choices": []}, {"choices": "x"}):
        with pytest.raises(EndpointError):
            answer_row("s", bad)


# ----------------------------------------------------------------------------- fresh processes

@pytest.mark.slow
def test_every_hostile_input_answers_under_300_mb(tmp_path):
    for name, (argv, codes) in hostile_inputs(tmp_path).items():
        code, mb = peak_rss(argv)
        assert code in codes and mb < 300, f"{name}: exit {code}, peak {mb} MB"


def test_compact_predictions_get_the_same_verdicts(tmp_path):
    from forgeplan.evaluation.evaluate import OVERSIZED, read_predictions
    from forgeplan.io.contract import ContractError, parse_output

    outputs = {"big": "\U0001F600" + "a" * 1_100_000, "bigbmp": "é" * 600_000, "astral": '{"a": "\U0001F600"}',
               "ascii": '{"annotation": {}}', "lone": '{"a": "\ud800"}', "text": "Remove Ä first"}
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"sample_id": k, "raw_output": v}, ensure_ascii=k == "lone") + "\n"
                            for k, v in outputs.items()), encoding="utf-8")

    def verdict(raw):
        try:
            return parse_output(raw)
        except ContractError as exc:
            return exc.reason

    plain, compact = read_predictions(path), read_predictions(path, compact=True)
    assert compact["big"] is OVERSIZED and compact["bigbmp"] is OVERSIZED and isinstance(compact["astral"], bytes)
    for k in outputs:
        assert verdict(plain[k]) == verdict(compact[k]), k

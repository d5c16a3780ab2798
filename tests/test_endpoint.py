"""`forgeplan infer --endpoint` against the stand-in for a hosted OpenAI-compatible server (tests/standin.py:
it requires an API key, fails the requests a test scripts and records every request it receives) answering
each sample with its reference, so the tests can count what was sent: the key from the environment and nowhere in the outputs, retries of what is retryable only,
requests really in flight together, interrupted runs that resume without sending anything twice,
token usage, response_format, chat and completions bodies."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cases import write_case_tasks
from forgeplan.cli import main
from forgeplan.bench.digests import seal_folder
from forgeplan.io.task_files import write_json
from forgeplan.llm.endpoint import EndpointClient, Request, retry_after
from forgeplan.llm.prompt import render_plain, target_text
from standin import KEY, serving

ENV = "FORGEPLAN_TEST_KEY"
N_TEST = 6
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    ids = write_case_tasks(root, 2 + N_TEST)
    seal_folder(root, {"schema_version": "1.0", "splits": {"train": ids[:2], "test": ids[2:]},
                                        "records": []})
    return root


def split_test(bench) -> list[str]:
    return json.loads((bench / "manifest.json").read_text())["splits"]["test"]


def reference_answers(bench) -> dict[str, str]:
    return {sid: target_text(json.loads((bench / "tasks" / sid / "reference.json").read_text()))
            for sid in split_test(bench)}


@pytest.fixture
def server(bench):
    with serving(reference_answers(bench)) as srv:
        yield srv


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(ENV, KEY)


def infer(server, bench, out, *more) -> list[str]:
    """The command line (no grammar unless `more` asks: building grammars is most of a run's time)."""
    return ["infer", "--endpoint", server.url, "--bench", str(bench), "--out", str(out), "--api-key-env", ENV,
            "--served-model", "hosted-model", "--constrained", "none", *more]


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def every_file(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in ([folder] if folder.is_file() else folder.rglob("*")) if p.is_file()]


# ----------------------------------------------------------------------------- the key

def test_the_key_comes_from_the_environment_and_is_written_nowhere(bench, server, key, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert main(infer(server, bench, out, "--concurrency", "3")) == 0
    std = capsys.readouterr()
    assert len(server.received) == N_TEST and all(r["authorized"] for r in server.received)
    assert all(r["body"]["model"] == "hosted-model" for r in server.received)
    rows = rows_of(out)
    assert [r["sample_id"] for r in rows] == split_test(bench)
    assert [r["raw_output"] for r in rows] == [server.answers[s] for s in split_test(bench)]
    # token usage per sample, totalled in the summary
    assert all(r["prompt_tokens"] > 0 and r["new_tokens"] == len(r["raw_output"]) // 4 for r in rows)
    summary = json.loads(std.out)
    assert summary["completion_tokens"] == sum(r["new_tokens"] for r in rows)
    assert summary["prompt_tokens"] == sum(r["prompt_tokens"] for r in rows)
    assert summary["sent"] == N_TEST and summary["from_cache"] == 0
    cache = tmp_path / "p.jsonl.cache"
    assert len(list(cache.glob("*.json"))) == N_TEST
    for path in every_file(out, cache):
        assert KEY not in path.read_text(), path
    assert KEY not in std.out + std.err


def test_a_refused_key_is_one_line_and_exit_2_without_retries(bench, server, monkeypatch, tmp_path, capsys):
    wrong = "sk-wrong-key-42"
    monkeypatch.setenv(ENV, wrong)
    out = tmp_path / "p.jsonl"
    assert main(infer(server, bench, out, "--concurrency", "1")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"forgeplan: error: the server refused the key in ${ENV}: HTTP 401")
    assert not any(line.startswith("forgeplan: retry") for line in err)
    assert wrong not in "\n".join(err)   # the server echoed it; the message does not
    assert len(server.received) == 1     # no retry, and no other request started
    assert not (tmp_path / "p.jsonl.cache").exists()   # made with the first answer only
    monkeypatch.delenv(ENV)
    assert main(infer(server, bench, out, "--concurrency", "1")) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"forgeplan: error: no key: set ${ENV}")
    for path in every_file(tmp_path):
        assert wrong not in path.read_text(errors="replace")


def test_a_key_a_header_cannot_carry_and_a_url_with_credentials_are_refused(bench, server, monkeypatch, tmp_path,
                                                                            capsys):
    monkeypatch.setenv(ENV, "sk-a\nb")
    assert main(infer(server, bench, tmp_path / "p.jsonl")) == 2
    err = capsys.readouterr().err
    assert f"${ENV} holds spaces" in err and "sk-a" not in err
    monkeypatch.setenv(ENV, KEY)
    assert main(["infer", "--endpoint", "http://user:pw@127.0.0.1:9/v1", "--bench", str(bench), "--out",
                 str(tmp_path / "p.jsonl")]) == 2
    assert "--endpoint: a URL with credentials" in capsys.readouterr().err
    assert not server.received


# ----------------------------------------------------------------------------- retries

def test_429_and_500_are_retried_400_is_not_and_a_rerun_sends_only_what_failed(bench, server, key, tmp_path, capsys):
    first, second = split_test(bench)[:2]
    server.script = {first: [429, 500], second: [400]}
    out = tmp_path / "p.jsonl"
    assert main(infer(server, bench, out, "--concurrency", "2")) == 2
    err = capsys.readouterr().err
    retries = [line for line in err.splitlines() if line.startswith("forgeplan: retry")]
    assert retries == [f"forgeplan: retry 1/3 of {first}: HTTP 429 Too Many Requests: "
                       f'{{"error": {{"message": "scripted 429"}}}}; waiting 0.0 s',
                       f"forgeplan: retry 2/3 of {first}: HTTP 500 Internal Server Error: "
                       f'{{"error": {{"message": "scripted 500"}}}}; waiting 0.0 s']
    assert f"1 of {N_TEST} requests failed" in err and f"{second}: HTTP 400 Bad Request" in err and "not retried" in err
    assert len(server.bodies(first)) == 3 and len(server.bodies(second)) == 1
    assert [r["sample_id"] for r in rows_of(out)] == [s for s in split_test(bench) if s != second]
    # the rerun sends the failed request only, and writes every row in sample order
    assert main(infer(server, bench, out, "--concurrency", "2")) == 0
    assert json.loads(capsys.readouterr().out)["sent"] == 1
    assert len(server.bodies(second)) == 2 and len(server.answered()) == N_TEST
    assert [r["sample_id"] for r in rows_of(out)] == split_test(bench)


def test_the_backoff_without_retry_after_and_the_retry_after_header(bench, server, key, tmp_path):
    sid = split_test(bench)[0]
    server.script = {sid: [503, 503]}
    notes: list[str] = []
    client = EndpointClient(server.url, key_env=ENV, retries=2, backoff=0.01, progress=False, say=notes.append)
    body = {"model": "m", "messages": [{"role": "user", "content": f'{{"sample_id":"{sid}"}}'}]}
    [answer] = client.run([Request("a", body)])
    assert answer.error is None and answer.text == server.answers[sid] and client.retried == 2
    waits = [float(re.search(r"waiting ([\d.]+) s", n).group(1)) for n in notes]
    assert len(waits) == 2 and all(w <= 0.05 for w in waits)   # 0.01 * 2^k, jittered, not a Retry-After
    assert retry_after("7") == 7.0 and retry_after("soon") is None and retry_after(None) is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0   # a date in the past: no wait
    server.script = {sid: [503]}
    [answer] = EndpointClient(server.url, key_env=ENV, retries=0, progress=False).run([Request("a", {**body, "n": 1})])
    assert answer.error.startswith("HTTP 503 Service Unavailable") and client.sent == 1


# ----------------------------------------------------------------------------- concurrency

def test_concurrency_keeps_several_requests_in_flight(bench, server, key, tmp_path, capsys):
    server.barrier = threading.Barrier(3)   # the first three are answered only once all three have arrived
    assert main(infer(server, bench, tmp_path / "p.jsonl", "--concurrency", "3")) == 0
    assert not server.barrier.broken and server.max_in_flight == 3
    assert len(server.received) == N_TEST


# ----------------------------------------------------------------------------- interrupted runs

def _each_sent_once(server, bench) -> None:
    bodies = server.bodies()
    assert len(bodies) == len(set(bodies)) == N_TEST
    assert sorted(server.answered()) == sorted(split_test(bench))


@pytest.mark.parametrize("interrupt", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_resumes_without_sending_anything_twice(bench, server, key, tmp_path, capsys, interrupt):
    def stop(n):
        if n == 3:   # Ctrl-C or SIGTERM as the third request arrives
            os.kill(os.getpid(), interrupt)
        if n >= 3:   # the requests in flight are answered late, and still kept
            time.sleep(0.2)

    server.on_request = stop
    handler = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "p.jsonl"
    assert main(infer(server, bench, out, "--concurrency", "2")) == 128 + interrupt
    err = capsys.readouterr().err
    assert "forgeplan: interrupted:" in err and "the same command resumes" in err and not out.exists()
    assert signal.getsignal(signal.SIGTERM) == handler   # the run's own handler is gone
    received = len(server.received)
    assert 3 <= received < N_TEST
    server.on_request = None
    assert main(infer(server, bench, out, "--concurrency", "2")) == 0
    assert json.loads(capsys.readouterr().out)["from_cache"] == received
    _each_sent_once(server, bench)
    assert [r["raw_output"] for r in rows_of(out)] == [server.answers[s] for s in split_test(bench)]


def test_a_limited_run_then_the_full_run_sends_each_request_once(bench, server, key, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert main(infer(server, bench, out, "--limit", "2")) == 0
    assert len(rows_of(out)) == 2
    assert main(infer(server, bench, out)) == 0
    _each_sent_once(server, bench)
    assert len(rows_of(out)) == N_TEST


def test_a_cache_file_that_does_not_read_back_is_asked_again(bench, server, key, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert main(infer(server, bench, out)) == 0
    broken = sorted((tmp_path / "p.jsonl.cache").glob("*.json"))[0]
    broken.write_text('{"response": ')              # cut short, as no rename would leave it
    (broken.parent / ".x.tmp").write_text("{")     # a temporary file of a killed run
    capsys.readouterr()
    assert main(infer(server, bench, out)) == 0
    assert json.loads(capsys.readouterr().out)["sent"] == 1 and len(server.received) == N_TEST + 1
    assert json.loads(broken.read_text())["response"]["choices"]


@pytest.mark.slow
def test_a_process_killed_with_sigterm_resumes_without_sending_anything_twice(bench, server, tmp_path):
    out = tmp_path / "p.jsonl"
    argv = [sys.executable, "-m", "forgeplan", *infer(server, bench, out, "--concurrency", "1")]
    env = {**os.environ, "PYTHONPATH": str(ROOT), ENV: KEY}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server.on_request = lambda n: proc.send_signal(signal.SIGTERM) if n == 2 else None
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143 and "forgeplan: interrupted:" in err   # 128 + SIGTERM
    assert 2 <= len(server.received) < N_TEST
    server.on_request = None
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-400:]
    _each_sent_once(server, bench)
    assert [r["sample_id"] for r in rows_of(out)] == split_test(bench)


# ----------------------------------------------------------------------------- what is sent

def test_response_format_carries_the_tasks_json_schema(bench, server, key, tmp_path, capsys):
    from forgeplan.llm.bench import load_sample
    from forgeplan.llm.exports import json_schema

    out = tmp_path / "p.jsonl"
    assert main(infer(server, bench, out, "--engine", "openai", "--constrained", "grammar")) == 0
    assert "grammar_parse_rate" not in json.loads(capsys.readouterr().out)   # a schema is not the grammar
    for r in server.received:
        fmt = r["body"]["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "forgeplan_rework"
        assert fmt["json_schema"]["schema"] == json_schema(load_sample(bench, r["sample"])[0])
        assert fmt["json_schema"]["strict"] is False and "max_completion_tokens" in r["body"]
        assert not {"structured_outputs", "ebnf", "grammar", "max_tokens"} & set(r["body"])
    assert {r["constrained"] for r in rows_of(out)} == {"json-schema"}


def test_chat_and_completions_bodies(bench, server, key, tmp_path):
    assert main(infer(server, bench, tmp_path / "chat.jsonl", "--limit", "1")) == 0
    assert main(infer(server, bench, tmp_path / "text.jsonl", "--limit", "1", "--api", "completions")) == 0
    chat, text = server.received
    assert chat["path"] == "/v1/chat/completions" and text["path"] == "/v1/completions"
    assert [m["role"] for m in chat["body"]["messages"]] == ["system", "user"] and "prompt" not in chat["body"]
    assert text["body"]["prompt"] == render_plain(chat["body"]["messages"]) and "messages" not in text["body"]
    rest = {k: v for k, v in chat["body"].items() if k != "messages"}
    assert rest == {k: v for k, v in text["body"].items() if k != "prompt"}
    assert rows_of(tmp_path / "chat.jsonl")[0]["raw_output"] == rows_of(tmp_path / "text.jsonl")[0]["raw_output"]

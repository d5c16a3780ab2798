"""`forgeplan requests` and `forgeplan infer --endpoint` against a real OpenAI-compatible HTTP server on
localhost that serves the tiny model: it reads the grammar from `structured_outputs.grammar` and
decodes under it with llguidance (as vLLM's guidance backend does), fails its first request with a
503 (the client must retry) and counts the requests in flight (the client must bound them). Then
`evaluate` scores the answers, and `import-answers` reads the same responses as a batch output file."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from forgeplan.cli import main
from forgeplan.io.contract import parse_output

N_TASKS = 4


@pytest.fixture(scope="module", autouse=True)
def llm_extra():
    """torch, transformers and llguidance are imported by the tests that run, not when the suite is collected."""
    pytest.importorskip("torch", reason="the [llm] extra (torch, transformers) is required")
    pytest.importorskip("llguidance")


@pytest.fixture(scope="module")
def bench(small_bench):
    return small_bench


class _Grammar:
    """A transformers logits processor driven by an llguidance matcher (one prompt)."""

    def __init__(self, matcher, vocab_size: int):
        import llguidance.torch

        self.matcher, self.start, self.size = matcher, None, vocab_size
        self.bitmask = llguidance.torch.allocate_token_bitmask(1, vocab_size)

    def __call__(self, input_ids, scores):
        import llguidance.torch

        from forgeplan.llm.processor import apply_bitmask

        if self.start is None:
            self.start = input_ids.shape[1]
        elif input_ids.shape[1] > self.start:
            assert self.matcher.consume_token(int(input_ids[0, -1]))
        llguidance.torch.fill_next_token_bitmask(self.matcher, self.bitmask, 0)
        scores[:, self.size:] = float("-inf")  # the model's padded vocabulary past the tokenizer
        apply_bitmask(scores[:, : self.size], self.bitmask)
        return scores


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, model, tok):
        import llguidance.hf

        super().__init__(("127.0.0.1", 0), _Handler)
        self.model, self.tok, self.lltok = model, tok, llguidance.hf.from_tokenizer(tok)
        self.lock, self.count_lock = threading.Lock(), threading.Lock()
        self.in_flight = self.max_in_flight = self.requests = self.answered = 0
        self.grammars: list[str] = []

    def complete(self, body: dict) -> dict:
        import llguidance
        import torch

        grammar = body["structured_outputs"]["grammar"]
        matcher = llguidance.LLMatcher(self.lltok, llguidance.LLMatcher.grammar_from_lark(grammar))
        assert not matcher.is_error(), matcher.get_error()
        text = self.tok.apply_chat_template(body["messages"], tokenize=False, add_generation_prompt=True)
        enc = self.tok(text, return_tensors="pt", add_special_tokens=False)
        with self.lock, torch.inference_mode():
            out = self.model.generate(**enc, max_new_tokens=body["max_tokens"], do_sample=False,
                                      logits_processor=[_Grammar(matcher, len(self.tok))],
                                      eos_token_id=self.tok.eos_token_id, pad_token_id=self.tok.pad_token_id)
        new = out[0, enc["input_ids"].shape[1]:].tolist()
        stopped = bool(new) and new[-1] == self.tok.eos_token_id
        content = self.tok.decode(new, skip_special_tokens=True)
        self.grammars.append(grammar)
        return {"id": "cmpl", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop" if stopped else "length"}],
                "usage": {"prompt_tokens": enc["input_ids"].shape[1], "completion_tokens": len(new)}}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, code: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - http.server's name
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with srv.count_lock:
            srv.requests += 1
            first = srv.requests == 1
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        code, payload = 500, {"error": "the model failed"}
        try:
            if self.path != "/v1/chat/completions":
                code, payload = 404, {"error": "not found"}
            elif first:
                code, payload = 503, {"error": "warming up"}
            else:
                code, payload = 200, srv.complete(body)
        finally:
            with srv.count_lock:  # before the client can see the answer and send the next request
                srv.in_flight -= 1
                srv.answered += code == 200
        self._send(code, payload)


@pytest.fixture(scope="module")
def server(tiny_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    srv = _Server(AutoModelForCausalLM.from_pretrained(tiny_dir).eval(), AutoTokenizer.from_pretrained(tiny_dir))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_requests_carry_the_task_grammar_for_each_engine(bench, tmp_path):
    fields = {"vllm": ("structured_outputs", "grammar"), "sglang": ("ebnf",), "llama.cpp": ("grammar",)}
    for engine, path in fields.items():
        out = tmp_path / f"{engine}.jsonl"
        assert main(["requests", "--bench", str(bench), "--out", str(out), "--engine", engine,
                     "--served-model", "forge", "--limit", str(N_TASKS)]) == 0
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        test = json.loads((bench / "manifest.json").read_text())["splits"]["test"]
        assert [x["custom_id"] for x in lines] == test[:N_TASKS]
        for line in lines:
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            body = line["body"]
            assert body["model"] == "forge" and body["temperature"] == 0
            # llama.cpp's server is greedy only without its default repeat penalty and top-p / min-p cuts
            assert body.get("repeat_penalty") == (1.0 if engine == "llama.cpp" else None)
            assert [m["role"] for m in body["messages"]] == ["system", "user"]
            grammar = body
            for key in path:
                grammar = grammar[key]
            assert line["custom_id"] in grammar


def test_infer_endpoint_end_to_end_then_evaluate(bench, server, tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    assert main(["infer", "--endpoint", url, "--bench", str(bench), "--out", str(preds), "--concurrency", "2",
                 "--max-new-tokens", "300", "--served-model", "forge"]) == 0
    rows = [json.loads(x) for x in preds.read_text().splitlines()]
    test = json.loads((bench / "manifest.json").read_text())["splits"]["test"]
    assert [r["sample_id"] for r in rows] == test
    assert server.answered == len(test) and server.requests >= len(test) + 1  # the first request's 503 was retried
    assert 1 <= server.max_in_flight <= 2
    for row in rows:
        assert parse_output(row["raw_output"]).sample_id == row["sample_id"]
        assert row["constrained"] == "grammar" and row["stopped"] == "stop"
    capsys.readouterr()
    assert main(["evaluate", "--bench", str(bench), "--predictions", str(preds), "--json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["samples"] == len(rows)
    assert report["failures"]["schema_failure"]["count"] == 0  # every answer parsed and was scored


def test_import_answers_reads_a_batch_output(bench, server, tmp_path):
    from forgeplan.llm.endpoint import EndpointClient
    from forgeplan.llm.serving import endpoint_request

    req = tmp_path / "req.jsonl"
    assert main(["requests", "--bench", str(bench), "--out", str(req), "--max-tokens", "300", "--limit", str(N_TASKS)]) == 0
    client = EndpointClient(f"http://127.0.0.1:{server.server_address[1]}", key_env=None, retries=2, backoff=0.1,
                            progress=False)
    answers = client.run([endpoint_request(json.loads(line)) for line in req.read_text().splitlines()])
    batch = tmp_path / "batch_out.jsonl"
    with open(batch, "w") as fh:
        for a in answers:
            fh.write(json.dumps({"id": "b", "custom_id": a.id, "error": None,
                                 "response": {"status_code": 200, "body": a.response}}) + "\n")
    preds = tmp_path / "preds.jsonl"
    assert main(["import-answers", str(batch), "--out", str(preds)]) == 0
    rows = [json.loads(x) for x in preds.read_text().splitlines()]
    assert len(rows) == N_TASKS and all(parse_output(r["raw_output"]).sample_id == r["sample_id"] for r in rows)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"custom_id": "x"}\n')
    assert main(["import-answers", str(broken), "--out", str(tmp_path / "p2.jsonl")]) == 2


def test_unreachable_endpoint_and_legal_mode_are_clean_errors(bench, tmp_path, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    args = ["infer", "--endpoint", f"http://127.0.0.1:{port}/v1", "--bench", str(bench), "--out",
            str(tmp_path / "p.jsonl"), "--retries", "0", "--limit", "1"]
    assert main(args) == 2
    assert "1 of 1 requests failed" in capsys.readouterr().err
    assert (tmp_path / "p.jsonl").read_text() == ""  # what succeeded (nothing) is written
    assert main(args + ["--constrained", "legal"]) == 2
    assert "legal" in capsys.readouterr().err

"""A stand-in for a hosted OpenAI-compatible server, shared by the tests that run `infer --endpoint` and
`judge` (the standard library's HTTP server in a thread, nothing on the network).

It requires an API key (401 without it, echoing the key it was given, as hosted APIs do), answers each
request with the text `answers` holds for the sample the prompt names (its `"sample_id":"..."`), in a
``` fence for the samples in `fence`, fails the requests a test scripts (429 / 500 with Retry-After,
400), and records every request it receives, so that a test can count what was sent."""

from __future__ import annotations

import contextlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator

KEY = "sk-test-0123456789abcdef"


class StandIn(ThreadingHTTPServer):
    """`answers[sample_id]`: the answer's text; `respond(sample, body)`, when set, gives it instead (and may
    check the request); `fence`: samples answered inside a markdown fence with a line of prose before it;
    `script[sample_id]`: statuses to answer before answering properly; `barrier`: the first
    `barrier.parties` requests wait for each other before being answered; `on_request(n)`: called as the
    n-th request arrives (1-based), before it is answered."""

    daemon_threads = True

    def __init__(self, answers: dict[str, str], key: str = KEY):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.key, self.lock, self.answers = key, threading.Lock(), answers
        self.respond: Callable[[str | None, dict], str] | None = None
        self.fence: set[str] = set()
        self.received: list[dict] = []   # path, body, authorized, sample, status
        self.script: dict[str, list[int]] = {}
        self.barrier: threading.Barrier | None = None
        self.on_request: Callable[[int], None] | None = None
        self.in_flight = self.max_in_flight = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def bodies(self, sample: str | None = None) -> list[str]:
        return [json.dumps(r["body"], sort_keys=True) for r in self.received if sample in (None, r["sample"])]

    def answered(self) -> list[str]:
        return [r["sample"] for r in self.received if r["status"] == 200]

    def content(self, sample: str | None, body: dict) -> str:
        text = self.respond(sample, body) if self.respond is not None else self.answers[sample]
        return f"Here it is:\n```json\n{text}\n```" if sample in self.fence else text


@contextlib.contextmanager
def serving(answers: dict[str, str], key: str = KEY) -> Iterator[StandIn]:
    """A started stand-in, shut down on exit."""
    srv = StandIn(answers, key)
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, code: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)),
                            **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - http.server's name
        srv: StandIn = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = json.dumps(body.get("messages") or body.get("prompt"))
        sample = (re.findall(r'\\"sample_id\\":\\"([^"\\]+)', text) or [None])[0]
        given = self.headers.get("Authorization", "")
        record = {"path": self.path, "body": body, "authorized": given == f"Bearer {srv.key}", "sample": sample}
        with srv.lock:
            srv.received.append(record)
            n = len(srv.received)
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
            scripted = srv.script.get(sample, [])
            status = scripted.pop(0) if scripted and record["authorized"] else 200
        if srv.on_request is not None:
            srv.on_request(n)
        if srv.barrier is not None and n <= srv.barrier.parties:
            srv.barrier.wait(timeout=10)
        with srv.lock:
            srv.in_flight -= 1
        record["status"] = 401 if not record["authorized"] else status
        if not record["authorized"]:
            self._send(401, {"error": {"message": f"Incorrect API key provided: {given.removeprefix('Bearer ')}"}})
        elif status != 200:
            self._send(status, {"error": {"message": f"scripted {status}"}},
                       {"Retry-After": "0"} if status in (429, 500) else None)
        else:
            self._send(200, _completion(body, self.path, srv.content(sample, body)))


def _completion(body: dict, path: str, content: str) -> dict:
    usage = {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": len(content) // 4}
    choice = ({"index": 0, "message": {"role": "assistant", "content": content}} if path == "/v1/chat/completions"
              else {"index": 0, "text": content})
    return {"id": "x", "object": "completion", "model": body.get("model"),
            "choices": [{**choice, "finish_reason": "stop"}], "usage": usage}

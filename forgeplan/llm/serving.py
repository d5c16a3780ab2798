"""Inference through a serving engine: OpenAI-compatible requests with the task grammar attached.

One request per task, in the OpenAI batch-file layout that `vllm run-batch` reads ({"custom_id",
"method", "url", "body"}); the body is a chat completion (the prompt's messages, greedy, a token
limit) plus the task's grammar in the field the chosen engine reads:

- vllm: `structured_outputs.grammar`, the portable Lark variant (read by both of vLLM's backends:
  guidance takes it as Lark, xgrammar converts it to EBNF);
- sglang: `ebnf`, GBNF;
- llama.cpp: `grammar`, GBNF.

Only the grammar travels: `--constrained legal` needs the engine stepping beside the decoder, which
a server does not run, so `legal` stays with in-process inference. `post_all` sends requests to a
running server with bounded concurrency, retries with backoff and a progress bar (a task that still
fails is reported, the others are kept); `answers_from_batch`
turns `vllm run-batch` output into the predictions JSONL `forgeplan evaluate` reads. Standard library
HTTP only.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ..model.choices import DEFAULT_PROMPT
from ..model.errors import InputError
from .bench import load_sample, split_ids
from .grammar import specialise
from .prompt import build_prompt

ENGINES = ("vllm", "sglang", "llama.cpp")
CHAT_URL = "/v1/chat/completions"


def constraint(engine: str, task) -> dict:
    """The body fields that carry the task grammar for `engine`."""
    from .exports import lark_to_gbnf, portable_lark  # noqa: PLC0415

    lark = specialise(task)
    if engine == "vllm":
        return {"structured_outputs": {"grammar": portable_lark(lark)}}
    if engine == "sglang":
        return {"ebnf": lark_to_gbnf(lark)}
    if engine == "llama.cpp":
        return {"grammar": lark_to_gbnf(lark)}
    raise InputError(f"must be one of {list(ENGINES)}, got {engine!r}", field="--engine")


# sampling fields that make an engine's decoding greedy beyond `temperature: 0`: llama.cpp's server applies a
# repeat penalty (1.1) and top-p / min-p cuts by default, which change the argmax; vLLM's and SGLang's defaults
# change nothing at temperature 0
GREEDY = {"llama.cpp": {"top_k": 1, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0}}


def request(task, *, model: str, engine: str, prompt: str = DEFAULT_PROMPT, max_tokens: int = 4096,
            constrained: bool = True) -> dict:
    """One batch-file line for a task (custom_id = sample id), decoded greedily."""
    body = {"model": model, "messages": build_prompt(task, prompt), "max_tokens": max_tokens, "temperature": 0,
            **GREEDY.get(engine, {})}
    if constrained:
        body.update(constraint(engine, task))
    return {"custom_id": task.sample_id, "method": "POST", "url": CHAT_URL, "body": body}


def requests_for(bench: Path, split: str, *, limit: int = 0, **kw) -> list[dict]:
    return [request(load_sample(bench, sid)[0], **kw) for sid in split_ids(bench, split)[: limit or None]]


def write_jsonl(rows, out: Path) -> None:
    from ..io.output import write_file  # noqa: PLC0415

    with write_file(Path(out)) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- client

MAX_RESPONSE_BYTES = 4_000_000   # one chat completion (a model output is at most 1,000,000 bytes)
MAX_RETRIES = 10
MAX_TIMEOUT = 86_400.0           # seconds per request, at most
MAX_BACKOFF = 30.0               # seconds between two attempts, at most
MAX_CONCURRENCY = 64


class EndpointError(Exception):
    """A request that failed after all its retries (the reason is one line)."""


class _Retryable(EndpointError):
    """A failure worth another attempt: connection trouble, the deadline, a 5xx, 408/409/425/429."""


def check_client(endpoint: str, *, timeout: float, retries: int, concurrency: int) -> None:
    """Refuse settings the client cannot honour: only http(s) URLs with a host; a finite positive
    timeout; retries and concurrency within bounds (InputError naming the option)."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    try:
        parts = urlsplit(endpoint)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        parts, port_ok = None, False
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise InputError("expected an http:// or https:// URL with a host (e.g. http://localhost:8000/v1)",
                         field="--endpoint")
    if not 0 < timeout <= MAX_TIMEOUT:   # also refuses nan
        raise InputError(f"expected seconds in (0, {MAX_TIMEOUT:g}], got {timeout}", field="--timeout")
    if not 0 <= retries <= MAX_RETRIES:
        raise InputError(f"expected 0 to {MAX_RETRIES}, got {retries}", field="--retries")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise InputError(f"expected 1 to {MAX_CONCURRENCY}, got {concurrency}", field="--concurrency")


def _cut(conn) -> None:
    """The deadline: shut the socket down, which wakes a read blocked on it."""
    import socket  # noqa: PLC0415

    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _exchange(url: str, data: bytes, headers: dict, timeout: float) -> bytes:
    """POST `data` and return the body, all within `timeout` seconds (a watchdog shuts the socket at
    the deadline, so a server that trickles bytes is cut off too) and at most MAX_RESPONSE_BYTES."""
    import http.client  # noqa: PLC0415
    import threading  # noqa: PLC0415
    from urllib.parse import urlsplit  # noqa: PLC0415

    parts = urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname or "", parts.port, timeout=timeout)  # the endpoint check refused a URL without a host
    deadline = time.monotonic() + timeout
    watchdog = threading.Timer(timeout, _cut, (conn,))
    watchdog.daemon = True
    watchdog.start()
    try:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", target, body=data, headers=headers)
        resp = conn.getresponse()
        body = bytearray()
        while len(body) <= MAX_RESPONSE_BYTES:
            chunk = resp.read1(min(65_536, MAX_RESPONSE_BYTES + 1 - len(body)))
            if not chunk:
                break
            body += chunk
            if time.monotonic() > deadline:
                raise _Retryable(f"no complete response within the {timeout:g} s deadline")
        if len(body) > MAX_RESPONSE_BYTES:
            raise EndpointError(f"the response is over {MAX_RESPONSE_BYTES} bytes")
        if time.monotonic() >= deadline:   # the watchdog ended the read
            raise _Retryable(f"no complete response within the {timeout:g} s deadline")
    except (OSError, http.client.HTTPException) as exc:
        late = time.monotonic() >= deadline
        raise _Retryable(f"no complete response within the {timeout:g} s deadline" if late
                         else f"{type(exc).__name__}: {exc}") from None
    finally:
        watchdog.cancel()
        conn.close()
    if resp.status != 200:
        detail = bytes(body[:200]).decode("utf-8", "replace")
        error = _Retryable if resp.status in (408, 409, 425, 429) or resp.status >= 500 else EndpointError
        raise error(f"HTTP {resp.status} {resp.reason}: {detail}")
    return bytes(body)


def _post(url: str, body: dict, timeout: float, api_key: str | None) -> dict:
    from ..io.guarded import decode, loads  # noqa: PLC0415

    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    raw = _exchange(url, json.dumps(body).encode("utf-8"), headers, timeout)
    try:
        data = loads(decode(raw, url, "response"), url, kind="response")
    except InputError as exc:
        raise EndpointError(f"the response is not JSON under forgeplan's limits: {exc.reason}") from None
    if not isinstance(data, dict):
        raise EndpointError("the response is not a JSON object")
    return data


def post_one(url: str, body: dict, *, retries: int, timeout: float, backoff: float, api_key: str | None) -> dict:
    """The response of one chat completion, retrying server errors, rate limits, connection failures and
    missed deadlines (each attempt within `timeout` seconds; at most MAX_RETRIES retries)."""
    retries = min(max(retries, 0), MAX_RETRIES)
    for attempt in range(retries + 1):
        try:
            return _post(url, body, timeout, api_key)
        except _Retryable as exc:
            if attempt == retries:
                raise EndpointError(str(exc)) from None
            time.sleep(min(MAX_BACKOFF, backoff * 2 ** attempt))
    raise AssertionError("unreachable")


def answer_row(sample_id: str, response: dict, constrained: str | None = None) -> dict:
    """A predictions line from a chat completion response (`constrained` when known); EndpointError
    names what in the response has the wrong shape."""
    try:
        choice = response["choices"][0]
        text = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"{sample_id}: the response has no choices[0].message.content") from None
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise EndpointError(f"{sample_id}: choices[0].message.content is a {type(text).__name__}, expected a string")
    usage = response.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise EndpointError(f"{sample_id}: usage is a {type(usage).__name__}, expected an object")
    tokens = (usage or {}).get("completion_tokens")
    stopped = choice.get("finish_reason") if isinstance(choice, dict) else None
    row = {"sample_id": sample_id, "raw_output": text,
           "new_tokens": tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
           "stopped": stopped if isinstance(stopped, str) else None}
    return row if constrained is None else {**row, "constrained": constrained}


def _mode(body: dict) -> str:
    return "grammar" if any(k in body for k in ("structured_outputs", "ebnf", "grammar")) else "none"


def post_all(base_url: str, requests: list[dict], *, concurrency: int = 8, retries: int = 3, timeout: float = 600.0,
             backoff: float = 1.0, api_key: str | None = None, progress: bool = True) -> tuple[list[dict], dict]:
    """(predictions rows of the requests that succeeded, in request order; sample id -> reason for those
    that failed after their retries), with at most `concurrency` requests in flight."""
    from tqdm import tqdm  # noqa: PLC0415

    check_client(base_url, timeout=timeout, retries=retries, concurrency=concurrency)
    url = base_url.rstrip("/")
    url = url[: -len("/v1")] if url.endswith("/v1") else url
    rows: list[dict | None] = [None] * len(requests)
    failed: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=concurrency) as pool, \
            tqdm(total=len(requests), desc="infer (endpoint)", unit="task", disable=not progress) as bar:
        futures = {pool.submit(post_one, url + r["url"], r["body"], retries=retries, timeout=timeout,
                               backoff=backoff, api_key=api_key): k for k, r in enumerate(requests)}
        for fut in as_completed(futures):
            k = futures[fut]
            sid = requests[k]["custom_id"]
            try:
                rows[k] = answer_row(sid, fut.result(), _mode(requests[k]["body"]))
            except EndpointError as exc:
                failed[sid] = str(exc)
            bar.update(1)
    return [r for r in rows if r is not None], failed


# --------------------------------------------------------------------------- batch output

def answers_from_batch(path: Path, constrained: str | None = None) -> list[dict]:
    """Predictions rows from an OpenAI / `vllm run-batch` output file (one response object per line),
    read through the guarded reader (a regular file under the predictions size limit)."""
    from ..io.guarded import read_jsonl  # noqa: PLC0415

    rows = []
    for n, item in read_jsonl(path, "batch output"):
        try:
            sid, body = item["custom_id"], item["response"]["body"]
        except (KeyError, TypeError):
            raise InputError('expected {"custom_id", "response": {"body": ...}}', file=str(path),
                             field=f"line {n}") from None
        if not isinstance(sid, str) or not isinstance(body, dict):
            raise InputError("custom_id must be a string and response.body an object", file=str(path),
                             field=f"line {n}")
        if item.get("error"):
            raise InputError(f"the request failed: {str(item['error'])[:200]}", file=str(path), field=f"line {n}")
        try:
            rows.append(answer_row(sid, body, constrained))
        except EndpointError as exc:
            raise InputError(str(exc), file=str(path), field=f"line {n}") from None
    return rows


# --------------------------------------------------------------------------- did the grammar hold?

def grammar_misses(bench: Path, rows: list[dict]) -> tuple[int, list[str]]:
    """(how many rows were sent the task grammar, the sample ids of those whose output does not parse
    under it): a server that ignores the grammar field answers in free text."""
    from lark.exceptions import LarkError  # noqa: PLC0415

    from .grammar import lark_parser  # noqa: PLC0415

    parsers: dict[str, object] = {}
    sent, missed = 0, []
    for row in rows:
        if row.get("constrained") != "grammar":
            continue
        sent += 1
        text = specialise(load_sample(bench, row["sample_id"])[0])
        parser = parsers.get(text) or parsers.setdefault(text, lark_parser(text))
        try:
            parser.parse(row["raw_output"])  # type: ignore[attr-defined]  # lark_parser returns a Lark, typed loosely
        except (LarkError, RecursionError):
            missed.append(row["sample_id"])
    return sent, missed

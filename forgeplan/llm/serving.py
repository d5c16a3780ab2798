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
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

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


def request(task, *, model: str, engine: str, prompt: str = "json", max_tokens: int = 4096,
            constrained: bool = True) -> dict:
    """One batch-file line for a task (custom_id = sample id)."""
    body = {"model": model, "messages": build_prompt(task, prompt), "max_tokens": max_tokens, "temperature": 0}
    if constrained:
        body.update(constraint(engine, task))
    return {"custom_id": task.sample_id, "method": "POST", "url": CHAT_URL, "body": body}


def requests_for(bench: Path, split: str, *, limit: int = 0, **kw) -> list[dict]:
    return [request(load_sample(bench, sid)[0], **kw) for sid in split_ids(bench, split)[: limit or None]]


def write_jsonl(rows, out: Path) -> None:
    from ..io.guarded import new_file  # noqa: PLC0415

    with new_file(Path(out), "--out") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- client

class EndpointError(Exception):
    """A request that failed after all its retries (the reason is one line)."""


def _post(url: str, body: dict, timeout: float, api_key: str | None) -> dict:
    data = json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the user's own endpoint
        return json.loads(resp.read().decode("utf-8"))


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code in (408, 409, 425, 429) or exc.code >= 500
    return isinstance(exc, (urllib.error.URLError, TimeoutError, ConnectionError))


def post_one(url: str, body: dict, *, retries: int, timeout: float, backoff: float, api_key: str | None) -> dict:
    """The response of one chat completion, retrying server errors, rate limits and connection failures."""
    for attempt in range(retries + 1):
        try:
            return _post(url, body, timeout, api_key)
        except (urllib.error.URLError, TimeoutError, ConnectionError, json.JSONDecodeError) as exc:
            if attempt == retries or not _retryable(exc):
                detail = exc.read().decode("utf-8", "replace")[:200] if isinstance(exc, urllib.error.HTTPError) else ""
                raise EndpointError(f"{type(exc).__name__}: {exc} {detail}".strip()) from None
            time.sleep(backoff * 2 ** attempt)
    raise AssertionError("unreachable")


def answer_row(sample_id: str, response: dict, constrained: str | None = None) -> dict:
    """A predictions line from a chat completion response (`constrained` when known)."""
    try:
        choice = response["choices"][0]
        text = choice["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"{sample_id}: the response has no choices[0].message.content") from None
    usage = response.get("usage") or {}
    row = {"sample_id": sample_id, "raw_output": text, "new_tokens": usage.get("completion_tokens"),
           "stopped": choice.get("finish_reason")}
    return row if constrained is None else {**row, "constrained": constrained}


def _mode(body: dict) -> str:
    return "grammar" if any(k in body for k in ("structured_outputs", "ebnf", "grammar")) else "none"


def post_all(base_url: str, requests: list[dict], *, concurrency: int = 8, retries: int = 3, timeout: float = 600.0,
             backoff: float = 1.0, api_key: str | None = None, progress: bool = True) -> tuple[list[dict], dict]:
    """(predictions rows of the requests that succeeded, in request order; sample id -> reason for those
    that failed after their retries), with at most `concurrency` requests in flight."""
    from tqdm import tqdm  # noqa: PLC0415

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

def answers_from_batch(path: Path) -> list[dict]:
    """Predictions rows from an OpenAI / `vllm run-batch` output file (one response object per line)."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                sid, body = item["custom_id"], item["response"]["body"]
            except (ValueError, KeyError, TypeError):
                raise InputError('expected {"custom_id", "response": {"body": ...}}', file=str(path),
                                 field=f"line {n}") from None
            if item.get("error"):
                raise InputError(f"the request failed: {str(item['error'])[:200]}", file=str(path), field=f"line {n}")
            try:
                rows.append(answer_row(sid, body))
            except EndpointError as exc:
                raise InputError(str(exc), file=str(path), field=f"line {n}") from None
    return rows

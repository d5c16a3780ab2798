"""A client for OpenAI-compatible servers, hosted or local: requests in flight, retries, a key, a cache.

It sends JSON bodies to `/v1/chat/completions` or `/v1/completions` and returns each answer's text,
finish reason and token usage; it knows nothing of forgeplan's tasks (the caller builds the bodies).

- At most `concurrency` requests are in flight (threads over the standard library's HTTP client).
- Each attempt has one deadline, from connecting to the last byte (a watchdog shuts the socket, so a
  server that trickles bytes is cut off too); a response is at most MAX_RESPONSE_BYTES and must have
  the shape of its API.
- What may succeed later is retried: 408, 409, 425, 429, 5xx, missed deadlines and dropped
  connections, after an exponential backoff with jitter, or after the server's Retry-After. Each retry
  is one line through `say`. Other 4xx fail that request at once; a 401 or 403 stops the whole run
  (`KeyRefused`).
- The API key is read from the environment variable `key_env` and sent as a bearer token only: it is
  no part of the cache key, and it is cut out of every response and message.
- Every answer is kept in an AnswerCache as it arrives, and requests equal to a kept one are not sent.
  On an interrupt (KeyboardInterrupt, which the command line also raises on SIGTERM) no new request
  starts and the requests in flight are waited for, so their answers are kept too; a second interrupt
  drops them.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import random
import re
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from ..model.errors import InputError
from .answer_cache import AnswerCache, request_key

API_PATHS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
MAX_RESPONSE_BYTES = 4_000_000   # one completion (a model output is at most 1,000,000 bytes)
MAX_RETRIES = 10
MAX_TIMEOUT = 86_400.0           # seconds per attempt, at most
MAX_BACKOFF = 30.0               # seconds between two attempts, at most, unless the server asks for more
MAX_RETRY_AFTER = 300.0          # seconds of a server's Retry-After that are honoured, at most
MAX_CONCURRENCY = 64
RETRYABLE = (408, 409, 425, 429)  # and every 5xx
REFUSED = (401, 403)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEY = re.compile(r"^[\x21-\x7e]+$")   # printable ASCII without spaces: what a header value can carry as is


class EndpointError(Exception):
    """A request that failed (the reason is one line)."""


class _Retryable(EndpointError):
    """A failure worth another attempt; `retry_after`: the seconds the server asked to wait, if it did."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class KeyRefused(InputError):
    """The server answered 401 or 403: no request can succeed with this key."""


@dataclass(frozen=True)
class Request:
    """One request: `id` names it for the caller (a sample id; never sent), `body` is sent as is (with the
    client's `model` when it has none), to the API `api` ("chat" or "completions")."""

    id: str
    body: dict
    api: str = "chat"


@dataclass(frozen=True)
class Answer:
    """What came back for one request: the text, or `error` (one line) when none did."""

    id: str
    text: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    response: dict | None = None
    error: str | None = None
    cached: bool = False


def check_client(endpoint: str, *, timeout: float, retries: int, concurrency: int) -> None:
    """Refuse settings the client cannot honour: only http(s) URLs with a host and no credentials; a finite
    positive timeout; retries and concurrency within bounds (InputError naming the option)."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    try:
        parts = urlsplit(endpoint)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        parts, port_ok = None, False
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise InputError("expected an http:// or https:// URL with a host (e.g. http://localhost:8000/v1)",
                         field="--endpoint")
    if parts.username is not None or parts.password is not None:
        raise InputError("a URL with credentials would put them in outputs and logs; put the key in an "
                         "environment variable (--api-key-env)", field="--endpoint")
    if not 0 < timeout <= MAX_TIMEOUT:   # also refuses nan
        raise InputError(f"expected seconds in (0, {MAX_TIMEOUT:g}], got {timeout}", field="--timeout")
    if not 0 <= retries <= MAX_RETRIES:
        raise InputError(f"expected 0 to {MAX_RETRIES}, got {retries}", field="--retries")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise InputError(f"expected 1 to {MAX_CONCURRENCY}, got {concurrency}", field="--concurrency")


def base_url(endpoint: str) -> str:
    """The server's root: `http://host:8000/v1/` -> `http://host:8000` (the API paths add `/v1`)."""
    url = endpoint.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def api_key(env: str) -> str | None:
    """The key in the environment variable `env` (None when unset or empty); never echoed."""
    if not _ENV_NAME.match(env):
        raise InputError(f"expected the name of an environment variable, got {env!r}", field="--api-key-env")
    key = os.environ.get(env) or None
    if key is not None and not _KEY.match(key):
        raise InputError(f"the key in ${env} holds spaces or characters outside printable ASCII",
                         field="--api-key-env")
    return key


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def read_answer(rid: str, response: dict, api: str = "chat") -> Answer:
    """The answer in a response of `api`'s shape; EndpointError names what has the wrong shape."""
    field = "message.content" if api == "chat" else "text"
    try:
        choice = response["choices"][0]
        text = choice["message"]["content"] if api == "chat" else choice["text"]
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"{rid}: the response has no choices[0].{field}") from None
    if text is None and api == "chat":   # a chat message may hold no content
        text = ""
    if not isinstance(text, str):
        raise EndpointError(f"{rid}: choices[0].{field} is a {type(text).__name__}, expected a string")
    usage = response.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise EndpointError(f"{rid}: usage is a {type(usage).__name__}, expected an object")
    stopped = choice.get("finish_reason") if isinstance(choice, dict) else None
    return Answer(rid, text, stopped if isinstance(stopped, str) else None, _count(usage, "prompt_tokens"),
                  _count(usage, "completion_tokens"), response)


def _count(usage: dict | None, name: str) -> int | None:
    value = (usage or {}).get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _cut(conn) -> None:
    """The deadline: shut the socket down, which wakes a read blocked on it."""
    import socket  # noqa: PLC0415

    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class EndpointClient:
    """Sends `Request`s to one server and returns their `Answer`s in order (`run`), with the key in the
    environment variable `key_env` (None: never a key). `say` receives the
    one-line notes (retries, an interrupt); `progress` shows a bar with the ETA on stderr. After a run,
    `sent`, `retried` and `from_cache` count the requests answered by the server, the retries, and the
    answers read from the cache."""

    def __init__(self, endpoint: str, *, model: str | None = None, key_env: str | None = DEFAULT_KEY_ENV,
                 concurrency: int = 8, retries: int = 3, timeout: float = 600.0, backoff: float = 1.0,
                 cache_dir: Path | None = None, progress: bool = True, say: Callable[[str], None] | None = None):
        check_client(endpoint, timeout=timeout, retries=retries, concurrency=concurrency)
        self.base, self.model, self.key_env = base_url(endpoint), model, key_env
        self.key = api_key(key_env) if key_env is not None else None
        self.concurrency, self.retries, self.timeout, self.backoff = concurrency, retries, timeout, backoff
        self.cache = AnswerCache(cache_dir) if cache_dir is not None else None
        self.progress, self.say = progress, say or (lambda line: None)
        self.sent = self.retried = self.from_cache = 0
        self._stop, self._lock = threading.Event(), threading.Lock()
        self._live: set = set()   # the connections of the requests in flight

    def body(self, request: Request) -> dict:
        """The JSON body sent for `request`."""
        return request.body if self.model is None or "model" in request.body else {"model": self.model,
                                                                                     **request.body}

    def key_of(self, request: Request) -> str:
        """The request's cache key (endpoint, API path, body; never the API key)."""
        return request_key(self.base, API_PATHS[request.api], self.body(request))

    def run(self, requests: Sequence[Request]) -> list[Answer]:
        """The answer of every request, in order: from the cache, or sent (each distinct body once)."""
        from tqdm import tqdm  # noqa: PLC0415

        for r in requests:
            if r.api not in API_PATHS:
                raise InputError(f"must be one of {list(API_PATHS)}, got {r.api!r}", field="--api")
        keys = [self.key_of(r) for r in requests]
        answers = self._kept(requests, keys)
        todo = {k: r for k, r in zip(keys, requests) if k not in answers}
        weight = Counter(keys)
        self.from_cache = sum(weight[k] for k in answers)
        with tqdm(total=len(requests), initial=self.from_cache, desc="requests", unit="req",
                  disable=not self.progress) as bar:
            self._send_all(todo, answers, lambda k: bar.update(weight[k]))
        return [replace(answers[k], id=r.id) for k, r in zip(keys, requests)]

    def _kept(self, requests: Sequence[Request], keys: list[str]) -> dict[str, Answer]:
        kept: dict[str, Answer] = {}
        if self.cache is None:
            return kept
        for key, r in zip(keys, requests):
            response = None if key in kept else self.cache.get(key)
            if response is not None:
                try:
                    kept[key] = replace(read_answer(r.id, response, r.api), cached=True)
                except EndpointError:
                    pass   # a kept response of another shape: asked again
        return kept

    def _send_all(self, todo: dict[str, Request], answers: dict[str, Answer], done: Callable[[str], None]) -> None:
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="endpoint")
        futures = {pool.submit(self._fetch, r, k): k for k, r in todo.items()}
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    answers[futures[fut]] = fut.result()   # KeyRefused ends the run here
                    done(futures[fut])
        except BaseException as exc:
            self._stop.set()
            for fut in pending:
                fut.cancel()
            running = sum(fut.running() for fut in pending)
            if isinstance(exc, KeyboardInterrupt) and running:
                self.say(f"interrupted: waiting for the {running} requests in flight, whose answers are kept "
                         "(interrupt again to drop them)")
            try:
                pool.shutdown(wait=True, cancel_futures=True)
            except BaseException:
                self._drop_live()
                raise
            raise
        pool.shutdown()

    def _drop_live(self) -> None:
        with self._lock:
            for conn in list(self._live):
                _cut(conn)

    def _fetch(self, request: Request, key: str) -> Answer:
        """One request with its retries; the answer is kept in the cache before it is returned."""
        data = json.dumps(self.body(request), ensure_ascii=False, allow_nan=False).encode("utf-8")
        url = self.base + API_PATHS[request.api]
        for attempt in range(self.retries + 1):
            if self._stop.is_set():   # the run is ending: nothing more is sent
                return Answer(request.id, error="not sent: the run stopped")
            try:
                response = self._post(url, data)
                answer = read_answer(request.id, response, request.api)
            except KeyRefused:
                self._stop.set()
                raise
            except _Retryable as exc:
                if attempt == self.retries:
                    tail = f" (after {attempt} {'retry' if attempt == 1 else 'retries'})" if attempt else ""
                    return Answer(request.id, error=f"{exc}{tail}")
                pause = self._pause(attempt, exc.retry_after)
                with self._lock:
                    self.retried += 1
                self.say(f"retry {attempt + 1}/{self.retries} of {request.id}: {exc}; waiting {pause:.1f} s")
                self._stop.wait(pause)
                continue
            except EndpointError as exc:
                return Answer(request.id, error=str(exc))
            if self.cache is not None:
                self.cache.put(key, {"endpoint": self.base, "path": API_PATHS[request.api], "response": response})
            with self._lock:
                self.sent += 1
            return answer
        raise AssertionError("unreachable")

    def _pause(self, attempt: int, asked: float | None) -> float:
        """Seconds before the next attempt: the server's Retry-After (at most MAX_RETRY_AFTER), else an
        exponential backoff with jitter (half to all of backoff * 2^attempt, at most MAX_BACKOFF)."""
        if asked is not None:
            return min(asked, MAX_RETRY_AFTER)
        return min(MAX_BACKOFF, self.backoff * 2 ** attempt) * random.uniform(0.5, 1.0)  # noqa: S311 - jitter

    def _post(self, url: str, data: bytes) -> dict:
        from ..io.guarded import decode, loads  # noqa: PLC0415

        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        status, reason, retry, body = self._exchange(url, data, headers)
        if status != 200:
            self._refuse(status, reason, body, retry)
        try:
            response = loads(decode(body, url, "response"), url, kind="response")
        except InputError as exc:
            raise EndpointError(f"the response is not JSON under forgeplan's limits: {exc.reason}") from None
        if not isinstance(response, dict):
            raise EndpointError("the response is not a JSON object")
        return response

    def _refuse(self, status: int, reason: str, body: bytes, retry: float | None) -> None:
        detail = f"HTTP {status} {reason}: {body[:200].decode('utf-8', 'replace')}"
        if status in REFUSED:
            raise KeyRefused(f"the server refused the key in ${self.key_env}: {detail}" if self.key else
                             f"no key: set ${self.key_env} (the server answered {detail})")
        if status in RETRYABLE or status >= 500:
            raise _Retryable(detail, retry)
        raise EndpointError(f"{detail} (not retried)")

    def _exchange(self, url: str, data: bytes, headers: dict) -> tuple[int, str, float | None, bytes]:
        """POST `data`: (status, reason, Retry-After seconds, body with the key cut out), all within the
        deadline and at most MAX_RESPONSE_BYTES."""
        import http.client  # noqa: PLC0415
        from urllib.parse import urlsplit  # noqa: PLC0415

        parts = urlsplit(url)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "", parts.port, timeout=self.timeout)  # check_client refused a URL without a host
        late = f"no complete response within the {self.timeout:g} s deadline"
        deadline = time.monotonic() + self.timeout
        watchdog = threading.Timer(self.timeout, _cut, (conn,))
        watchdog.daemon = True
        with self._lock:
            self._live.add(conn)
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
                    raise _Retryable(late)
            if len(body) > MAX_RESPONSE_BYTES:
                raise EndpointError(f"the response is over {MAX_RESPONSE_BYTES} bytes")
            if time.monotonic() >= deadline:   # the watchdog ended the read
                raise _Retryable(late)
        except (OSError, http.client.HTTPException) as exc:
            raise _Retryable(late if time.monotonic() >= deadline else self._scrub(f"{type(exc).__name__}: {exc}")) \
                from None
        finally:
            watchdog.cancel()
            with self._lock:
                self._live.discard(conn)
            conn.close()
        cut = bytes(body) if not self.key else bytes(body).replace(self.key.encode(), b"[key]")
        return resp.status, self._scrub(resp.reason), retry_after(resp.getheader("Retry-After")), cut

    def _scrub(self, text: str) -> str:
        return text.replace(self.key, "[key]") if self.key else text

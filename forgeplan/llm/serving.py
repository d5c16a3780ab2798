"""Inference through a serving engine: OpenAI-compatible requests with the task grammar attached.

One request per sample, in the OpenAI batch-file layout that `vllm run-batch` reads ({"custom_id",
"method", "url", "body"}); the body is a chat completion (the prompt's messages, greedy, a token
limit) plus the sample's grammar in the field the chosen engine reads (both from `families.prompt_for`:
an Assembly Decision sample gets the decision prompt and grammar):

- vllm: `structured_outputs.grammar`, the portable Lark variant (read by both of vLLM's backends:
  guidance takes it as Lark, xgrammar converts it to EBNF);
- sglang: `ebnf`, GBNF;
- llama.cpp: `grammar`, GBNF;
- openai: `response_format`, the sample's JSON Schema (`Grammar.json_schema`), which OpenAI's API and
  most servers take; weaker than a grammar (exports.SCHEMA_CANNOT says what it cannot say).

Only the grammar travels: `--constrained legal` needs the engine stepping beside the decoder, which
a server does not run, so `legal` stays with in-process inference. `endpoint_request` turns a line
into a request of the endpoint client (llm/endpoint.py), chat or completions, and `prediction_row` an
answer into a predictions line; `answers_from_batch` turns `vllm run-batch` output into the predictions
JSONL `forgeplan evaluate` reads; `grammar_misses` says which answers do not parse under the grammar
they were sent.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..model.choices import DEFAULT_PROMPT
from ..model.choices import SERVING_ENGINES as ENGINES
from ..model.errors import InputError
from .bench import split_ids
from .endpoint import Answer, EndpointError, Request, read_answer
from .families import Grammar, grammar_for, prompt_for, read_sample
from .prompt import render_plain

CHAT_URL = "/v1/chat/completions"


def constraint(engine: str, grammar: Grammar) -> dict:
    """The body fields that carry a sample's task grammar for `engine`."""
    if engine == "vllm":
        return {"structured_outputs": {"grammar": grammar.portable_lark()}}
    if engine == "sglang":
        return {"ebnf": grammar.gbnf()}
    if engine == "llama.cpp":
        return {"grammar": grammar.gbnf()}
    if engine == "openai":
        return {"response_format": response_format(grammar)}
    raise InputError(f"must be one of {list(ENGINES)}, got {engine!r}", field="--engine")


def response_format(grammar: Grammar) -> dict:
    """OpenAI's structured output: the sample's JSON Schema (named by its family), not strict. Strict mode
    needs every property required (absent ones as null), while the contracts omit absent fields and never
    write null."""
    return {"type": "json_schema", "json_schema": {"name": f"forgeplan_{grammar.family}",
                                                   "schema": grammar.json_schema(), "strict": False}}


# sampling fields that make an engine's decoding greedy beyond `temperature: 0`: llama.cpp's server applies a
# repeat penalty (1.1) and top-p / min-p cuts by default, which change the argmax; vLLM's and SGLang's defaults
# change nothing at temperature 0
GREEDY = {"llama.cpp": {"top_k": 1, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0}}
# the name of the token limit: OpenAI's chat API has replaced `max_tokens` (which its reasoning models refuse)
TOKEN_LIMIT = {"openai": "max_completion_tokens"}


def request(sample, *, model: str, engine: str, prompt: str = DEFAULT_PROMPT, max_tokens: int = 4096,
            constrained: bool = True) -> dict:
    """One batch-file line for a sample or a task (custom_id = sample id), decoded greedily."""
    messages, grammar = prompt_for(sample, prompt)
    body = {"model": model, "messages": messages, TOKEN_LIMIT.get(engine, "max_tokens"): max_tokens, "temperature": 0,
            **GREEDY.get(engine, {})}
    if constrained:
        body.update(constraint(engine, grammar))
    return {"custom_id": grammar.task.sample_id, "method": "POST", "url": CHAT_URL, "body": body}


def requests_for(bench: Path, split: str, *, limit: int = 0, **kw) -> list[dict]:
    return [request(read_sample(bench, sid), **kw) for sid in split_ids(bench, split)[: limit or None]]


def write_jsonl(rows, out: Path) -> None:
    from ..io.output import write_file  # noqa: PLC0415

    with write_file(Path(out)) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- answers

def endpoint_request(line: dict, api: str = "chat") -> Request:
    """The endpoint client's request for one batch-file line: its chat body, or for the completions API the
    same body with the messages rendered as one prompt text (`render_plain`: a hosted server has no
    tokenizer of ours to apply a chat template with)."""
    body = dict(line["body"])
    if api == "completions":
        body["prompt"] = render_plain(body.pop("messages"))
        if "max_completion_tokens" in body:
            body["max_tokens"] = body.pop("max_completion_tokens")
    return Request(line["custom_id"], body, api)


def mode(body: dict) -> str:
    """What a request carried: "grammar" (a task grammar), "json-schema" (response_format) or "none"."""
    if any(k in body for k in ("structured_outputs", "ebnf", "grammar")):
        return "grammar"
    return "json-schema" if "response_format" in body else "none"


def prediction_row(answer: Answer, constrained: str | None = None) -> dict:
    """A predictions line from an answer (`constrained` when known): the raw text and the tokens used."""
    row = {"sample_id": answer.id, "raw_output": answer.text, "new_tokens": answer.completion_tokens,
           "prompt_tokens": answer.prompt_tokens, "stopped": answer.finish_reason}
    return row if constrained is None else {**row, "constrained": constrained}


def answer_row(sample_id: str, response: dict, constrained: str | None = None) -> dict:
    """A predictions line from a chat completion response; EndpointError names what has the wrong shape."""
    return prediction_row(read_answer(sample_id, response, "chat"), constrained)


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
        text = grammar_for(read_sample(bench, row["sample_id"])).lark
        parser = parsers.get(text) or parsers.setdefault(text, lark_parser(text))
        try:
            parser.parse(row["raw_output"])  # type: ignore[attr-defined]  # lark_parser returns a Lark, typed loosely
        except (LarkError, RecursionError):
            missed.append(row["sample_id"])
    return sent, missed

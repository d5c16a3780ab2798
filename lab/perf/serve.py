"""A real serving engine end to end: a model converted to GGUF behind llama.cpp's OpenAI-compatible server.

The model folder (default: a fresh `forgeplan tiny-model`, byte-level BPE, Qwen2 architecture) is
converted with llama.cpp's own `convert_hf_to_gguf.py` (from a llama.cpp source tree, `--llama-cpp`;
the llama-cpp-python sdist carries one in vendor/llama.cpp). The converter recognises a BPE tokenizer's
pre-tokenizer by hashing its encoding of a test text, which no locally trained vocabulary matches; the
tiny tokenizers split text as a pre-tokenizer llama.cpp knows by name does, so the conversion is told that
name instead, with the byte tokens renamed where that pre-tokenizer reads UTF-8 (`tiny.llama_cpp_vocab`:
Qwen2's split for the byte-level kind, "whitespace" for the identifiers kind of the reference model). A
tokenizer whose split llama.cpp does not implement is refused. Before serving, llama.cpp's tokenizer reads
the GGUF and must split every prompt and reference answer of the benchmark into the Hugging Face
tokenizer's ids, token for token, or the command refuses: the server would read other tokens.

Then llama-cpp-python's server (`python -m llama_cpp.server`, installed by hand: `pip install
'llama-cpp-python[server]'` builds llama.cpp from source; its detokenizer fixed as `_SERVE` says) serves
the GGUF on 127.0.0.1; every task goes
to /v1/completions with the same prompt text the in-process decoder renders and its grammar as GBNF in
`grammar`. Reported for both sides: parse rate under the task grammar (must be 100 %), schema-valid and
illegal-plan rates, exact diagnoses and valid repairs (the verifier's verdicts), generated tokens per
second (greedy, one request at a time, one thread), and how many outputs the two sides agree on.
`--model` with `--adapter` serves a trained model (`forgeplan merge-adapter` first, in a temporary folder;
a full fine-tune's output folder holds the whole model); `--bench` and `--split` choose the tasks.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from forgeplan.model.choices import DEFAULT_PROMPT, PROMPTS
from forgeplan.model.errors import InputError
from . import machine

NAME = "serve"
SERVER_START_SECONDS = 300.0
CUT = ("length", "max_new_tokens")   # an answer cut at the token limit (the server's and in-process names)

# run inside the converter's process: its own main(), with our pre-tokenizer name where its hash table has none
_CONVERT = """
import json, runpy, sys
src, pre, renames = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.argv = [src + "/convert_hf_to_gguf.py"] + sys.argv[4:]
sys.path[:0] = [src, src + "/gguf-py"]
import gguf
import conversion.base as base
known = base.TextModel.get_vocab_base_pre
def get_vocab_base_pre(self, tokenizer):
    try:
        return known(self, tokenizer)
    except NotImplementedError:
        return pre
base.TextModel.get_vocab_base_pre = get_vocab_base_pre
vocab_base = base.TextModel.get_vocab_base
def get_vocab_base(self):
    tokens, types, tokpre = vocab_base(self)
    for i, (text, kind) in renames.items():
        tokens[int(i)], types[int(i)] = text, gguf.TokenType[kind.upper()]
    return tokens, types, tokpre
base.TextModel.get_vocab_base = get_vocab_base
runpy.run_path(sys.argv[0], run_name="__main__")
"""


# llama-cpp-python's server, with its detokenizer reading pieces longer than its fixed 32-byte buffer (0.3.36
# drops such a token from the text it returns: abetlen/llama-cpp-python#2362); generation is llama.cpp's own
_SERVE = """
import ctypes, runpy, sys
import llama_cpp
from llama_cpp import _internals
def detokenize(self, tokens, special=False):
    out = b""
    for token in tokens:
        size = 32
        while True:
            buf = (ctypes.c_char * size)()
            n = llama_cpp.llama_token_to_piece(self.vocab, llama_cpp.llama_token(token), buf, size, 0, special)
            if n >= 0:
                out += bytes(buf[:n])
                break
            size = -n
    bos = len(tokens) > 0 and tokens[0] == self.token_bos() and out[0:1] == b" "
    return out[1:] if bos else out
_internals.LlamaModel.detokenize = detokenize
sys.argv = ["llama_cpp.server"] + sys.argv[1:]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def add_arguments(p) -> None:
    p.add_argument("--model", type=Path, help="a Hugging Face model folder (default: a fresh `forgeplan tiny-model`)")
    p.add_argument("--adapter", type=Path,
                   help="the trained adapter (or full fine-tune output) of --model, merged first")
    p.add_argument("--bench", type=Path, help="the benchmark whose tasks are sent (default: built-in tasks)")
    p.add_argument("--split", default="test", help="the split of --bench to send (default: test)")
    p.add_argument("--llama-cpp", type=Path, help="a llama.cpp source tree (convert_hf_to_gguf.py, conversion/, "
                                                  "gguf-py/); not needed with --gguf")
    p.add_argument("--gguf", type=Path, help="an already converted model (skips the conversion)")
    p.add_argument("--tasks", type=int, default=8, help="tasks to send (the first of the split)")
    p.add_argument("--max-tokens", type=int, default=512, help="new tokens per answer")
    p.add_argument("--prompt", choices=PROMPTS, default=DEFAULT_PROMPT, help="prompt style")
    p.add_argument("--gguf-out", type=Path, help="where to keep the converted model (default: a temporary file)")
    p.add_argument("--convert-only", action="store_true", help="stop after the conversion (no server)")


def convert(model: Path, out: Path, llama_cpp: Path | None) -> dict:
    """MODEL -> OUT (GGUF, float32) with llama.cpp's converter; returns what was done."""
    if llama_cpp is None or not (Path(llama_cpp) / "convert_hf_to_gguf.py").is_file():
        raise InputError("a llama.cpp source tree with convert_hf_to_gguf.py is needed to convert (or pass --gguf)",
                         field="--llama-cpp")
    from forgeplan.llm.tiny import llama_cpp_vocab  # noqa: PLC0415

    pre, renames = llama_cpp_vocab(model)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CONVERT, str(Path(llama_cpp).resolve()), pre, json.dumps(renames),
                           str(model), "--outfile", str(out), "--outtype", "f32"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(f"convert_hf_to_gguf.py failed: {last}", file=str(model))
    return {"gguf": str(out), "pre_tokenizer": pre, "tokens_renamed": len(renames), "bytes": out.stat().st_size,
            "seconds": round(time.perf_counter() - t0, 1)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(gguf: Path, log: Path) -> tuple[subprocess.Popen, str]:
    """llama-cpp-python's OpenAI-compatible server on a free loopback port, once it answers /v1/models."""
    import urllib.request  # noqa: PLC0415

    try:
        import llama_cpp.server  # noqa: F401, PLC0415
    except ImportError as exc:
        raise InputError(f"llama-cpp-python's server is not installed (pip install 'llama-cpp-python[server]'): {exc}",
                         field="llama_cpp") from None
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "4096", "--n_threads", "1", "--n_batch", "512"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise InputError(f"the server exited ({proc.returncode}); see {log}", field="llama_cpp")
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=5):  # noqa: S310 - our own loopback server
                return proc, url
        except OSError:
            time.sleep(1)
    proc.kill()
    raise InputError(f"the server did not answer within {SERVER_START_SECONDS:g} s; see {log}", field="llama_cpp")


def completion_body(task, tokenizer, prompt: str, max_tokens: int) -> dict:
    """The /v1/completions request: the in-process decoder's prompt text and the task grammar as GBNF, greedy
    (the server's own defaults add a repeat penalty of 1.1 and top-p / min-p cuts, which greedy in-process
    decoding does not have)."""
    from forgeplan.llm.exports import lark_to_gbnf  # noqa: PLC0415
    from forgeplan.llm.grammar import specialise  # noqa: PLC0415
    from forgeplan.llm.prompt import build_prompt, prompt_text  # noqa: PLC0415

    return {"prompt": prompt_text(tokenizer, build_prompt(task, prompt)), "grammar": lark_to_gbnf(specialise(task)),
            "max_tokens": max_tokens, "temperature": 0, "top_k": 1, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0,
            "presence_penalty": 0.0, "frequency_penalty": 0.0, "seed": 0}


def served(url: str, tasks, tokenizer, prompt: str, max_tokens: int) -> list[dict]:
    from forgeplan.llm.endpoint import EndpointClient, EndpointError, Request  # noqa: PLC0415

    client = EndpointClient(url, key_env=None, concurrency=1, retries=1, progress=False)
    rows = []
    for task in tasks:
        t0 = time.perf_counter()
        [answer] = client.run([Request(task.sample_id, completion_body(task, tokenizer, prompt, max_tokens),
                                       "completions")])
        if answer.error is not None:
            raise EndpointError(answer.error)
        rows.append({"raw_output": answer.text, "new_tokens": answer.completion_tokens or 0,
                     "seconds": time.perf_counter() - t0, "stopped": answer.finish_reason})
    return rows


def in_process(model_dir: Path, tasks, prompt: str, max_tokens: int) -> list[dict]:
    from forgeplan.llm.infer import generate  # noqa: PLC0415
    from forgeplan.llm.train import load_for_inference  # noqa: PLC0415

    import torch  # noqa: PLC0415

    torch.set_num_threads(1)   # as the server's --n_threads 1
    model, tokenizer, _ = load_for_inference(model_dir, None, "cpu", "float32")
    return [generate(model, tokenizer, [t], "grammar", max_new_tokens=max_tokens, prompt=prompt)[0] for t in tasks]


def figures(rows: list[dict], tasks) -> dict:
    """Parse rate under each task's grammar (of all outputs, and of those that ended before the token limit:
    the in-process mask keeps an answer completable within the limit, a GBNF grammar does not), the
    verifier's verdicts, and tokens/s of one side."""
    from lark.exceptions import LarkError  # noqa: PLC0415

    from forgeplan.llm.grammar import lark_parser, specialise  # noqa: PLC0415
    from forgeplan.verify import verify  # noqa: PLC0415

    parsed = []
    for row, task in zip(rows, tasks):
        try:
            lark_parser(specialise(task)).parse(row["raw_output"])
            parsed.append(True)
        except LarkError:
            parsed.append(False)
    finished = [p for p, r in zip(parsed, rows) if r["stopped"] not in CUT]
    verdicts = [verify(task, row["raw_output"]) for row, task in zip(rows, tasks)]
    valid = [v for v in verdicts if v.category != "schema_failure"]
    tokens, seconds = sum(r["new_tokens"] or 0 for r in rows), sum(r["seconds"] for r in rows)
    n = len(rows)
    return {"parse_rate": round(100 * sum(parsed) / n, 2),
            "parse_rate_finished": round(100 * sum(finished) / len(finished), 2) if finished else None,
            "schema_valid": round(100 * len(valid) / n, 2),
            "illegal_plan": round(100 * sum(not v.replay_legal for v in valid) / n, 2),
            "diagnosis_exact": round(100 * sum(v.diagnosis_exact for v in verdicts) / n, 2),
            "valid_repairs": round(100 * sum(v.valid for v in verdicts) / n, 2),
            "new_tokens": tokens, "tokens_per_second": round(tokens / seconds, 1) if seconds else None,
            "stopped_at_max_tokens": sum(r["stopped"] in CUT for r in rows)}


def _model(args, tmp: Path, bench: Path) -> Path:
    """The model folder to convert: --model (merged with --adapter when given) or a fresh tiny model."""
    from forgeplan.llm.tiny import make_tiny  # noqa: PLC0415
    from forgeplan.llm.train import merge_adapter  # noqa: PLC0415

    if args.model is None:
        return Path(make_tiny(tmp / "tiny", bench=bench, prompt=args.prompt)["out"])
    if args.adapter is None:
        return args.model
    return Path(merge_adapter(args.model, args.adapter, tmp / "merged")["out"])


def benchmark_texts(bench: Path, tokenizer, prompt: str) -> list[str]:
    """Every prompt (as sent: chat template applied) and reference answer of BENCH, all splits."""
    from forgeplan.bench.folder import open_bench  # noqa: PLC0415
    from forgeplan.llm.bench import load_sample, split_ids  # noqa: PLC0415
    from forgeplan.llm.prompt import build_prompt, prompt_text, target_text  # noqa: PLC0415

    texts = []
    for split in open_bench(bench).manifest["splits"]:
        for sid in split_ids(bench, split):
            task, ref = load_sample(bench, sid)
            texts.append(prompt_text(tokenizer, build_prompt(task, prompt)))
            if ref is not None:
                texts.append(target_text(ref))
    return texts


def same_tokens(model: Path, gguf: Path, texts: list[str]) -> dict:
    """llama.cpp's tokenizer reads the GGUF as the model's own tokenizer reads its folder, on every text and
    token, or InputError: the server would read other tokens than the model was trained on."""
    from forgeplan.llm.tiny import llama_cpp_mismatches  # noqa: PLC0415

    check = llama_cpp_mismatches(model, gguf, texts)
    if check["texts_split_otherwise"] or check["tokens_spelled_otherwise"]:
        first = (check["texts_split_otherwise"] or [""])[0][:60]
        raise InputError(f"llama.cpp tokenizes the GGUF otherwise than the model's tokenizer (e.g. {first!r}, "
                         f"token ids {check['tokens_spelled_otherwise']}); not serving it", file=str(gguf))
    return {"texts": check["texts"], "identical": True}


def run(args) -> dict:
    from forgeplan.cli.llm_cmd import _need_llm  # noqa: PLC0415
    from .train import _bench  # noqa: PLC0415

    _need_llm(1)
    from forgeplan.llm.bench import load_sample, split_ids  # noqa: PLC0415
    from transformers import AutoTokenizer  # noqa: PLC0415

    result: dict = {"benchmark": NAME, **machine()}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        bench, split = (args.bench, args.split) if args.bench else (_bench(tmp / "bench", args.tasks), "train")
        model = _model(args, tmp, bench)
        gguf = args.gguf or args.gguf_out or tmp / "model.gguf"
        if args.gguf is None:
            result["conversion"] = convert(model, gguf, args.llama_cpp)
        if args.convert_only:
            return result
        tokenizer = AutoTokenizer.from_pretrained(model)
        result["same_tokens"] = same_tokens(model, gguf, benchmark_texts(bench, tokenizer, args.prompt))
        tasks = [load_sample(bench, sid)[0] for sid in split_ids(bench, split)[: args.tasks]]
        proc, url = start_server(gguf, tmp / "server.log")
        try:
            remote = served(url, tasks, tokenizer, args.prompt, args.max_tokens)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        local = in_process(model, tasks, args.prompt, args.max_tokens)
        result |= {"model": str(args.model or "tiny-model (default: byte-level, qwen2)"), "adapter": str(args.adapter),
                   "bench": str(args.bench or "built-in tasks"), "split": split, "tasks": len(tasks),
                   "max_tokens": args.max_tokens, "llama_cpp_server": figures(remote, tasks),
                   "in_process": figures(local, tasks),
                   "same_output": sum(a["raw_output"] == b["raw_output"] for a, b in zip(remote, local))}
    return result

"""A real serving engine end to end: a model converted to GGUF behind llama.cpp's OpenAI-compatible server.

The model folder (default: a fresh `forgeplan tiny-model`, byte-level BPE, Qwen2 architecture) is
converted with llama.cpp's own `convert_hf_to_gguf.py` (from a llama.cpp source tree, `--llama-cpp`;
the llama-cpp-python sdist carries one in vendor/llama.cpp). The converter recognises a BPE tokenizer's
pre-tokenizer by hashing its encoding of a test text, which no locally trained vocabulary matches; the
tiny tokenizers split text with a regex llama.cpp knows by name (`tiny.QWEN2_SPLIT` is Qwen2's), so the
conversion is told that name instead (`tiny.llama_cpp_pre_tokenizer`). A tokenizer whose split llama.cpp does not
implement is refused: the server would read its prompts as other tokens.

Then `python -m llama_cpp.server` (llama-cpp-python, installed by hand: `pip install
'llama-cpp-python[server]'` builds llama.cpp from source) serves the GGUF on 127.0.0.1; every task goes
to /v1/completions with the same prompt text the in-process decoder renders and its grammar as GBNF in
`grammar`. Reported for both sides: parse rate under the task grammar (must be 100 %), schema-valid and
illegal-plan rates, exact diagnoses and valid repairs (the verifier's verdicts), generated tokens per
second (greedy, one request at a time, one thread), and how many outputs the two sides agree on.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..model.errors import InputError
from . import machine

NAME = "serve"
SERVER_START_SECONDS = 300.0

# run inside the converter's process: its own main(), with our pre-tokenizer name where its hash table has none
_CONVERT = """
import runpy, sys
src, pre = sys.argv[1], sys.argv[2]
sys.argv = [src + "/convert_hf_to_gguf.py"] + sys.argv[3:]
sys.path[:0] = [src, src + "/gguf-py"]
import conversion.base as base
known = base.TextModel.get_vocab_base_pre
def get_vocab_base_pre(self, tokenizer):
    try:
        return known(self, tokenizer)
    except NotImplementedError:
        return pre
base.TextModel.get_vocab_base_pre = get_vocab_base_pre
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def add_arguments(p) -> None:
    p.add_argument("--model", type=Path, help="a Hugging Face model folder (default: a fresh `forgeplan tiny-model`)")
    p.add_argument("--llama-cpp", type=Path, help="a llama.cpp source tree (convert_hf_to_gguf.py, conversion/, "
                                                  "gguf-py/); not needed with --gguf")
    p.add_argument("--gguf", type=Path, help="an already converted model (skips the conversion)")
    p.add_argument("--tasks", type=int, default=8, help="built-in tasks to send")
    p.add_argument("--max-tokens", type=int, default=512, help="new tokens per answer")
    p.add_argument("--prompt", choices=("json", "compact"), default="json", help="prompt rendering")
    p.add_argument("--gguf-out", type=Path, help="where to keep the converted model (default: a temporary file)")
    p.add_argument("--convert-only", action="store_true", help="stop after the conversion (no server)")


def convert(model: Path, out: Path, llama_cpp: Path | None) -> dict:
    """MODEL -> OUT (GGUF, float32) with llama.cpp's converter; returns what was done."""
    if llama_cpp is None or not (Path(llama_cpp) / "convert_hf_to_gguf.py").is_file():
        raise InputError("a llama.cpp source tree with convert_hf_to_gguf.py is needed to convert (or pass --gguf)",
                         field="--llama-cpp")
    from ..llm.tiny import llama_cpp_pre_tokenizer  # noqa: PLC0415

    pre = llama_cpp_pre_tokenizer(model)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CONVERT, str(Path(llama_cpp).resolve()), pre, str(model),
                           "--outfile", str(out), "--outtype", "f32"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(f"convert_hf_to_gguf.py failed: {last}", file=str(model))
    return {"gguf": str(out), "pre_tokenizer": pre, "bytes": out.stat().st_size,
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
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
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
    """The /v1/completions request: the in-process decoder's prompt text and the task grammar as GBNF."""
    from ..llm.exports import lark_to_gbnf  # noqa: PLC0415
    from ..llm.grammar import specialise  # noqa: PLC0415
    from ..llm.prompt import build_prompt, prompt_text  # noqa: PLC0415

    return {"prompt": prompt_text(tokenizer, build_prompt(task, prompt)), "grammar": lark_to_gbnf(specialise(task)),
            "max_tokens": max_tokens, "temperature": 0, "top_k": 1, "seed": 0}


def served(url: str, tasks, tokenizer, prompt: str, max_tokens: int) -> list[dict]:
    from ..llm.serving import post_one  # noqa: PLC0415

    rows = []
    for task in tasks:
        t0 = time.perf_counter()
        resp = post_one(url + "/v1/completions", completion_body(task, tokenizer, prompt, max_tokens), retries=1,
                        timeout=600.0, backoff=1.0, api_key=None)
        choice = resp["choices"][0]
        rows.append({"raw_output": choice["text"], "new_tokens": (resp.get("usage") or {}).get("completion_tokens", 0),
                     "seconds": time.perf_counter() - t0, "stopped": choice.get("finish_reason")})
    return rows


def in_process(model_dir: Path, tasks, prompt: str, max_tokens: int) -> list[dict]:
    from ..llm.infer import generate  # noqa: PLC0415
    from ..llm.train import load_for_inference  # noqa: PLC0415

    model, tokenizer, _ = load_for_inference(model_dir, None, "cpu", "float32")
    return [generate(model, tokenizer, [t], "grammar", max_new_tokens=max_tokens, prompt=prompt)[0] for t in tasks]


def figures(rows: list[dict], tasks) -> dict:
    """Parse rate under each task's grammar, the verifier's verdicts, and tokens/s of one side."""
    from lark.exceptions import LarkError  # noqa: PLC0415

    from ..llm.grammar import lark_parser, specialise  # noqa: PLC0415
    from ..verify import verify  # noqa: PLC0415

    parsed = 0
    for row, task in zip(rows, tasks):
        try:
            lark_parser(specialise(task)).parse(row["raw_output"])
            parsed += 1
        except LarkError:
            continue
    verdicts = [verify(task, row["raw_output"]) for row, task in zip(rows, tasks)]
    valid = [v for v in verdicts if v.category != "schema_failure"]
    tokens, seconds = sum(r["new_tokens"] or 0 for r in rows), sum(r["seconds"] for r in rows)
    n = len(rows)
    return {"parse_rate": round(100 * parsed / n, 2), "schema_valid": round(100 * len(valid) / n, 2),
            "illegal_plan": round(100 * sum(not v.replay_legal for v in valid) / n, 2),
            "diagnosis_exact": round(100 * sum(v.diagnosis_exact for v in verdicts) / n, 2),
            "valid_repairs": round(100 * sum(v.valid for v in verdicts) / n, 2),
            "new_tokens": tokens, "tokens_per_second": round(tokens / seconds, 1) if seconds else None,
            "stopped_at_max_tokens": sum(r["stopped"] in ("length", "max_new_tokens") for r in rows)}


def run(args) -> dict:
    from ..cli.llm_cmd import _need_llm  # noqa: PLC0415
    from .train import _bench  # noqa: PLC0415

    _need_llm(1)
    from ..llm.tiny import make_tiny  # noqa: PLC0415
    from ..llm.bench import load_sample, split_ids  # noqa: PLC0415
    from transformers import AutoTokenizer  # noqa: PLC0415

    result: dict = {"benchmark": NAME, **machine()}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        bench = _bench(tmp / "bench", args.tasks)
        model = args.model or Path(make_tiny(tmp / "tiny", bench=bench, prompt=args.prompt)["out"])
        gguf = args.gguf or args.gguf_out or tmp / "model.gguf"
        if args.gguf is None:
            result["conversion"] = convert(model, gguf, args.llama_cpp)
        if args.convert_only:
            return result
        tasks = [load_sample(bench, sid)[0] for sid in split_ids(bench, "train")]
        tokenizer = AutoTokenizer.from_pretrained(model)
        proc, url = start_server(gguf, tmp / "server.log")
        try:
            remote = served(url, tasks, tokenizer, args.prompt, args.max_tokens)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        local = in_process(model, tasks, args.prompt, args.max_tokens)
        result |= {"model": str(args.model or "tiny-model (default: byte-level, qwen2)"), "tasks": len(tasks),
                   "max_tokens": args.max_tokens, "llama_cpp_server": figures(remote, tasks),
                   "in_process": figures(local, tasks),
                   "same_output": sum(a["raw_output"] == b["raw_output"] for a, b in zip(remote, local))}
    return result

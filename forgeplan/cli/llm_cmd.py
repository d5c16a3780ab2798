"""`forgeplan grammar | tiny-model | train | merge-adapter | reference-model | infer`: the model side (torch only where a model runs)."""

from __future__ import annotations

from pathlib import Path

from ..io.output import output_path
from ..model.choices import DEFAULT_PROMPT, PROMPTS, SERVING_ENGINES
from ..model.errors import interrupt_exit_code
from . import EXIT_NEGATIVE, emit_json


def register(sub) -> None:
    _register_grammar(sub)
    _register_tiny_model(sub)
    _register_train(sub)
    _register_merge_adapter(sub)
    _register_reference_model(sub)
    _register_infer(sub)
    _register_requests(sub)
    _register_import_answers(sub)


def _register_grammar(sub) -> None:
    g = sub.add_parser("grammar", help="print the output-contract grammar specialised to a task",
                       description="Print the grammar of the output contract; given a task folder, specialised "
                                   "to its assembly (only its part ids, axes and directions), as constrained decoding "
                                   "uses it. Formats: lark (forgeplan, llguidance, xgrammar, vLLM's guidance backend), "
                                   "lark-portable (also through vLLM's Lark-to-EBNF conversion on its xgrammar "
                                   "backend), gbnf (llama.cpp, xgrammar, SGLang), json-schema (engines that only "
                                   "take schemas; weaker, its description says how).")
    g.add_argument("task_dir", type=Path, metavar="TASK_DIR", nargs="?",
                   help="task folder (omit to print the generic grammar)")
    g.add_argument("--format", choices=("lark", "lark-portable", "gbnf", "json-schema"), default="lark",
                   help="grammar dialect (default lark)")
    g.add_argument("--check", action="store_true", help="also validate the Lark grammar with llguidance (if installed)")
    g.set_defaults(func=run_grammar)


def _register_tiny_model(sub) -> None:
    t = sub.add_parser("tiny-model", help="build a tiny causal LM and a locally trained tokenizer (no downloads)",
                       description="Build a randomly initialised, very small causal language model and a tokenizer "
                                   "trained on task prompts, saved as a Hugging Face folder for `train` and `infer`: "
                                   "a stand-in to exercise the LLM path on a CPU without downloading a checkpoint.")
    t.add_argument("--out", type=output_path, required=True, help="folder to save_pretrained into")
    t.add_argument("--bench", type=Path, help="benchmark folder whose train split trains the tokenizer "
                                             "(default: tasks of the built-in assemblies)")
    t.add_argument("--vocab-size", type=int, default=2048, help="tokenizer vocabulary size")
    t.add_argument("--tokenizer", choices=("byte-level", "identifiers", "sentencepiece"), default="byte-level",
                   help="byte-level: BPE split as Qwen2 splits; identifiers: BPE that keeps identifiers (part ids) "
                        "whole; sentencepiece: Llama-2-style (identifiers and sentencepiece need --arch llama)")
    t.add_argument("--arch", choices=("qwen2", "llama"), default="qwen2", help="model architecture")
    t.add_argument("--hidden", type=int, default=64, help="hidden size")
    t.add_argument("--layers", type=int, default=2, help="transformer layers")
    t.add_argument("--seed", type=int, default=0, help="seed of the weights and the tokenizer corpus")
    t.add_argument("--prompt", choices=PROMPTS, default=DEFAULT_PROMPT,
                   help=f"prompt style whose text trains the tokenizer (default {DEFAULT_PROMPT})")
    t.set_defaults(func=run_tiny)


def _register_train(sub) -> None:
    tr = sub.add_parser("train", help="LoRA SFT on a benchmark split (TRL SFTTrainer + peft LoRA)",
                        description="Fine-tune a local Hugging Face causal LM with LoRA on the prompt/completion pairs "
                                    "of a benchmark split with TRL's SFTTrainer, with the settings of a TOML "
                                    "configuration ([run], [lora] = peft.LoraConfig, [trainer] = trl.SFTConfig), and "
                                    "save checkpoints, then the adapter. Runs on CPU, one GPU, or several through "
                                    "`accelerate launch -m forgeplan train ...`. No downloads: the model folder must "
                                    "be local.")
    tr.add_argument("--model", type=Path, required=True, help="local Hugging Face causal LM folder")
    tr.add_argument("--bench", type=Path, required=True, help="benchmark folder (manifest.json, tasks/)")
    tr.add_argument("--out", type=output_path, required=True, help="output folder: checkpoints, then the adapter")
    tr.add_argument("--config", type=Path, metavar="FILE|NAME",
                    help="a TOML training configuration, or the name of a bundled one: tiny-cpu, reference-cpu, "
                         "forge-qwen3.5-9b (default: forge-qwen3.5-9b, the paper's recipe)")
    tr.add_argument("--limit", type=int, default=0, help="use only the first N samples of the split")
    tr.add_argument("--max-steps", type=int, help="override trainer.max_steps")
    tr.add_argument("--resume", nargs="?", const=True, default=False, metavar="CHECKPOINT",
                    help="resume from the last checkpoint in --out (or from CHECKPOINT)")
    tr.add_argument("--report-to", choices=("none", "tensorboard"), default="none",
                    help="tensorboard: event files under OUT/runs")
    tr.add_argument("--device", choices=("auto", "cpu", "cuda"), help="override run.device")
    tr.add_argument("--load-in-4bit", action="store_true", help="QLoRA: 4-bit NF4 base weights (CUDA + bitsandbytes)")
    tr.add_argument("--prompt", choices=PROMPTS, help="prompt style: override run.prompt (forge: FORGE's prompt contract "
                    "with the whole public task; compact: for small models trained on the assembly; docs/training.md)")
    tr.add_argument("--threads", type=int, default=0, help="CPU threads for torch (default: run.threads)")
    tr.set_defaults(func=run_train)


def _register_merge_adapter(sub) -> None:
    m = sub.add_parser("merge-adapter", help="merge a LoRA adapter into its base model and save plain weights",
                       description="Merge a LoRA adapter from `forgeplan train` into its base model and save the merged "
                                   "weights and tokenizer, which AutoModelForCausalLM.from_pretrained and vLLM load.")
    m.add_argument("--model", type=Path, required=True, help="base model folder")
    m.add_argument("--adapter", type=Path, required=True, help="adapter folder from `forgeplan train`")
    m.add_argument("--out", type=output_path, required=True, help="folder for the merged model and tokenizer")
    m.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32", help="saved weight precision")
    m.set_defaults(func=run_merge)


def _register_reference_model(sub) -> None:
    r = sub.add_parser("reference-model", help="train and score the CPU reference model (in-distribution check)",
                       description="bench build -> leak-free in-distribution split -> tiny-model -> train (a fixed "
                                   "number of steps, per seed) -> infer in each decoding mode -> FORGE metrics, "
                                   "schema-valid and illegal-plan rates beside no-op, local-repair, greedy-legal and "
                                   "the diagnosis lookup, in distribution and on held-out assemblies. With --ablation, "
                                   "FORGE's Table 3: Vanilla SFT (plain targets), w/o Action Grounding (structured "
                                   "targets), w/o Rework Structuring (plain targets, grounding) and the full method "
                                   "(structured targets, grounding), each per seed from the same tiny model, scored in "
                                   "each mode in distribution and on held-out assemblies (OUT/ablation.json)")
    r.add_argument("--out", type=output_path, required=True,
                   help="working folder (an existing OUT/bench, OUT/tiny-model, OUT/adapter is reused)")
    r.add_argument("--tasks", type=int, default=1000, help="benchmark size")
    r.add_argument("--seed", type=int, default=42, help="seed of the benchmark and the split")
    r.add_argument("--seeds", default="42", help="comma-separated model seeds (initial weights and data order), e.g. "
                                                 "42,43,44: the table gives the mean and spread")
    r.add_argument("--modes", help="decoding modes scored in distribution (held-out assemblies: legal; with --ablation "
                                   "the same modes on both), default none,grammar,legal (--ablation: grammar,legal)")
    r.add_argument("--ablation", action="store_true",
                   help="train and score Table 3's four variants (docs/training.md) instead of one configuration")
    r.add_argument("--variants", help="--ablation: comma-separated variants of vanilla-sft, without-ag, without-rs, "
                                      "full (default all four)")
    r.add_argument("--jobs", type=int, default=2, help="processes for bench build")
    r.add_argument("--config", type=Path, help="training config (default models/reference-cpu.toml)")
    r.add_argument("--max-steps", type=int, help="override trainer.max_steps")
    r.add_argument("--test-fraction", type=float, default=0.1, help="share of the train split held out as `test`")
    r.add_argument("--heldout", type=int, default=40, help="held-out-assembly tasks to score (0 = all)")
    r.add_argument("--threads", type=int, default=1,
                   help="CPU threads for torch (0 = the config's run.threads); the weights depend on it")
    r.add_argument("--max-new-tokens", type=int, default=1024,
                   help="generation length limit per answer (twice that for a model trained with grounding)")
    r.set_defaults(func=run_reference)


def _register_infer(sub) -> None:
    i = sub.add_parser("infer", help="greedy inference over a benchmark split -> predictions JSONL",
                       description="Generate an output for every task of a split with greedy decoding, optionally "
                                   "constrained by the task's grammar (always well-formed) or also by the engine "
                                   "(only actions legal in the state reached so far), and write a predictions JSONL "
                                   "for `evaluate`. Each sample gets its family's prompt and grammar (an Assembly "
                                   "Decision sample of a --profile magar benchmark: the decision contract and grammar; "
                                   "legal: its legal decisions). In process with --model, or through a running "
                                   "OpenAI-compatible server with --endpoint (the requests of `forgeplan requests`; "
                                   "grammar or none), hosted or local: the API key from an environment variable "
                                   "(--api-key-env), --concurrency requests in flight, retries of what may succeed "
                                   "later, every answer kept in a cache so that a rerun or an interrupted run sends no "
                                   "request twice, token usage per sample. With --endpoint a refused key or a failed "
                                   "request is one line, exit 2, and answers that were sent the grammar are parsed "
                                   "under it: exit 1 with the count when some do not parse.")
    i.add_argument("--model", type=Path, help="local Hugging Face causal LM folder (in-process inference)")
    i.add_argument("--endpoint", metavar="URL",
                   help="base URL of an OpenAI-compatible server (e.g. http://localhost:8000/v1) instead of --model")
    i.add_argument("--served-model", default="forgeplan",
                   help="--endpoint: the model name the server serves (vLLM: a --lora-modules name; OpenAI: a model id)")
    i.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="--endpoint: the environment variable holding the API key, sent as a bearer token (never "
                        "written anywhere; unset: no key)")
    i.add_argument("--api", choices=("chat", "completions"), default="chat",
                   help="--endpoint: /v1/chat/completions with the prompt's messages, or /v1/completions with them "
                        "rendered as one text")
    i.add_argument("--engine", choices=SERVING_ENGINES, default="vllm",
                   help="--endpoint: which server, for the request field that carries the grammar (openai: "
                        "response_format with the task's JSON Schema)")
    i.add_argument("--concurrency", type=int, default=8, help="--endpoint: requests in flight at most")
    i.add_argument("--retries", type=int, default=3, help="--endpoint: retries of a request after a 429, a 5xx, "
                   "a timeout or a dropped connection (exponential backoff with jitter, or the server's "
                   "Retry-After; at most 10)")
    i.add_argument("--timeout", type=float, default=600.0, help="--endpoint: seconds per attempt of a request, "
                   "from connecting to the last byte of the response")
    i.add_argument("--cache", type=output_path, metavar="DIR",
                   help="--endpoint: folder keeping every answer as it arrives, so that a rerun or an interrupted "
                        "run sends no request twice (default: OUT.cache beside --out)")
    i.add_argument("--adapter", type=Path, help="LoRA adapter folder from `forgeplan train`")
    i.add_argument("--bench", type=Path, required=True, help="benchmark folder")
    i.add_argument("--split", default="test", help="benchmark split (train or test)")
    i.add_argument("--out", type=output_path, required=True, help="predictions JSONL to write")
    i.add_argument("--constrained", choices=("grammar", "legal", "none"), default="grammar",
                   help="grammar: output always parses; legal: also only actions legal in the state so far")
    i.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where to run the model (auto: cuda when available)")
    i.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32", help="weight precision")
    i.add_argument("--batch-size", type=int, default=1, help="prompts decoded together")
    i.add_argument("--num-beams", type=int, default=1, help="beam search width (1: greedy)")
    i.add_argument("--limit", type=int, default=0, help="only the first N samples of the split")
    i.add_argument("--max-new-tokens", type=int, default=4096, help="generation length limit per task")
    i.add_argument("--prompt", choices=PROMPTS,
                   help=f"prompt style (default: the one the adapter was trained with, else {DEFAULT_PROMPT}; "
                        "docs/training.md)")
    i.add_argument("--threads", type=int, default=0, help="CPU threads for torch (0 = torch's default)")
    i.set_defaults(func=run_infer)


def _register_requests(sub) -> None:
    r = sub.add_parser("requests", help="one OpenAI-compatible request per task, grammar attached -> JSONL",
                       description="Write one chat-completion request per task of a split in the OpenAI batch-file "
                                   "layout (`vllm run-batch` reads it; `infer --endpoint` sends the same requests), "
                                   "greedy, with the sample's prompt and task grammar (an Assembly Decision sample: "
                                   "the decision ones) in the field the chosen engine reads: vllm "
                                   "structured_outputs.grammar (portable Lark), sglang ebnf (GBNF), llama.cpp "
                                   "grammar (GBNF). `import-answers` turns the batch output into predictions.")
    r.add_argument("--bench", type=Path, required=True, help="benchmark folder")
    r.add_argument("--split", default="test", help="benchmark split (train or test)")
    r.add_argument("--out", type=output_path, required=True, help="requests JSONL to write")
    r.add_argument("--served-model", default="forgeplan", help="the model name in each request")
    r.add_argument("--engine", choices=SERVING_ENGINES, default="vllm", help="target server")
    r.add_argument("--constrained", choices=("grammar", "none"), default="grammar", help="attach the task grammar")
    r.add_argument("--prompt", choices=PROMPTS, default=DEFAULT_PROMPT,
                   help=f"prompt style (default {DEFAULT_PROMPT}; docs/training.md)")
    r.add_argument("--max-tokens", type=int, default=4096, help="generation length limit per task")
    r.add_argument("--limit", type=int, default=0, help="only the first N samples of the split")
    r.set_defaults(func=run_requests)


def _register_import_answers(sub) -> None:
    a = sub.add_parser("import-answers", help="OpenAI / vllm run-batch output -> predictions JSONL",
                       description="Turn a batch output file (one {\"custom_id\", \"response\": {\"body\": chat "
                                   "completion}} per line, as `vllm run-batch` writes) into the predictions JSONL "
                                   "that `evaluate` reads. With --constrained grammar and --bench, each answer is "
                                   "parsed under its task's grammar: exit 1 with the count when some do not parse "
                                   "(the server ignored the grammar).")
    a.add_argument("batch_output", type=Path, metavar="BATCH_OUTPUT", help="the batch output JSONL")
    a.add_argument("--out", type=output_path, required=True, help="predictions JSONL to write")
    a.add_argument("--constrained", choices=("grammar", "none"), help="what the requests carried (`requests "
                   "--constrained`); grammar: check every answer against its task grammar (needs --bench)")
    a.add_argument("--bench", type=Path, help="benchmark folder of the requests (for --constrained grammar)")
    a.set_defaults(func=run_import_answers)


def run_requests(args) -> int:
    from ..llm.serving import requests_for, write_jsonl
    from ..model.errors import InputError

    if args.max_tokens < 1 or args.limit < 0:
        raise InputError("--max-tokens must be at least 1 and --limit 0 or more")
    rows = requests_for(args.bench, args.split, limit=args.limit, model=args.served_model, engine=args.engine,
                        prompt=args.prompt, max_tokens=args.max_tokens, constrained=args.constrained == "grammar")
    write_jsonl(rows, args.out)
    emit_json({"requests": str(args.out), "tasks": len(rows), "engine": args.engine, "constrained": args.constrained})
    return 0


def run_import_answers(args) -> int:
    from ..llm.serving import answers_from_batch, write_jsonl
    from ..model.errors import InputError

    if args.constrained == "grammar" and args.bench is None:
        raise InputError("--constrained grammar needs --bench (the tasks whose grammars were sent)", field="--bench")
    rows = answers_from_batch(args.batch_output, args.constrained)
    write_jsonl(rows, args.out)
    summary = {"predictions": str(args.out), "samples": len(rows)}
    return _grammar_verdict(args.bench, rows, summary)


def _grammar_verdict(bench, rows: list, summary: dict) -> int:
    """Print the summary with the grammar's parse rate; exit 1 (and say how many) when an answer that was
    sent a grammar does not parse under it."""
    import sys

    from ..io.quoting import one_line
    from ..llm.serving import grammar_misses

    sent, missed = grammar_misses(bench, rows) if bench is not None else (0, [])
    if sent:
        summary["grammar_parse_rate"] = round(100 * (sent - len(missed)) / sent, 2)
        summary["grammar_unparsed"] = len(missed)
    emit_json(summary)
    if not missed:
        return 0
    print(one_line(f"forgeplan: {len(missed)} of {sent} outputs sent a grammar do not parse under it (the server "
                   f"ignored the grammar?); first: {missed[0]}"), file=sys.stderr)
    return EXIT_NEGATIVE


def run_grammar(args) -> int:
    import sys

    from ..llm import exports
    from ..llm.grammar import base_grammar, check_llguidance, lark_parser, specialise
    from ..io.task_files import load_task

    task = load_task(args.task_dir) if args.task_dir else None
    text = specialise(task) if task is not None else base_grammar()
    lark_parser(text)  # loads LALR + strict, or InputError
    if args.format == "json-schema":
        schema = exports.json_schema(task) if task is not None else exports.generic_json_schema()
        emit_json(schema)   # JSON's quoting: every non-printable character a \u escape
        print(f"forgeplan: {exports.SCHEMA_CANNOT}", file=sys.stderr)
        return 0
    out = {"lark": lambda t: t, "lark-portable": exports.portable_lark, "gbnf": exports.lark_to_gbnf}[args.format](text)
    print(out, end="")
    if args.check:
        import sys

        try:
            verdict = check_llguidance(text)
        except ImportError:
            print("forgeplan: --check needs llguidance (pip install llguidance); the grammar was only "
                  "checked with Lark", file=sys.stderr)
            return EXIT_NEGATIVE
        print(f"// {verdict}", file=sys.stderr)
    return 0


def _need_llm(threads: int = 0) -> None:
    """Import the [llm] extra in offline mode (forgeplan never downloads), or say how to install it."""
    from ..llm.local import offline
    from ..model.errors import InputError

    offline()
    try:
        import peft  # noqa: F401
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        raise InputError(f"this command needs the [llm] extra (pip install 'forgeplan[llm]'): {exc}") from None
    if threads < 0:
        raise InputError("--threads must be 0 (default) or more")
    if threads:
        torch.set_num_threads(threads)  # on a busy small machine one thread is often fastest


def run_tiny(args) -> int:
    _need_llm()
    from ..llm.tiny import make_tiny

    emit_json(make_tiny(args.out, bench=args.bench, vocab_size=args.vocab_size, kind=args.tokenizer,
                        arch=args.arch, hidden=args.hidden, layers=args.layers, seed=args.seed, prompt=args.prompt))
    return 0


def run_train(args) -> int:
    _need_llm(args.threads)
    from dataclasses import replace

    from ..llm.config import load_config
    from ..llm.train import train

    config = load_config(args.config)
    run = replace(config.run, **{k: v for k, v in (("device", args.device), ("prompt", args.prompt)) if v},
                  load_in_4bit=config.run.load_in_4bit or args.load_in_4bit, threads=args.threads or config.run.threads)
    trainer = {**config.trainer, **({"max_steps": args.max_steps} if args.max_steps is not None else {})}
    config = replace(config, run=run, trainer=trainer)
    emit_json(train(args.model, args.bench, args.out, config, limit=args.limit, resume=args.resume,
                    report_to=args.report_to))
    return 0


def run_merge(args) -> int:
    _need_llm()
    from ..llm.train import merge_adapter

    emit_json(merge_adapter(args.model, args.adapter, args.out, args.dtype))
    return 0


def run_reference(args) -> int:
    from ..model.errors import InputError

    try:
        seeds = tuple(int(s) for s in args.seeds.split(","))
    except ValueError:
        raise InputError(f"expected comma-separated integers, got {args.seeds!r}", field="--seeds") from None
    modes = _choices(args.modes or ("grammar,legal" if args.ablation else "none,grammar,legal"),
                     ("none", "grammar", "legal"), "--modes")
    if args.variants is not None and not args.ablation:
        raise InputError("--variants needs --ablation", field="--variants")
    if args.max_new_tokens < 1:
        raise InputError(f"must be at least 1, got {args.max_new_tokens}", field="--max-new-tokens")
    _need_llm(args.threads)
    common = dict(tasks=args.tasks, seed=args.seed, jobs=args.jobs, config=args.config, test_fraction=args.test_fraction,
                  heldout=args.heldout, max_steps=args.max_steps, seeds=seeds, modes=modes, threads=args.threads,
                  max_new_tokens=args.max_new_tokens)
    if args.ablation:
        from ..llm.ablation import VARIANTS, ablation, summary as ablation_summary

        variants = _choices(args.variants or ",".join(VARIANTS), tuple(VARIANTS), "--variants")
        print(ablation_summary(ablation(args.out, variants=variants, **common)))
        return 0
    from ..llm.reference import reference_model, summary

    print(summary(reference_model(args.out, **common)))
    return 0


def _choices(text: str, allowed: tuple[str, ...], flag: str) -> tuple[str, ...]:
    """A comma-separated list of choices, each once, or a one-line error naming the flag."""
    from ..model.errors import InputError

    picked = tuple(text.split(","))
    if not picked or set(picked) - set(allowed) or len(set(picked)) < len(picked):
        raise InputError(f"expected comma-separated values of {list(allowed)}, each once, got {text!r}", field=flag)
    return picked


def _infer_endpoint(args) -> int:
    import time

    from ..llm.endpoint import EndpointClient
    from ..llm.serving import endpoint_request, mode, prediction_row, requests_for, write_jsonl
    from ..model.errors import InputError

    if args.constrained == "legal":
        raise InputError("legal masking needs the engine beside the decoder: use --model (in-process); "
                         "a server can take --constrained grammar or none", field="--constrained")
    cache = args.cache or args.out.with_name(args.out.name + ".cache")
    client = EndpointClient(args.endpoint, key_env=args.api_key_env, concurrency=args.concurrency,
                            retries=args.retries, timeout=args.timeout, cache_dir=cache, say=_note)
    lines = requests_for(args.bench, args.split, limit=args.limit, model=args.served_model, engine=args.engine,
                         prompt=args.prompt or DEFAULT_PROMPT, max_tokens=args.max_new_tokens,
                         constrained=args.constrained == "grammar")
    t0 = time.perf_counter()
    with _sigterm_interrupts():
        try:
            answers = client.run([endpoint_request(line, args.api) for line in lines])
        except KeyboardInterrupt as exc:
            _note(f"interrupted: {client.sent + client.from_cache} of {len(lines)} answers are kept in {cache}; the "
                  "same command resumes without sending them again")
            return interrupt_exit_code(exc)
    rows = [prediction_row(a, mode(line["body"])) for a, line in zip(answers, lines) if a.error is None]
    write_jsonl(rows, args.out)
    failed = [a for a in answers if a.error is not None]
    if failed:
        raise InputError(f"{len(failed)} of {len(answers)} requests failed (the others are in {args.out}; the same "
                         f"command sends only the failed ones again); {failed[0].id}: {failed[0].error}",
                         field="--endpoint")
    return _grammar_verdict(args.bench, rows, {
        "predictions": str(args.out), "samples": len(rows), "split": args.split, "constrained": args.constrained,
        "endpoint": args.endpoint, "api": args.api, "cache": str(cache), "sent": client.sent,
        "from_cache": client.from_cache, "retries": client.retried,
        "prompt_tokens": sum(a.prompt_tokens or 0 for a in answers),
        "completion_tokens": sum(a.completion_tokens or 0 for a in answers),
        "seconds": round(time.perf_counter() - t0, 2)})


def _note(line: str) -> None:
    """One line on stderr, above a progress bar (a retry, an interrupt)."""
    import sys

    from tqdm import tqdm

    from ..io.quoting import one_line

    tqdm.write(f"forgeplan: {one_line(line, 500)}", file=sys.stderr)


def _sigterm_interrupts():
    """A context in which SIGTERM interrupts as Ctrl-C does (a KeyboardInterrupt, `Interrupted`), so that a
    terminated run keeps the answers of its requests in flight; outside the main thread it changes nothing."""
    import contextlib
    import signal
    import threading

    from ..model.errors import Interrupted

    @contextlib.contextmanager
    def scope():
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def interrupt(signum, frame):
            raise Interrupted(signum)

        old = signal.signal(signal.SIGTERM, interrupt)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, old)

    return scope()


def run_infer(args) -> int:
    from ..model.errors import InputError

    if (args.model is None) == (args.endpoint is None):
        raise InputError("give exactly one of --model (in-process) and --endpoint (a running server)")
    if args.endpoint is not None:
        return _infer_endpoint(args)
    _need_llm(args.threads)
    from ..llm.config import saved_grounding, saved_prompt_style
    from ..llm.infer import run_infer as infer
    from ..llm.train import load_for_inference

    if args.batch_size < 1 or args.max_new_tokens < 1 or args.num_beams < 1:
        raise InputError("--batch-size, --max-new-tokens and --num-beams must be at least 1")
    prompt = args.prompt or saved_prompt_style(args.adapter) or DEFAULT_PROMPT
    model, tokenizer, device = load_for_inference(args.model, args.adapter, args.device, args.dtype)
    emit_json(infer(model, tokenizer, args.bench, args.split, args.out, mode=args.constrained, device=device,
                    batch_size=args.batch_size, limit=args.limit, max_new_tokens=args.max_new_tokens, prompt=prompt,
                    num_beams=args.num_beams, grounding=saved_grounding(args.adapter)))
    return 0

"""LoRA training: tokens/s and peak memory of the tiny model on CPU; trainable parameters of a large config.

Throughput is the SFTTrainer's own count of trained tokens (prompt + completion, padding excluded)
over the wall time of `trainer.train`, median over runs; peak memory is the process's peak resident
set. For a large model (`--config-json`, a local config.json such as Qwen3.5-9B's) the number of LoRA
parameters of the training recipe is computed by building the architecture on PyTorch's meta device:
no weights are loaded or allocated.
"""

from __future__ import annotations

import resource
import statistics
import sys
import tempfile
from pathlib import Path

from . import machine

NAME = "train"


def add_arguments(p) -> None:
    p.add_argument("--steps", type=int, default=8, help="optimizer steps per run")
    p.add_argument("--runs", type=int, default=3, help="training runs (median tokens/s)")
    p.add_argument("--tasks", type=int, default=12, help="built-in tasks to train on")
    p.add_argument("--config", type=Path, help="training config for the tiny model (default models/tiny-cpu.toml)")
    p.add_argument("--config-json", type=Path, help="a large model's config.json: count its LoRA parameters")
    p.add_argument("--recipe", type=Path, help="the recipe for --config-json (default models/forge-qwen3.5-9b.toml)")


def _bench(root: Path, n: int) -> Path:
    """A benchmark folder of n built-in tasks with references (train split only)."""
    from .decode import _tasks  # noqa: PLC0415
    from forgeplan.bench.digests import seal_folder  # noqa: PLC0415
    from forgeplan.io.task_files import write_json, write_task  # noqa: PLC0415

    ids = []
    for task, ref in _tasks(n):
        write_task(task, root / "tasks" / task.sample_id)
        write_json(root / "tasks" / task.sample_id / "reference.json", ref)
        ids.append(task.sample_id)
    seal_folder(root, {"splits": {"train": ids}, "records": []})
    return root


def run(args) -> dict:
    from dataclasses import replace  # noqa: PLC0415

    from forgeplan.cli.llm_cmd import _need_llm  # noqa: PLC0415
    from forgeplan.llm.config import MODELS_DIR, load_config  # noqa: PLC0415
    from forgeplan.llm.tiny import REFERENCE_SHAPE, make_tiny  # noqa: PLC0415
    from forgeplan.llm.train import train  # noqa: PLC0415

    _need_llm()
    from forgeplan.llm.lora_size import lora_parameters  # noqa: PLC0415

    large = lora_parameters(args.config_json, args.recipe) if args.config_json else None  # bad input fails first
    result: dict = {"benchmark": "train", **machine()}
    config = load_config(args.config or MODELS_DIR / "tiny-cpu.toml")
    config = replace(config, run=replace(config.run, eval_fraction=0.0, device="cpu"),
                     trainer={**config.trainer, "max_steps": args.steps, "save_strategy": "no", "logging_steps": 1})
    with tempfile.TemporaryDirectory() as tmp:
        bench = _bench(Path(tmp) / "bench", args.tasks)
        tiny = make_tiny(Path(tmp) / "tiny", bench=bench, prompt=config.run.prompt, **REFERENCE_SHAPE)
        rates = []
        for k in range(args.runs):
            print(f"perf train: run {k + 1}/{args.runs}", file=sys.stderr)
            s = train(Path(tmp) / "tiny", bench, Path(tmp) / f"run{k}", config)
            rates.append(s["train_tokens"] / s["seconds"])
        result["tiny_model"] = {"parameters": tiny["parameters"], "config": config.run.name, "steps": args.steps,
                                "batch_size": config.trainer.get("per_device_train_batch_size"),
                                "tokens_per_second_median": round(statistics.median(rates), 1),
                                "tokens_per_second_runs": [round(r, 1) for r in rates],
                                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    if large:
        result["large_model_lora"] = large
    return result


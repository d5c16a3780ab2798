"""LoRA supervised fine-tuning on a benchmark split with TRL's SFTTrainer and a peft LoraConfig.

The data are conversational prompt/completion rows (`families.prompt_completion_rows`, the same rows
`bench export --format prompt-completion` writes, the reference's actions in `run.targets` order), so the
trainer applies the model's chat template and takes the loss on the completion only; with `run.grounding`
the rows are tokenized here instead (llm.sft_rows: the engine's state renderings take no loss). A deterministic slice of the split is held out for the
evaluation loss. Everything distributed (several GPUs, DeepSpeed/FSDP) comes from `accelerate launch`;
nothing here is hand-rolled.
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import time
from pathlib import Path

from ..io.output import new_folder
from ..model.choices import DEFAULT_PROMPT
from ..model.errors import InputError
from .families import prompt_completion_rows
from .sft_rows import grounded_rows
from .config import TrainConfig, save_config
from .local import model_folder

DTYPES = ("float32", "bfloat16", "float16")
REPORT_TO = ("none", "tensorboard")


def resolve_device(device: str) -> str:
    import torch  # noqa: PLC0415

    if device not in ("auto", "cpu", "cuda"):
        raise InputError(f"device must be auto, cpu or cuda, got {device!r}", field="--device")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("CUDA is not available on this machine", field="--device")
    return device


def torch_dtype(name: str, device: str):
    import torch  # noqa: PLC0415

    if name not in DTYPES:
        raise InputError(f"dtype must be one of {list(DTYPES)}, got {name!r}", field="--dtype")
    if device == "cpu" and name == "float16":
        raise InputError("float16 is not supported on CPU; use float32 or bfloat16", field="--dtype")
    return getattr(torch, name)


def split_eval(rows: list[dict], fraction: float, seed: int) -> tuple[list[dict], list[dict]]:
    """(train rows, held-out rows): a seeded shuffle, the first `fraction` held out (at least one row)."""
    if not 0 <= fraction < 1:
        raise InputError(f"must be in [0, 1), got {fraction}", field="run.eval_fraction")
    if fraction == 0:
        return rows, []
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    n = max(1, round(fraction * len(rows)))
    held = set(order[:n])
    return [r for k, r in enumerate(rows) if k not in held], [rows[k] for k in sorted(held)]


def training_rows(tokenizer, bench: Path, config: TrainConfig, limit: int = 0) -> list[dict]:
    """The split's examples: TRL's prompt/completion rows, or with `run.grounding` rows tokenized here
    (the state renderings take no loss, llm.sft_rows); the reference's actions in `run.targets` order."""
    run = config.run
    if run.grounding:
        return grounded_rows(tokenizer, bench, run.split, run.prompt, run.targets, limit=limit)
    return prompt_completion_rows(bench, run.split, run.prompt, limit=limit, targets=run.targets)


def fit_rows(tokenizer, rows: list[dict], max_length: int | None) -> tuple[list[dict], int]:
    """Rows whose chat-rendered prompt + completion (or tokenized row) fit `max_length` tokens (none is
    ever truncated)."""
    if not max_length:
        return rows, 0

    def length(r: dict) -> int:
        if "input_ids" in r:
            return len(r["input_ids"])
        return len(tokenizer.apply_chat_template(r["prompt"] + r["completion"], tokenize=True, return_dict=False))

    kept = [r for r in rows if length(r) <= max_length]
    return kept, len(rows) - len(kept)


def quantization(config: TrainConfig, device: str):
    """The bitsandbytes 4-bit (NF4) config for QLoRA, or None; refuses where it cannot run."""
    if not config.run.load_in_4bit:
        return None
    if device != "cuda":
        raise InputError("4-bit loading (QLoRA) needs a CUDA GPU; bitsandbytes 4-bit kernels do not run on CPU",
                         field="--load-in-4bit")
    try:
        import bitsandbytes  # noqa: F401, PLC0415
    except ImportError:
        raise InputError("4-bit loading needs bitsandbytes (pip install bitsandbytes)", field="--load-in-4bit") from None
    import torch  # noqa: PLC0415
    from transformers import BitsAndBytesConfig  # noqa: PLC0415

    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                              bnb_4bit_compute_dtype=torch.bfloat16)


def load_base(model_path: Path, config: TrainConfig, device: str, quant):
    from transformers import AutoModelForCausalLM  # noqa: PLC0415

    kwargs = {"dtype": torch_dtype(config.run.dtype, device)}
    if quant is not None:
        from accelerate import PartialState  # noqa: PLC0415
        from peft import prepare_model_for_kbit_training  # noqa: PLC0415

        # one full copy per process under `accelerate launch` (QLoRA + DDP)
        kwargs.update(quantization_config=quant, device_map={"": PartialState().local_process_index})
        model = AutoModelForCausalLM.from_pretrained(model_path, local_files_only=True, **kwargs)
        return prepare_model_for_kbit_training(
            model, use_gradient_checkpointing=bool(config.trainer.get("activation_checkpointing")))
    return AutoModelForCausalLM.from_pretrained(model_path, local_files_only=True, **kwargs)


def sft_config(config: TrainConfig, out: Path, device: str, report_to: str):
    """trl.SFTConfig from the [trainer] table, plus the run's output folder, device and logger."""
    from trl import SFTConfig  # noqa: PLC0415

    if report_to not in REPORT_TO:
        raise InputError(f"must be one of {list(REPORT_TO)}, got {report_to!r}", field="--report-to")
    args = {"disable_tqdm": True, **config.trainer}   # forgeplan's bar (`progress_bar`) shows the steps
    args.update(output_dir=str(out), report_to=report_to, use_cpu=device == "cpu")
    if config.run.eval_fraction == 0:
        args["eval_strategy"] = "no"
    try:
        return SFTConfig(**args)
    except (TypeError, ValueError) as exc:
        raise InputError(f"trl.SFTConfig refused the [trainer] table: {exc}", field="trainer") from None


FINETUNE = ("lora", "full")


def lora_config(config: TrainConfig):
    """The peft LoraConfig of the [lora] table, or None for full fine-tuning (every weight trains)."""
    from peft import LoraConfig  # noqa: PLC0415

    if config.run.finetune not in FINETUNE:
        raise InputError(f"must be one of {list(FINETUNE)}, got {config.run.finetune!r}", field="run.finetune")
    if config.run.finetune == "full":
        return None

    try:
        return LoraConfig(task_type="CAUSAL_LM", **config.lora)
    except (TypeError, ValueError) as exc:
        raise InputError(f"peft.LoraConfig refused the [lora] table: {exc}", field="lora") from None


def fix_threads(threads: int) -> None:
    """torch's CPU thread count for this process (0 leaves torch's default): a CPU run's arithmetic (the
    order of its reductions) and so its weights depend on it."""
    import torch  # noqa: PLC0415

    if threads < 0:
        raise InputError(f"must be 0 (torch's default) or more, got {threads}", field="run.threads")
    if threads:
        torch.set_num_threads(threads)


def run_clock(max_minutes: float, max_cpu_minutes: float = 0.0):
    """A TrainerCallback: note the step training starts from (0, or a resumed checkpoint's), and stop after
    `max_minutes` of wall time or `max_cpu_minutes` of this process's CPU time (0 = never) as if max_steps had
    been reached. CPU time is the budget that a machine shared with other jobs does not distort."""
    from transformers import TrainerCallback  # noqa: PLC0415

    class RunClock(TrainerCallback):
        start_step = 0
        stopped_early = False
        cpu_seconds = 0.0

        def on_train_begin(self, args, state, control, **kwargs):
            self.start_step, self.t0, self.c0 = state.global_step, time.perf_counter(), time.process_time()

        def on_step_end(self, args, state, control, **kwargs):
            self.cpu_seconds = time.process_time() - self.c0
            if (max_minutes and time.perf_counter() - self.t0 > 60 * max_minutes) or (
                    max_cpu_minutes and self.cpu_seconds > 60 * max_cpu_minutes):
                self.stopped_early = control.should_training_stop = True

    return RunClock()


def progress_bar():
    """A TrainerCallback: a bar of the optimizer steps on stderr, with the ETA and the last logged losses
    (transformers' own bar is off unless [trainer] disable_tqdm = false asks for it)."""
    from tqdm import tqdm  # noqa: PLC0415
    from transformers import TrainerCallback  # noqa: PLC0415

    class ProgressBar(TrainerCallback):
        bar = None

        def on_train_begin(self, args, state, control, **kwargs):
            if state.is_local_process_zero:   # one bar under `accelerate launch`
                self.bar = tqdm(total=state.max_steps, initial=state.global_step, desc="train", unit="step",
                                file=sys.stderr, dynamic_ncols=True)

        def on_step_end(self, args, state, control, **kwargs):
            if self.bar is not None:
                self.bar.update(state.global_step - self.bar.n)

        def on_log(self, args, state, control, logs=None, **kwargs):
            shown = {k: f"{v:.4g}" for k, v in (logs or {}).items() if k in ("loss", "eval_loss")}
            if self.bar is not None and shown:
                self.bar.set_postfix(shown, refresh=False)

        def on_train_end(self, args, state, control, **kwargs):
            if self.bar is not None:
                self.bar.close()

    return ProgressBar()


def trainer_class(device: str):
    """TRL's SFTTrainer; on the CPU with transformers' own loss (the model's cross-entropy over the completion
    labels, the same value). TRL's fused LM head tiles the vocabulary to spare GPU memory; without Triton its
    tiles run as many small torch ops and double the reference model's step time."""
    from transformers import Trainer  # noqa: PLC0415
    from trl import SFTTrainer  # noqa: PLC0415

    if device != "cpu":
        return SFTTrainer

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if model.training and "attention_mask" in inputs:   # the training tokens TRL's own loss counts
            self._total_train_tokens += int(inputs["attention_mask"].sum())
            self._metrics["train"]["num_tokens"] = [self._total_train_tokens]
        return Trainer.compute_loss(self, model, inputs, return_outputs, num_items_in_batch)

    return type("CpuSFTTrainer", (SFTTrainer,), {"compute_loss": compute_loss})


def train(model_path: Path, bench: Path, out: Path, config: TrainConfig, *, limit: int = 0,
          resume: bool | str = False, report_to: str = "none") -> dict:
    """Fine-tune a LoRA adapter; `out` gets checkpoints, the adapter, tokenizer, config and loss curve."""
    from datasets import Dataset  # noqa: PLC0415
    from transformers import AutoTokenizer  # noqa: PLC0415

    model_path = model_folder(model_path)
    device = resolve_device(config.run.device)
    quant = quantization(config, device)
    fix_threads(config.run.threads)
    out = Path(out)
    args = sft_config(config, out, device, report_to)
    peft_config = lora_config(config)
    tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    rows, skipped = fit_rows(tokenizer, training_rows(tokenizer, bench, config, limit), args.max_length)
    train_rows, eval_rows = split_eval(rows, config.run.eval_fraction, args.seed)
    if not train_rows:
        raise InputError(f"no training examples fit max_length={args.max_length} (skipped {skipped})", file=str(bench))
    clock = run_clock(config.run.max_minutes, config.run.max_cpu_minutes)
    trainer = trainer_class(device)(model=load_base(model_path, config, device, quant), args=args, processing_class=tokenizer,
                         train_dataset=Dataset.from_list(train_rows), callbacks=[clock, progress_bar()],
                         eval_dataset=Dataset.from_list(eval_rows) if eval_rows else None, peft_config=peft_config)
    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # the trainer prints its logs; stdout is the JSON summary's
        result = trainer.train(resume_from_checkpoint=resume or None)
        seconds = time.perf_counter() - start
        metrics = trainer.evaluate() if eval_rows else {}
    history = trainer.state.log_history
    summary = {"train_examples": len(train_rows), "eval_examples": len(eval_rows), "skipped_over_max_length": skipped,
               "steps": trainer.state.global_step, "resumed_at_step": clock.start_step,
               "stopped_at_time_limit": clock.stopped_early, "train_loss": round(result.training_loss, 4),
               "first_loss": next((h["loss"] for h in history if "loss" in h), None),
               "last_loss": next((h["loss"] for h in reversed(history) if "loss" in h), None),
               "eval_loss": metrics.get("eval_loss"), "seconds": round(seconds, 2),
               "cpu_seconds": round(clock.cpu_seconds, 1),
               "train_tokens": next((h["num_tokens"] for h in reversed(history) if "num_tokens" in h), None),
               "device": device, "threads": _threads(), "seed": args.seed,
               "prompt": config.run.prompt, "targets": config.run.targets, "grounding": config.run.grounding,
               "base_model": str(model_path),
               "trainable_parameters": sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)}
    with new_folder(out, merge=True) as saved:   # beside the checkpoints: the adapter and its record, together
        trainer.save_model(str(saved))
        tokenizer.save_pretrained(saved)
        save_config(config, saved, {"summary": summary})
        (saved / "log_history.json").write_text(json.dumps(history, indent=1) + "\n", encoding="utf-8")
        plot_losses(history, saved / "loss_curve.png")
    return summary


def _threads() -> int:
    import torch  # noqa: PLC0415

    return torch.get_num_threads()


def plot_losses(history: list[dict], path: Path) -> None:
    """Training and held-out loss against the optimizer step (PNG), readable for short runs too: markers
    when there are few points, whole steps on the x axis, a log y axis only when the loss spans more than a
    decade, and a note when nothing was logged."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    series = {label: [(h["step"], h[key]) for h in history if key in h and "step" in h]
              for key, label in (("loss", "train"), ("eval_loss", "held-out"))}
    values = [v for pts in series.values() for _, v in pts]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
    for label, pts in series.items():
        if pts:
            few = len(pts) <= 30 or label == "held-out"
            ax.plot(*zip(*pts), marker="o" if few else None, markersize=4, label=f"{label} ({len(pts)} points)")
    if not values:
        ax.text(0.5, 0.5, "no loss logged (fewer steps than [trainer] logging_steps?)", ha="center",
                va="center", transform=ax.transAxes)
    elif min(values) > 0 and max(values) / min(values) > 10:
        ax.set_yscale("log")
    steps = max((h.get("step", 0) for h in history), default=0)
    ax.set_title(f"loss per optimizer step ({steps} steps)")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("completion loss (nats/token)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    if values:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def load_for_inference(model_path: Path, adapter: Path | None, device: str, dtype_name: str):
    """(model, tokenizer) ready for generation; a LoRA adapter, when given, is merged for speed, and the output
    folder of a full fine-tune (`run.finetune = "full"`) holds the whole model."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    model_path = model_folder(model_path)
    adapter = model_folder(adapter, "--adapter", adapter=True) if adapter is not None else None
    device = resolve_device(device)
    dtype = torch_dtype(dtype_name, device)
    tokenizer = AutoTokenizer.from_pretrained(adapter if adapter and (adapter / "tokenizer_config.json").is_file()
                                              else model_path, local_files_only=True)
    full = adapter is not None and not (adapter / "adapter_config.json").is_file()  # a full fine-tune's weights
    model = AutoModelForCausalLM.from_pretrained(adapter if full else model_path, dtype=dtype, local_files_only=True)
    if adapter is not None and not full:
        from peft import PeftModel  # noqa: PLC0415

        model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
    model.to(device).eval()
    return model, tokenizer, device


def merge_adapter(model_path: Path, adapter: Path, out: Path, dtype_name: str = "float32") -> dict:
    """Base + LoRA adapter merged into plain weights (safetensors) with the tokenizer, loadable anywhere."""
    model, tokenizer, _ = load_for_inference(model_path, adapter, "cpu", dtype_name)
    out = Path(out)
    with new_folder(out, merge=True) as folder:   # the merged model's files appear together, or none do
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
    return {"out": str(out), "base_model": str(model_path), "adapter": str(adapter),
            "parameters": sum(p.numel() for p in model.parameters()), "dtype": dtype_name}


def completion_loss(model, tokenizer, samples, prompt: str = DEFAULT_PROMPT) -> float:
    """Mean loss on the answer tokens of (task, reference) pairs, prompted exactly as inference prompts."""
    import torch  # noqa: PLC0415

    from .prompt import build_prompt, prompt_text, target_text  # noqa: PLC0415

    total = 0.0
    with torch.no_grad():
        for task, ref in samples:
            head = tokenizer(prompt_text(tokenizer, build_prompt(task, prompt)), add_special_tokens=False)["input_ids"]
            answer = tokenizer(target_text(ref), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            ids = torch.tensor([head + answer])
            labels = torch.tensor([[-100] * len(head) + answer])
            total += float(model(input_ids=ids, labels=labels).loss)
    return total / max(1, len(samples))

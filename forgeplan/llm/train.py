"""LoRA supervised fine-tuning on a benchmark's train split (FORGE's recipe), top to bottom.

Each example is the chat prompt of `prompt.build_prompt` followed by the answer `prompt.target_text`
and EOS. Prompt and answer are tokenised separately, exactly as inference sees them (the model
continues after the prompt's last token), and the loss covers the answer tokens only.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from ..model.errors import InputError
from .bench import load_sample, split_ids
from .config import TrainConfig, save_config
from .prompt import build_prompt, prompt_text, target_text

DTYPES = ("float32", "bfloat16", "float16")


def resolve_device(device: str) -> str:
    import torch  # noqa: PLC0415

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("CUDA is not available on this machine", field="--device")
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be auto, cpu or cuda, got {device!r}", field="--device")
    return device


def torch_dtype(name: str, device: str):
    import torch  # noqa: PLC0415

    if name not in DTYPES:
        raise InputError(f"dtype must be one of {list(DTYPES)}, got {name!r}", field="--dtype")
    if device == "cpu" and name == "float16":
        raise InputError("float16 is not supported on CPU; use float32 or bfloat16", field="--dtype")
    return getattr(torch, name)


def encode_example(tokenizer, task, reference: dict, max_input_tokens: int) -> tuple[list[int], list[int]] | None:
    """(input ids, labels) with the prompt masked out, or None when the prompt is over the limit."""
    prompt = tokenizer(prompt_text(tokenizer, build_prompt(task)), add_special_tokens=False)["input_ids"]
    if len(prompt) > max_input_tokens:
        return None
    answer = tokenizer(target_text(reference), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return prompt + answer, [-100] * len(prompt) + answer


def load_examples(tokenizer, bench: Path, split: str, max_input_tokens: int, limit: int = 0):
    examples, skipped = [], 0
    for sid in split_ids(bench, split)[: limit or None]:
        task, ref = load_sample(bench, sid)
        if ref is None:
            raise InputError("reference.json is missing (needed for training)", file=str(Path(bench) / "tasks" / sid))
        ex = encode_example(tokenizer, task, ref, max_input_tokens)
        if ex is None:
            skipped += 1
        else:
            examples.append(ex)
    if not examples:
        raise InputError(f"no usable training examples in split {split!r} (skipped {skipped} over the input limit)",
                         file=str(bench))
    return examples, skipped


def collate(batch, pad_id: int):
    import torch  # noqa: PLC0415

    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for r, (x, y) in enumerate(batch):
        ids[r, : len(x)] = torch.tensor(x)
        labels[r, : len(y)] = torch.tensor(y)
        mask[r, : len(x)] = 1
    return ids, mask, labels


def lora_model(model, config: TrainConfig):
    from peft import LoraConfig, get_peft_model  # noqa: PLC0415

    modules = config.target_modules if config.target_modules == "all-linear" else [
        m.strip() for m in config.target_modules.split(",")]
    lc = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                    target_modules=modules, task_type="CAUSAL_LM", bias="none")
    return get_peft_model(model, lc)


def mean_loss(model, examples, pad_id: int, device: str) -> float:
    """Average answer-token loss over `examples` (no gradient), for before/after comparisons."""
    import torch  # noqa: PLC0415

    model.eval()
    total = 0.0
    with torch.no_grad():
        for ex in examples:
            ids, mask, labels = (t.to(device) for t in collate([ex], pad_id))
            total += float(model(input_ids=ids, attention_mask=mask, labels=labels).loss)
    return total / max(1, len(examples))


def train(model_path: Path, bench: Path, out: Path, config: TrainConfig, *, limit: int = 0, progress: bool = True) -> dict:
    """Fine-tune a LoRA adapter; saves adapter, tokenizer and config in `out`; returns a summary."""
    import torch  # noqa: PLC0415
    from tqdm import tqdm  # noqa: PLC0415
    from transformers import AutoModelForCausalLM, AutoTokenizer, get_scheduler  # noqa: PLC0415

    device = resolve_device(config.device)
    dtype = torch_dtype(config.dtype if device == "cuda" or config.dtype != "bfloat16" else "float32", device)
    torch.manual_seed(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    examples, skipped = load_examples(tokenizer, bench, config.split, config.max_input_tokens, limit)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=dtype).to(device)
    model = lora_model(model, config)

    per_step = config.batch_size * config.grad_accum
    steps = math.ceil(len(examples) * config.epochs / per_step)
    if config.max_steps:
        steps = config.max_steps  # exactly this many (the data is cycled), e.g. smoke tests
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.learning_rate)
    scheduler = get_scheduler(config.scheduler, optimizer, num_warmup_steps=math.ceil(config.warmup_ratio * steps),
                              num_training_steps=steps)
    g = torch.Generator().manual_seed(config.seed)
    order: list[int] = []
    losses: list[float] = []
    start = time.perf_counter()
    model.train()
    bar = tqdm(total=steps, desc="train", unit="step", disable=not progress)
    for step in range(steps):
        step_loss = 0.0
        for _ in range(config.grad_accum):
            if len(order) < config.batch_size:
                order += torch.randperm(len(examples), generator=g).tolist()
            batch = [examples[i] for i in order[: config.batch_size]]
            del order[: config.batch_size]
            ids, mask, labels = (t.to(device) for t in collate(batch, tokenizer.pad_token_id))
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss / config.grad_accum
            loss.backward()
            step_loss += loss.detach().item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(step_loss)
        bar.update(1)
        bar.set_postfix(loss=f"{step_loss:.4f}", lr=f"{scheduler.get_last_lr()[0]:.2e}")
        if config.max_seconds and time.perf_counter() - start > config.max_seconds:
            break
    bar.close()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    summary = {"examples": len(examples), "skipped_over_limit": skipped, "steps": len(losses), "planned_steps": steps,
               "first_loss": losses[0], "last_loss": losses[-1], "seconds": round(time.perf_counter() - start, 2),
               "device": device, "dtype": str(dtype).removeprefix("torch."), "base_model": str(model_path)}
    save_config(config, out, {"summary": summary})
    return summary


def load_for_inference(model_path: Path, adapter: Path | None, device: str, dtype_name: str):
    """(model, tokenizer) ready for generation; the adapter, when given, is merged for speed."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    device = resolve_device(device)
    dtype = torch_dtype(dtype_name, device)
    tokenizer = AutoTokenizer.from_pretrained(adapter if adapter and (Path(adapter) / "tokenizer_config.json").is_file()
                                              else model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=dtype)
    if adapter is not None:
        from peft import PeftModel  # noqa: PLC0415

        model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
    model.to(device).eval()
    return model, tokenizer, device

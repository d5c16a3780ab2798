"""Greedy inference over a benchmark split, with optional grammar or legal-action masking.

Greedy (temperature 0), at most 4,096 new tokens by default. The raw output of every sample
is written to the predictions JSONL as decoded, before anything parses it; `forgeplan evaluate` parses
it once. Rows are batched with left padding; each row carries its own prompt and mask, those of its
sample's answer family (`families.prompt_for`, `families.mask_for`: an Assembly Decision sample of a
`--profile magar` benchmark gets the decision prompt and grammar, a rework sample the rework ones).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..io.output import write_file
from ..model.choices import DEFAULT_PROMPT
from .bench import split_ids
from .families import mask_for, prompt_for, read_sample
from .grounded_mask import grounded_masks
from .grounding import strip_states
from .prompt import prompt_text
from .vocab import vocab_from_tokenizer

MAX_NEW_TOKENS = 4096


def eos_ids(model, tokenizer) -> tuple[int, ...]:
    ids: list[int] = []
    for src in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        ids += src if isinstance(src, (list, tuple)) else ([src] if src is not None else [])
    return tuple(dict.fromkeys(ids))


def generate(model, tokenizer, tasks, mode: str, *, device: str = "cpu", max_new_tokens: int = MAX_NEW_TOKENS,
             vocab=None, sample_seed: int | None = None, prompt: str = DEFAULT_PROMPT, num_beams: int = 1,
             num_return_sequences: int = 1, after=(), grounding: bool = False) -> list[dict]:
    """Outputs for a batch of tasks or samples (llm.families; a task is a rework sample), greedy by default:
    raw text, new token count, seconds, mask time per step.

    `sample_seed` switches to ancestral sampling (tests use it to walk many paths of the masks); `prompt`
    is the rendering the model was trained with (json | compact). With `num_return_sequences` > 1 the
    rows come task by task, each with its `task_index`. `after`: more logits processors, run after the
    mask (`python -m lab decode` times steps with one). `grounding`: the model was trained with Action
    Grounding; the engine writes the state renderings into the answer (llm.grounded_mask), `raw_output` is
    the answer without them and `grounded_output` the text the model read.
    """
    import torch  # noqa: PLC0415
    from transformers import LogitsProcessorList  # noqa: PLC0415

    from .processor import PlanMaskProcessor  # noqa: PLC0415

    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    prompts = [prompt_text(tokenizer, prompt_for(t, prompt)[0]) for t in tasks]
    enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
    eos = eos_ids(model, tokenizer)
    processors = LogitsProcessorList()
    proc = None
    if mode != "none" or grounding:
        vocab = vocab or vocab_from_tokenizer(tokenizer)
        masks = [mask_for(t, mode, vocab) for t in tasks]
        proc = PlanMaskProcessor(grounded_masks(tasks, masks, vocab, tokenizer) if grounding else masks, eos,
                                 max_new_tokens)
        processors.append(proc)
    processors.extend(after)
    sampling: dict[str, bool | float | int] = {"do_sample": False}
    if sample_seed is not None:
        torch.manual_seed(sample_seed)
        sampling = {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0}
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=max_new_tokens, num_beams=num_beams, **sampling,
                             num_return_sequences=num_return_sequences,
                             logits_processor=processors, eos_token_id=list(eos), pad_token_id=tokenizer.pad_token_id)
    seconds = time.perf_counter() - t0
    rows = []
    for r in range(out.shape[0]):
        new = out[r, enc["input_ids"].shape[1]:].tolist()
        while new and new[-1] == tokenizer.pad_token_id and tokenizer.pad_token_id not in eos:
            new.pop()
        cut = next((k for k, tok in enumerate(new) if tok in eos), len(new))
        text = tokenizer.decode(new[:cut], skip_special_tokens=True, clean_up_tokenization_spaces=False)
        rows.append({"raw_output": strip_states(text) if grounding else text,
                     **({"grounded_output": text} if grounding else {}),
                     "new_tokens": cut, "stopped": "eos" if cut < len(new) else "max_new_tokens",
                     "seconds": round(seconds / out.shape[0], 4), "task_index": r // num_return_sequences})
    if proc is not None and proc.step_seconds:
        for row in rows:
            row["mask_ms_per_step"] = round(1000 * sum(proc.step_seconds) / len(proc.step_seconds), 4)
    return rows


def generate_all(model, tokenizer, tasks, mode: str, *, batch_size: int = 8, **kw) -> list[dict]:
    """`generate` over consecutive batches (long prompts make big batches slow on CPU)."""
    rows: list[dict] = []
    for k in range(0, len(tasks), batch_size):
        rows += generate(model, tokenizer, tasks[k:k + batch_size], mode, **kw)
    return rows


def run_infer(model, tokenizer, bench: Path, split: str, out: Path, *, mode: str, device: str, batch_size: int = 1,
              limit: int = 0, max_new_tokens: int = MAX_NEW_TOKENS, progress: bool = True, prompt: str = DEFAULT_PROMPT,
              num_beams: int = 1, grounding: bool = False) -> dict:
    """Write one {"sample_id", "raw_output", ...} line per sample of the split (and `grounded_output` for a
    model trained with Action Grounding); returns a summary."""
    from tqdm import tqdm  # noqa: PLC0415

    ids = split_ids(bench, split)[: limit or None]
    vocab = vocab_from_tokenizer(tokenizer) if mode != "none" or grounding else None
    out = Path(out)
    tokens = stopped_eos = 0
    start = time.perf_counter()
    with write_file(out) as fh, tqdm(total=len(ids), desc=f"infer ({mode})", unit="task",
                                                      disable=not progress) as bar:
        for k in range(0, len(ids), batch_size):
            chunk = ids[k:k + batch_size]
            samples = [read_sample(bench, sid) for sid in chunk]
            rows = generate(model, tokenizer, samples, mode, device=device, max_new_tokens=max_new_tokens, vocab=vocab,
                            prompt=prompt, num_beams=num_beams, grounding=grounding)
            for sid, row in zip(chunk, rows):
                grounded = {"grounded_output": row["grounded_output"]} if grounding else {}
                fh.write(json.dumps({"sample_id": sid, "raw_output": row["raw_output"], **grounded, "constrained": mode,
                                     "new_tokens": row["new_tokens"], "stopped": row["stopped"]}, ensure_ascii=False) + "\n")
                tokens += row["new_tokens"]
                stopped_eos += row["stopped"] == "eos"
            fh.flush()
            bar.update(len(chunk))
    seconds = time.perf_counter() - start
    return {"predictions": str(out), "samples": len(ids), "split": split, "constrained": mode,
            "prompt": prompt, "grounding": grounding, "new_tokens": tokens, "stopped_at_eos": stopped_eos, "seconds": round(seconds, 2),
            "tokens_per_second": round(tokens / seconds, 2) if seconds else None}

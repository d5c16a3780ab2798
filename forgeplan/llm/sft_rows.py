"""Training rows tokenized here, for answers that carry text the model is given but not taught.

A grounded answer (llm.grounding) holds the engine's state renderings between the model's own text. TRL's
prompt/completion rows cannot say that part of a completion takes no loss, so such rows are tokenized
here as TRL tokenizes a conversational prompt/completion row (the chat template over prompt + answer; the
prompt's tokens carry no loss) and the renderings' tokens get the label -100 too. Each piece of the
answer is tokenized on its own, as decoding meets it: the model's text up to a rendering point, then the
rendering's own ids, which the decoder forces (llm.grounded_mask). SFTTrainer takes rows with `input_ids`
and `labels` as they are. An answer of one piece gives exactly TRL's own tokenization
(tests/test_grounding.py checks it).
"""

from __future__ import annotations

from pathlib import Path

from ..model.errors import InputError
from .families import answer_pieces, prompt_for, training_samples

IGNORE = -100


def tokenized_row(tokenizer, prompt: list[dict], pieces: list[tuple[str, bool]]) -> dict:
    """{"input_ids", "labels"} of one example: the prompt and the renderings labelled IGNORE."""
    content = "".join(text for text, _ in pieces)
    head = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template(prompt + [{"role": "assistant", "content": content}], tokenize=False)
    if not full.startswith(head + content):
        raise InputError("the chat template does not write the answer right after the generation prompt; "
                         "grounded rows need it to", field="tokenizer.chat_template")

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"] if text else []

    ids = encode(head)
    labels = [IGNORE] * len(ids)
    for text, shown in [*pieces, (full[len(head) + len(content):], False)]:
        got = encode(text)
        ids += got
        labels += [IGNORE] * len(got) if shown else got
    return {"input_ids": ids, "labels": labels}


def grounded_rows(tokenizer, bench: Path, split: str, style: str, targets: str, *, limit: int = 0) -> list[dict]:
    """The tokenized rows of a split with Action Grounding: each answer cut by the state renderings."""
    return [tokenized_row(tokenizer, prompt_for(sample, style)[0], answer_pieces(sample, targets, grounding=True))
            for _, sample in training_samples(bench, split, limit)]

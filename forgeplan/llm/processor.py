"""The transformers LogitsProcessor that applies the per-task masks during `model.generate`.

Each batch row has its own mask object (GrammarMask or LegalMask) and state. At every step the row's
state is advanced by the token chosen at the previous step, its table entry looked up, and all rows'
allowed sets are written into one numpy boolean matrix that is applied with a single `masked_fill`.
Ids past the tokenizer (a padded model vocabulary) are never allowed; EOS only when the object is
complete; and near the end of `max_new_tokens` only tokens after which the object can still be finished
in the tokens left are allowed, so a constrained output is never cut off.
"""

from __future__ import annotations

import numpy as np


def _logits_processor_base():
    from transformers import LogitsProcessor  # noqa: PLC0415

    return LogitsProcessor


class PlanMaskProcessor(_logits_processor_base()):  # type: ignore[misc]
    """Grammar (or legal-action) masking for a batch; rows with mask None are left free."""

    def __init__(self, masks: list, eos_ids: tuple[int, ...], max_new_tokens: int):
        if not eos_ids:
            raise ValueError("constrained decoding needs an EOS token id")
        self.masks, self.eos = masks, np.asarray(eos_ids, dtype=np.int64)
        self.max_new = max_new_tokens
        self.states = [m.start() if m is not None else None for m in masks]
        self.done = [False] * len(masks)
        self.prompt_len: int | None = None
        self.step_seconds: list[float] = []

    def _advance(self, row: int, token: int) -> None:
        m = self.masks[row]
        if m is None or self.done[row]:
            return
        if token in self.eos:
            self.done[row] = True
            return
        nxt = m.advance(self.states[row], token)
        if nxt is None:
            raise RuntimeError(f"row {row}: token {token} is outside the mask (was the processor applied last?)")
        self.states[row] = nxt

    def __call__(self, input_ids, scores):
        import time  # noqa: PLC0415

        import torch  # noqa: PLC0415

        t0 = time.perf_counter()
        if self.prompt_len is None:
            self.prompt_len = input_ids.shape[1]
        elif input_ids.shape[1] > self.prompt_len:
            last = input_ids[:, -1].tolist()
            for row, tok in enumerate(last):
                self._advance(row, tok)
        generated = input_ids.shape[1] - self.prompt_len
        left = self.max_new - generated - 1  # tokens that may follow the one chosen now
        allowed = np.zeros(scores.shape, dtype=bool)
        for row, m in enumerate(self.masks):
            if m is None:
                allowed[row] = True
                continue
            if self.done[row]:
                allowed[row, self.eos] = True
                continue
            e = m.entry(self.states[row])
            ids = e.within(left)
            if not len(ids) and not e.accepting:  # budget below the shortest completion: get as close as possible
                ids = e.ids[e.bounds == e.bounds.min()]
            if m.vocab.size > scores.shape[1]:  # a model vocabulary smaller than its tokenizer
                ids = ids[ids < scores.shape[1]]
            allowed[row, ids] = True
            if e.accepting:
                allowed[row, self.eos] = True
        scores = scores.masked_fill(~torch.from_numpy(allowed).to(scores.device), float("-inf"))
        self.step_seconds.append(time.perf_counter() - t0)
        return scores

"""The transformers LogitsProcessor that applies the per-task masks during `model.generate`.

Works wherever `generate` does: greedy, sampling, beam search, `num_return_sequences > 1`, batched
left-padded prompts, and one processor reused over several `generate` calls. Nothing is assumed about
which row continues which: each row's mask state is looked up by the tokens it has generated so far
(the previous step's states are kept in a dict keyed by those tokens), so beam search may reorder,
duplicate and drop rows freely. Rows map to masks in blocks (`generate` repeats each prompt
`num_beams * num_return_sequences` times, consecutively). A call whose input is not one token longer
than the previous one starts a new generation (the input is then the prompt).

The mask is applied on the logits' device as a packed bitmask (bit i of 32-bit word j allows token
32*j+i, the layout of llguidance and xgrammar): each table entry keeps its bitmask as a tensor on the
device once built, so a step only stacks the rows' cached tensors and unpacks them there. Ids past the
tokenizer (a padded model vocabulary) are never allowed; EOS only when the object is complete; and
near the end of `max_new_tokens` only tokens after which the object can still be finished in the
tokens left (an uncached bitmask for that step), so a constrained output is never cut off.

A row whose last token lies outside its mask (beam search keeps `-inf` candidates when fewer legal
continuations exist than beams) is dead: only EOS stays open for it, and its score stays `-inf`.
"""

from __future__ import annotations

import time

import numpy as np

DONE, DEAD_ROW = "done", "dead"


def _logits_processor_base():
    from transformers import LogitsProcessor  # noqa: PLC0415

    return LogitsProcessor


def pack(ids: np.ndarray, width: int) -> np.ndarray:
    """Token ids -> int32 bitmask of `width` bits (rounded up to whole words), llguidance's layout."""
    words = (width + 31) // 32
    dense = np.zeros(words * 32, dtype=bool)
    dense[ids[ids < width]] = True
    return np.packbits(dense, bitorder="little").view(np.int32)


def apply_bitmask(scores, packed) -> None:
    """Set scores to -inf where the packed bitmask [rows, words] has a 0 bit (in place, on scores' device)."""
    shifts = _shifts(scores.device)
    allowed = (packed.unsqueeze(-1) & shifts).ne(0).view(packed.shape[0], -1)[:, : scores.shape[1]]
    scores.masked_fill_(~allowed, float("-inf"))


_SHIFTS: dict = {}


def _shifts(device):
    import torch  # noqa: PLC0415

    got = _SHIFTS.get(device)
    if got is None:
        got = _SHIFTS[device] = torch.tensor([1 << k for k in range(31)] + [-(1 << 31)], dtype=torch.int32, device=device)
    return got


class PlanMaskProcessor(_logits_processor_base()):  # type: ignore[misc]
    """Grammar (or legal-action) masking for a batch of prompts; prompts with mask None are left free."""

    def __init__(self, masks: list, eos_ids: tuple[int, ...], max_new_tokens: int):
        if not eos_ids:
            raise ValueError("constrained decoding needs an EOS token id")
        self.masks, self.eos = masks, np.asarray(eos_ids, dtype=np.int64)
        self.eos_set = frozenset(int(e) for e in eos_ids)
        self.max_new = max_new_tokens
        self.prompt_len = self.last_len = -1
        self.states: dict[tuple[int, bytes], object] = {}
        self.step_seconds: list[float] = []
        self._constant: dict = {}  # (kind, width, device) -> bitmask tensor for free / finished rows

    # ----------------------------------------------------------------------- row states

    def _start(self, length: int) -> None:
        self.prompt_len, self.states = length, {}

    def _next_state(self, mask, state, token: int):
        if state in (DONE, DEAD_ROW):
            return state
        if token in self.eos_set:
            return DONE if mask.entry(state).accepting else DEAD_ROW
        nxt = mask.advance(state, token)
        return DEAD_ROW if nxt is None else nxt

    def _row_states(self, ids: np.ndarray, block: int) -> list:
        """Each row's state after its generated tokens `ids` [rows, generated]."""
        if ids.shape[1] == 0:
            self.states = {(p, b""): m.start() for p, m in enumerate(self.masks) if m is not None}
            return [self.states.get((r // block, b"")) for r in range(ids.shape[0])]
        out, states = [], {}
        for r in range(ids.shape[0]):
            m = self.masks[r // block]
            if m is None:
                out.append(None)
                continue
            key = (r // block, ids[r].tobytes())
            st = self.states.get(key[0:1] + (ids[r, :-1].tobytes(),), DEAD_ROW)
            st = states[key] = self._next_state(m, st, int(ids[r, -1]))
            out.append(st)
        self.states = states
        return out

    # ----------------------------------------------------------------------- bitmasks

    def _entry_bits(self, mask, state, left: int, width: int, device):
        if state == DONE:
            return self._const("eos", width, device)
        if state == DEAD_ROW:
            return self._const("eos", width, device)
        e = mask.entry(state)
        ids = e.within(left)
        if not len(ids) and not e.accepting:  # budget below the shortest completion: get as close as possible
            ids = e.ids[e.bounds == e.bounds.min()]
        if len(ids) < len(e.ids):  # budget-limited: a one-off bitmask
            return self._tensor(pack(np.concatenate([ids, self.eos]) if e.accepting else ids, width), device)
        key = (width, tuple(self.eos), device)
        got = e.packed.get(key)
        if got is None:
            got = e.packed[key] = self._tensor(pack(np.concatenate([ids, self.eos]) if e.accepting else ids, width),
                                               device)
        return got

    def _const(self, kind: str, width: int, device):
        key = (kind, width, device)
        got = self._constant.get(key)
        if got is None:
            ids = self.eos if kind == "eos" else np.arange(width)
            got = self._constant[key] = self._tensor(pack(ids, width), device)
        return got

    @staticmethod
    def _tensor(words: np.ndarray, device):
        import torch  # noqa: PLC0415

        return torch.from_numpy(words).to(device)

    # ----------------------------------------------------------------------- the step

    def __call__(self, input_ids, scores):
        import torch  # noqa: PLC0415

        t0 = time.perf_counter()
        rows, length = input_ids.shape
        if rows % len(self.masks):
            raise ValueError(f"{rows} rows for {len(self.masks)} prompts: rows must be a whole number per prompt")
        block = rows // len(self.masks)
        if length != self.last_len + 1:
            self._start(length)
        self.last_len = length
        ids = input_ids[:, self.prompt_len:].cpu().numpy()
        states = self._row_states(ids, block)
        if ids.shape[1] and all(s == DEAD_ROW for s in states):  # not a continuation: a new generation
            self._start(length)
            ids = ids[:, :0]
            states = self._row_states(ids, block)
        left = self.max_new - ids.shape[1] - 1  # tokens that may follow the one chosen now
        width = scores.shape[1]
        bits = [self._const("all", width, scores.device) if m is None else
                self._entry_bits(m, st, left, width, scores.device)
                for m, st in zip((self.masks[r // block] for r in range(rows)), states)]
        apply_bitmask(scores, torch.stack(bits))
        self.step_seconds.append(time.perf_counter() - t0)
        return scores

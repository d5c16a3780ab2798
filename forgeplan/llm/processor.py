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


def apply_allowed(scores, allowed: list):
    """Scores with -inf outside each row's allowed set (None: row left free). Rows given as id tensors
    (CPU) are copied into an all -inf tensor; rows given as packed bitmasks are unpacked on the device."""
    import torch  # noqa: PLC0415

    if all(a is None for a in allowed):
        return scores
    first = next(a for a in allowed if a is not None)
    if first.dtype == torch.int32:  # bitmask form (one form per processor)
        full = _all_bits(scores.shape[1], scores.device)
        apply_bitmask(scores, torch.stack([full if a is None else a for a in allowed]))
        return scores
    out = torch.full_like(scores, float("-inf"))
    for r, ids in enumerate(allowed):
        if ids is None:
            out[r] = scores[r]
        else:
            out[r].index_copy_(0, ids, scores[r].index_select(0, ids))
    return out


def _all_bits(width: int, device):
    import torch  # noqa: PLC0415

    return torch.full(((width + 31) // 32,), -1, dtype=torch.int32, device=device)


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


class PlanMaskProcessor(_logits_processor_base()):  # type: ignore[misc]  # the base class is chosen at run time (transformers' LogitsProcessor when installed)
    """Grammar (or legal-action) masking for a batch of prompts; prompts with mask None are left free."""

    def __init__(self, masks: list, eos_ids: tuple[int, ...], max_new_tokens: int, form: str = "auto"):
        """`form`: how allowed sets reach the device: "bitmask", "ids", or "auto" (ids on CPU, else bitmask)."""
        if not eos_ids:
            raise ValueError("constrained decoding needs an EOS token id")
        if form not in ("auto", "bitmask", "ids"):
            raise ValueError(f"form must be auto, bitmask or ids, got {form!r}")
        self.form = form
        self.masks, self.eos = masks, np.asarray(eos_ids, dtype=np.int64)
        self.eos_set = frozenset(int(e) for e in eos_ids)
        self.max_new = max_new_tokens
        self.prompt_len = self.last_len = -1
        self.states: dict[tuple[int, bytes], object] = {}
        self.step_seconds: list[float] = []

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
        out: list = []
        states: dict = {}
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

    # ----------------------------------------------------------------------- allowed sets on the device

    def _allowed(self, mask, state, left: int, width: int, device):
        """The row's allowed ids in the device form (cached per table entry unless the budget cuts it)."""
        if state in (DONE, DEAD_ROW):
            return self._form(self.eos, width, device)
        e = mask.entry(state)
        ids = e.within(left)
        if not len(ids) and not e.accepting:  # budget below the shortest completion: get as close as possible
            ids = e.ids[e.bounds == e.bounds.min()]
        full = len(ids) == len(e.ids)
        key = (width, tuple(self.eos), device, self.form)
        got = e.packed.get(key) if full else None
        if got is None:
            got = self._form(np.concatenate([ids, self.eos]) if e.accepting else ids, width, device)
            if full:
                e.packed[key] = got
        return got

    def _form(self, ids: np.ndarray, width: int, device):
        """CUDA and other accelerators: a packed int32 bitmask; CPU: the id list (index_copy beats unpacking)."""
        import torch  # noqa: PLC0415

        if self.form == "ids" or self.form == "auto" and torch.device(device).type == "cpu":
            return torch.from_numpy(np.unique(ids[ids < width]))
        return torch.from_numpy(pack(ids, width)).to(device)

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
        width, device = scores.shape[1], scores.device
        allowed = [None if self.masks[r // block] is None else
                   self._allowed(self.masks[r // block], st, left, width, device) for r, st in enumerate(states)]
        scores = apply_allowed(scores, allowed)
        self.step_seconds.append(time.perf_counter() - t0)
        return scores

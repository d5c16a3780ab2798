"""Action Grounding at decoding: the engine writes the state renderings of a grounded model's answer.

A model trained on grounded targets (llm.grounding) reads, after `"actions":[` and after each action, the
engine's rendering of the state reached so far; it never learned to write them (they carried no loss). So
the decoder writes them: `GroundedMask` wraps the mask of a decoding mode (the grammar mask, the legal
mask, or none) and, each time its `Grounder` reports a rendering point, forces the rendering's tokens, the
exact ids the tokenizer gives it, as training tokenized it. The wrapped mask never sees those tokens, so
it judges the answer's own text as it would without grounding; a token that would run past a rendering
point (`"},{"` where training had `"}` then the rendering) is not allowed, so the model's text and the
renderings alternate exactly as in training.

Its states are (wrapped mask's state, Grounder, forced token ids still to come). The forced tokens count
against the token budget, which the wrapped mask's bounds do not foresee: a grounded answer needs a
larger `max_new_tokens` than its plain text (the reference model decodes with 1,024).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from ..semantics.task import Task
from .grounding import Grounder
from .masking import MaskEntry
from .vocab import Vocab


FREE = "free"   # the wrapped state when no mask is wrapped


class GroundedMask:
    """The mask of a decoding mode (or None: free text) with the engine's state renderings forced in."""

    def __init__(self, task: Task, inner, vocab: Vocab, encode: Callable[[str], list[int]]):
        self.task, self.inner, self.vocab, self.encode = task, inner, vocab, encode
        self.crossing: dict[tuple, np.ndarray] = {}    # Syntax.key -> ids that run past a rendering point
        self.entries: dict = {}
        self.renderings: dict[str, tuple[int, ...]] = {}
        self._free: MaskEntry | None = None

    def start(self):
        return (self.inner.start() if self.inner is not None else FREE, Grounder(self.task), ())

    def entry(self, st) -> MaskEntry:
        inner_st, g, forced = st
        base = self.inner.entry(inner_st) if self.inner is not None else self.free()
        if forced:
            after = int(base.bounds.min()) + 1 if len(base.bounds) else 0
            return MaskEntry(np.asarray([forced[0]], dtype=np.int64),
                             np.asarray([len(forced) - 1 + after], dtype=np.int64), False)
        key = (id(base), g.syntax.key)
        got = self.entries.get(key)
        if got is None:
            keep = ~np.isin(base.ids, self._crossing(g))
            got = self.entries[key] = MaskEntry(base.ids[keep], base.bounds[keep], base.accepting)
        return got

    def advance(self, st, token_id: int):
        inner_st, g, forced = st
        if forced:
            return (inner_st, g, forced[1:]) if token_id == forced[0] else None
        data = self.vocab.token_bytes[token_id] if 0 <= token_id < self.vocab.size else None
        if data is None:
            return None
        nxt = self.inner.advance(inner_st, token_id) if self.inner is not None else FREE
        if nxt is None:
            return None
        g = g.copy()
        for k, b in enumerate(data):
            shown = g.feed(b)
            if shown is not None:
                return (nxt, g, self._tokens(shown)) if k == len(data) - 1 else None
        return (nxt, g, ())

    def free(self) -> MaskEntry:
        """Every content token, any time (the `none` mode: the answer's text is the model's own)."""
        if self._free is None:
            ids = np.asarray([i for i, b in enumerate(self.vocab.token_bytes) if b], dtype=np.int64)
            self._free = MaskEntry(ids, np.zeros(len(ids), dtype=np.int64), True)
        return self._free

    def _tokens(self, shown: str) -> tuple[int, ...]:
        got = self.renderings.get(shown)
        if got is None:
            got = self.renderings[shown] = tuple(self.encode(shown))
        return got

    def _crossing(self, g: Grounder) -> np.ndarray:
        """Token ids whose bytes reach a rendering point before their last byte (cached per syntax state)."""
        got = self.crossing.get(g.syntax.key)
        if got is None:
            bad = []
            for i, data in _may_cross(self.vocab):
                probe = g.syntax.copy()
                if any(probe.feed(b) is not None for b in data[:-1]):
                    bad.append(i)
            got = self.crossing[g.syntax.key] = np.asarray(bad, dtype=np.int64)
        return got


@lru_cache(maxsize=8)
def _may_cross(vocab: Vocab) -> tuple[tuple[int, bytes], ...]:
    """(id, bytes) of the tokens that could reach a rendering point before their last byte: a rendering
    point is right after a `[` (the list opening) or a `}` (an action's end)."""
    return tuple((i, data) for i, data in enumerate(vocab.token_bytes)
                 if data and (b"[" in data[:-1] or b"}" in data[:-1]))


def grounded_masks(samples, masks: list, vocab: Vocab, tokenizer) -> list:
    """Each sample's mask wrapped for a grounded model; decision samples (no action list) stay as they are."""
    from .families import REWORK, as_sample  # noqa: PLC0415

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    return [GroundedMask(as_sample(s).task, m, vocab, encode) if as_sample(s).family == REWORK else m
            for s, m in zip(samples, masks)]

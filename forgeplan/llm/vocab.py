"""The bytes each token id stands for, and a sorted byte table of the vocabulary (the byte trie).

Constrained decoding compares token *bytes* with the grammar's byte automaton, so the mapping from
ids to bytes must be exact for every tokenizer family:

- byte-level BPE (GPT-2, Qwen, Llama 3): vocabulary strings spell bytes with the printable stand-ins of
  `bytes_to_unicode` (e.g. 'Ġ' is a space); each character maps back to one byte, so a token may hold
  half a UTF-8 character;
- SentencePiece-style (Llama 2, Mistral, Gemma): '▁' is a space and `<0xNN>` byte-fallback tokens are
  single bytes;
- anything else: the token decoded on its own (lossy for partial characters; reported by `kind`).

Special and control tokens (EOS, padding, chat markers) get no bytes: they can never be emitted as
content. Ids at or beyond the tokenizer's size (a model vocabulary padded for efficiency) have no bytes
either. The sorted table makes every trie node a contiguous range found by bisection.

Reading a large vocabulary costs most of a second, so `vocab_from_tokenizer` keeps the result on disk
(forgeplan.llm.cache) keyed by the SHA-256 of the tokenizer's serialised form and special ids.
"""

from __future__ import annotations

import base64
import json
import sys
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where the arrays are built
    import numpy as np


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


@dataclass(eq=False)
class Vocab:
    """Token bytes (None for special or unknown ids), the EOS ids, and the sorted byte table."""

    token_bytes: list[bytes | None]
    eos_ids: tuple[int, ...]
    kind: str
    strip_first_space: bool = False  # the decoder drops one leading space of the output (SentencePiece)
    sorted_bytes: list[bytes] = field(init=False, repr=False)
    sorted_ids: list[int] = field(init=False, repr=False)

    order: list[int] | None = field(default=None, repr=False)  # sorted_ids when already known (cache)

    def __post_init__(self):
        if self.order is None:
            self.order = sorted((i for i, b in enumerate(self.token_bytes) if b), key=self.token_bytes.__getitem__)
        self.sorted_ids = self.order
        self.sorted_bytes = [self.token_bytes[i] for i in self.order]

    @property
    def size(self) -> int:
        return len(self.token_bytes)

    def id_lengths(self):
        """Byte length of each token id (0 for ids without bytes), as a numpy array (built once)."""
        got = self.__dict__.get("_id_lengths")
        if got is None:
            import numpy as np  # noqa: PLC0415

            got = self.__dict__["_id_lengths"] = np.fromiter((len(b) if b else 0 for b in self.token_bytes),
                                                             dtype=np.int64, count=self.size)
        return got

    def arrays(self) -> "SortedArrays":
        """The sorted table as numpy arrays (built once), for walking every token of a state at once."""
        got = self.__dict__.get("_arrays")
        if got is None:
            got = self.__dict__["_arrays"] = SortedArrays.of(self)
        return got

    def child_range(self, prefix: bytes, byte: int, lo: int, hi: int) -> tuple[int, int]:
        """The range of tokens starting with prefix+byte inside [lo, hi) (the range of `prefix`)."""
        p = prefix + bytes((byte,))
        a = bisect_left(self.sorted_bytes, p, lo, hi)
        b = bisect_left(self.sorted_bytes, prefix + bytes((byte + 1,)), a, hi) if byte < 255 else hi
        return a, b

    def exact_end(self, prefix: bytes, lo: int, hi: int) -> int:
        """Tokens equal to `prefix` are [lo, exact_end) of its range."""
        return bisect_right(self.sorted_bytes, prefix, lo, hi)

    def text(self, ids) -> str:
        data = b"".join(self.token_bytes[i] or b"" for i in ids if i < self.size)
        if self.strip_first_space and data.startswith(b" "):
            data = data[1:]
        return data.decode("utf-8", errors="replace")


@dataclass(eq=False)
class SortedArrays:
    """The sorted token bytes concatenated (`flat`), with each token's start, length and id."""

    flat: "np.ndarray"     # uint8
    starts: "np.ndarray"   # int64, per sorted position
    lengths: "np.ndarray"  # int64, per sorted position
    ids: "np.ndarray"      # int64 token id, per sorted position
    first: "np.ndarray"    # int64 [257]: sorted positions [first[b], first[b+1]) start with byte b

    @classmethod
    def of(cls, v: Vocab) -> "SortedArrays":
        import numpy as np  # noqa: PLC0415

        lengths = np.fromiter((len(b) for b in v.sorted_bytes), dtype=np.int64, count=len(v.sorted_bytes))
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        flat = np.frombuffer(b"".join(v.sorted_bytes), dtype=np.uint8)
        heads = flat[starts] if len(starts) else np.zeros(0, dtype=np.uint8)
        first = np.searchsorted(heads, np.arange(257), side="left").astype(np.int64)
        return cls(flat, starts, lengths, np.asarray(v.sorted_ids, dtype=np.int64), first)


def _decoders(node) -> list[dict]:
    if not node:
        return []
    out = [node]
    for sub in node.get("decoders", []) or []:
        out += _decoders(sub)
    return out


def _decoder_kind(backend_json: dict) -> str:
    decoders = [d.get("type", "") for d in _decoders(backend_json.get("decoder"))]
    pre = json.dumps(backend_json.get("pre_tokenizer"))
    if "ByteLevel" in decoders or '"ByteLevel"' in pre:
        return "byte-level"
    if "ByteFallback" in decoders or "Metaspace" in decoders or "Metaspace" in pre or any(
            d == "Replace" for d in decoders):
        return "sentencepiece"
    return "decoded"


def _to_cache(v: Vocab) -> dict:
    lens = [len(b) if b is not None else -1 for b in v.token_bytes]
    blob = b"".join(b for b in v.token_bytes if b is not None)
    return {"lens": lens, "bytes": base64.b64encode(blob).decode("ascii"), "eos": list(v.eos_ids), "kind": v.kind,
            "strip": v.strip_first_space, "order": v.order}


def _from_cache(d: dict) -> Vocab:
    blob, k = base64.b64decode(d["bytes"]), 0
    out: list[bytes | None] = []
    for n in d["lens"]:
        if n < 0:
            out.append(None)
        else:
            out.append(blob[k:k + n])
            k += n
    return Vocab(out, tuple(d["eos"]), d["kind"], d["strip"], d["order"])


def vocab_from_tokenizer(tokenizer) -> Vocab:
    """A Vocab for a Hugging Face tokenizer, from the disk cache when this exact tokenizer was read before."""
    from . import cache  # noqa: PLC0415

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return _read_vocab(tokenizer, None)
    text = backend.to_str()
    special = sorted(set(getattr(tokenizer, "all_special_ids", []) or []))
    name = cache.key(text, json.dumps([special, len(tokenizer), tokenizer.eos_token_id]), cache.source_of(sys.modules[__name__]))
    got = cache.read_json("vocab", name)
    if got is not None:
        return _from_cache(got)
    v = _read_vocab(tokenizer, text)
    cache.write_json("vocab", name, _to_cache(v))
    return v


def _read_vocab(tokenizer, backend_text: str | None) -> Vocab:
    """A Vocab for a Hugging Face tokenizer (fast tokenizers read exactly; others by decoding)."""
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    kind, strip = "decoded", False
    if backend_text is not None:
        data = json.loads(backend_text)
        kind = _decoder_kind(data)
        strip = any(d.get("type") == "Strip" and d.get("content") == " " and d.get("start", 0) > 0
                    for d in _decoders(data.get("decoder")))
        special |= {t["id"] for t in data.get("added_tokens", []) if t.get("special")}
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    out: list[bytes | None] = []
    dec = _byte_decoder()
    for i, piece in enumerate(pieces):
        if i in special or piece is None:
            out.append(None)
        elif kind == "byte-level":
            try:
                out.append(bytes(dec[c] for c in piece))
            except KeyError:  # an added, non-special token stored as plain text
                out.append(piece.encode("utf-8"))
        elif kind == "sentencepiece":
            if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
                out.append(bytes((int(piece[3:5], 16),)))
            else:
                out.append(piece.replace("▁", " ").encode("utf-8"))
        else:
            out.append(tokenizer.decode([i]).encode("utf-8"))
    out = [b if b else None for b in out]
    eos = getattr(tokenizer, "eos_token_id", None)
    eos_ids = tuple(eos) if isinstance(eos, (list, tuple)) else ((eos,) if eos is not None else ())
    return Vocab(out, eos_ids, kind, strip)

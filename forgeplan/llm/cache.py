"""On-disk cache of what constrained decoding derives from a tokenizer or a grammar (no pickles).

Two things are worth keeping between runs: a vocabulary's token bytes (reading 150k token strings
back into bytes takes a good part of a second) and an assembly's compiled byte DFA (~0.1 s per
assembly). Each file is named by the SHA-256 of what it was derived from plus the source of the
module that derives it, so a changed tokenizer, grammar or algorithm misses instead of reading a stale
entry. The folder is $FORGEPLAN_CACHE, else ~/.cache/forgeplan; FORGEPLAN_CACHE=off disables it.
Entries are written to a temporary name and renamed, so concurrent runs never read half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def cache_dir() -> Path | None:
    root = os.environ.get("FORGEPLAN_CACHE", "")
    if root.lower() == "off":
        return None
    return Path(root) if root else Path.home() / ".cache" / "forgeplan"


def key(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8") if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:32]


def source_of(module) -> str:
    """The module's source text (part of a cache key: new code, new entries)."""
    return Path(module.__file__).read_text(encoding="utf-8")


def _path(kind: str, name: str, suffix: str) -> Path | None:
    root = cache_dir()
    return None if root is None else root / kind / f"{name}{suffix}"


def read(kind: str, name: str, suffix: str) -> bytes | None:
    path = _path(kind, name, suffix)
    try:
        return path.read_bytes() if path is not None else None
    except OSError:
        return None


def write(kind: str, name: str, suffix: str, data: bytes) -> None:
    """Best effort: a read-only or full disk only costs the next run the rebuild."""
    path = _path(kind, name, suffix)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        return


def read_json(kind: str, name: str):
    data = read(kind, name, ".json")
    try:
        return json.loads(data) if data is not None else None
    except ValueError:
        return None


def write_json(kind: str, name: str, value) -> None:
    write(kind, name, ".json", json.dumps(value, separators=(",", ":")).encode("utf-8"))

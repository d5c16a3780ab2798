"""The one reader of untrusted files, and the escaping of untrusted text on its way out.

Every file forgeplan reads (model outputs, task folders, benchmark files, assemblies, puzzles, PDDL
plans, predictions JSONL) comes through here, so that the same guarantees hold at every entry point:

* only regular files are opened (a FIFO or device is refused without blocking); a symlink inside a
  folder that forgeplan walks (a task or benchmark folder) must point inside that folder;
* each kind of file has a size limit, read with at most limit + 1 bytes in memory;
* text is strict UTF-8; JSON has no NaN/Infinity, no duplicate keys, no integer longer than
  MAX_INT_DIGITS digits, no nesting deeper than MAX_DEPTH and no lone surrogate in a string;
* every refusal is an `InputError` naming the file, the field and what was expected (exit 2).
Every file forgeplan writes goes through forgeplan.io.output. Text echoed from untrusted input is made safe by forgeplan.io.quoting, not here.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

from ..model.errors import InputError
# the output places and the writer live in io/output.py; these names stay importable from here too
from .output import check_output, output_folder, write_file as new_file  # noqa: F401

# bytes per kind of file; docs/limits.md lists the same numbers
LIMITS = {
    "output": 1_000_000,          # one model output
    "task file": 8_000_000,       # one of a task folder's JSON files
    "bench file": 50_000_000,     # manifest.json, meta.json, reference.json, minimal_rework.json
    "digest file": 200_000_000,   # a benchmark's SHA256SUMS (100,000 tasks of 13 files: about 150 MB)
    "assembly file": 8_000_000,
    "puzzle file": 20_000_000,    # also the uncompressed size of a gzip .xmpuzzle
    "plan file": 10_000_000,      # a PDDL planner's plan
    "config file": 1_000_000,     # a training configuration (TOML)
    "predictions": 256_000_000,   # a predictions JSONL (streamed line by line)
    "batch output": 256_000_000,  # an OpenAI / vllm run-batch output JSONL (streamed line by line)
    "response": 4_000_000,        # one chat completion from an endpoint
    "run file": 1_000_000,        # an evaluation's run.json
    "run samples": 512_000_000,   # an evaluation's samples.jsonl (streamed line by line; each row holds its raw output)
}
# JSON values (containers, strings, numbers, literals) per kind of file, counted before parsing: what
# bounds the parser's memory, which the byte limit alone does not (8 MB of `[{},{},...]` is 2.7 million
# dicts). Each cap holds the largest valid file of its kind: 100,000 voxels are 400,000 values.
MAX_ITEMS = {
    "task file": 1_000_000, "assembly file": 1_000_000, "puzzle file": 1_000_000,
    "bench file": 2_000_000, "config file": 200_000, "response": 400_000,
}
DEFAULT_MAX_ITEMS = 2_000_000
MAX_LINE_BYTES = 2_000_000       # one predictions JSONL line
MAX_DEPTH = 64                   # JSON nesting (the output contract allows 32)
MAX_INT_DIGITS = 24              # JSON integer literal length (digits and sign)
# a lone surrogate reaches a parsed string only through a \uD8xx-\uDFxx escape, or as a character of
# text that did not come from strict UTF-8 (a string handed over by another parser)
_SURROGATE = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")


class Rejected(Exception):
    """JSON that breaks a limit: `reason` says which, `field` names the key when there is one."""

    def __init__(self, reason: str, field: str | None = None):
        super().__init__(reason)
        self.reason, self.field = reason, field


# ----------------------------------------------------------------------------- bytes

def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):
        return False


def open_regular(path: Path | str, kind: str, *, root: Path | None = None, limit: int | None = None,
                 head: bool = False):
    """A binary file object for a regular file of at most `limit` (default LIMITS[kind]) bytes.

    `root`: the folder being read; the path (after symlinks) must stay inside it. The file is opened
    non-blocking and checked with fstat, so a FIFO or device is refused instead of hanging.
    `head`: a larger file is not an error (the caller reads limit + 1 bytes and judges).
    """
    path = Path(path)
    limit = LIMITS[kind] if limit is None else limit
    if root is not None and not _inside(path, root):
        raise InputError(f"{kind} leads outside the folder {str(root)!r} (symlink or '..')", file=str(path))
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(f"cannot read {kind}: {exc.strerror or exc}", file=str(path)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (info.st_size > limit and not head):
        os.close(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{kind} is not a regular file (a FIFO, device or directory)", file=str(path))
        raise InputError(f"{kind} is {info.st_size} bytes, over the {limit}-byte limit", file=str(path))
    return os.fdopen(fd, "rb")


def read_bytes(path: Path | str, kind: str, *, root: Path | None = None, limit: int | None = None,
               head: bool = False) -> bytes:
    """The bytes of a regular file (see `open_regular`), at most LIMITS[kind] of them; with `head`,
    the first limit + 1 bytes of a larger file (a model output over the limit is a verdict)."""
    limit = LIMITS[kind] if limit is None else limit
    with open_regular(path, kind, root=root, limit=limit, head=head) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit and not head:  # the file grew after fstat
        raise InputError(f"{kind} is over the {limit}-byte limit", file=str(path))
    return data


def read_stdin(kind: str, head: bool = False) -> bytes:
    """At most LIMITS[kind] bytes of standard input (see `read_bytes`); closed or unreadable is bad input."""
    if sys.stdin is None:
        raise InputError("standard input is closed; expected the input there", file="<stdin>")
    try:
        data = sys.stdin.buffer.read(LIMITS[kind] + 1)
    except (OSError, ValueError) as exc:   # a folder, a closed descriptor
        raise InputError(f"cannot read standard input: {getattr(exc, 'strerror', None) or exc}", file="<stdin>") from None
    if len(data) > LIMITS[kind] and not head:
        raise InputError(f"{kind} is over the {LIMITS[kind]}-byte limit", file="<stdin>")
    return data


def decode(data: bytes, file: str, kind: str = "file") -> str:
    """Strict UTF-8 (no surrogates, no overlong forms), a leading BOM dropped."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(f"{kind} is not UTF-8 text ({exc.reason} at byte {exc.start})", file=file) from None


def read_text(path: Path | str, kind: str, *, root: Path | None = None) -> str:
    return decode(read_bytes(path, kind, root=root), str(path), kind)


# ----------------------------------------------------------------------------- JSON

def _pairs(pairs: list) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise Rejected(f"duplicate key {k[:80]!r}", k)
        out[k] = v
    return out


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise Rejected(f"an integer of {len(text)} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > 400:
        raise Rejected(f"a number of {len(text)} characters")
    x = float(text)
    if x in (float("inf"), float("-inf")):
        raise Rejected(f"number {text[:40]} is out of range (overflows to infinity)")
    return x


def _constant(name: str):
    raise Rejected(f"JSON constant {name} is not allowed (numbers must be finite)")


def _check_tree(obj, text: str, max_depth: int, lone_surrogates: bool) -> None:
    """Depth <= max_depth, and no lone surrogate in any string (only possible via a \\uD8xx escape)."""
    check_str = not lone_surrogates and bool(_SURROGATE.search(text))
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if d > max_depth:
            raise Rejected(f"nests deeper than {max_depth} levels")
        if isinstance(o, dict):
            if check_str:
                stack.extend((k, d) for k in o)
            stack.extend((v, d + 1) for v in o.values() if check_str or isinstance(v, (dict, list)))
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o if check_str or isinstance(v, (dict, list)))
        elif check_str and isinstance(o, str):
            try:
                o.encode("utf-8")
            except UnicodeEncodeError:
                raise Rejected(f"string {o[:60]!r} holds a lone surrogate (not Unicode text)") from None


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def count_items(text: str, max_items: int) -> None:
    """Refuse JSON text holding more than `max_items` values, before the parser allocates them: every
    value but the first follows a ',' or is the first member of a non-empty container, so counting ','
    and the '[' / '{' not closed at once bounds the count. The bound over the whole text is a few C-speed
    passes (a string holding such characters only raises it); only when it is over the cap are the
    strings blanked and the structure counted again."""
    def bound(t: str) -> int:
        return t.count(",") + t.count("[") - t.count("[]") + t.count("{") - t.count("{}") + 1

    if bound(text) <= max_items:
        return
    n = bound(_STRING.sub('""', text))
    if n > max_items:
        raise Rejected(f"holds more than {max_items:,} JSON values (the limit for this kind of file)")


def parse_json(text: str, max_depth: int = MAX_DEPTH, lone_surrogates: bool = False, max_items: int | None = None):
    """Untrusted JSON text under the limits above; raises Rejected or json.JSONDecodeError.

    `lone_surrogates`: let them through (a predictions line carries a model's raw output, which the
    output contract judges; a bad one must be that sample's verdict, not the end of the run).
    `max_items`: the most values the text may hold (see `count_items`)."""
    if max_items is not None:
        count_items(text, max_items)
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_int=_int, parse_float=_float,
                          parse_constant=_constant)
    except RecursionError:
        raise Rejected(f"nests deeper than {max_depth} levels") from None
    _check_tree(data, text, max_depth, lone_surrogates)
    return data


def loads(text: str, file: str, lone_surrogates: bool = False, kind: str | None = None):
    """Parse untrusted JSON text under the limits above (with `kind`, also its MAX_ITEMS); InputError
    names the file (and the key)."""
    try:
        return parse_json(text, lone_surrogates=lone_surrogates,
                          max_items=None if kind is None else MAX_ITEMS.get(kind, DEFAULT_MAX_ITEMS))
    except Rejected as exc:
        raise InputError(exc.reason, file=file, field=exc.field) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", file=file) from None


def read_json(path: Path | str, kind: str, *, root: Path | None = None):
    return loads(read_text(path, kind, root=root), str(path), kind=kind)


def read_jsonl(path: Path | str, kind: str = "predictions", lone_surrogates: bool = False, offsets: bool = False,
               max_line: int = MAX_LINE_BYTES):
    """(line number, parsed JSON) per non-blank line of a regular file, streamed: each line under
    `max_line` bytes, the file under LIMITS[kind]. With `offsets`, (line number, byte offset, parsed JSON),
    so that a caller can read one line again (`read_jsonl_line`) instead of holding it."""
    path = Path(path)
    total = 0
    with open_regular(path, kind) as fh:
        for n, line in enumerate(iter(lambda: fh.readline(max_line + 1), b""), 1):
            start = total
            total += len(line)
            if total > LIMITS[kind]:
                raise InputError(f"{kind} is over the {LIMITS[kind]}-byte limit", file=str(path))
            if len(line) > max_line:
                raise InputError(f"line is over {max_line} bytes", file=str(path), field=f"line {n}")
            if not line.strip():
                continue
            try:
                value = loads(decode(line, str(path), kind), str(path), lone_surrogates)
            except InputError as exc:
                raise InputError(exc.reason, file=str(path), field=f"line {n}" + (f".{exc.field}" if exc.field else "")) from None
            yield (n, start, value) if offsets else (n, value)


def read_jsonl_line(path: Path | str, offset: int, n: int, kind: str = "predictions", lone_surrogates: bool = False):
    """The parsed JSON of line `n`, which starts at byte `offset` (as `read_jsonl(offsets=True)` gave it),
    read again under the same checks."""
    path = Path(path)
    with open_regular(path, kind) as fh:
        fh.seek(offset)
        line = fh.readline(MAX_LINE_BYTES + 1)
    if len(line) > MAX_LINE_BYTES:
        raise InputError(f"line is over {MAX_LINE_BYTES} bytes", file=str(path), field=f"line {n}")
    try:
        return loads(decode(line, str(path), kind), str(path), lone_surrogates)
    except InputError as exc:
        raise InputError(exc.reason, file=str(path), field=f"line {n}" + (f".{exc.field}" if exc.field else "")) from None

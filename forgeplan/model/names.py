"""What an id may be: the one check of every name read from a file (part, spare, assembly, family, kind,
sample), and the stricter one of a sample id, which also names a folder.

An id is printable text: no control characters, no line or paragraph separators (U+2028, U+2029), no
bidirectional or other format characters (U+202E, U+061C, U+200E, U+2066, ...), no lone surrogates, no
spaces other than U+0020 — what `str.isprintable` accepts. Such an id echoes on one line as it reads, and
the quoting functions of forgeplan.io.quoting carry it into ASP, PDDL, grammar and markdown text
unchanged in meaning.
"""

from __future__ import annotations

import re

MAX_NAME = 200          # characters of one id
# a sample id names a folder under tasks/: one path component, never '.', '..' or hidden
SAMPLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")   # whole string: use fullmatch


def name_problem(text: object) -> str | None:
    """Why `text` is not a usable id (one phrase), or None when it is."""
    if not isinstance(text, str):
        return f"must be a string, got {type(text).__name__}"
    if not text:
        return "must not be empty"
    if len(text) > MAX_NAME:
        return f"is {len(text)} characters long (at most {MAX_NAME})"
    if not text.isprintable():
        bad = next(c for c in text if not c.isprintable())
        return f"holds the non-printable character U+{ord(bad):04X} (controls, line separators and bidi marks are refused)"
    return None


def sample_id_problem(text: object) -> str | None:
    """Why `text` is not a sample id (a single folder name), or None when it is."""
    if not isinstance(text, str):
        return f"must be a string, got {type(text).__name__}"
    if not SAMPLE_ID.fullmatch(text):
        return "is not a folder name (1-200 letters, digits, '_', '-', '.', not starting with '.', '_' or '-')"
    return None

"""One quoting function per target language: the only way untrusted text enters a program or a screen.

Ids are checked once at load (forgeplan.model.names: printable, no separators, no bidi marks); the
functions below still write any string so that it cannot change the meaning of the text around it:

| target | function | what it guarantees |
|---|---|---|
| ASP (clingo) | `asp_string`, `asp_comment` | a string term equal to the text; a comment that stays one line |
| PDDL | unified-planning's `PDDLWriter` (planners/pddl/files.py) | illegal names renamed, mapped back by `get_item_named` |
| PDDL written by hand (partial moves) | `pddl_names` | each id a unique name of `[a-z0-9_]` |
| Lark | `lark_string` | a literal matching exactly the text, on one line |
| GBNF | `gbnf_string` | the same for llama.cpp's dialect |
| portable Lark | `portable_lark_string` | the same for vLLM's line-based Lark-to-EBNF reading |
| JSON (JSON Schema, --json) | `json_text` | valid JSON whose every non-printable character is a \\u escape |
| terminal | `one_line` | one printable line: controls, separators and bidi marks as backslash escapes |
| markdown | `markdown_cell` | one line inside a table cell or heading, markdown characters escaped |
| HTML | `html_text` | text inside an element or a quoted attribute: `& < > " '` as character references |
| JSON inside an HTML `<script>` | `script_json` | JSON that no `</script>`, `<!--` or line separator can end or change |
"""

from __future__ import annotations

import json
import re

from ..model.errors import InputError


def _escape(c: str) -> str:
    """A backslash escape of one character: \\xNN, \\uNNNN or \\UNNNNNNNN (Python's, Lark's and GBNF's)."""
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else (f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")


def _printable(text: str, keep: str = "") -> str:
    """`text` with every non-printable character (and none of `keep`) written as a backslash escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape(c) for c in text)


# ----------------------------------------------------------------------------- terminal and markdown

def one_line(text, limit: int | None = None) -> str:
    """Untrusted text as one printable line: controls, separators, bidi and other format characters and
    lone surrogates become backslash escapes; cut to `limit` characters."""
    s = str(text)
    cut = limit is not None and len(s) > limit
    s = _printable(s[:limit] if cut else s)
    if limit is not None and len(s) > limit:
        s, cut = s[:limit], True
    return s + "..." if cut else s


# what can change a one-line table cell or heading: column bars, code, emphasis, links, inline HTML
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~])")


def markdown_cell(text, limit: int | None = None) -> str:
    """Untrusted text inside a markdown table cell or heading: one line, its markdown characters escaped."""
    return _MARKDOWN.sub(r"\\\1", one_line(text, limit))


def plot_text(text, limit: int | None = 80) -> str:
    """Untrusted text in a matplotlib label, title or legend: one line, every `$` escaped so that it is
    never read as mathtext (a malformed formula fails only when the figure is drawn)."""
    return one_line(text, limit).replace("$", r"\$")


# ----------------------------------------------------------------------------- JSON

def _json_escape(c: str) -> str:
    o = ord(c)
    if o < 0x10000:
        return f"\\u{o:04x}"
    o -= 0x10000
    return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"


def json_text(data, indent: int | None = 1) -> str:
    """JSON that stays valid and printable for any string: non-ASCII kept, but every non-printable
    character (controls, separators, bidi marks, lone surrogates) written as a \\u escape."""
    s = json.dumps(data, indent=indent, ensure_ascii=False)  # escapes C0 controls itself
    if all(line.isprintable() for line in s.split("\n")):
        return s
    return "".join(c if c.isprintable() or c in " \n" else _json_escape(c) for c in s)


# ----------------------------------------------------------------------------- HTML

def html_text(text) -> str:
    """Untrusted text as HTML element content or a quoted attribute value: it stays text, never markup."""
    import html

    return html.escape(str(text), quote=True)


def script_json(data) -> str:
    """`data` as JSON to inline in an HTML `<script type="application/json">` element: `<`, `>` and `&` as
    \\u escapes (no `</script>` or `<!--` can close or change the element), U+2028/U+2029 too; the
    script reads it back with JSON.parse unchanged."""
    s = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (s.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# ----------------------------------------------------------------------------- ASP

def asp_string(text: str) -> str:
    """A clingo string term whose value is exactly `text` (clingo's escapes: \\\\, \\" and \\n; every
    other character stands for itself inside the quotes, except NUL, which no string term can hold)."""
    if "\x00" in text:
        raise InputError(f"{one_line(text, 80)!r} holds a NUL character, which no ASP string can hold", field="id")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def asp_comment(text) -> str:
    """An ASP line comment that says `text` and ends at the end of its line."""
    return "% " + one_line(text)


# ----------------------------------------------------------------------------- grammars

def lark_string(text: str) -> str:
    """A Lark string literal matching exactly `text`, on one line (non-printables as \\x/\\u escapes)."""
    return '"' + _printable(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def _fixed_width(c: str) -> str:
    """\\uNNNN or \\UNNNNNNNN: fixed-width escapes (xgrammar reads \\x greedily, llama.cpp two digits)."""
    o = ord(c)
    return f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def gbnf_string(text: str) -> str:
    """A GBNF (llama.cpp, xgrammar) string literal matching exactly `text`: `\\"`, `\\\\`, and every
    non-printable character as \\uNNNN or \\UNNNNNNNN. NUL is refused (xgrammar ends a literal there)."""
    if "\x00" in text:
        raise InputError(f"{one_line(text, 80)!r} holds a NUL character, which no GBNF string can hold", field="id")
    body = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + (body if body.isprintable() else "".join(c if c.isprintable() else _fixed_width(c) for c in body)) + '"'


_PORTABLE_ESCAPED = set('"\'#/\\')


def portable_lark_string(text: str) -> str:
    """Lark literals for vLLM's line-based reading: runs of plain characters as literals; each other
    character (quotes, `#`, `/`, backslash, non-printables) a literal of its own, `"\\uNNNN"` (or
    `"\\UNNNNNNNN"` past the BMP; xgrammar's Lark reader refuses `\\xNN`), alone, so that no reader takes
    the hex digits of the next character into the escape."""
    out, run = [], ""
    for ch in text:
        if ch in _PORTABLE_ESCAPED or not ch.isprintable():
            out += [f'"{run}"'] if run else []
            out.append(f'"\\u{ord(ch):04x}"' if ord(ch) < 0x10000 else f'"\\U{ord(ch):08x}"')
            run = ""
        else:
            run += ch
    out += [f'"{run}"'] if run or not out else []
    return " ".join(out)


# ----------------------------------------------------------------------------- PDDL written by hand

def pddl_names(ids) -> dict[str, str]:
    """Id -> a PDDL name (`p_`, then lower-case letters, digits and `_`), unique, recognisably the id: for
    the PDDL forgeplan writes itself; unified-planning's PDDLWriter renames the names of the problems it writes."""
    out, used = {}, set()
    for pid in ids:
        name = "p_" + re.sub(r"[^a-z0-9_]", "_", pid.lower())
        while name in used:
            name += "_"
        used.add(name)
        out[pid] = name
    return out

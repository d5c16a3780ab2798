"""Lark grammar -> GBNF (the EBNF dialect of llama.cpp / xgrammar), for decoders that do not read Lark.

Used by `forgeplan perf decode` to run xgrammar on exactly the grammar forgeplan decodes with; vLLM's
xgrammar backend accepts the same text. Covers what forgeplan's grammars use: rules, literals,
alternatives, optionals, repetition and regex terminals (classes, groups, bounded repeats).
"""

from __future__ import annotations

from ..model.errors import InputError


def _name(name: str, terminal: bool) -> str:
    base = name.lower().strip("_").replace("_", "-") or "anon"
    return f"t-{base}" if terminal else ("root" if name == "start" else base)


def _quote(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _class_char(c: int) -> str:
    ch = chr(c)
    if ch in "]\\^-[":
        return "\\" + ch
    if c < 0x20 or c == 0x7F:
        return f"\\x{c:02x}"
    return ch


def _regex(pattern: str) -> str:
    import re._parser as sre  # noqa: PLC0415
    from re import _constants as C  # noqa: PLC0415

    def seq(items) -> str:
        return " ".join(item(op, av) for op, av in items) or '""'

    def klass(items) -> str:
        neg, parts = False, []
        for op, av in items:
            if op is C.NEGATE:
                neg = True
            elif op is C.LITERAL:
                parts.append(_class_char(av))
            elif op is C.RANGE:
                parts.append(f"{_class_char(av[0])}-{_class_char(av[1])}")
            elif op is C.CATEGORY and av is C.CATEGORY_DIGIT:
                parts.append("0-9")
            else:
                raise InputError(f"regex class item {op} has no GBNF form", field="grammar")
        return "[" + ("^" if neg else "") + "".join(parts) + "]"

    def item(op, av) -> str:
        if op is C.LITERAL:
            return _quote(chr(av))
        if op is C.NOT_LITERAL:
            return f"[^{_class_char(av)}]"
        if op is C.ANY:
            return "[^\\n]"
        if op is C.IN:
            return klass(av)
        if op is C.SUBPATTERN:
            return f"({seq(list(av[-1]))})"
        if op is C.BRANCH:
            return "(" + " | ".join(seq(list(b)) for b in av[1]) + ")"
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, body = av
            inner = f"({seq(list(body))})"
            if hi is C.MAXREPEAT:
                return f"{inner}*" if lo == 0 else (f"{inner}+" if lo == 1 else f"{inner}{{{lo},}}")
            if (lo, hi) == (0, 1):
                return f"{inner}?"
            return f"{inner}{{{lo},{hi}}}"
        raise InputError(f"regex feature {op} has no GBNF form", field="grammar")

    return seq(list(sre.parse(pattern)))


def lark_to_gbnf(text: str) -> str:
    """The GBNF text of a Lark grammar (root = start)."""
    from lark import Token, Tree  # noqa: PLC0415
    from lark.load_grammar import _literal_to_pattern, load_grammar  # noqa: PLC0415

    from .automaton import _normalise  # noqa: PLC0415

    grammar, _ = load_grammar(text, "<grammar>", [], False)

    def expr(t) -> str:
        if isinstance(t, Token):
            if t.type in ("RULE", "TERMINAL"):
                return _name(t.value, t.type == "TERMINAL")
            p = _literal_to_pattern(t)
            return _quote(p.value) if p.type == "str" else f"({_regex(p.value)})"
        kind, ch = t.data, t.children
        if kind == "expansions":
            return " | ".join(expr(c) for c in ch)
        if kind == "expansion":
            return " ".join(expr(c) for c in ch) or '""'
        if kind in ("value", "literal", "alias"):
            return expr(ch[0])
        if kind == "maybe":
            return f"({expr(ch[0])})?"
        if kind == "expr":
            op = ch[1]
            if op in ("?", "*", "+"):
                return f"({expr(ch[0])}){op}"
            lo = int(ch[2])
            hi = int(ch[3]) if len(ch) > 3 else lo
            return f"({expr(ch[0])}){{{lo},{hi}}}"
        if kind == "range":
            a, b = (_literal_to_pattern(x).value for x in ch)
            return f"[{_class_char(ord(a))}-{_class_char(ord(b))}]"
        raise InputError(f"grammar construct {kind!r} has no GBNF form", field="grammar")

    lines = []
    for name, _p, tree, _o in grammar.rule_defs:
        assert isinstance(tree, Tree)
        lines.append(f"{_name(name, False)} ::= {expr(_normalise(tree))}")
    for name, (tree, _prio) in grammar.term_defs:
        lines.append(f"{_name(name, True)} ::= {expr(_normalise(tree))}")
    return "\n".join(lines) + "\n"

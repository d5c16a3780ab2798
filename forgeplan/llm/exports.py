"""A task grammar for every serving engine: GBNF, a portable Lark variant, and JSON Schema.

- GBNF (llama.cpp's dialect, read by llama.cpp, xgrammar and llguidance): rule names with hyphens,
  string literals with `\\"` escapes, character classes whose punctuation is written `\\xNN` (a
  backslash before `-` is not read alike by every GBNF reader).
- Portable Lark: Lark syntax that also survives vLLM's Lark-to-EBNF conversion on its xgrammar path,
  which works line by line and reads any `"..."` as a string without escapes: one line per rule, no
  terminals, no regular expressions (classes become alternatives of literals, bounded repeats nested
  optionals), no `[...]` optionals, and `"`, `'`, `#`, `/` and `\\` inside literals written `\\uNNNN`
  (the escape that Lark, llguidance, xgrammar's Lark reader and its EBNF reader all read; xgrammar's Lark
  reader refuses `\\xNN`).
- JSON Schema (engines that take only schemas): the output model's schema with the task's ids as
  constants and enumerations; what it cannot say is listed in its "description".

All writers share one reading of the Lark grammar (Lark's own loader), so they say the same language.
"""

from __future__ import annotations

from ..io.quoting import gbnf_string, portable_lark_string
from ..model.errors import InputError


def _gbnf_name(name: str, terminal: bool) -> str:
    base = name.lower().strip("_").replace("_", "-") or "anon"
    return f"t-{base}" if terminal else ("root" if name == "start" else base)


def _portable_name(name: str, terminal: bool) -> str:
    base = name.lower().strip("_") or "anon"
    return f"t_{base}" if terminal else base


def _class_char(c: int) -> str:
    ch = chr(c)
    return ch if ch.isalnum() and c < 0x80 else (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}")


class _Writer:
    """Lark expression trees -> text in one dialect (gbnf | portable)."""

    def __init__(self, dialect: str):
        self.portable = dialect == "portable"
        self.name = _portable_name if self.portable else _gbnf_name
        self.string = portable_lark_string if self.portable else gbnf_string

    def repeat(self, body: str, lo: int, hi: int | None) -> str:
        if not self.portable:
            if hi is None:
                return f"{body}*" if lo == 0 else (f"{body}+" if lo == 1 else f"{body}{{{lo},}}")
            return f"{body}?" if (lo, hi) == (0, 1) else f"{body}{{{lo},{hi}}}"
        head = " ".join([body] * lo)
        if hi is None:
            tail = f"{body}*"
        else:
            tail = ""
            for _ in range(hi - lo):
                tail = f"({body}{' ' + tail if tail else ''})?"
        return " ".join(p for p in (head, tail) if p) or '""'

    def klass(self, codes: list[tuple[int, int]], negate: bool) -> str:
        if not self.portable:
            body = "".join(_class_char(a) if a == b else f"{_class_char(a)}-{_class_char(b)}" for a, b in codes)
            return "[" + ("^" if negate else "") + body + "]"
        if negate or sum(b - a + 1 for a, b in codes) > 64:
            raise InputError("a negated or large character class has no portable Lark form (use a task grammar, "
                             "whose vocabulary is closed)", field="grammar")
        return "(" + " | ".join(self.string(chr(c)) for a, b in codes for c in range(a, b + 1)) + ")"

    def regex(self, pattern: str) -> str:
        import re._parser as sre  # noqa: PLC0415
        from re import _constants as C  # noqa: PLC0415

        def seq(items) -> str:
            return " ".join(item(op, av) for op, av in items) or '""'

        def codes(items) -> tuple[list[tuple[int, int]], bool]:
            neg, out = False, []
            for op, av in items:
                if op is C.NEGATE:
                    neg = True
                elif op is C.LITERAL:
                    out.append((av, av))
                elif op is C.RANGE:
                    out.append(av)
                elif op is C.CATEGORY and av is C.CATEGORY_DIGIT:
                    out.append((0x30, 0x39))
                else:
                    raise InputError(f"regex class item {op} has no grammar-export form", field="grammar")
            return out, neg

        def item(op, av) -> str:
            if op is C.LITERAL:
                return self.string(chr(av))
            if op is C.NOT_LITERAL:
                return self.klass([(av, av)], True)
            if op is C.IN:
                return self.klass(*codes(av))
            if op is C.SUBPATTERN:
                return f"({seq(list(av[-1]))})"
            if op is C.BRANCH:
                return "(" + " | ".join(seq(list(b)) for b in av[1]) + ")"
            if op in (C.MAX_REPEAT, C.MIN_REPEAT):
                lo, hi, body = av
                return self.repeat(f"({seq(list(body))})", lo, None if hi is C.MAXREPEAT else hi)
            raise InputError(f"regex feature {op} has no grammar-export form", field="grammar")

        return seq(list(sre.parse(pattern)))

    def expr(self, t) -> str:
        from lark import Token  # noqa: PLC0415
        from lark.load_grammar import _literal_to_pattern  # noqa: PLC0415

        if isinstance(t, Token):
            if t.type in ("RULE", "TERMINAL"):
                return self.name(t.value, t.type == "TERMINAL")
            p = _literal_to_pattern(t)
            return self.string(p.value) if p.type == "str" else f"({self.regex(p.value)})"
        kind, ch = t.data, t.children
        if kind == "expansions":
            return " | ".join(self.expr(c) for c in ch)
        if kind == "expansion":
            return " ".join(self.expr(c) for c in ch) or '""'
        if kind in ("value", "literal", "alias"):
            return self.expr(ch[0])
        if kind == "maybe":
            return f"({self.expr(ch[0])})?"
        if kind == "expr":
            op, body = ch[1], f"({self.expr(ch[0])})"
            if op in ("?", "*", "+"):
                return f"{body}{op}"
            lo = int(ch[2])
            return self.repeat(body, lo, int(ch[3]) if len(ch) > 3 else lo)
        if kind == "range":
            a, b = (_literal_to_pattern(x).value for x in ch)
            return self.klass([(ord(a), ord(b))], False)
        raise InputError(f"grammar construct {kind!r} has no grammar-export form", field="grammar")


def _used(rules, start: str = "start") -> set[str]:
    from lark import Token, Tree  # noqa: PLC0415

    trees = {n: tree for n, _term, tree in rules}
    seen, stack = {start}, [trees.get(start)]
    while stack:
        t = stack.pop()
        if isinstance(t, Tree):
            stack.extend(t.children)
        elif isinstance(t, Token) and t.type in ("RULE", "TERMINAL") and t.value not in seen:
            seen.add(t.value)
            stack.append(trees.get(t.value))
    return seen


def _rules(text: str):
    """(name, is_terminal, normalised tree) of every rule and terminal reachable from start, rules first."""
    from lark.exceptions import LarkError  # noqa: PLC0415
    from lark.load_grammar import load_grammar  # noqa: PLC0415

    from .automaton import _normalise  # noqa: PLC0415

    try:
        grammar, _ = load_grammar(text, "<grammar>", [], False)
    except LarkError as exc:
        raise InputError(f"grammar does not load: {exc}", field="grammar") from None
    rules = [(n, False, _normalise(t)) for n, _p, t, _o in grammar.rule_defs] + \
            [(n, True, _normalise(t)) for n, (t, _prio) in grammar.term_defs]
    used = _used(rules)
    return [r for r in rules if r[0] in used]


def lark_to_gbnf(text: str) -> str:
    """The GBNF text of a Lark grammar (root = start)."""
    w = _Writer("gbnf")
    return "".join(f"{w.name(n, term)} ::= {w.expr(tree)}\n" for n, term, tree in _rules(text))


def portable_lark(text: str) -> str:
    """The Lark grammar rewritten for vLLM's xgrammar path (and still Lark for llguidance); start first."""
    w = _Writer("portable")
    rules = sorted(_rules(text), key=lambda r: r[0] != "start")
    return "".join(f"{w.name(n, term)}: {w.expr(tree)}\n" for n, term, tree in rules)


SCHEMA_CANNOT = ("What this schema cannot say, and the task grammar (--format lark|gbnf) does: the key order "
                 "and compact JSON without whitespace; which fields belong to which action and mistake type; "
                 "each lock part's own unlock/lock parameters; one group member per slot; the number format. "
                 "Neither says which actions are legal in the state reached so far: that is forgeplan's "
                 "in-process `--constrained legal`.")


def _no_nulls(node):
    """anyOf [X, null] -> X and no `default: null`: the contract omits absent fields, never writes null."""
    if isinstance(node, list):
        return [_no_nulls(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _no_nulls(v) for k, v in node.items() if not (k == "default" and v is None)}
    alts = [a for a in out.get("anyOf", []) if a != {"type": "null"}]
    if "anyOf" in out and len(alts) == 1:
        rest = {k: v for k, v in out.items() if k != "anyOf"}
        return {**alts[0], **rest}
    return out


def _enum(values: list[str]) -> dict:
    return {"type": "string", "enum": sorted(set(values))}


def generic_json_schema() -> dict:
    """The output model's schema for any task (FORGE shape: no minimal_rework)."""
    from ..io.schema import OutputModel  # noqa: PLC0415

    schema = _no_nulls(OutputModel.model_json_schema(by_alias=True))
    schema["properties"].pop("minimal_rework", None)
    schema["required"] = ["annotation", "rework_plan"]
    schema["description"] = SCHEMA_CANNOT
    return schema


def json_schema(task) -> dict:
    """The output model's JSON Schema specialised to the task: its ids as constants and enumerations."""
    from .grammar import group_limit, partial_limit  # noqa: PLC0415

    asm = task.assembly
    slots, spares = list(asm.part_ids), [w.part_id for w in asm.spares]
    schema = generic_json_schema()
    defs = schema["$defs"]
    defs["AnnotationModel"]["properties"].update(sample_id={"const": task.sample_id},
                                                  assembly_id={"const": asm.assembly_id})
    mistake, action = defs["MistakeModel"]["properties"], defs["ActionModel"]["properties"]
    mistake["part_id"] = _enum(slots)
    action["part_id"] = _enum(slots + spares)
    kinds = action["action"]["enum"]
    if spares:
        mistake["observed_part_id"] = _enum(spares)
        action["wrong_part_id"] = _enum(spares)
        action["target_part_id"] = _enum([w.variant_of for w in asm.spares])
    else:
        for props in (mistake, action):
            for key in ("observed_part_id", "wrong_part_id", "target_part_id"):
                props.pop(key, None)
        kinds.remove("replace")
    limit = max(group_limit(task), partial_limit(task))   # a slide may name one part, a spare too
    if limit >= 2 or partial_limit(task):
        action["part_ids"].update(items=_enum(slots + spares), maxItems=limit)
    else:
        action.pop("part_ids", None)
        action.pop("direction", None)
        kinds[:] = [k for k in kinds if k not in ("separate", "join")]
    return schema

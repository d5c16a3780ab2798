"""A Lark grammar whose language is regular -> a minimal deterministic automaton over UTF-8 bytes.

Constrained decoding needs to know, for a prefix of output bytes, which continuations stay inside the
grammar. For the plan grammar of one task that language is regular (fixed nesting, flat lists, closed
vocabularies), so it is compiled once: Lark's own grammar loader gives the EBNF trees, a Thompson
construction turns rules, literals and regex terminals into a byte NFA, subset construction and
Moore minimisation give the DFA, and states that cannot reach acceptance are cut, so every live state
can still be completed. Working on bytes (not characters) makes tokens that end inside a multi-byte
UTF-8 character simply stop between two DFA states.

A rule may be *marked*: DFA states that sit right before an occurrence of it carry the mark (the
legal-action mask uses this to find where each action of the plan starts). Recursive rules are refused:
they would make the language non-regular.

One module (about 500 lines): grammar reading, NFA construction, determinisation and minimisation
are one pipeline over one private state representation.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.errors import InputError

DEAD = -1
_SINGLE = tuple(frozenset((b,)) for b in range(256))  # shared one-byte edge labels


@dataclass(eq=False)
class ByteDFA:
    """trans[q] maps each byte that stays in the language to the next state; states 0..n-1, start 0."""

    trans: list[dict[int, int]]
    accepting: list[bool]
    marked: list[bool]
    live: list[tuple[int, ...]]   # bytes with a transition, per state
    dist: list[int]               # fewest bytes to acceptance, per state

    @property
    def n_states(self) -> int:
        return len(self.trans)

    def run(self, data: bytes, state: int = 0) -> int:
        for b in data:
            state = self.trans[state].get(b, DEAD)
            if state == DEAD:
                return DEAD
        return state

    def accepts(self, data: bytes) -> bool:
        q = self.run(data)
        return q != DEAD and self.accepting[q]

    def to_json(self) -> dict:
        """Plain lists (transitions as flat [byte, target, ...] rows), for the on-disk cache."""
        return {"trans": [[x for b, t in row.items() for x in (b, t)] for row in self.trans],
                "accepting": self.accepting, "marked": self.marked, "dist": self.dist}

    @classmethod
    def from_json(cls, data: dict) -> "ByteDFA":
        trans = [dict(zip(row[::2], row[1::2])) for row in data["trans"]]
        return cls(trans, data["accepting"], data["marked"], [tuple(row) for row in trans], data["dist"])


# --------------------------------------------------------------------------- NFA (Thompson)

class _NFA:
    def __init__(self):
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[frozenset[int], int]]] = []
        self.marks: set[int] = set()

    def state(self) -> int:
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def fragment_bytes(self, data: bytes) -> tuple[int, int]:
        s = len(self.eps)
        self.eps.extend([] for _ in range(len(data) + 1))
        self.edges.extend([(_SINGLE[b], s + k + 1)] for k, b in enumerate(data))
        self.edges.append([])
        return s, s + len(data)

    def fragment_set(self, byteset: frozenset[int]) -> tuple[int, int]:
        s, e = self.state(), self.state()
        self.edges[s].append((byteset, e))
        return s, e

    def seq(self, frags: list[tuple[int, int]]) -> tuple[int, int]:
        if not frags:
            s = self.state()
            return s, s
        for (_, e1), (s2, _) in zip(frags, frags[1:]):
            self.eps[e1].append(s2)
        return frags[0][0], frags[-1][1]

    def alt(self, frags: list[tuple[int, int]]) -> tuple[int, int]:
        s, e = self.state(), self.state()
        for fs, fe in frags:
            self.eps[s].append(fs)
            self.eps[fe].append(e)
        return s, e

    def star(self, frag: tuple[int, int]) -> tuple[int, int]:
        s, e = self.state(), self.state()
        self.eps[s] += [frag[0], e]
        self.eps[frag[1]] += [frag[0], e]
        return s, e

    def optional(self, frag: tuple[int, int]) -> tuple[int, int]:
        s, e = self.state(), self.state()
        self.eps[s] += [frag[0], e]
        self.eps[frag[1]].append(e)
        return s, e


# --------------------------------------------------------------------------- regex -> NFA

_UTF8_MULTI = (  # every valid multi-byte UTF-8 sequence (no surrogates), as byte-range sequences
    ((0xC2, 0xDF), (0x80, 0xBF)),
    ((0xE0, 0xE0), (0xA0, 0xBF), (0x80, 0xBF)),
    ((0xE1, 0xEC), (0x80, 0xBF), (0x80, 0xBF)),
    ((0xED, 0xED), (0x80, 0x9F), (0x80, 0xBF)),
    ((0xEE, 0xEF), (0x80, 0xBF), (0x80, 0xBF)),
    ((0xF0, 0xF0), (0x90, 0xBF), (0x80, 0xBF), (0x80, 0xBF)),
    ((0xF1, 0xF3), (0x80, 0xBF), (0x80, 0xBF), (0x80, 0xBF)),
    ((0xF4, 0xF4), (0x80, 0x8F), (0x80, 0xBF), (0x80, 0xBF)),
)


class _Regex:
    """Python regex (the subset a grammar needs) -> NFA fragment over UTF-8 bytes."""

    def __init__(self, nfa: _NFA, pattern: str, where: str):
        import re._parser as sre  # noqa: PLC0415 - stdlib parser of Python's own regex syntax
        from re import _constants as C  # noqa: PLC0415

        self.nfa, self.where, self.C = nfa, where, C
        try:
            self.tree = sre.parse(pattern)
        except Exception as exc:  # noqa: BLE001 - re.error or a parser assertion
            raise InputError(f"cannot parse regex {pattern!r}: {exc}", field=where) from None

    def build(self) -> tuple[int, int]:
        return self._seq(list(self.tree))

    def _unsupported(self, what) -> InputError:
        return InputError(f"regex feature {what} is not supported by the byte automaton", field=self.where)

    def _seq(self, items) -> tuple[int, int]:
        return self.nfa.seq([self._item(op, av) for op, av in items])

    def _chars(self, codepoints: set[int], any_non_ascii: bool) -> tuple[int, int]:
        ascii_set = frozenset(c for c in codepoints if c < 0x80)
        frags = []
        if ascii_set:
            frags.append(self.nfa.fragment_set(ascii_set))
        for c in sorted(c for c in codepoints if c >= 0x80):
            frags.append(self.nfa.fragment_bytes(chr(c).encode("utf-8")))
        if any_non_ascii:
            for ranges in _UTF8_MULTI:
                frags.append(self.nfa.seq([self.nfa.fragment_set(frozenset(range(lo, hi + 1))) for lo, hi in ranges]))
        if not frags:
            raise self._unsupported("empty character class")
        return frags[0] if len(frags) == 1 else self.nfa.alt(frags)

    def _class(self, items) -> tuple[int, int]:
        C = self.C
        negate, cps = False, set()
        for op, av in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                cps.add(av)
            elif op is C.RANGE:
                lo, hi = av
                if hi >= 0x80 and (hi - lo) > 256:
                    raise self._unsupported("large non-ASCII range")
                cps.update(range(lo, hi + 1))
            elif op is C.CATEGORY and av is C.CATEGORY_DIGIT:
                cps.update(range(0x30, 0x3A))
            else:
                raise self._unsupported(f"{op} in a class")
        if not negate:
            return self._chars(cps, False)
        if any(c >= 0x80 for c in cps):
            raise self._unsupported("negated class excluding non-ASCII characters")
        return self._chars(set(range(0x80)) - cps, True)

    def _item(self, op, av) -> tuple[int, int]:
        C, nfa = self.C, self.nfa
        if op is C.LITERAL:
            return self._chars({av}, False)
        if op is C.NOT_LITERAL:
            return self._class([(C.NEGATE, None), (C.LITERAL, av)])
        if op is C.ANY:
            return self._class([(C.NEGATE, None), (C.LITERAL, 10)])
        if op is C.IN:
            return self._class(av)
        if op is C.SUBPATTERN:
            return self._seq(list(av[-1]))
        if op is C.BRANCH:
            return nfa.alt([self._seq(list(b)) for b in av[1]])
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, hi, body = av
            return _repeat(nfa, lambda: self._seq(list(body)), lo, None if hi is C.MAXREPEAT else hi)
        raise self._unsupported(op)


def _repeat(nfa: _NFA, make, lo: int, hi: int | None) -> tuple[int, int]:
    if hi is not None and hi > 1000:
        raise InputError(f"repetition bound {hi} is too large for the byte automaton")
    frags = [make() for _ in range(lo)]
    if hi is None:
        frags.append(nfa.star(make()))
    else:
        frags += [nfa.optional(make()) for _ in range(hi - lo)]
    return nfa.seq(frags)


# --------------------------------------------------------------------------- grammar -> NFA

class _Builder:
    def __init__(self, grammar, marked: frozenset[str]):
        from lark.load_grammar import _literal_to_pattern  # noqa: PLC0415 - Lark's own literal unescaping

        self.to_pattern = _literal_to_pattern
        self.nfa = _NFA()
        self.rules = {name: tree for name, _params, tree, _opts in grammar.rule_defs}
        self.terms = {name: tree for name, (tree, _prio) in grammar.term_defs}
        self.marked = marked
        self.stack: list[str] = []

    def symbol(self, name: str, terminal: bool = False) -> tuple[int, int]:
        table = self.terms if terminal else self.rules
        if name not in table:
            raise InputError(f"undefined symbol {name}", field="grammar")
        if name in self.stack:
            raise InputError(f"rule {name} is recursive ({' -> '.join(self.stack + [name])}); "
                             "the byte automaton needs a regular grammar", field="grammar")
        self.stack.append(name)
        frag = self.tree(table[name])
        self.stack.pop()
        if name in self.marked:
            m = self.nfa.state()
            self.nfa.marks.add(m)
            self.nfa.eps[m].append(frag[0])
            frag = (m, frag[1])
        return frag

    def literal(self, token) -> tuple[int, int]:
        pattern = self.to_pattern(token)
        if pattern.flags:
            raise InputError(f"regex flags {pattern.flags!r} are not supported", field=str(token))
        if pattern.type == "str":
            return self.nfa.fragment_bytes(pattern.value.encode("utf-8"))
        return _Regex(self.nfa, pattern.value, str(token)).build()

    def tree(self, t) -> tuple[int, int]:
        from lark import Token, Tree  # noqa: PLC0415

        if isinstance(t, Token):
            if t.type in ("RULE", "TERMINAL"):
                return self.symbol(t.value, t.type == "TERMINAL")
            if t.type in ("STRING", "REGEXP"):
                return self.literal(t)
            raise InputError(f"unsupported grammar token {t!r}", field="grammar")
        assert isinstance(t, Tree)
        kind, ch = t.data, t.children
        if kind == "expansions":
            frags = [self.tree(c) for c in ch]
            return frags[0] if len(frags) == 1 else self.nfa.alt(frags)
        if kind == "expansion":
            return self.nfa.seq([self.tree(c) for c in ch])
        if kind in ("value", "literal"):
            return self.tree(ch[0])
        if kind == "alias":
            return self.tree(ch[0])
        if kind == "maybe":
            return self.nfa.optional(self.tree(ch[0]))
        if kind == "expr":
            body, op = ch[0], ch[1]
            if op == "?":
                return self.nfa.optional(self.tree(body))
            if op == "*":
                return self.nfa.star(self.tree(body))
            if op == "+":
                return self.nfa.seq([self.tree(body), self.nfa.star(self.tree(body))])
            if op == "~":
                lo = int(ch[2])
                hi = int(ch[3]) if len(ch) > 3 else lo
                return _repeat(self.nfa, lambda: self.tree(body), lo, hi)
        if kind == "range":
            a, b = (self.to_pattern(x).value for x in ch)
            if len(a) != 1 or len(b) != 1:
                raise InputError(f"range {a!r}..{b!r} must be between single characters", field="grammar")
            return self._range(ord(a), ord(b))
        raise InputError(f"unsupported grammar construct {kind!r}", field="grammar")

    def _range(self, lo: int, hi: int) -> tuple[int, int]:
        if hi < 0x80:
            return self.nfa.fragment_set(frozenset(range(lo, hi + 1)))
        return self.nfa.alt([self.nfa.fragment_bytes(chr(c).encode("utf-8")) for c in range(lo, hi + 1)])


def _symbol_value(t):
    """Lark stores rule/terminal references as NonTerminal/Terminal objects (or tokens)."""
    from lark import Token  # noqa: PLC0415
    from lark.grammar import NonTerminal, Terminal  # noqa: PLC0415

    if isinstance(t, (NonTerminal, Terminal)):
        return Token("RULE" if isinstance(t, NonTerminal) else "TERMINAL", t.name)
    return t


def _normalise(tree):
    from lark import Tree  # noqa: PLC0415

    if isinstance(tree, Tree):
        return Tree(tree.data, [_normalise(c) for c in tree.children])
    return _symbol_value(tree)


# --------------------------------------------------------------------------- NFA -> DFA

def _closure(nfa: _NFA, states) -> frozenset[int]:
    seen = set(states)
    stack = list(states)
    while stack:
        for t in nfa.eps[stack.pop()]:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return frozenset(seen)


def _byte_classes(nfa: _NFA) -> list[int]:
    """Partition the 256 bytes into classes that every NFA edge treats alike (alphabet compression)."""
    cls = [0] * 256
    for sets in {bs for row in nfa.edges for bs, _ in row}:
        key: dict[tuple[int, bool], int] = {}
        cls = [key.setdefault((cls[b], b in sets), len(key)) for b in range(256)]
    return cls


def _determinise(nfa: _NFA, start: int, final: int, cls: list[int]):
    n_cls = max(cls) + 1
    members = [[b for b in range(256) if cls[b] == c] for c in range(n_cls)]
    by_set: dict[frozenset[int], list[int]] = {}  # literals repeat the same few byte sets many times

    def classes(bs: frozenset[int]) -> list[int]:
        got = by_set.get(bs)
        if got is None:
            got = by_set[bs] = sorted({cls[b] for b in bs})
        return got

    edge_cls = [[(classes(bs), t) for bs, t in row] for row in nfa.edges]
    single: dict[int, frozenset[int]] = {}

    def closure(states) -> frozenset[int]:
        out: set[int] = set()
        for q in states:
            c = single.get(q)
            if c is None:
                c = single[q] = _closure(nfa, [q])
            out |= c
        return frozenset(out)

    first = closure([start])
    index = {first: 0}
    sets = [first]
    rows: list[list[int]] = []
    k = 0
    while k < len(sets):
        moves: dict[int, set[int]] = {}
        for s in sets[k]:
            for cs, t in edge_cls[s]:
                for c in cs:
                    moves.setdefault(c, set()).add(t)
        row = [DEAD] * n_cls
        for c, targets in moves.items():
            key = frozenset(targets)
            j = index.get(key)
            if j is None:
                cl = closure(targets)
                j = index.get(cl)
                if j is None:
                    j = len(sets)
                    sets.append(cl)
                index[cl] = index[key] = j
            row[c] = j
        rows.append(row)
        k += 1
    accepting = [final in s for s in sets]
    marked = [bool(s & nfa.marks) for s in sets]
    return rows, accepting, marked, members


def _minimise(rows, accepting, marked, members):
    """Moore partition refinement (vectorised over byte classes), then cut states that cannot accept."""
    import numpy as np  # noqa: PLC0415

    n = len(rows)
    sink = n  # explicit dead state so that every row is total
    t = np.array(rows + [[DEAD] * len(members)], dtype=np.int64)
    t[t == DEAD] = sink
    init = [(accepting[q], marked[q]) for q in range(n)] + [("sink", False)]
    keys = {k: i for i, k in enumerate(dict.fromkeys(init))}
    block = np.array([keys[k] for k in init], dtype=np.int64)
    n_blocks = len(keys)
    # successor lists in CSR form (most (state, class) pairs go to the sink and are left out)
    src, cls = np.nonzero(t != sink)  # row-major: sorted by state, then class
    dst = t[src, cls]
    ptr = np.searchsorted(src, np.arange(n + 2))
    rng = np.random.default_rng(0)
    weights = rng.integers(1, 2**62, size=t.shape[1] + 1, dtype=np.int64) | 1
    w_edge = weights[1:][cls]
    while True:
        # a 64-bit hash of (own block, successor blocks); checked exactly below, so a collision cannot go unnoticed
        cs = np.concatenate([[0], np.cumsum(w_edge * block[dst])])
        h = block * weights[0] + cs[ptr[1:]] - cs[ptr[:-1]]
        _, new = np.unique(h, return_inverse=True)
        new = new.reshape(-1)
        if new.max() + 1 == n_blocks:
            break
        block, n_blocks = new, int(new.max()) + 1
    # the hash above is checked exactly here: every state agrees with its block's first state
    _, first = np.unique(block, return_index=True)
    succ = block[t]
    acc, mk = np.array([*accepting, False]), np.array([*marked, False])
    if not ((succ == succ[first][block]).all() and (acc == acc[first][block]).all() and (mk == mk[first][block]).all()):
        raise AssertionError("hash collision in DFA minimisation")
    dead_block = int(block[sink])  # the sink's block holds the sink alone (its initial key is unique)
    rows_b, acc_b, mk_b = succ[first].tolist(), acc[first].tolist(), mk[first].tolist()
    return _trim(rows_b, acc_b, mk_b, dead_block, int(block[0]), members)


def _trim(rows_b, acc_b, mk_b, dead_block: int, start: int, members):
    """The quotient automaton without the dead block and the states that cannot accept, numbered
    breadth-first from `start`, with byte classes expanded back to bytes."""
    qtrans = {b: rows_b[b] for b in range(len(rows_b)) if b != dead_block}
    qacc = {b: acc_b[b] for b in qtrans}
    qmark = {b: mk_b[b] for b in qtrans}
    rev: dict[int, set[int]] = {q: set() for q in qtrans}
    for q, row in qtrans.items():
        for x in row:
            if x != dead_block:
                rev[x].add(q)
    alive = {q for q in qtrans if qacc[q]}
    stack = list(alive)
    while stack:
        for p in rev[stack.pop()]:
            if p not in alive:
                alive.add(p)
                stack.append(p)
    if start not in alive:
        raise InputError("the grammar accepts no string", field="grammar")
    order, seen = [start], {start}
    for q in order:
        for x in qtrans[q]:
            if x in alive and x not in seen:
                seen.add(x)
                order.append(x)
    num = {q: i for i, q in enumerate(order)}
    out = []
    for q in order:
        row = {}
        for c, x in enumerate(qtrans[q]):
            if x in num:
                row.update(dict.fromkeys(members[c], num[x]))
        out.append(dict(sorted(row.items())))
    return out, [qacc[q] for q in order], [qmark[q] for q in order]


def _distances(trans, accepting) -> list[int]:
    n = len(trans)
    rev: list[list[int]] = [[] for _ in range(n)]
    for q in range(n):
        for t in trans[q].values():
            rev[t].append(q)
    dist = [0 if accepting[q] else -1 for q in range(n)]
    frontier = [q for q in range(n) if accepting[q]]
    while frontier:
        nxt = []
        for t in frontier:
            for q in rev[t]:
                if dist[q] < 0:
                    dist[q] = dist[t] + 1
                    nxt.append(q)
        frontier = nxt
    return dist


def compile_lark(text: str, *, start: str = "start", marked: frozenset[str] = frozenset()) -> ByteDFA:
    """The minimal byte DFA of a regular Lark grammar (InputError when it is not regular or unsupported).

    The cyclic garbage collector is paused meanwhile: the construction allocates many small objects and
    none of them cycles, and in a process holding a model a collection scans it all (half the time)."""
    import gc  # noqa: PLC0415

    paused = gc.isenabled()
    gc.disable()
    try:
        return _compile(text, start, marked)
    finally:
        if paused:
            gc.enable()


def _compile(text: str, start: str, marked: frozenset[str]) -> ByteDFA:
    from lark.exceptions import LarkError  # noqa: PLC0415
    from lark.load_grammar import load_grammar  # noqa: PLC0415

    try:
        grammar, _ = load_grammar(text, "<grammar>", [], False)
    except LarkError as exc:
        raise InputError(f"grammar does not load: {exc}", field="grammar") from None
    if grammar.ignore:
        raise InputError("%ignore is not supported: the output language must have no free whitespace", field="grammar")
    grammar.rule_defs = [(n, p, _normalise(t), o) for n, p, t, o in grammar.rule_defs]
    grammar.term_defs = [(n, (_normalise(t), pr)) for n, (t, pr) in grammar.term_defs]
    b = _Builder(grammar, marked)
    s, e = b.symbol(start)
    trans, accepting, mk = _minimise(*_determinise(b.nfa, s, e, _byte_classes(b.nfa)))
    live = [tuple(row) for row in trans]
    return ByteDFA(trans, accepting, mk, live, _distances(trans, accepting))

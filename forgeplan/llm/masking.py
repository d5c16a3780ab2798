"""Allowed-token tables for one task: the grammar mask and the legal-action mask (no torch here).

`GrammarMask` walks a state of the task's byte DFA against the sorted byte table of the vocabulary
(`Vocab`): a token is allowed in a state when all its bytes keep the DFA alive, so tokens spanning
several terminals, several JSON fields or half a UTF-8 character are handled by construction. A state
gets its allowed token ids and, per token, the number of bytes still needed to finish the object
after it (`bounds`). The walk runs the first time decoding reaches a state (a few hundred of the
DFA's ~1,600 states are ever visited), and its result is kept, so setting up a task costs only the
DFA and every later visit is a table lookup.

Budget: with `bounds` the decoder can keep the output completable within the tokens left — a token is
allowed only if the bytes still needed after it fit in the remaining budget (one byte per token, which
byte-level and byte-fallback vocabularies always allow) — so a constrained generation never ends cut off.

Sharing: every task grammar starts with the same forced literal up to its sample id, and tasks of one
assembly differ only there. The DFA is compiled once per assembly with a placeholder sample id (and
kept on disk, see dfa_cache) and its tables are shared by every task of the assembly; only the short
forced prefix is rebuilt per task.

`LegalMask` (`--constrained legal`) is the product of the grammar DFA with the engine: inside the
action list each action must spell one of the actions legal in the symbolic state reached so far
(forgeplan.semantics.legal.legal_actions on the task's actual state, stepped with World.apply), so every
decoded plan replays without an illegal action. Its states are explored lazily and cached.

One module (about 430 lines): both masks walk the same DFA state tables and share the budget rule.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..model.actions import Action
from ..model.errors import InputError
from ..model.state import State
from ..semantics.assembly_grounding import AssemblyGrounding
from ..semantics.legal import legal_actions
from ..semantics.task import Task
from . import automaton, cache
from .automaton import DEAD, ByteDFA, compile_lark
from .grammar import ACTION_RULE, compact, specialise
from .vocab import Vocab

INF = 1 << 30
PRE = -2  # before the first token when the decoder strips one leading space: that space is free
PLACEHOLDER_SAMPLE_ID = "\x01sample\x01"


@dataclass
class MaskEntry:
    ids: np.ndarray       # allowed content token ids (int64)
    bounds: np.ndarray    # bytes still needed to complete the object after each of those tokens
    accepting: bool       # EOS allowed: the object is complete

    def __post_init__(self):
        self.packed: dict = {}  # (width, eos ids, device, form) -> the allowed set on a device (see processor)
        self.max_bound = int(self.bounds.max()) if len(self.bounds) else 0

    def within(self, budget: int) -> np.ndarray:
        """Allowed ids whose completion fits in `budget` more tokens."""
        if budget >= self.max_bound:
            return self.ids
        return self.ids[self.bounds <= budget]


# --------------------------------------------------------------------------- the task DFA

@lru_cache(maxsize=64)
def _shared_dfa(grammar_text: str) -> ByteDFA:
    """The assembly's DFA, compiled once per grammar text (in memory, and on disk across runs)."""
    name = cache.key(grammar_text, ACTION_RULE, cache.source_of(automaton))
    data = cache.read_json("dfa", name)
    if data is not None:
        return ByteDFA.from_json(data)
    dfa = compile_lark(grammar_text, marked=frozenset({ACTION_RULE}))
    cache.write_json("dfa", name, dfa.to_json())
    return dfa


def _forced_prefix(dfa: ByteDFA) -> bytes:
    out, q = bytearray(), 0
    while len(dfa.live[q]) == 1 and not dfa.accepting[q]:
        b = dfa.live[q][0]
        out.append(b)
        q = dfa.trans[q][b]
    return bytes(out)


@dataclass(eq=False)
class TaskDFA:
    """A task's DFA: a chain for the forced prefix (states 0..k-1) then the shared DFA shifted by k."""

    dfa: ByteDFA
    shared: ByteDFA
    offset: int


def task_dfa(task: Task) -> TaskDFA:
    """The task's DFA (kept for the most recent tasks: decoding a task again reuses it and its tables)."""
    from dataclasses import replace as dc_replace  # noqa: PLC0415

    return _task_dfa(compact(task.sample_id), specialise(dc_replace(task, sample_id=PLACEHOLDER_SAMPLE_ID)))


@lru_cache(maxsize=256)
def _task_dfa(sample_json: str, generic: str) -> TaskDFA:
    shared = _shared_dfa(generic)
    forced = _forced_prefix(shared)
    ph = compact(PLACEHOLDER_SAMPLE_ID).encode("utf-8")
    if forced.count(ph) != 1:
        raise InputError("the grammar must start with a fixed literal that contains the sample id", field="grammar")
    cut = forced.index(ph) + len(ph)
    prefix = forced[:cut].replace(ph, sample_json.encode("utf-8"))
    resume = shared.run(forced[:cut])
    k = len(prefix)
    trans = [{prefix[i]: i + 1} for i in range(k - 1)] + [{prefix[-1]: resume + k}]
    trans += [{b: t + k for b, t in row.items()} for row in shared.trans]
    dfa = ByteDFA(
        trans=trans,
        accepting=[False] * k + shared.accepting,
        marked=[False] * k + shared.marked,
        live=[(prefix[i],) for i in range(k)] + shared.live,
        dist=[k - i + shared.dist[resume] for i in range(k)] + shared.dist,
    )
    return TaskDFA(dfa, shared, k)


# --------------------------------------------------------------------------- walking the vocabulary

def walk(vocab: Vocab, state, step, live, bound) -> MaskEntry:
    """Depth-first walk of the byte trie from `state`: the tokens whose bytes all stay alive."""
    ids: list[int] = []
    bounds: list[int] = []
    sb, si = vocab.sorted_bytes, vocab.sorted_ids
    stack = [(state, b"", 0, len(sb))]
    while stack:
        s, p, lo, hi = stack.pop()
        if p:
            e = vocab.exact_end(p, lo, hi)
            if e > lo:
                d = bound(s)
                ids.extend(si[lo:e])
                bounds.extend([d] * (e - lo))
                lo = e
        if lo >= hi:
            continue
        for b in live(s):
            a, z = vocab.child_range(p, b, lo, hi)
            if a < z:
                t = step(s, b)
                if t is not None:
                    stack.append((t, p + bytes((b,)), a, z))
    order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")
    return MaskEntry(np.asarray(ids, dtype=np.int64)[order], np.asarray(bounds, dtype=np.int64)[order], False)


def dense_table(dfa: ByteDFA) -> np.ndarray:
    """[n_states + 1, 256] next state, with row n_states the dead sink."""
    n = dfa.n_states
    t = np.full((n + 1, 256), n, dtype=np.int32)
    for q, row in enumerate(dfa.trans):
        if row:
            t[q, list(row)] = list(row.values())
    return t


def vector_entry(dfa: ByteDFA, table: np.ndarray, dist: np.ndarray, vocab: Vocab, q: int) -> MaskEntry:
    """The tokens allowed in DFA state q, all walked at once: byte j of every token still alive in step j."""
    a = vocab.arrays()
    dead = dfa.n_states
    pos = np.concatenate([np.arange(a.first[b], a.first[b + 1]) for b in dfa.live[q]] or [np.zeros(0, np.int64)])
    st = np.full(len(pos), q, dtype=np.int32)
    done_pos, done_st, j = [], [], 0
    while len(pos):
        st = table[st, a.flat[a.starts[pos] + j]]
        keep = st != dead
        pos, st, j = pos[keep], st[keep], j + 1
        ended = a.lengths[pos] == j
        done_pos.append(pos[ended])
        done_st.append(st[ended])
        pos, st = pos[~ended], st[~ended]
    ids = a.ids[np.concatenate(done_pos)] if done_pos else np.zeros(0, np.int64)
    bounds = dist[np.concatenate(done_st)] if done_st else np.zeros(0, np.int64)
    order = np.argsort(ids, kind="stable")
    return MaskEntry(ids[order], bounds[order].astype(np.int64), dfa.accepting[q])


class LazyTables:
    """The MaskEntry of each state of a DFA over one vocabulary, computed on first use and kept."""

    def __init__(self, dfa: ByteDFA, vocab: Vocab, vector: bool = True):
        """`vector`: states with several next bytes walk all their tokens at once (measured at 150k tokens:
        a NUMBER state in ~1 ms where the trie walk takes up to 20 ms); states with one next byte, and all
        states when not `vector` (a task's forced prefix, which then needs no dense table), walk the byte
        trie, which there only follows the forced path (~20 µs where the vector walk takes ~80 µs)."""
        self.dfa, self.vocab, self.vector = dfa, vocab, vector
        self.entries: list[MaskEntry | None] = [None] * dfa.n_states
        self.table: np.ndarray | None = None
        self.dist = np.asarray(dfa.dist, dtype=np.int64)

    def __getitem__(self, q: int) -> MaskEntry:
        e = self.entries[q]
        if e is None:
            e = self.entries[q] = self._compute(q)
        return e

    def _compute(self, q: int) -> MaskEntry:
        dfa = self.dfa
        if not self.vector or len(dfa.live[q]) == 1:
            e = walk(self.vocab, q, lambda s, b: dfa.trans[s].get(b), lambda s: dfa.live[s], lambda s: dfa.dist[s])
            e.accepting = dfa.accepting[q]
            return e
        if self.table is None:
            self.table = dense_table(dfa)
        return vector_entry(dfa, self.table, self.dist, self.vocab, q)

    @property
    def built(self) -> int:
        return sum(e is not None for e in self.entries)


@lru_cache(maxsize=16)
def _shared_tables(shared: ByteDFA, vocab: Vocab) -> LazyTables:
    return LazyTables(shared, vocab)


@lru_cache(maxsize=256)
def _prefix_tables(td: TaskDFA, vocab: Vocab) -> LazyTables:
    return LazyTables(td.dfa, vocab, vector=False)


def forget_compiled() -> None:
    """Drop the DFAs and token tables kept in memory (the disk cache stays): the next mask compiles or
    reads them again as a fresh process would (a measurement from cold, a test of the disk cache)."""
    for kept in (_shared_dfa, _task_dfa, _shared_tables, _prefix_tables):
        kept.cache_clear()


class GrammarMask:
    """Allowed tokens per DFA state of one task (forced-prefix states its own, the rest shared per assembly)."""

    def __init__(self, task: Task, vocab: Vocab):
        self.task, self.vocab = task, vocab
        td = task_dfa(task)
        self.dfa, self.offset = td.dfa, td.offset
        self.prefix = _prefix_tables(td, vocab)
        self.shared = _shared_tables(td.shared, vocab)
        self._pre: MaskEntry | None = None
        if not len(self.entry(self.start()).ids):
            raise InputError("the tokenizer cannot spell the first byte of the grammar", field="tokenizer")

    def start(self):
        return PRE if self.vocab.strip_first_space else 0

    def _pre_entry(self) -> MaskEntry:
        self._pre = self._pre or getattr(self.prefix, "pre", None)
        if self._pre is None:
            self._pre = self.prefix.pre = first_space_entry(self.dfa, self.vocab)
        return self._pre

    def entry(self, state) -> MaskEntry:
        if state == PRE:
            return self._pre_entry()
        return self.prefix[state] if state < self.offset else self.shared[state - self.offset]

    def advance(self, state, token_id: int):
        """The state after a token (None when the token leaves the language)."""
        return advance(self.dfa, self.vocab, state, token_id)


def first_space_entry(dfa: ByteDFA, vocab: Vocab) -> MaskEntry:
    """The first token's entry (state PRE) when the decoder strips one leading space: that space is free."""
    trans = dfa.trans
    return walk(vocab, PRE, lambda s, b: 0 if s == PRE and b == 0x20 else trans[0 if s == PRE else s].get(b),
                lambda s: (0x20, *dfa.live[0]) if s == PRE else dfa.live[s],
                lambda s: dfa.dist[0 if s == PRE else s])


def advance(dfa: ByteDFA, vocab: Vocab, state, token_id: int):
    """The DFA state after a token (None when the token leaves the language); from PRE, one leading space
    of the token is free."""
    data = vocab.token_bytes[token_id] if 0 <= token_id < vocab.size else None
    if data is None:
        return None
    if state == PRE:
        state, data = 0, data[1:] if data.startswith(b" ") else data
    q = dfa.run(data, state)
    return None if q == DEAD else q


# --------------------------------------------------------------------------- legal-action mask

class _Legal:
    """Legal action strings per engine state, sorted, with the action each spells (cached)."""

    def __init__(self, task: Task):
        self.grounding = AssemblyGrounding(task.world)
        self.cache: dict[State, tuple[list[bytes], dict[bytes, Action]]] = {}

    def of(self, state: State) -> tuple[list[bytes], dict[bytes, Action]]:
        got = self.cache.get(state)
        if got is None:
            acts = {compact(a.to_json()).encode("utf-8"): a for a in legal_actions(self.grounding, state)}
            got = self.cache[state] = (sorted(acts), acts)
        return got

    def matches(self, state: State, prefix: bytes) -> list[bytes]:
        lst, _ = self.of(state)
        i = bisect_left(lst, prefix)
        out = []
        while i < len(lst) and lst[i].startswith(prefix):
            out.append(lst[i])
            i += 1
        return out


class LegalMask:
    """Product of the grammar DFA and the engine: (dfa state, engine state, bytes of the current action)."""

    def __init__(self, task: Task, vocab: Vocab, grammar: GrammarMask | None = None):
        self.grammar = grammar or GrammarMask(task, vocab)
        self.vocab, self.task = vocab, task
        self.dfa = self.grammar.dfa
        self.legal = _Legal(task)
        self.cache: dict = {}
        self.max_token = max(int(vocab.id_lengths().max()) if vocab.size else 1, 1)
        self.near_mark = self._distance_to_marks()

    def _distance_to_marks(self) -> list[int]:
        n = self.dfa.n_states
        rev: list[list[int]] = [[] for _ in range(n)]
        for q, row in enumerate(self.dfa.trans):
            for t in row.values():
                rev[t].append(q)
        dist = [0 if self.dfa.marked[q] else INF for q in range(n)]
        frontier = [q for q in range(n) if self.dfa.marked[q]]
        while frontier:
            nxt = []
            for t in frontier:
                for q in rev[t]:
                    if dist[q] == INF:
                        dist[q] = dist[t] + 1
                        nxt.append(q)
            frontier = nxt
        return dist

    def start(self):
        return (self.grammar.start(), self.task.actual, None)

    def step(self, st, b: int):
        q, s, p = st
        if q == PRE:
            if b == 0x20:
                return (0, s, None)
            q = 0
        q2 = self.dfa.trans[q].get(b)
        if q2 is None:
            return None
        if p is None:
            if self.dfa.marked[q] and b == 0x7B:  # '{' opens an action
                return (q2, s, b"{") if self.legal.matches(s, b"{") else None
            nxt = (q2, s, None)
        else:
            p2 = p + bytes((b,))
            m = self.legal.matches(s, p2)
            if not m:
                return None
            if m[0] == p2:
                s = self.task.world.apply(s, self.legal.of(s)[1][p2])
                nxt = (q2, s, None)
            else:
                nxt = (q2, s, p2)
        return nxt if self.bound(nxt) < INF else None

    def live(self, st):
        return (0x20, *self.dfa.live[0]) if st[0] == PRE else self.dfa.live[st[0]]

    def bound(self, st) -> int:
        """Fewest bytes to a complete object from this product state (INF at a dead end)."""
        q, s, p = st
        dfa = self.dfa
        q = 0 if q == PRE else q
        if p is not None:
            return min((len(m) - len(p) + dfa.dist[dfa.run(m[len(p):], q)] for m in self.legal.matches(s, p)), default=INF)
        if dfa.marked[q] and dfa.live[q] == (0x7B,):
            return min((len(m) + dfa.dist[dfa.run(m, q)] for m in self.legal.of(s)[0]), default=INF)
        return dfa.dist[q]

    def entry(self, st) -> MaskEntry:
        q, s, p = st
        if q == PRE or p is None and self.near_mark[q] > self.max_token:
            return self.grammar.entry(q)  # no token from here reaches an action: the grammar decides
        e = self.cache.get(st)
        if e is None:
            e = self._outside_action(st) if p is None else None
            if e is None:
                e = walk(self.vocab, st, self.step, self.live, self.bound)
            e.accepting = self.dfa.accepting[q]
            self.cache[st] = e
        return e

    def _outside_action(self, st, most: int = 256) -> MaskEntry | None:
        """Between actions: a token shorter than the distance to the next action start cannot reach it, so
        the grammar's table decides it; only the longer tokens are stepped through the engine (None when
        there are more than `most` of those: the product walk is then cheaper)."""
        q = st[0]
        g = self.grammar.entry(q)
        long = self.vocab.id_lengths()[g.ids] >= self.near_mark[q]
        if int(long.sum()) > most:
            return None
        ids, bounds = [g.ids[~long]], [g.bounds[~long]]
        for i in g.ids[long].tolist():
            nxt = self.advance(st, i)
            b = self.bound(nxt) if nxt is not None else INF
            if b < INF:
                ids.append(np.asarray([i], dtype=np.int64))
                bounds.append(np.asarray([b], dtype=np.int64))
        ids_a, bounds_a = np.concatenate(ids), np.concatenate(bounds)
        order = np.argsort(ids_a, kind="stable")
        return MaskEntry(ids_a[order], bounds_a[order], False)

    def advance(self, st, token_id: int):
        data = self.vocab.token_bytes[token_id] if 0 <= token_id < self.vocab.size else None
        if data is None:
            return None
        for b in data:
            st = self.step(st, b)
            if st is None:
                return None
        return st


MASKS = {"grammar": GrammarMask, "legal": LegalMask}


def make_mask(mode: str, task: Task, vocab: Vocab):
    """The mask object for `--constrained MODE` (None for 'none')."""
    if mode == "none":
        return None
    if mode not in MASKS:
        raise InputError(f"must be one of {['none', *MASKS]}, got {mode!r}", field="--constrained")
    return MASKS[mode](task, vocab)

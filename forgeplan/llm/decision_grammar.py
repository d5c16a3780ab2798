"""Constrained decoding of Assembly Decision answers: the grammar, its task specialisation, the legal grammar.

`decision_grammar(task)` keeps grammars/assembly_decision.lark's structure and replaces its vocabulary
with the task's part ids and every canonical subgoal over them (SEMANTICS §8); `legal_grammar(task)`
lists the decisions of the actions legal in the task's state (Inspect when it equals the target), so a
decoder masked with it can only name an executable next step. `DecisionMask` turns either grammar into
per-state token masks with the rework-plan masks' tables (walked on first visit, kept).
`decision_json_schema(task)` says the same as the task grammar, for servers that take only schemas,
but for the key order and the spelling (compact JSON).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from ..io.resources import grammars_dir
from ..semantics.grounded import ground, group_names
from ..semantics.intents import INSPECT, OPERATIONS, decision_of, subgoal_text
from ..semantics.legal import legal_actions
from ..semantics.task import Task
from .automaton import ByteDFA, compile_lark
from .grammar import compact, lark_literal
from .masking import PRE, LazyTables, MaskEntry, advance, first_space_entry
from .vocab import Vocab

GRAMMAR_PATH = grammars_dir() / "assembly_decision.lark"


def _alternatives(values) -> str:
    """Lark alternatives matching exactly the compact JSON of each value (duplicates dropped)."""
    return " | ".join(lark_literal(t) for t in sorted({compact(v) for v in values}))


def subgoal_vocabulary(task: Task) -> list[str]:
    """Every canonical subgoal a decision on this assembly can name."""
    w = task.world
    out = [INSPECT.subgoal]
    for i, pid in enumerate(w.ids):
        out += [subgoal_text(k, (pid,)) for k in ("seated", "removed", "positioned", "oriented")]
        if w.lock[i] is not None:
            out += [subgoal_text(k, (pid,)) for k in ("released", "engaged")]
    for spare in w.assembly.spares:
        out += [subgoal_text("removed", (spare.part_id,)), subgoal_text("positioned", (spare.part_id,)),
                subgoal_text("oriented", (spare.part_id,)), subgoal_text("replaces", (spare.variant_of, spare.part_id))]
    grounded = ground(task)
    if grounded.has_groups:
        spares = {p: [x.part_id for x in w.assembly.spares if x.variant_of == p] for p in w.ids}
        for g in grounded.separable_groups:
            names = group_names(w, g)
            out.append(subgoal_text("group_seated", names))
            # separate names the parts physically there: a member slot may hold one of its spares
            out += [subgoal_text("group_removed", combo)
                    for combo in itertools.product(*[[p, *spares[p]] for p in names])]
    return out


def decision_grammar(task: Task) -> str:
    """The generic grammar with the task's part ids and subgoals as its vocabulary."""
    text = GRAMMAR_PATH.read_text(encoding="utf-8")
    head = text[: text.index("part: STRING")]
    parts = list(task.world.ids) + [s.part_id for s in task.assembly.spares]
    return head + f"part: {_alternatives(parts)}\nsubgoal: {_alternatives(subgoal_vocabulary(task))}\n"


def legal_decisions(task: Task) -> list[dict]:
    w = task.world
    if w.equivalent(task.actual, task.target):
        return [INSPECT.to_json()]
    return [d.to_json() for d in sorted({decision_of(a) for a in legal_actions(ground(task).shared, task.actual)})]


def legal_grammar(task: Task) -> str:
    """Exactly the legal decisions of the task's state, each in its compact spelling."""
    return f"start: {_alternatives(legal_decisions(task))}\n"


def decision_json_schema(task: Task) -> dict:
    """The decision contract as a JSON Schema with the task's vocabulary: MAGAR's six operations, the
    task's part ids, its canonical subgoals; no other field."""
    parts = sorted(set(task.world.ids) | {s.part_id for s in task.assembly.spares})
    return {"type": "object", "additionalProperties": False,
            "required": ["operation", "involved_parts", "next_subgoal"],
            "properties": {"operation": {"type": "string", "enum": list(OPERATIONS)},
                           "involved_parts": {"type": "array", "items": {"type": "string", "enum": parts}},
                           "next_subgoal": {"type": "string", "enum": sorted(set(subgoal_vocabulary(task)))}},
            "description": "What this schema cannot say, and the task grammar (--format lark|gbnf) does: the key "
                           "order and compact JSON without whitespace."}


@lru_cache(maxsize=64)
def _dfa(grammar_text: str) -> ByteDFA:
    return compile_lark(grammar_text)


class DecisionMask:
    """Allowed token ids per DFA state of a decision grammar: the decoders' mask interface (`start`,
    `entry`, `advance`), each state's tokens walked on its first visit."""

    def __init__(self, grammar_text: str, vocab: Vocab):
        self.vocab = vocab
        self.dfa: ByteDFA = _dfa(grammar_text)
        self.tables = LazyTables(self.dfa, vocab)
        self._pre: MaskEntry | None = None

    def start(self):
        return PRE if self.vocab.strip_first_space else 0

    def entry(self, state) -> MaskEntry:
        if state == PRE:
            self._pre = self._pre or first_space_entry(self.dfa, self.vocab)
            return self._pre
        return self.tables[state]

    def advance(self, state, token_id: int):
        return advance(self.dfa, self.vocab, state, token_id)

"""The Assembly Decision grammar: generic, task-specialised and legal; token masks on a synthetic vocabulary."""

from __future__ import annotations

import json

import pytest

from forgeplan.evaluation.decisions import parse_decision
from forgeplan.library import build
from forgeplan.llm.automaton import DEAD, compile_lark
from forgeplan.llm.decision_grammar import (GRAMMAR_PATH, DecisionMask, decision_grammar, legal_decisions,
                                            legal_grammar)
from forgeplan.llm.grammar import compact
from forgeplan.llm.vocab import Vocab
from forgeplan.planners.asp.first_steps import solve_with_first_steps
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.intents import INSPECT, decision_of, valid_decisions
from forgeplan.semantics.legal import legal_actions
from cases import grounding
from test_bruteforce import TASKS

CASES = [t for _, t in TASKS[::9]] + [make_task(build("burr_6_split"), [FaultSpec("missing_part")], seed=3),
                                      make_task(build("drawer_cabinet_2"), [FaultSpec("wrong_part")], seed=1)]
GENERIC = compile_lark(GRAMMAR_PATH.read_text(encoding="utf-8"))


def accepts(dfa, text: str) -> bool:
    q = dfa.run(text.encode("utf-8"))
    return q != DEAD and dfa.accepting[q]


def _valid(task):
    result, first = solve_with_first_steps(task)
    return valid_decisions(task.world, task.actual, task.target, first)


# the fast lane runs every 4th brute-force task and the two group-move / drawer tasks; the slow lane all of them
@pytest.mark.parametrize("task", [pytest.param(t, id=t.sample_id, marks=() if k % 4 == 0 or k >= len(CASES) - 2
                                               else pytest.mark.slow) for k, t in enumerate(CASES)])
def test_every_valid_decision_is_in_the_task_and_legal_grammars(task):
    spec, legal = compile_lark(decision_grammar(task)), compile_lark(legal_grammar(task))
    for d in _valid(task):
        text = compact(d.to_json())
        assert accepts(GENERIC, text) and accepts(spec, text) and accepts(legal, text), text
        assert parse_decision(text)[0] is not None          # what the grammar writes, the evaluator reads


def test_the_legal_grammar_is_exactly_the_legal_decisions():
    task = CASES[-1]
    legal = compile_lark(legal_grammar(task))
    w = task.world
    allowed = {compact(decision_of(a).to_json()) for a in legal_actions(grounding(w), task.actual)}
    assert {compact(d) for d in legal_decisions(task)} == allowed
    spec = compile_lark(decision_grammar(task))
    illegal = [pid for pid in w.ids if compact(decision_of(_insert(pid)).to_json()) not in allowed]
    assert illegal
    text = compact(decision_of(_insert(illegal[0])).to_json())
    assert accepts(spec, text) and not accepts(legal, text)
    assert not accepts(legal, compact(INSPECT.to_json()))
    assert compile_lark(legal_grammar(_at_target(task))).n_states and \
        [compact(d) for d in legal_decisions(_at_target(task))] == [compact(INSPECT.to_json())]


def _insert(pid):
    from forgeplan.model.actions import Insert
    return Insert(pid)


def _at_target(task):
    from dataclasses import replace
    return replace(task, actual=task.target)


def test_the_task_grammar_refuses_unknown_parts_subgoals_and_spellings():
    task = CASES[0]
    spec = compile_lark(decision_grammar(task))
    pid = task.world.ids[0]
    good = {"operation": "Place", "involved_parts": [pid], "next_subgoal": f"{pid} seated"}
    assert accepts(spec, compact(good))
    for bad in ({**good, "involved_parts": ["NoSuchPart"]}, {**good, "next_subgoal": f"{pid} glued"},
                {**good, "operation": "Assemble"}):
        assert not accepts(spec, compact(bad))
    assert not accepts(spec, json.dumps(good))            # the grammar has one spelling: compact
    assert accepts(GENERIC, compact({**good, "involved_parts": ["NoSuchPart"]}))


def test_masks_follow_the_legal_grammar_token_by_token():
    task = CASES[-1]
    target = compact(legal_decisions(task)[0])
    raw = target.encode("utf-8")
    toks = {bytes((b,)) for b in range(256)} | {raw[i:i + 4] for i in range(len(raw) - 3)}
    vocab = Vocab([None, *sorted(toks)], (0,), "test", False)
    mask = DecisionMask(legal_grammar(task), vocab)
    index = {b: i for i, b in enumerate(vocab.token_bytes) if b}
    state, pos = 0, 0
    while pos < len(raw):
        piece = raw[pos:pos + 4] if raw[pos:pos + 4] in index else raw[pos:pos + 1]
        tid = index[piece]
        assert tid in set(mask.tables[state].ids.tolist())
        state = mask.advance(state, tid)
        pos += len(piece)
    assert mask.tables[state].accepting
    start_ids = set(mask.tables[0].ids.tolist())
    assert index[b"{"] in start_ids and index[b"["] not in start_ids
    assert mask.advance(0, index[b"["]) is None


def test_a_decoder_that_strips_the_first_space_may_start_with_a_spaced_token():
    """SentencePiece-style decoders drop one leading space of the output: the first token may carry it."""
    from forgeplan.llm.masking import PRE

    task = CASES[-1]
    raw = compact(legal_decisions(task)[0]).encode("utf-8")
    vocab = Vocab([None, b" {", *sorted({bytes((b,)) for b in range(256)})], (0,), "test", True)
    mask = DecisionMask(legal_grammar(task), vocab)
    index = {b: i for i, b in enumerate(vocab.token_bytes) if b}
    assert mask.start() == PRE and index[b" {"] in set(mask.entry(PRE).ids.tolist())
    state = mask.advance(PRE, index[b" {"])
    for b in raw[1:]:
        state = mask.advance(state, index[bytes((b,))])
        assert state is not None
    assert mask.entry(state).accepting
    assert mask.advance(PRE, index[b"["]) is None

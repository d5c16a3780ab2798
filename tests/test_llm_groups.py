"""The LLM path on assemblies that need group moves (SEMANTICS §5): real level-1 burrs shipped with forgeplan.

The task grammar bounds group lists by the number of slots and keeps separate / join only where the
assembly needs them; the grammar mask lets a proved plan with group moves through byte by byte and
token by token; the legal mask offers exactly the group moves the engine accepts in each state it
reaches. No torch: synthetic vocabularies (every byte plus chunks of the reference texts).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from burrdata import burr as burr_file
from forgeplan.cli import main
from forgeplan.io.contract import output_json, parse_output
from forgeplan.io.importers import import_puzzle
from forgeplan.io.task_files import write_json, write_task
from forgeplan.llm.automaton import DEAD, compile_lark
from forgeplan.llm.grammar import base_grammar, compact, group_limit, lark_parser, specialise
from forgeplan.llm.masking import GrammarMask, LegalMask, task_dfa
from forgeplan.llm.prompt import target_text
from forgeplan.llm.vocab import Vocab
from forgeplan.model.actions import KIND, GroupMove, Join, Separate
from forgeplan.model.assembly import DIRECTIONS
from forgeplan.planners.asp.solve import solve_task
from forgeplan.planners.reference import reference_output
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.legal import legal_actions
from cases import grounding

GROUPS = "mj_burr6_puzzle4.json"         # level 1, comes apart only with group moves
SINGLE = "mj_burr6_puzzle0.json"         # level 1, single-part moves suffice


def _task(name: str, fault: str, seed: int = 3):
    return make_task(import_puzzle(burr_file(name)), [FaultSpec(fault)], seed=seed)


def _reference(task) -> str:
    """The proved-optimal plan, written by the contract's output_json (what reference.json holds)."""
    res = solve_task(task)
    assert res.optimal
    out = reference_output(task, res)
    assert out["rework_plan"] == output_json(task.sample_id, task.assembly.assembly_id, [], res.plan)["rework_plan"]
    return target_text(out)


@pytest.fixture(scope="module")
def burr():
    """Two faults of one group-move burr (one shared DFA), with their proved plans as contract text."""
    tasks = [_task(GROUPS, "missing_part"), _task(GROUPS, "wrong_orientation")]
    assert all(t.world.moves.groups for t in tasks)
    texts = [_reference(t) for t in tasks]
    for t, text in zip(tasks, texts):
        names = [a.name for a in parse_output(text).actions]
        assert "separate" in names and "join" in names, (t.sample_id, names)  # the check is not vacuous
    return tasks, texts


@pytest.fixture(scope="module")
def vocab(burr):
    _, texts = burr
    toks = {bytes((b,)) for b in range(256)}
    for raw in (t.encode() for t in texts):
        for n in (2, 5, 11):
            toks |= {raw[i:i + n] for i in range(0, len(raw) - n + 1)}
    return Vocab([None, *sorted(toks)], (0,), "test", False)


@pytest.fixture(scope="module")
def masks(burr, vocab):
    tasks, _ = burr
    out = []
    for t in tasks:
        gm = GrammarMask(t, vocab)
        out.append((gm, LegalMask(t, vocab, gm)))
    return out


def _greedy(vocab: Vocab, raw: bytes) -> list[int]:
    index = {b: i for i, b in enumerate(vocab.token_bytes) if b}
    longest = max(len(b) for b in index)
    out, k = [], 0
    while k < len(raw):
        n = next(n for n in range(min(longest, len(raw) - k), 0, -1) if raw[k:k + n] in index)
        out.append(index[raw[k:k + n]])
        k += n
    return out


def _group_text(name: str, ids, direction: str) -> str:
    return compact(KIND[name](ids, direction).to_json())


def _with_action(text: str, action_json: str) -> str:
    """`text` with its action list replaced by one action (the annotation stays)."""
    head = text[: text.index('"actions":[') + len('"actions":[')]
    return head + action_json + "]}}"


# ----------------------------------------------------------------------------- the task grammar

def test_group_lists_are_bounded_by_the_slots(burr):
    tasks, texts = burr
    task, text = tasks[1], texts[1]
    n = len(task.assembly.part_ids)
    assert group_limit(task) == n == 6
    dfa = task_dfa(task).dfa
    generic = compile_lark(base_grammar())
    ids = list(task.assembly.part_ids)
    for k in range(1, n + 3):
        members = (ids * 2)[:k]  # the grammar leaves distinctness to the engine
        for name in ("separate", "join"):
            t = _with_action(text, _group_text(name, members, "+x"))
            assert dfa.accepts(t.encode()) == (2 <= k <= n), (name, k)
            assert generic.accepts(t.encode()) == (k >= 2), (name, k)  # the generic grammar is unbounded
    spec = specialise(task)
    lark_parser(spec).parse(_with_action(text, _group_text("join", ids, "-z")))  # strict LALR: no conflicts


def test_the_whole_assembly_is_a_legal_group(burr):
    """Why the bound is the number of slots, not one less: §5 asks for two or more members, and the
    engine lets every part of the assembly leave together (the whole burr is separable)."""
    tasks, _ = burr
    task = tasks[1]  # wrong orientation: every part present
    everything = [a for a in legal_actions(grounding(task.world), task.actual)
                  if isinstance(a, GroupMove) and len(a.part_ids) == len(task.assembly.part_ids)]
    assert everything and all(a.name == "separate" for a in everything)


def test_assemblies_without_group_moves_keep_the_nine_forge_actions(tmp_path, capsys):
    task = _task(SINGLE, "missing_part")
    assert not task.world.moves.groups and group_limit(task) == 0
    spec = specialise(task)
    code = "\n".join(l for l in spec.splitlines() if not l.lstrip().startswith("//"))
    assert "separate" not in code and "join" not in code and "part_ids" not in code
    text = _reference(task)
    dfa = task_dfa(task).dfa
    assert dfa.accepts(text.encode())
    ids = list(task.assembly.part_ids)
    assert not dfa.accepts(_with_action(text, _group_text("separate", ids[:2], "+x")).encode())
    # `forgeplan grammar TASK_DIR` prints this same specialised grammar
    write_task(task, tmp_path / "t")
    write_json(tmp_path / "t" / "reference.json", json.loads(text))
    assert main(["grammar", str(tmp_path / "t")]) == 0
    assert capsys.readouterr().out == spec


def test_task_grammars_stay_inside_llguidance():
    from forgeplan.llm.grammar import check_llguidance

    pytest.importorskip("llguidance")
    for name in (GROUPS, SINGLE):
        assert "accepts" in check_llguidance(specialise(_task(name, "missing_part")))


def test_gbnf_of_a_group_grammar_keeps_the_bound(burr):
    """The xgrammar peer of `python -m lab decode` reads the same bounded lists (GBNF nested optionals)."""
    from forgeplan.llm.exports import lark_to_gbnf

    gbnf = lark_to_gbnf(specialise(burr[0][0]))
    tail = '("," present-part ("," present-part ("," present-part ("," present-part)?)?)?)?'
    assert f'separate-group ::= present-part "," present-part {tail}' in gbnf


# ----------------------------------------------------------------------------- masks vs the proved plans

def test_proved_group_plans_pass_both_masks(burr, vocab, masks):
    tasks, texts = burr
    single = {b: vocab.token_bytes.index(bytes((b,))) for b in range(256)}
    for task, text, (gm, lm) in zip(tasks, texts, masks):
        out = parse_output(text)
        assert task.world.restoration(task.actual, out.actions, task.target).restored
        raw = text.encode()
        for ids in ([single[b] for b in raw], _greedy(vocab, raw)):
            assert vocab.text(ids) == text
            assert max(len(vocab.token_bytes[i]) for i in ids) > 1 or len(ids) == len(raw)
            for mask in (gm, lm):
                st = mask.start()
                for k, i in enumerate(ids):
                    assert i in set(mask.entry(st).ids.tolist()), (type(mask).__name__, k, vocab.token_bytes[i])
                    st = mask.advance(st, i)
                assert mask.entry(st).accepting


def _candidates(task, state):
    """Every group move the grammar can spell on this state's slots (present or not, separable or not,
    along any direction)."""
    world = task.world
    n = len(world.ids)
    out = []
    for g in range(1, 1 << n):
        members = [j for j in range(n) if g >> j & 1]
        if len(members) < 2:
            continue
        for d in DIRECTIONS:
            occ = [state.slots[j].occupant or world.ids[j] for j in members]
            out.append(Separate(occ, d))
            out.append(Join([world.ids[j] for j in members], d))
    return out


def test_legal_mask_admits_exactly_the_engines_group_moves(burr, masks):
    """Along the proved plan, at each action boundary: every group move the engine accepts passes the
    legal mask, every one it refuses (blocked, not present, not separable, ...) is cut although the
    grammar mask alone lets it through."""
    tasks, texts = burr
    task, text = tasks[0], texts[0]
    gm, lm = masks[0]
    raw = text.encode()
    plan = parse_output(text).actions
    start = raw.index(b'"actions":[') + len(b'"actions":[')
    st = lm.start()
    for b in raw[:start]:
        st = lm.step(st, b)
    state = task.actual
    reasons = set()
    for action in plan:
        assert st[1] == state and lm.dfa.marked[st[0]]
        n_ok, memo = 0, {}
        for cand in _candidates(task, state):
            spelled = compact(cand.to_json()).encode()
            assert gm.dfa.run(spelled, st[0]) != DEAD  # the grammar alone allows it
            s2 = st
            for b in spelled:
                key = (s2, b)
                if key not in memo:  # candidates share long prefixes
                    memo[key] = lm.step(s2, b)
                s2 = memo[key]
                if s2 is None:
                    break
            verdict = task.world.check(state, cand)
            assert (s2 is not None) == (verdict is None), (str(cand), verdict)
            if verdict is None:
                n_ok += 1
                assert s2[1] == task.world.apply(state, cand) and s2[2] is None
            else:
                reasons.add(verdict.code)
        assert n_ok > 0
        spelled = compact(action.to_json()).encode() + (b"," if action is not plan[-1] else b"")
        for b in spelled:
            st = lm.step(st, b)
        state = task.world.apply(state, action)
    assert {"blocked", "not_present", "already_present"} <= reasons


def test_blocked_separate_is_masked_by_legal_only(burr, vocab, masks):
    """A separate along a direction where an outside part blocks a member: the grammar mask takes every
    token of it, the legal mask refuses it before its end."""
    tasks, texts = burr
    task, text = tasks[0], texts[0]
    gm, lm = masks[0]
    first = parse_output(text).actions[0]
    assert first.name == "separate"
    blocked = [Separate(first.part_ids, d) for d in DIRECTIONS]
    blocked = [a for a in blocked if (v := task.world.check(task.actual, a)) is not None and v.code == "blocked"]
    assert blocked
    for action in blocked:
        bad = _with_action(text, compact(action.to_json())).encode()
        ids = _greedy(vocab, bad)
        for mask, allowed in ((gm, True), (lm, False)):
            st, ok = mask.start(), True
            for i in ids:
                if i not in set(mask.entry(st).ids.tolist()):
                    ok = False
                    break
                st = mask.advance(st, i)
            assert ok == allowed and (not ok or mask.entry(st).accepting), (type(mask).__name__, str(action))


def test_random_legal_decodes_replay_and_use_group_moves(burr, vocab, masks):
    """Random walks of the legal mask (a model that prefers anything): every finished output parses
    and replays without an illegal action, and group moves are among what gets decoded."""
    tasks, _ = burr
    rng = random.Random(5)
    used = set()
    for run in range(24):
        task = tasks[run % 2]
        _, lm = masks[run % 2]
        st, ids, budget = lm.start(), [], 220
        while True:
            e = lm.entry(st)
            if e.accepting and (not len(e.ids) or rng.random() < 0.1):
                break
            allowed = e.within(budget - len(ids) - 1)
            assert len(allowed), "the budget bound must keep the output completable"
            i = int(rng.choice(allowed))
            ids.append(i)
            st = lm.advance(st, i)
        out = parse_output(vocab.text(ids))
        rp = task.world.replay(task.actual, out.actions)
        assert rp.failure is None, str(rp.failure)
        used |= {a.name for a in out.actions}
    assert {"separate", "join"} & used


def test_prompts_name_the_group_moves_only_where_they_exist():
    from forgeplan.llm.prompt import SYSTEM, build_prompt

    with_groups, without = build_prompt(_task(GROUPS, "missing_part")), build_prompt(_task(SINGLE, "missing_part"))
    assert with_groups[0]["content"] == without[0]["content"] == SYSTEM   # one system turn: the contract
    named = [{t["action"] for t in json.loads(p[1]["content"])["action_space"]["templates"]} for p in (with_groups, without)]
    assert {"separate", "join"} <= named[0] and not {"separate", "join"} & named[1]
    compact = [build_prompt(_task(name, "missing_part"), "compact")[0]["content"] for name in (GROUPS, SINGLE)]
    assert "separate(part_ids, direction)" in compact[0] and "join(" in compact[0]
    assert "separate" not in compact[1] and "join" not in compact[1]
"""The plan grammar, its task specialisation, the byte automaton and the token masks (no torch)."""

from __future__ import annotations

import functools
import json
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cases import all_cases, grounding, lane
from forgeplan.cli import main
from forgeplan.io.contract import parse_output
from forgeplan.io.task_files import write_json, write_task
from forgeplan.llm.automaton import DEAD, compile_lark
from forgeplan.llm.grammar import base_grammar, compact, lark_parser, specialise
from forgeplan.llm.masking import GrammarMask, LegalMask, task_dfa
from forgeplan.llm.prompt import build_prompt, target_text
from forgeplan.llm.vocab import Vocab
from forgeplan.model.errors import InputError
from forgeplan.planners.reference import simple_reference
from forgeplan.semantics.legal import legal_actions

def _one_assembly_per_family():
    """The registry's cases for the first assembly of each family: every family's grammar shape, while
    keeping the per-assembly automaton compiles (seconds each) within the test budget."""
    first: dict[str, str] = {}
    for _, task in all_cases():
        first.setdefault(task.assembly.family, task.assembly.assembly_id)
    keep = set(first.values())
    return tuple(c for c in all_cases() if c[1].assembly.assembly_id in keep)


CASES = _one_assembly_per_family()
IDS = [name for name, _ in CASES]


def reference_text(task) -> str:
    ref = simple_reference(task)
    assert ref is not None
    return target_text(ref)


@pytest.fixture(scope="module")
def generic():
    return lark_parser(base_grammar())


# ----------------------------------------------------------------------------- grammar vs references

@pytest.mark.parametrize("name,task", lane(CASES, every=8))
def test_reference_parses_under_its_task_grammar(name, task, generic):
    text = reference_text(task)
    assert task_dfa(task).dfa.accepts(text.encode("utf-8"))
    generic.parse(text)
    if name.endswith("/multi/0"):  # the strict LALR load is slow: once per assembly
        lark_parser(specialise(task)).parse(text)


def test_grammar_rejects(generic):
    name, task = next(c for c in CASES if "wrong_part" in c[0])
    good = reference_text(task)
    dfa = task_dfa(task).dfa
    data = json.loads(good)
    bad = [
        good + " ",                                        # trailing text
        json.dumps(data),                                  # non-compact whitespace
        good.replace('"annotation"', '"Annotation"'),
        compact({"rework_plan": data["rework_plan"], "annotation": data["annotation"]}),   # key order
        good.replace(data["annotation"]["mistakes"][0]["part_id"], "NoSuchPart"),
        good.replace('"pass":false', '"pass":true'),       # pass true needs no mistakes
        good.replace(task.sample_id, task.sample_id + "x"),
    ]
    for text in bad:
        assert text != good
        assert not dfa.accepts(text.encode("utf-8")), text[:80]
    assert not dfa.accepts(b"")


def test_unknown_ids_pass_the_generic_grammar_only(generic):
    _, task = CASES[0]
    text = reference_text(task).replace(task.sample_id, "another sample")
    generic.parse(text)
    assert not task_dfa(task).dfa.accepts(text.encode())


def test_vocabulary_empty_rules_drop_their_alternatives():
    _, task = next(c for c in CASES if c[0].startswith("bayonet"))
    text = specialise(task)
    assert "coupled_unlock" not in text  # the bayonet has a rotate lock only
    assert "rotate_unlock:" in text
    lark_parser(text)


def test_non_ascii_ids_and_partial_utf8():
    _, task = CASES[0]
    task = replace(task, sample_id="tâche_ü→")
    text = reference_text(task)
    dfa = task_dfa(task).dfa
    raw = text.encode("utf-8")
    assert dfa.accepts(raw)
    cut = raw.index("â".encode()) + 1  # inside the two-byte character
    assert dfa.run(raw[:cut]) != DEAD


# ----------------------------------------------------------------------------- property: accepted => valid

def _walk(dfa, rng: random.Random, stop: float, max_len: int) -> bytes:
    """A random accepted string: random live bytes, finishing along shortest paths after max_len."""
    out, q = bytearray(), 0
    while True:
        if dfa.accepting[q] and (not dfa.live[q] or rng.random() < stop):
            return bytes(out)
        options = dfa.live[q]
        if len(out) > max_len:
            options = [b for b in options if dfa.dist[dfa.trans[q][b]] < dfa.dist[q]]
        b = rng.choice(list(options))
        out.append(b)
        q = dfa.trans[q][b]


@functools.lru_cache(maxsize=None)
def _task_parser(text: str):
    return lark_parser(text)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(range(len(CASES))), seed=st.integers(0, 2**32 - 1), length=st.integers(50, 1500))
def test_every_accepted_string_is_a_valid_contract(case, seed, length):
    _, task = CASES[case]
    dfa = task_dfa(task).dfa
    raw = _walk(dfa, random.Random(seed), 0.5, length)
    text = raw.decode("utf-8")
    out = parse_output(text)  # valid JSON and the output contract
    assert out.sample_id == task.sample_id and out.assembly_id == task.assembly.assembly_id
    _task_parser(specialise(task)).parse(text)  # the automaton's language is the Lark grammar's


def test_generic_grammar_walks_are_valid():
    dfa = compile_lark(base_grammar())
    rng = random.Random(7)
    for _ in range(40):
        text = _walk(dfa, rng, 0.3, 600).decode("utf-8")
        parse_output(text)


# ----------------------------------------------------------------------------- automaton

def test_recursive_grammar_is_refused():
    with pytest.raises(InputError, match="recursive"):
        compile_lark('start: "(" start ")" | "x"\n')


def test_ignore_is_refused():
    with pytest.raises(InputError, match="ignore"):
        compile_lark('start: "a" "b"\nWS: " "\n%ignore WS\n')


def test_regex_terminals():
    dfa = compile_lark('start: NUM ("," NUM)*\nNUM: /-?[0-9]{1,3}(\\.[0-9]+)?/\n')
    for ok in (b"1", b"-12.5,3", b"999,0.0"):
        assert dfa.accepts(ok)
    for bad in (b"", b"1,", b"1234", b"1.", b"--1"):
        assert not dfa.accepts(bad)


# ----------------------------------------------------------------------------- token masks (synthetic vocabularies)

def _toy_vocab(text: str, extra: list[bytes], strip: bool = False) -> Vocab:
    """Every single byte, every 2- and 5-byte chunk of `text`, plus `extra` tokens; EOS is id 0."""
    raw = text.encode("utf-8")
    toks = {bytes((b,)) for b in range(256)}
    for n in (2, 5):
        toks |= {raw[i:i + n] for i in range(0, len(raw) - n + 1)}
    toks |= set(extra)
    return Vocab([None, *sorted(toks)], (0,), "test", strip)


def _teacher_force(mask, vocab: Vocab, ids: list[int]):
    st_ = mask.start()
    for i in ids:
        e = mask.entry(st_)
        assert i in set(e.ids.tolist()), vocab.token_bytes[i]
        st_ = mask.advance(st_, i)
        assert st_ is not None
    assert mask.entry(st_).accepting


def _ids_using(vocab: Vocab, raw: bytes, must: list[bytes]) -> list[int]:
    """A tokenisation of `raw` that uses each `must` token at its first occurrence."""
    cuts = sorted((raw.index(m), m) for m in must)
    out, k = [], 0
    for pos, m in cuts:
        out += _greedy_ids(vocab, raw[k:pos]) + [vocab.token_bytes.index(m)]
        k = pos + len(m)
    return out + _greedy_ids(vocab, raw[k:])


def _greedy_ids(vocab: Vocab, raw: bytes) -> list[int]:
    """Longest-match tokenisation (tokens may straddle fields, terminals and UTF-8 characters)."""
    index = {b: i for i, b in enumerate(vocab.token_bytes) if b}
    out, k = [], 0
    longest = max(len(b) for b in index)
    while k < len(raw):
        for n in range(min(longest, len(raw) - k), 0, -1):
            if raw[k:k + n] in index:
                out.append(index[raw[k:k + n]])
                k += n
                break
    return out


def test_masks_allow_the_reference_with_straddling_tokens():
    _, task = next(c for c in CASES if "interference_lock" in c[0])
    task = replace(task, sample_id="é-sample")
    text = reference_text(task)
    raw = text.encode("utf-8")
    # tokens that end and start inside a UTF-8 character, and tokens spanning several fields
    must = [b'_id":"\xc3', b'\xa9-sampl', b']},"rework_', b':false,"mis']
    vocab = _toy_vocab(text, must)
    ids = _ids_using(vocab, raw, must)
    assert vocab.text(ids) == text
    _teacher_force(GrammarMask(task, vocab), vocab, ids)
    _teacher_force(LegalMask(task, vocab), vocab, ids)


def test_sentencepiece_leading_space_is_free():
    _, task = CASES[0]
    text = reference_text(task)
    vocab = _toy_vocab(text, [b' {"an'], strip=True)
    ids = [vocab.token_bytes.index(b' {"an')] + _greedy_ids(vocab, text.encode()[4:])
    assert vocab.text(ids) == text
    _teacher_force(GrammarMask(task, vocab), vocab, ids)
    _teacher_force(LegalMask(task, vocab), vocab, ids)


def test_eos_only_when_complete_and_budget_bounds():
    _, task = CASES[0]
    text = reference_text(task)
    vocab = _toy_vocab(text, [])
    m = GrammarMask(task, vocab)
    q = m.start()
    e = m.entry(q)
    assert not e.accepting
    need = m.dfa.dist[q]
    assert len(e.within(need - 1)) > 0 and all(b <= need - 1 for b in e.bounds[: 0])
    assert e.within(0).size == 0 or need <= 1
    q = m.dfa.run(text.encode())
    assert m.entry(q).accepting and m.entry(q).ids.size == 0


def test_legal_mask_forbids_illegal_actions():
    """At the first action only the legal actions of the actual state may start."""
    _, task = next(c for c in CASES if "missing_part" in c[0])
    text = reference_text(task)
    vocab = _toy_vocab(text, [])
    lm = LegalMask(task, vocab)
    head = text[: text.index('"actions":[') + len('"actions":[')]
    st_ = lm.start()
    for i in _greedy_ids(vocab, head.encode()):
        st_ = lm.advance(st_, i)
    legal = {compact(a.to_json()) for a in legal_actions(grounding(task.world), task.actual)}
    for a in legal:
        s2 = st_
        for b in a.encode():
            s2 = lm.step(s2, b)
            assert s2 is not None
    illegal = compact({"action": "insert", "part_id": task.assembly.parts[0].part_id})
    assert illegal not in legal
    s2 = st_
    for b in illegal.encode():
        s2 = lm.step(s2, b)
        if s2 is None:
            break
    assert s2 is None


# ----------------------------------------------------------------------------- prompt and CLI

def test_prompt_is_compact_and_public():
    _, task = CASES[0]
    msgs = build_prompt(task)
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = json.loads(msgs[1]["content"])
    assert user["sample_id"] == task.sample_id and "voxels" not in msgs[1]["content"]
    # compact JSON; the three states in full (initial, actual, target) are most of it
    assert msgs[1]["content"] == compact(user) and len(msgs[1]["content"]) < 10_000


def test_cli_grammar(tmp_path, capsys):
    name, task = next(c for c in CASES if "wrong_part" in c[0])
    write_task(task, tmp_path / "t")
    write_json(tmp_path / "t" / "reference.json", simple_reference(task))
    assert main(["grammar", str(tmp_path / "t")]) == 0
    text = capsys.readouterr().out
    lark_parser(text).parse(reference_text(task))
    try:
        import llguidance  # noqa: F401
    except ImportError:
        assert main(["grammar", str(tmp_path / "t"), "--check"]) == 1
        assert "needs llguidance" in capsys.readouterr().err
    else:
        assert main(["grammar", str(tmp_path / "t"), "--check"]) == 0
        assert "accepts" in capsys.readouterr().err
    assert main(["grammar", str(tmp_path / "missing")]) == 2


def test_vectorised_tables_equal_the_trie_walk_in_every_state():
    from forgeplan.llm.masking import LazyTables

    _, task = next(c for c in CASES if "misplacement" in c[0])
    text = reference_text(task)
    vocab = _toy_vocab(text, [b'.0,0.', b'0,-1', b'"}]},"re', b"123456789"])
    dfa = task_dfa(task).dfa
    vec, trie = LazyTables(dfa, vocab, vector=True), LazyTables(dfa, vocab, vector=False)
    for q in range(dfa.n_states):
        a, b = vec[q], trie[q]
        assert a.ids.tolist() == b.ids.tolist() and a.bounds.tolist() == b.bounds.tolist(), q
        assert a.accepting == b.accepting


def test_cached_dfa_and_vocabulary_equal_fresh_ones(tmp_path, monkeypatch):
    from forgeplan.llm import masking
    from forgeplan.llm.vocab import _from_cache, _to_cache

    _, task = CASES[0]
    monkeypatch.setenv("FORGEPLAN_CACHE", str(tmp_path))
    masking.forget_compiled()
    fresh = task_dfa(task).dfa
    masking.forget_compiled()
    cached = task_dfa(task).dfa
    assert list((tmp_path / "dfa").iterdir())
    assert (cached.trans, cached.accepting, cached.marked, cached.dist, cached.live) == \
        (fresh.trans, fresh.accepting, fresh.marked, fresh.dist, fresh.live)
    vocab = _toy_vocab(reference_text(task), [b"\xc3"])
    back = _from_cache(json.loads(json.dumps(_to_cache(vocab))))
    assert (back.token_bytes, back.sorted_bytes, back.sorted_ids, back.eos_ids) == \
        (vocab.token_bytes, vocab.sorted_bytes, vocab.sorted_ids, vocab.eos_ids)


@pytest.mark.parametrize("most", [0, 10_000])
def test_legal_tables_between_actions_equal_the_product_walk(most):
    """The shortcut between actions (the grammar's table for tokens that cannot reach the next action)
    gives what the full product walk gives, on every state along sampled legal paths."""
    from forgeplan.llm.masking import walk

    _, task = next(c for c in CASES if "interference_lock" in c[0])
    text = reference_text(task)
    vocab = _toy_vocab(text, [b'"actions":[{"action":"', b'},{"action":"remove","part_id":"', b"]}}"])
    lm = LegalMask(task, vocab)
    rng = random.Random(3)
    for _ in range(6):
        st_, seen = lm.start(), 0
        while not lm.entry(st_).accepting or rng.random() < 0.9:
            if st_[0] != -2 and st_[2] is None:
                got = lm._outside_action(st_, most=most)
                full = walk(vocab, st_, lm.step, lm.live, lm.bound)
                if got is not None:
                    seen += 1
                    assert got.ids.tolist() == full.ids.tolist() and got.bounds.tolist() == full.bounds.tolist()
            ids = lm.entry(st_).ids
            if not len(ids):
                break
            st_ = lm.advance(st_, int(rng.choice(ids.tolist())))
        assert seen or most == 0

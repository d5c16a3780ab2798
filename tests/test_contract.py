"""Untrusted output parsing: every malformed output is one clear ContractError, never a crash."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from forgeplan.io.contract import MAX_ACTIONS, ContractError, parse_output


def good(actions=None, mistakes=None, passed=False):
    return {"annotation": {"sample_id": "s", "assembly_id": "a", "pass": passed,
                           "mistakes": mistakes if mistakes is not None else [{"type": "missing_part", "part_id": "P", "visible": True}]},
            "rework_plan": {"objective": "restore_to_target_state",
                            "actions": actions if actions is not None else [{"action": "insert", "part_id": "P"}]}}


def test_a_valid_output_parses():
    out = parse_output(json.dumps(good([{"action": "rotate", "part_id": "P", "axis": "y", "angle_deg": 90},
                                         {"action": "replace", "wrong_part_id": "W", "target_part_id": "P"}])))
    assert [a.name for a in out.actions] == ["rotate", "replace"]
    assert out.actions[1].touched == ("W", "P")


@pytest.mark.parametrize("raw,match", [
    ("", "empty"),
    ("not json", "not one JSON object"),
    ('{"annotation": {"sample_id": "s"', "truncated"),
    ('{"annotation": "x", "rework_plan": "y"} trailing', "not one JSON object"),
    ("[1, 2]", "must be a JSON object"),
    (json.dumps(good()).replace('"insert"', '"teleport"'), "rework_plan.actions.0.action"),
    (json.dumps(good()).replace('"pass": false', '"pass": "no"'), "annotation.pass"),
    (json.dumps(good([{"action": "rotate", "part_id": "P", "axis": "y"}])), "missing"),
    (json.dumps(good([{"action": "insert", "part_id": "P", "axis": "y"}])), "unexpected"),
    (json.dumps(good([{"action": "rotate", "part_id": "P", "axis": "y", "angle_deg": 1e400}])), "not allowed|finite"),
    ('{"annotation": {"sample_id": "s", "assembly_id": "a", "pass": false, "mistakes": []}, "rework_plan": {"objective": "restore_to_target_state", "actions": [{"action": "rotate", "part_id": "P", "axis": "x", "angle_deg": NaN}]}}', "NaN"),
    (json.dumps({**good(), "prose": "hello"}), "prose"),
    ("[" * 5000 + "]" * 5000, "nests deeper|must be a JSON object"),
])
def test_bad_outputs_get_one_line_reasons(raw, match):
    with pytest.raises(ContractError, match=match) as exc:
        parse_output(raw)
    assert "\n" not in exc.value.reason


def test_size_and_action_limits():
    with pytest.raises(ContractError, match="byte limit"):
        parse_output(" " * 1_000_001 + "{}")
    many = [{"action": "insert", "part_id": "P"}] * (MAX_ACTIONS + 1)
    with pytest.raises(ContractError, match="over the 10000 limit"):
        parse_output(json.dumps(good(many)))
    with pytest.raises(ContractError, match="not UTF-8"):
        parse_output(b'{"a": "\xff"}')


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.binary(max_size=300),
                 st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                              lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                              max_leaves=20).map(json.dumps)))
def test_arbitrary_input_never_crashes(raw):
    try:
        parse_output(raw)
    except ContractError:
        pass


# ----------------------------------------------------------------------------- fences and chatty answers

FENCED = "Here is the repair:\n```json\n{text}\n```\nIt restores the target."


def test_a_fence_fails_strict_parsing_and_the_reason_says_why():
    text = json.dumps(good(), indent=2)
    with pytest.raises(ContractError, match="wrapped in a ``` fence; pass --extract-json to score the object inside"):
        parse_output(FENCED.format(text=text))
    with pytest.raises(ContractError, match="text around its JSON object; pass --extract-json"):
        parse_output("Sure! " + json.dumps(good()) + " Let me know.")
    with pytest.raises(ContractError, match="truncated"):   # a cut-off answer is not taken for prose
        parse_output('Sure! {"annotation": {"sample_id": "s"')


@pytest.mark.parametrize("wrap", [
    FENCED,
    "```\n{text}\n```",                                         # a fence without an info string
    "I think the plan is {text}. Does that help?",            # chatty, no fence
    'The "plan" (below) moves {{one}} part:\n{text}',          # quotes and braces in the prose are not JSON
])
def test_extract_json_reads_the_one_object_of_a_wrapped_answer(wrap):
    plain = parse_output(json.dumps(good()))
    out = parse_output(wrap.format(text=json.dumps(good(), indent=1)), extract=True)
    assert out.extracted and not plain.extracted
    assert out.actions == plain.actions and out.mistakes == plain.mistakes and out.sample_id == plain.sample_id
    assert parse_output(json.dumps(good()), extract=True) == plain   # a raw answer is read as it stands


@pytest.mark.parametrize("raw,match", [
    ("```json\n" + json.dumps(good()) + "\n```\nor\n```json\n" + json.dumps(good(passed=True)) + "\n```", "blocks hold 2"),
    (json.dumps(good()) + "\n" + json.dumps(good()), "it holds 2"),
    ("No JSON here, sorry.", "it holds 0"),
    ("```json\nnot json\n```", "blocks hold 0"),
    ("```json\n" + "[" * 5000 + "]" * 5000 + "\n```", "blocks hold 0"),   # too deep: not a candidate
])
def test_extract_json_refuses_answers_without_exactly_one_object(raw, match):
    with pytest.raises(ContractError, match=match) as exc:
        parse_output(raw, extract=True)
    assert "\n" not in exc.value.reason


def test_extract_json_keeps_the_size_limit():
    with pytest.raises(ContractError, match="byte limit"):
        parse_output("```json\n" + json.dumps(good()) + "\n```" + " " * 1_000_001, extract=True)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="{}`"), max_size=80),
       st.text(alphabet=st.characters(blacklist_characters="{}`"), max_size=80), st.booleans())
def test_any_prose_around_one_object_extracts_to_it(before, after, fence):
    body = json.dumps(good())
    raw = f"{before}\n```json\n{body}\n```\n{after}" if fence else f"{before} {body} {after}"
    assert parse_output(raw, extract=True).actions == parse_output(body).actions


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_extraction_never_crashes(raw):
    try:
        parse_output(raw, extract=True)
    except ContractError:
        pass

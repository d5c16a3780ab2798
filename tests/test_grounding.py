"""Action Grounding as data and at decoding (llm.grounding, llm.sft_rows, llm.grounded_mask).

A grounded answer is the contract object with the engine's state renderings between its actions: it
strips back to the same text (so the same plan), its renderings are the engine's replay of the plan, its
tokenized rows give the renderings no loss and are otherwise TRL's own tokenization, and the grounded
masks accept exactly the grounded tokenization of a reference, forcing the renderings' tokens.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from forgeplan.io.contract import parse_output
from forgeplan.llm.bench import load_sample, split_ids
from forgeplan.llm.families import answer_pieces, read_sample, training_samples
from forgeplan.llm.grounding import Grounder, ground, grounded_text, rendering, strip_states
from forgeplan.llm.prompt import target_text
from forgeplan.llm.vocab import Vocab


def _samples(bench):
    return [load_sample(bench, sid) for split in ("train", "test") for sid in split_ids(bench, split)]


def _renderings(pieces) -> list[str]:
    return [text for text, shown in pieces if shown]


@pytest.mark.parametrize("targets", ["reference", "structured", "plain"])
def test_grounded_targets_strip_back_to_the_same_plan(small_bench, targets):
    for sid in split_ids(small_bench, "train"):
        sample = read_sample(small_bench, sid)
        plain = answer_pieces(sample, targets)
        assert len(plain) == 1 and not plain[0][1]
        grounded = "".join(text for text, _ in answer_pieces(sample, targets, grounding=True))
        assert grounded != plain[0][0] and strip_states(grounded) == plain[0][0]
        assert parse_output(strip_states(grounded)) == parse_output(plain[0][0])


def test_renderings_are_the_engines_replay_of_the_plan(small_bench):
    """One rendering after the list opens (the actual state: the annotated faulty parts), one after each
    action (the state the replay reaches), the last one empty (the target is restored)."""
    for task, ref in _samples(small_bench):
        actions = parse_output(json.dumps(ref), strict=False).actions
        shown = _renderings(ground(task, target_text(ref)))
        assert len(shown) == len(actions) + 1
        for k, text in enumerate(shown):
            assert text == rendering(task, task.world.replay(task.actual, actions[:k]).final)
        faulty = sorted({m["part_id"] for m in ref["annotation"]["mistakes"]}, key=task.world.ids.index)
        assert json.loads(shown[0][1:]) == faulty and shown[-1] == "@[]"


def test_a_refused_or_malformed_action_leaves_the_state_as_it_was(small_bench):
    task, ref = next((t, r) for t, r in _samples(small_bench) if r["rework_plan"]["actions"])
    text = target_text(ref)
    head = text[: text.index('"actions":[') + len('"actions":[')]
    for junk in ('{"action":"remove","part_id":"no such part"}', '{"action":"fly"}', '{"x":{"y":"}"}}'):
        shown = _renderings(ground(task, head + junk + "]}}"))
        assert shown == [rendering(task, task.actual)] * 2


def test_strip_states_reads_json_strings_and_keeps_stray_marks():
    assert strip_states('{"a":"x@[1]","b":[@["p"]{"c":"}@"}@[],2]}') == '{"a":"x@[1]","b":[{"c":"}@"},2]}'
    assert strip_states('{"a":[@ nothing]}') == '{"a":[@ nothing]}'


def test_the_grounder_finds_rendering_points_outside_strings_only(small_bench):
    task, _ = _samples(small_bench)[0]
    g = Grounder(task)
    text = b'{"annotation":{"sample_id":"\\"actions\\":["},"rework_plan":{"actions":[{"action":"x","a":"}"},{"b":[{}]}]}}'
    points = [k for k, b in enumerate(text) if g.feed(b) is not None]
    assert [chr(text[k]) for k in points] == ["[", "}", "}"]
    assert g.syntax.closed and text[points[0] - 10:points[0] + 1] == b'"actions":['


@pytest.fixture(scope="module")
def tokenizer(tiny_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


def test_a_one_piece_row_is_trls_own_tokenization(small_bench, tokenizer):
    from forgeplan.llm.families import prompt_for
    from forgeplan.llm.sft_rows import IGNORE, tokenized_row

    for _, sample in training_samples(small_bench, "train", limit=8):
        prompt = prompt_for(sample, "compact")[0]
        pieces = answer_pieces(sample)
        row = tokenized_row(tokenizer, prompt, pieces)
        head = tokenizer.apply_chat_template(prompt, tokenize=True, add_generation_prompt=True, return_dict=False)
        whole = tokenizer.apply_chat_template(prompt + [{"role": "assistant", "content": pieces[0][0]}], tokenize=True,
                                              return_dict=False)
        assert row["input_ids"] == whole and row["labels"] == [IGNORE] * len(head) + whole[len(head):]


def test_grounded_rows_give_the_renderings_no_loss(small_bench, tokenizer):
    from forgeplan.llm.families import prompt_for
    from forgeplan.llm.sft_rows import IGNORE, tokenized_row

    for _, sample in training_samples(small_bench, "train", limit=8):
        pieces = answer_pieces(sample, "structured", grounding=True)
        row = tokenized_row(tokenizer, prompt_for(sample, "compact")[0], pieces)
        taught = tokenizer.decode([t for t in row["labels"] if t != IGNORE])
        answer = "".join(text for text, shown in pieces if not shown)
        assert taught == answer + "<|im_end|>\n"
        assert tokenizer.decode(row["input_ids"]).count("@") == len(_renderings(pieces))


def _vocab(tokenizer) -> Vocab:
    from forgeplan.llm.vocab import vocab_from_tokenizer

    return vocab_from_tokenizer(tokenizer)


@pytest.mark.parametrize("mode", ["legal", "grammar", "none"])
def test_grounded_masks_accept_the_grounded_reference_and_force_the_renderings(small_bench, tokenizer, mode):
    """Walking the tokens a grounded row holds: every token is allowed, a rendering's tokens are the only
    ones allowed where they stand, and the answer may end after the last one."""
    from forgeplan.llm.families import mask_for
    from forgeplan.llm.grounded_mask import grounded_masks

    vocab = _vocab(tokenizer)
    for sid in split_ids(small_bench, "train")[:2]:
        sample = read_sample(small_bench, sid)
        mask = grounded_masks([sample], [mask_for(sample, mode, vocab)], vocab, tokenizer)[0]
        st = mask.start()
        for text, shown in answer_pieces(sample, "reference", grounding=True):
            for token in tokenizer(text, add_special_tokens=False)["input_ids"]:
                entry = mask.entry(st)
                assert token in entry.ids, (sid, text, tokenizer.decode([token]))
                if shown:
                    assert list(entry.ids) == [token]
                st = mask.advance(st, token)
                assert st is not None
        assert mask.entry(st).accepting


def test_a_token_running_past_a_rendering_point_is_not_allowed(small_bench):
    from forgeplan.llm.grounded_mask import GroundedMask

    task, _ = _samples(small_bench)[0]
    pieces = [b'{"rework_plan":{"actions":', b"[", b"[{", b"{", b'"a"', b"}", b"},", b",", b"]", b"}}", b"@", b'["x"]']
    vocab = Vocab(token_bytes=[*pieces, None], eos_ids=(len(pieces),), kind="test")
    mask = GroundedMask(task, None, vocab, lambda text: [pieces.index(b"@"), pieces.index(b'["x"]')])
    st = mask.advance(mask.start(), 0)
    assert pieces.index(b"[{") not in mask.entry(st).ids and pieces.index(b"[") in mask.entry(st).ids
    assert mask.advance(st, pieces.index(b"[{")) is None
    st = mask.advance(st, pieces.index(b"["))
    assert list(mask.entry(st).ids) == [pieces.index(b"@")]            # the rendering is forced
    for token in (b"@", b'["x"]', b"{", b'"a"'):
        st = mask.advance(st, pieces.index(token))
    allowed = set(mask.entry(st).ids.tolist())
    assert pieces.index(b"}") in allowed and pieces.index(b"},") not in allowed
    assert mask.advance(st, pieces.index(b"},")) is None
    st = mask.advance(st, pieces.index(b"}"))
    assert st[2] and np.array_equal(mask.entry(st).ids, [pieces.index(b"@")])

"""The logits processor wherever `generate` works: greedy, sampling with several return sequences, beam
search, batched left-padded prompts and one processor reused across calls, on a tiny random model
(the hardest client: whatever it prefers, every output must parse and, in legal mode, replay)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cases import all_cases
from forgeplan.io.contract import parse_output
from forgeplan.llm.infer import eos_ids, generate
from forgeplan.llm.masking import GrammarMask, make_mask
from forgeplan.llm.prompt import build_prompt, prompt_text
from forgeplan.llm.vocab import vocab_from_tokenizer

MODES = {
    "greedy": {},
    "sampling x2": {"sample_seed": 5, "num_return_sequences": 2},
    "beams 2": {"num_beams": 2},
    "beams 3 x2": {"num_beams": 3, "num_return_sequences": 2},
}


@pytest.fixture(scope="module", autouse=True)
def llm_extra():
    """torch and transformers are imported by the tests that run, not when the suite is collected."""
    pytest.importorskip("torch", reason="the [llm] extra (torch, transformers) is required")


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    return AutoModelForCausalLM.from_pretrained(tiny_dir).eval(), AutoTokenizer.from_pretrained(tiny_dir)


@pytest.fixture(scope="module")
def tasks():
    """Tasks of different assemblies (prompts of different lengths: the batch is left-padded), one of a
    group-move assembly."""
    chosen, seen = [], set()
    for name, task in all_cases():
        aid = task.assembly.assembly_id
        if aid not in seen and ("wrong_part" in name or "interference_lock" in name or aid == "burr_6_split"):
            seen.add(aid)
            chosen.append(task)
    picked = chosen[:3] + [t for t in chosen if t.assembly.assembly_id == "burr_6_split"][:1]
    assert len(picked) == 4
    return picked


def _check(rows, tasks, mode):
    for row in rows:
        task = tasks[row["task_index"]]
        out = parse_output(row["raw_output"])
        assert out.sample_id == task.sample_id
        if mode == "legal":
            rp = task.world.replay(task.actual, out.actions)
            assert rp.failure is None, (task.sample_id, str(rp.failure))


# the fast lane samples a few (strategy, mask) pairs so that, with the greedy reuse test below, every strategy
# and every mask mode runs; the slow lane runs every pair
FAST = {("beams 3 x2", "legal"), ("bitmask", "legal")}


def _lane(*grid):
    """pytest params over the product of `grid`: the pairs in FAST run in the fast lane, the rest are slow."""
    import itertools

    return [pytest.param(*combo, id="-".join(combo), marks=() if combo in FAST else pytest.mark.slow)
            for combo in itertools.product(*grid)]


@pytest.mark.parametrize("how, mode", _lane(list(MODES), ["grammar", "legal"]))
def test_every_output_parses_in_every_generation_mode(tiny, tasks, mode, how):
    model, tok = tiny
    kw = MODES[how]
    rows = generate(model, tok, tasks, mode, max_new_tokens=120, **kw)
    assert len(rows) == len(tasks) * kw.get("num_return_sequences", 1)
    _check(rows, tasks, mode)


def _inputs(tok, tasks):
    tok.padding_side = "left"
    prompts = [prompt_text(tok, build_prompt(t, "forge")) for t in tasks]
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    assert (enc["attention_mask"] == 0).any()  # the prompts differ in length: some rows are padded
    return enc


@pytest.mark.parametrize("form, mode", _lane(["ids", "bitmask"], ["grammar", "legal"]))
def test_a_reused_processor_gives_the_same_outputs(tiny, tasks, mode, form):
    import torch

    from forgeplan.llm.processor import PlanMaskProcessor

    model, tok = tiny
    vocab = vocab_from_tokenizer(tok)
    eos = eos_ids(model, tok)
    enc = _inputs(tok, tasks)

    def run(proc, n):
        with torch.inference_mode():
            out = model.generate(**enc, max_new_tokens=n, do_sample=False, logits_processor=[proc],
                                 eos_token_id=list(eos), pad_token_id=tok.pad_token_id)
        return out[:, enc["input_ids"].shape[1]:].tolist()

    shared = PlanMaskProcessor([make_mask(mode, t, vocab) for t in tasks], eos, 90, form=form)
    first, second = run(shared, 90), run(shared, 90)
    other = "ids" if form == "bitmask" else "bitmask"
    fresh = run(PlanMaskProcessor([make_mask(mode, t, vocab) for t in tasks], eos, 90, form=other), 90)
    assert first == second == fresh
    rows = [{"raw_output": tok.decode([i for i in seq if i not in eos and i != tok.pad_token_id]), "task_index": k}
            for k, seq in enumerate(first)]
    _check(rows, tasks, mode)


def test_rows_without_a_mask_are_left_free_and_rows_must_divide(tiny, tasks):
    import torch

    from forgeplan.llm.processor import PlanMaskProcessor

    model, tok = tiny
    vocab = vocab_from_tokenizer(tok)
    proc = PlanMaskProcessor([GrammarMask(tasks[0], vocab), None], eos_ids(model, tok), 1000)
    scores = torch.zeros(2, model.config.vocab_size)
    out = proc(torch.zeros(2, 7, dtype=torch.long), scores.clone())
    assert torch.isfinite(out[1]).all()
    assert torch.isfinite(out[0]).sum() == len(GrammarMask(tasks[0], vocab).entry(0).ids)
    with pytest.raises(ValueError, match="rows"):
        proc(torch.zeros(3, 7, dtype=torch.long), torch.zeros(3, model.config.vocab_size))


def test_a_token_outside_the_mask_leaves_only_eos(tiny, tasks):
    import torch

    from forgeplan.llm.processor import PlanMaskProcessor

    model, tok = tiny
    vocab = vocab_from_tokenizer(tok)
    eos = eos_ids(model, tok)
    mask = GrammarMask(tasks[0], vocab)
    proc = PlanMaskProcessor([mask], eos, 1000)
    width = model.config.vocab_size
    proc(torch.zeros(2, 5, dtype=torch.long), torch.zeros(2, width))
    good = int(mask.entry(mask.start()).ids[0])
    bad = next(i for i in range(vocab.size) if vocab.token_bytes[i] and mask.advance(mask.start(), i) is None)
    out = proc(torch.tensor([[0] * 5 + [good], [0] * 5 + [bad]]), torch.zeros(2, width))
    assert set(torch.nonzero(torch.isfinite(out[1])).flatten().tolist()) == set(eos)
    assert torch.isfinite(out[0]).sum() == len(mask.entry(mask.advance(mask.start(), good)).ids)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300).flatmap(lambda w: st.tuples(st.just(w), st.lists(st.integers(0, w + 40), max_size=60),
                                                       st.lists(st.integers(0, w + 40), max_size=60))))
def test_packed_bitmask_allows_exactly_its_ids(case):
    import torch

    from forgeplan.llm.processor import apply_bitmask, pack

    width, a, b = case
    packed = torch.from_numpy(np.stack([pack(np.asarray(a, dtype=np.int64), width),
                                        pack(np.asarray(b, dtype=np.int64), width)]))
    scores = torch.zeros(2, width)
    apply_bitmask(scores, packed)
    for row, ids in enumerate((a, b)):
        assert set(torch.nonzero(torch.isfinite(scores[row])).flatten().tolist()) == {i for i in ids if i < width}


def test_cli_infer_with_beam_search(tiny_dir, small_bench, tmp_path):
    import json

    from forgeplan.cli import main
    from forgeplan.llm.bench import load_sample

    out = tmp_path / "p.jsonl"
    assert main(["infer", "--model", str(tiny_dir), "--bench", str(small_bench), "--limit", "2", "--num-beams", "2",
                 "--max-new-tokens", "120", "--out", str(out), "--constrained", "legal", "--threads", "1"]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        task = load_sample(small_bench, row["sample_id"])[0]
        plan = parse_output(row["raw_output"])
        assert plan.sample_id == row["sample_id"] and task.world.replay(task.actual, plan.actions).failure is None
    assert main(["infer", "--model", str(tiny_dir), "--bench", str(small_bench), "--num-beams", "0",
                 "--out", str(tmp_path / "q.jsonl")]) == 2

"""Constrained decoding, legal-action masking, inference and LoRA training on a tiny local model.

Everything is built here: a benchmark folder in the layout `forgeplan bench build` writes (from the
shared case registry), a tokenizer trained on it and a randomly initialised Qwen2-style model with a
padded vocabulary. A random model is the hardest client of the masks: whatever it prefers, the output
must parse and (legal mode) replay.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burrdata import burr
from cases import write_case_tasks
from forgeplan.cli import main
from forgeplan.io.contract import ContractError, parse_output
from forgeplan.bench.digests import seal_folder
from forgeplan.io.task_files import write_json
from forgeplan.llm.bench import load_sample, split_ids
from forgeplan.llm.infer import generate_all as generate
from forgeplan.llm.masking import GrammarMask, LegalMask
from forgeplan.llm.prompt import target_text
from forgeplan.llm.tiny import train_tokenizer
from forgeplan.llm.vocab import vocab_from_tokenizer

N_TEST = 52
N_TRAIN = 8


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """torch is imported by the tests that run, not when the suite is collected."""
    torch = pytest.importorskip("torch", reason="the [llm] extra (torch, transformers, peft) is required")
    old = torch.get_num_threads()
    torch.set_num_threads(1)  # the 2 shared cores are faster without intra-op threads for this size
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    ids = write_case_tasks(root, N_TEST + N_TRAIN)
    for k, sid in enumerate(ids):
        write_json(root / "tasks" / sid / "meta.json", {"split": "train" if k % 7 == 3 else "test"})
    train = [s for k, s in enumerate(ids) if k % 7 == 3][:N_TRAIN]
    test = [s for s in ids if s not in train][:N_TEST]
    seal_folder(root, {"splits": {"train": train, "test": test}})
    return root


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, bench):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path_factory.mktemp("tiny")
    assert main(["tiny-model", "--out", str(out), "--vocab-size", "2048"]) == 0
    model = AutoModelForCausalLM.from_pretrained(out).eval()
    tok = AutoTokenizer.from_pretrained(out)
    assert model.config.vocab_size > len(tok)  # a padded model vocabulary, as real checkpoints have
    return out, model, tok


@pytest.fixture(scope="module")
def test_tasks(bench):
    return [load_sample(bench, sid) for sid in split_ids(bench, "test")]


def _parse_rate(rows) -> float:
    ok = 0
    for r in rows:
        try:
            parse_output(r["raw_output"])
            ok += 1
        except ContractError:
            pass
    return ok / len(rows)


# ----------------------------------------------------------------------------- constrained decoding

@pytest.mark.slow
def test_grammar_mask_gives_valid_outputs_on_every_task(tiny, test_tasks, capsys):
    _, model, tok = tiny
    tasks = [t for t, _ in test_tasks]
    assert len(tasks) >= 50
    vocab = vocab_from_tokenizer(tok)
    rows = generate(model, tok, tasks, "grammar", max_new_tokens=200, vocab=vocab, batch_size=26)
    for task, row in zip(tasks, rows):
        out = parse_output(row["raw_output"])
        assert out.sample_id == task.sample_id
    free = generate(model, tok, tasks, "none", max_new_tokens=16, batch_size=52)
    rate = _parse_rate(free)
    with capsys.disabled():
        print(f"\n[schema-valid] grammar: 100% of {len(tasks)}; unconstrained: {100 * rate:.1f}%")
    assert rate < 1.0  # a random model does not write the contract by itself


@pytest.mark.slow
def test_sampled_grammar_outputs_are_valid(tiny, test_tasks):
    _, model, tok = tiny
    tasks = [t for t, _ in test_tasks][::4]
    rows = generate(model, tok, tasks, "grammar", max_new_tokens=160, sample_seed=1, batch_size=13)
    assert _parse_rate(rows) == 1.0
    assert all(r["stopped"] == "eos" or r["new_tokens"] == 160 for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [None, 3])
def test_legal_mask_plans_replay(tiny, test_tasks, seed):
    _, model, tok = tiny
    tasks = [t for t, _ in test_tasks][:: 1 if seed is None else 4]
    rows = generate(model, tok, tasks, "legal", max_new_tokens=200 if seed is None else 240, sample_seed=seed,
                    batch_size=26 if seed is None else 13)
    actions = 0
    for task, row in zip(tasks, rows):
        out = parse_output(row["raw_output"])
        rp = task.world.replay(task.actual, out.actions)
        assert rp.failure is None, (task.sample_id, str(rp.failure))
        actions += len(out.actions)
    if seed is not None:
        # sampling walks plans with actions, so the replay check is not vacuous; the tiny tokenizer has single
        # tokens that close a plan at once (`":[]}}`), so an untrained model's samples are often empty plans
        assert actions > 0


@pytest.mark.slow
def test_mask_never_forbids_the_reference(tiny, test_tasks):
    _, _, tok = tiny
    sp = train_tokenizer([target_text(r) for _, r in test_tasks], 600, "sentencepiece")
    for tokenizer in (tok, sp):
        vocab = vocab_from_tokenizer(tokenizer)
        for task, ref in test_tasks:
            text = target_text(ref)
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            assert tokenizer.decode(ids, skip_special_tokens=True) == text
            for mask in (GrammarMask(task, vocab), LegalMask(task, vocab)) if tokenizer is tok else (GrammarMask(task, vocab),):
                st = mask.start()
                for i in ids:
                    assert i in set(mask.entry(st).ids.tolist()), (task.sample_id, tokenizer.decode([i]))
                    st = mask.advance(st, i)
                assert mask.entry(st).accepting


# ----------------------------------------------------------------------------- assemblies that need group moves



@pytest.fixture(scope="module")
def group_tasks():
    """Faults of two level-1 burrs that come apart only with group moves, with their proved references."""
    from forgeplan.planners.asp.solve import solve_task
    from forgeplan.planners.reference import reference_output
    from forgeplan.semantics.faults import FaultSpec, make_task
    from forgeplan.io.importers import import_puzzle

    out = []
    for name, fault in (("mj_burr6_puzzle4.json", "missing_part"), ("mj_burr6_puzzle4.json", "wrong_orientation")):
        task = make_task(import_puzzle(burr(name)), [FaultSpec(fault)], seed=3)
        assert task.world.moves.groups
        ref = reference_output(task, solve_task(task))
        assert {"separate", "join"} <= {a["action"] for a in ref["rework_plan"]["actions"]}
        out.append((task, ref))
    return out


@pytest.mark.slow
def test_group_move_tasks_through_the_real_tokenizer_and_model(tiny, group_tasks):
    """The proved plans (separate/join) are never masked out under the model's own tokenisation, and
    what the model decodes under the legal mask parses and replays (greedy and sampled)."""
    _, model, tok = tiny
    vocab = vocab_from_tokenizer(tok)
    for task, ref in group_tasks:
        text = target_text(ref)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert tok.decode(ids, skip_special_tokens=True) == text
        for mask in (GrammarMask(task, vocab), LegalMask(task, vocab)):
            st = mask.start()
            for i in ids:
                assert i in set(mask.entry(st).ids.tolist()), (type(mask).__name__, tok.decode([i]))
                st = mask.advance(st, i)
            assert mask.entry(st).accepting
    tasks = [t for t, _ in group_tasks]
    for seed in (None, 1):
        rows = generate(model, tok, tasks, "legal", max_new_tokens=320, sample_seed=seed, vocab=vocab, batch_size=2)
        for task, row in zip(tasks, rows):
            out = parse_output(row["raw_output"])
            assert out.sample_id == task.sample_id
            rp = task.world.replay(task.actual, out.actions)
            assert rp.failure is None, (task.sample_id, str(rp.failure))


# ----------------------------------------------------------------------------- commands

@pytest.mark.slow
def test_cli_infer_writes_raw_outputs(tiny, bench, tmp_path):
    path, _, _ = tiny
    preds = tmp_path / "preds.jsonl"
    assert main(["infer", "--model", str(path), "--bench", str(bench), "--split", "test", "--out", str(preds),
                 "--constrained", "legal", "--device", "cpu", "--batch-size", "2", "--limit", "3",
                 "--max-new-tokens", "256"]) == 0
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    assert [x["sample_id"] for x in lines] == split_ids(bench, "test")[:3]
    for x in lines:
        parse_output(x["raw_output"])

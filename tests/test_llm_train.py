"""Training on TRL's SFTTrainer with the tiny local model: config mapping, checkpoints, resume, eval loss,
the GPU-only options refusing on CPU, merge-adapter, and the trainer-format export read by `datasets`.

A small benchmark is written from the shared case registry; the tiny model and its tokenizer are built
with `forgeplan tiny-model` (no downloads).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cases import write_case_tasks
from forgeplan.cli import main
from lab.cli import main as lab_main
from forgeplan.io.contract import parse_output
from forgeplan.llm.bench import load_sample, split_ids
from forgeplan.llm.config import DEFAULT_CONFIG, MODELS_DIR, SAVED_NAME, load_config
from forgeplan.llm.prompt import build_prompt, prompt_text, target_text
from forgeplan.bench.digests import seal_folder
from forgeplan.io.task_files import write_json

N_TRAIN, N_TEST = 10, 3
SMALL = """
[run]
name = "test"
eval_fraction = 0.2
prompt = "{prompt}"
dtype = "float32"
device = "cpu"

[lora]
r = 4
lora_alpha = 8
target_modules = "all-linear"

[trainer]
learning_rate = 5e-3
max_steps = 4
per_device_train_batch_size = 2
per_device_eval_batch_size = 2
max_length = 4096
logging_steps = 1
eval_strategy = "steps"
eval_steps = 2
save_steps = 2
save_total_limit = 5
disable_tqdm = true
{extra}
"""


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """torch and trl are imported by the tests that run, not when the suite is collected."""
    torch = pytest.importorskip("torch", reason="the [llm] extra (torch, transformers, peft, trl) is required")
    pytest.importorskip("trl", reason="the [llm] extra (trl) is required")
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    ids = write_case_tasks(root, N_TRAIN + N_TEST)
    seal_folder(root, {"schema_version": "1.0", "splits": {"train": ids[:N_TRAIN], "test": ids[N_TRAIN:]},
                                        "records": []})
    return root


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, bench):
    out = tmp_path_factory.mktemp("tiny")
    assert main(["tiny-model", "--out", str(out), "--bench", str(bench), "--vocab-size", "1024",
                 "--prompt", "compact"]) == 0
    return out


def small_config(tmp_path: Path, prompt: str = "compact", extra: str = "") -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL.format(prompt=prompt, extra=extra), encoding="utf-8")
    return path


def train_cli(tiny, bench, out, config, *more) -> int:
    return main(["train", "--model", str(tiny), "--bench", str(bench), "--out", str(out), "--config", str(config),
                 *more])


@pytest.mark.slow
def test_train_checkpoints_logs_eval_loss_and_resumes(tiny, bench, tmp_path, capsys):
    out = tmp_path / "run"
    assert train_cli(tiny, bench, out, small_config(tmp_path)) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert "train: 100%" in captured.err and "4/4" in captured.err   # the progress bar, on stderr
    assert summary["steps"] == 4 and summary["resumed_at_step"] == 0
    assert summary["train_examples"] == 8 and summary["eval_examples"] == 2
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]
    assert (out / "adapter_model.safetensors").is_file() and (out / "loss_curve.png").is_file()
    history = json.loads((out / "log_history.json").read_text())
    evals = [h for h in history if "eval_loss" in h]
    assert [h["step"] for h in evals][:2] == [2, 4] and all(math.isfinite(h["eval_loss"]) for h in evals)
    assert [h["step"] for h in history if "loss" in h] == [1, 2, 3, 4]
    saved = json.loads((out / SAVED_NAME).read_text())
    assert saved["lora"]["r"] == 4 and saved["trainer"]["learning_rate"] == 5e-3 and saved["run"]["prompt"] == "compact"

    # resume from the last checkpoint: training continues at step 4 and stops at the new max_steps
    assert train_cli(tiny, bench, out, small_config(tmp_path), "--max-steps", "6", "--resume") == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["resumed_at_step"] == 4 and resumed["steps"] == 6
    history = json.loads((out / "log_history.json").read_text())
    assert [h["step"] for h in history if "loss" in h] == [1, 2, 3, 4, 5, 6]


@pytest.mark.slow
@pytest.mark.parametrize("finetune", ["lora", "full"])
def test_a_rerun_with_the_same_seed_gives_the_same_losses_and_weights(tiny, bench, tmp_path, capsys, finetune):
    import torch
    from safetensors.torch import load_file

    runs = []
    for k, seed in enumerate((7, 7, 8)):
        config = small_config(tmp_path, extra=f"seed = {seed}\nfull_determinism = true")
        run = f'device = "cpu"\nthreads = 1\nfinetune = "{finetune}"'
        config.write_text(config.read_text().replace('device = "cpu"', run))
        assert train_cli(tiny, bench, tmp_path / f"run{k}", config, "--max-steps", "3") == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["threads"] == 1 and summary["seed"] == seed and summary["steps"] == 3
        history = json.loads((tmp_path / f"run{k}" / "log_history.json").read_text())
        weights = load_file(next((tmp_path / f"run{k}").glob("*model.safetensors")))
        losses = [h["loss"] for h in history if "loss" in h] + [h["eval_loss"] for h in history if "eval_loss" in h]
        runs.append((losses, weights))
    (losses, weights), (again, weights2), (other, _) = runs
    assert len(losses) >= 3 and losses == again  # bit-identical, not merely close
    assert weights.keys() == weights2.keys() and all(torch.equal(weights[k], weights2[k]) for k in weights)
    assert other != losses  # the seed matters (data order, LoRA's initial weights): the equality is not vacuous


@pytest.mark.slow
def test_the_cpu_trainer_takes_the_same_losses_as_trls_fused_lm_head(tiny, bench, tmp_path, capsys, monkeypatch):
    """On the CPU the loss comes from the full logits (train.trainer_class); TRL's tiled LM head, run as the
    reference here, gives the same losses step by step and the same weights up to rounding."""
    import torch
    from safetensors.torch import load_file
    from trl import SFTTrainer

    from forgeplan.llm import train as train_module

    config = small_config(tmp_path, extra="seed = 7\nfull_determinism = true")
    config.write_text(config.read_text().replace('device = "cpu"', 'device = "cpu"\nthreads = 1\nfinetune = "full"'))
    assert train_module.trainer_class("cpu") is not SFTTrainer
    runs = []
    for name in ("cpu", "fused"):
        if name == "fused":
            monkeypatch.setattr(train_module, "trainer_class", lambda device: SFTTrainer)
        assert train_cli(tiny, bench, tmp_path / name, config, "--max-steps", "3") == 0
        capsys.readouterr()
        history = json.loads((tmp_path / name / "log_history.json").read_text())
        runs.append(([h["loss"] for h in history if "loss" in h] + [h["num_tokens"] for h in history if "num_tokens" in h],
                     load_file(next((tmp_path / name).glob("*model.safetensors")))))
    (losses, weights), (fused, _) = runs
    assert len(losses) == 6 and losses[-1] > 0    # three losses, three running token counts
    assert losses == pytest.approx(fused, rel=1e-4)
    assert any(not torch.equal(weights[k], load_file(next(tiny.glob("*.safetensors")))[k]) for k in weights)


def test_training_threads_must_not_be_negative():
    from forgeplan.llm.train import fix_threads
    from forgeplan.model.errors import InputError

    with pytest.raises(InputError, match="run.threads"):
        fix_threads(-1)


@pytest.mark.slow
def test_training_lowers_the_completion_loss(tiny, bench, tmp_path, capsys):
    """Loss on the training examples' completions (prompt masked) falls after a few steps."""
    from forgeplan.llm.train import completion_loss, load_for_inference

    config = small_config(tmp_path, extra="warmup_steps = 0")
    assert train_cli(tiny, bench, tmp_path / "run", config, "--max-steps", "12") == 0
    capsys.readouterr()
    rows = [(load_sample(bench, sid)) for sid in split_ids(bench, "train")[:4]]
    base, tok, _ = load_for_inference(tiny, None, "cpu", "float32")
    tuned, _, _ = load_for_inference(tiny, tmp_path / "run", "cpu", "float32")
    before = completion_loss(base, tok, rows, "compact")
    after = completion_loss(tuned, tok, rows, "compact")
    assert after < before - 0.05, (before, after)


@pytest.mark.slow
def test_full_fine_tuning_trains_every_weight_and_loads_for_inference(tiny, bench, tmp_path, capsys):
    import torch

    from forgeplan.llm.train import load_for_inference

    config = small_config(tmp_path)
    config.write_text(config.read_text().replace('device = "cpu"', 'device = "cpu"\nfinetune = "full"'))
    out = tmp_path / "run"
    assert train_cli(tiny, bench, out, config, "--max-steps", "2") == 0
    summary = json.loads(capsys.readouterr().out)
    base, _, _ = load_for_inference(tiny, None, "cpu", "float32")
    assert summary["trainable_parameters"] == sum(p.numel() for p in base.parameters())
    assert (out / "model.safetensors").is_file() and not (out / "adapter_config.json").exists()
    tuned, _, _ = load_for_inference(tiny, out, "cpu", "float32")
    changed = [n for (n, a), b in zip(base.named_parameters(), tuned.parameters()) if not torch.equal(a, b)]
    assert any("q_proj" in n for n in changed) and any("embed_tokens" in n for n in changed)
    config.write_text(config.read_text().replace('finetune = "full"', 'finetune = "partial"'))
    assert train_cli(tiny, bench, tmp_path / "bad", config) == 2
    assert "run.finetune" in capsys.readouterr().err


@pytest.mark.slow
def test_unknown_or_cli_owned_config_keys_are_errors(tiny, bench, tmp_path, capsys):
    for extra, named in (("learning_rat = 1e-4", "trainer.learning_rat"), ("output_dir = 'x'", "trainer.output_dir")):
        assert train_cli(tiny, bench, tmp_path / "o", small_config(tmp_path, extra=extra)) == 2
        err = capsys.readouterr().err
        assert named in err and "small.toml" in err and "Traceback" not in err
    bad = tmp_path / "bad.toml"
    bad.write_text("[lora]\nrank = 8\n")
    assert train_cli(tiny, bench, tmp_path / "o", bad) == 2
    assert "lora.rank" in capsys.readouterr().err
    bad.write_text("[optimizer]\nlr = 1\n")
    assert train_cli(tiny, bench, tmp_path / "o", bad) == 2
    assert "optimizer" in capsys.readouterr().err


@pytest.mark.slow
def test_gpu_only_options_refuse_clearly_on_cpu(tiny, bench, tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("checks the refusal on a machine without CUDA")
    assert train_cli(tiny, bench, tmp_path / "o", small_config(tmp_path), "--load-in-4bit") == 2
    assert "CUDA" in capsys.readouterr().err
    assert train_cli(tiny, bench, tmp_path / "o", small_config(tmp_path), "--device", "cuda") == 2
    assert "CUDA is not available" in capsys.readouterr().err


def test_forge_recipe_maps_one_to_one_onto_trainer_and_lora(tmp_path):
    from forgeplan.llm.train import lora_config, sft_config

    config = load_config(DEFAULT_CONFIG)
    args = sft_config(config, tmp_path, "cpu", "tensorboard")
    assert (args.learning_rate, args.num_train_epochs, args.lr_scheduler_type.value) == (1e-4, 2, "cosine")
    assert args.bf16 and args.activation_checkpointing and args.completion_only_loss
    assert (args.per_device_train_batch_size, args.gradient_accumulation_steps) == (1, 4)
    assert args.report_to == ["tensorboard"] and args.output_dir == str(tmp_path)
    lora = lora_config(config)
    assert (lora.r, lora.lora_alpha, lora.lora_dropout, lora.target_modules) == (8, 32, 0.05, "all-linear")


@pytest.mark.slow
def test_bf16_and_gradient_checkpointing_train_on_cpu_with_tensorboard(tiny, bench, tmp_path, capsys):
    """The GPU recipe's switches (bf16 autocast, gradient checkpointing, TensorBoard) on the CPU path."""
    extra = "bf16 = true\nactivation_checkpointing = true\nsave_strategy = \"no\""
    out = tmp_path / "run"
    assert train_cli(tiny, bench, out, small_config(tmp_path, extra=extra), "--max-steps", "2",
                     "--report-to", "tensorboard") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] == 2 and math.isfinite(summary["eval_loss"])
    assert list(out.rglob("events.out.tfevents.*")), "no TensorBoard event file"


@pytest.mark.slow
def test_merge_adapter_loads_with_from_pretrained(tiny, bench, tmp_path, capsys):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    assert train_cli(tiny, bench, tmp_path / "run", small_config(tmp_path, extra="save_strategy = \"no\""),
                     "--max-steps", "2") == 0
    capsys.readouterr()
    assert main(["merge-adapter", "--model", str(tiny), "--adapter", str(tmp_path / "run"),
                 "--out", str(tmp_path / "merged")]) == 0
    assert json.loads(capsys.readouterr().out)["adapter"] == str(tmp_path / "run")
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "merged").eval()
    assert not any("lora" in name for name, _ in merged.named_parameters())
    peft_model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny), tmp_path / "run").eval()
    ids = torch.tensor([[5, 17, 42, 99, 7]])
    with torch.no_grad():
        assert torch.allclose(merged(ids).logits, peft_model(ids).logits, atol=1e-4)
    # inference prompts the way the adapter was trained (compact) unless told otherwise
    assert main(["infer", "--model", str(tiny), "--adapter", str(tmp_path / "run"), "--bench", str(bench),
                 "--out", str(tmp_path / "p.jsonl"), "--limit", "1", "--max-new-tokens", "8", "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["prompt"] == "compact"


@pytest.mark.parametrize("prompt", ["forge", "compact"])
def test_prompt_completion_export_loads_with_datasets(bench, tmp_path, prompt):
    from datasets import load_dataset

    out = tmp_path / "export"
    assert main(["bench", "export", str(bench), "--out", str(out), "--prompt", prompt]) == 0
    data = load_dataset("json", data_files={s: str(out / f"{s}.jsonl") for s in ("train", "test")})
    assert (data["train"].num_rows, data["test"].num_rows) == (N_TRAIN, N_TEST)
    row = data["train"][0]
    task, ref = load_sample(bench, row["sample_id"])
    assert row["prompt"] == build_prompt(task, prompt)
    assert row["completion"] == [{"role": "assistant", "content": target_text(ref)}]
    parse_output(row["completion"][0]["content"])


def test_messages_export_keeps_the_older_rows(bench, tmp_path):
    assert main(["bench", "export", str(bench), "--out", str(tmp_path), "--format", "messages"]) == 0
    row = json.loads((tmp_path / "train.jsonl").read_text().splitlines()[0])
    assert sorted(row) == ["messages", "sample_id", "target"]
    task, ref = load_sample(bench, row["sample_id"])
    assert row["messages"] == build_prompt(task) and row["target"] == target_text(ref)


@pytest.mark.slow
def test_plain_trl_trains_from_the_exported_file(tiny, bench, tmp_path):
    """docs/training.md's recipe: the exported JSONL straight into trl.SFTTrainer, no forgeplan code."""
    from datasets import load_dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    assert main(["bench", "export", str(bench), "--out", str(tmp_path / "e"), "--prompt", "compact"]) == 0
    data = load_dataset("json", data_files=str(tmp_path / "e" / "train.jsonl"), split="train")
    trainer = SFTTrainer(model=AutoModelForCausalLM.from_pretrained(tiny),
                         processing_class=AutoTokenizer.from_pretrained(tiny), train_dataset=data,
                         args=SFTConfig(output_dir=str(tmp_path / "o"), max_steps=2, per_device_train_batch_size=2,
                                        report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True),
                         peft_config=LoraConfig(r=4, target_modules="all-linear", task_type="CAUSAL_LM"))
    tok = trainer.processing_class
    head = tok(prompt_text(tok, data[0]["prompt"]), add_special_tokens=False)["input_ids"]
    first = trainer.train_dataset[0]
    # the model is trained on exactly the tokens inference prompts with, and the loss covers the answer only
    assert first["input_ids"][: len(head)] == head
    assert [label == -100 for label in first["labels"]] == [True] * len(head) + [False] * (len(first["labels"]) - len(head))
    assert trainer.train().global_step == 2


@pytest.mark.parametrize("kind,arch", [("byte-level", "qwen2"), ("identifiers", "llama"), ("sentencepiece", "llama")])
def test_tiny_tokenizer_loads_as_it_was_trained(bench, tmp_path, kind, arch, capsys):
    """AutoTokenizer on the saved folder encodes exactly as the trained tokenizer (its merges are all alive)."""
    from transformers import AutoTokenizer

    from forgeplan.llm.tiny import corpus, train_tokenizer

    out = tmp_path / "tiny"
    assert main(["tiny-model", "--out", str(out), "--bench", str(bench), "--vocab-size", "700", "--tokenizer", kind,
                 "--arch", arch, "--hidden", "16", "--layers", "1", "--prompt", "compact"]) == 0
    texts = corpus(bench, prompt="compact")
    trained, loaded = train_tokenizer(texts, 700, kind), AutoTokenizer.from_pretrained(out)
    for text in texts:
        ids = loaded(text, add_special_tokens=False)["input_ids"]
        assert ids == trained(text, add_special_tokens=False)["input_ids"]
        assert loaded.decode(ids) == text
    if kind == "identifiers":  # a part id is one token, the same in a prompt and in an answer
        task, ref = load_sample(bench, split_ids(bench, "train")[0])
        pid = task.assembly.parts[0].part_id
        assert len(loaded(pid, add_special_tokens=False)["input_ids"]) == 1
        assert loaded(pid, add_special_tokens=False)["input_ids"][0] in loaded(f'"part_id":"{pid}"')["input_ids"]


def test_tiny_model_refuses_a_tokenizer_its_architecture_would_reload_differently(bench, tmp_path, capsys):
    assert main(["tiny-model", "--out", str(tmp_path / "t"), "--bench", str(bench), "--tokenizer", "identifiers",
                 "--arch", "qwen2"]) == 2
    assert "--tokenizer" in capsys.readouterr().err


def test_bundled_cpu_configs_parse():
    lora, full = load_config(MODELS_DIR / "tiny-cpu.toml"), load_config(MODELS_DIR / "reference-cpu.toml")
    assert lora.run.prompt == full.run.prompt == "compact" and lora.run.device == full.run.device == "cpu"
    assert (lora.run.finetune, full.run.finetune) == ("lora", "full")
    for cfg in (lora, full):  # the budget is steps on a fixed thread count: no stop that depends on the load
        assert cfg.run.max_cpu_minutes == cfg.run.max_minutes == 0 and cfg.run.threads == 1
        assert cfg.trainer["max_steps"] > 0 and cfg.trainer["full_determinism"] is True
    assert not full.lora and lora.lora["r"] == 64


def test_lora_parameters_of_a_config_json_match_a_built_model(tmp_path):
    """The meta-device count (no weights) equals the count on a real model, and LoRA's formula r·(in+out)."""
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, Qwen2Config

    from forgeplan.llm.train import lora_config
    from forgeplan.llm.lora_size import lora_parameters

    arch = Qwen2Config(vocab_size=256, hidden_size=64, intermediate_size=160, num_hidden_layers=3,
                       num_attention_heads=4, num_key_value_heads=2)
    arch.save_pretrained(tmp_path)
    counted = lora_parameters(tmp_path / "config.json")
    built = get_peft_model(AutoModelForCausalLM.from_config(arch), lora_config(load_config(DEFAULT_CONFIG)))
    assert counted["trainable_parameters"] == sum(p.numel() for p in built.parameters() if p.requires_grad)
    kv = 64 // 4 * 2
    per_layer = 8 * ((64 + 64) * 2 + (64 + kv) * 2 + (64 + 160) * 2 + (160 + 64))  # q o, k v, gate up, down
    assert counted["trainable_parameters"] == 3 * per_layer
    assert lab_main(["train", "--config-json", str(tmp_path / "missing.json")]) == 2


def test_iid_split_keeps_assemblies_and_disjoint_ids(tmp_path):
    from forgeplan.llm.iid import iid_split

    src = tmp_path / "src"
    ids = [f"a{k % 3}_train_{k:03d}" for k in range(20)]
    held = [f"b_test_{k:03d}" for k in range(6)]
    records = [{"sample_id": s, "assembly_id": s[:2], "split": "train"} for s in ids]
    records += [{"sample_id": s, "assembly_id": "b", "split": "test"} for s in held]
    for sid in ids + held:
        (src / "tasks" / sid).mkdir(parents=True)
        (src / "tasks" / sid / "task.json").write_text(sid)
        write_json(src / "tasks" / sid / "actual_state.json", {"assembly_id": sid[:2], "slots": {"p": sid}})
    records = [{**r, "condition": "nofault", "fault_types": [], "difficulty": "easy", "family": "f", "hidden": False}
               for r in records]
    seal_folder(src, {"schema_version": "1.0", "splits": {"train": ids, "test": held},
                                       "records": records})
    counts = iid_split(src, tmp_path / "iid", test_fraction=0.25, seed=1, heldout_limit=4)
    assert counts == {"train": 15, "test": 5, "heldout": 4}
    from forgeplan.bench.store import load_manifest

    manifest = load_manifest(tmp_path / "iid")  # valid for every benchmark reader
    train, test = manifest["splits"]["train"], manifest["splits"]["test"]
    assert not set(train) & set(test) and sorted(train + test) == sorted(ids)
    assert set(manifest["splits"]["heldout"]) <= set(held)
    assert {r["split"] for r in manifest["records"] if r["sample_id"] in test} == {"test"}
    assert {r["split"] for r in manifest["records"] if r["sample_id"] in train} == {"train"}
    copied = {p.name for p in (tmp_path / "iid" / "tasks").iterdir()}
    assert copied == set(train + test + manifest["splits"]["heldout"])
    assert all((tmp_path / "iid" / "tasks" / s / "task.json").read_text() == s for s in copied)
    again = tmp_path / "iid2"
    iid_split(src, again, test_fraction=0.25, seed=1, heldout_limit=4)
    assert (again / "manifest.json").read_text().replace(str(again), "") == \
        (tmp_path / "iid" / "manifest.json").read_text().replace(str(tmp_path / "iid"), "")


def _detour(task) -> list[dict]:
    """Two actions that leave the target as it is (a part taken out and put back): a valid plan followed
    by them is another valid answer to the same task."""
    from forgeplan.model.actions import Insert, Remove

    target = task.target
    for pid in task.world.ids:
        if task.world.check(target, Remove(pid)) is None:
            out = task.world.apply(target, Remove(pid))
            if task.world.check(out, Insert(pid)) is None:
                return [Remove(pid).to_json(), Insert(pid).to_json()]
    raise AssertionError(f"no part of {task.sample_id} comes out of its target state and back")


def test_iid_split_shares_no_state_and_no_fault_answer_between_train_and_test(tmp_path, bench):
    """Tasks drawn twice (other sample ids, same assembly and actual state, or the same fault answer) land
    on one side: checked from the loaded tasks, independently of the split's own keys."""
    import shutil

    from forgeplan.io.task_files import load_task

    from forgeplan.bench.store import load_manifest
    from forgeplan.llm.iid import iid_split, leaks
    from forgeplan.llm.prompt import target_text

    src = tmp_path / "src"
    ids = []
    for k, sid in enumerate(split_ids(bench, "train") + split_ids(bench, "test")):
        for copy in range(1 + k % 3):  # 1, 2 or 3 copies of each task under other ids, as a benchmark draws them
            new = f"{sid}_c{copy}"
            shutil.copytree(bench / "tasks" / sid, src / "tasks" / new)
            for path in (src / "tasks" / new).glob("*.json"):  # every file names its own sample id
                path.write_text(path.read_text().replace(json.dumps(sid), json.dumps(new)))
            ref = json.loads((src / "tasks" / new / "reference.json").read_text())
            if copy % 2 and ref["annotation"]["mistakes"]:  # another answer to the same state: only the state links them
                ref["rework_plan"]["actions"] += _detour(load_task(src / "tasks" / new))
                ref.pop("proof", None)   # a longer plan than the proven one: no proof of it
                write_json(src / "tasks" / new / "reference.json", ref)
            ids.append(new)
    seal_folder(src, {"schema_version": "1.0", "splits": {"train": ids, "test": []}, "records": []})
    iid_split(src, tmp_path / "iid", test_fraction=0.3, seed=3)
    splits = load_manifest(tmp_path / "iid")["splits"]
    assert len(splits["test"]) >= 3 and sorted(splits["train"] + splits["test"]) == sorted(ids)

    def keys(sid):
        task, ref = load_sample(tmp_path / "iid", sid)
        answer = target_text(ref).replace(sid, "") if ref["annotation"]["pass"] is False else None
        return (task.assembly.assembly_id, repr(task.actual)), answer

    train_states = {keys(s)[0] for s in splits["train"]}
    train_answers = {keys(s)[1] for s in splits["train"]} - {None}
    for sid in splits["test"]:
        state, answer = keys(sid)
        assert state not in train_states and answer not in train_answers, sid
    assert leaks(tmp_path / "iid", splits["train"], splits["test"]) == []
    # the same data split by task id alone leaks: some copy lands on each side
    shuffled = sorted(ids)[::2]
    assert leaks(src, [s for s in ids if s not in shuffled], shuffled)


def test_compact_prompt_names_every_deviation_and_nothing_else(bench):
    from forgeplan.llm.prompt import compact_text, task_json
    from forgeplan.io.task_files import public_files

    faulty = 0
    for sid in split_ids(bench, "train") + split_ids(bench, "test"):
        task, _ = load_sample(bench, sid)
        lines = compact_text(task).splitlines()
        target = public_files(task)["target_state.json"]["slots"]
        actual = task_json(task)["actual_state"]
        differing = {pid for pid, slot in actual.items() if any(target.get(pid, {}).get(k) != v for k, v in slot.items())}
        assert json.loads(lines[0]) == {"sample_id": sid, "assembly_id": task.assembly.assembly_id}
        assert all(line.startswith("actual ") for line in lines[1:])
        deviations = [json.loads(line.removeprefix("actual ")) for line in lines if line.startswith("actual ")]
        assert [d["part_id"] for d in deviations] == [pid for pid in actual if pid in differing]
        for d in deviations:  # exactly the fields that differ, with the actual values; a position as its offset
            slot, want = actual[d["part_id"]], target[d["part_id"]]
            if "offset" in d:
                assert d.pop("offset") == pytest.approx([a - b for a, b in zip(slot["position"], want["position"])],
                                                         abs=1e-6)
                d["position"] = slot["position"]
            named = {k: v for k, v in d.items() if k != "part_id"}
            differ = {k: v for k, v in slot.items() if want.get(k) != v}
            assert named.keys() == differ.keys()
            for k, v in differ.items():  # approx compares flat values only: a vector field elementwise
                assert named[k] == (pytest.approx(v, abs=1e-6) if isinstance(v, (int, float, list)) else v), k
        assert compact_text(task) == compact_text(load_sample(bench, sid)[0])  # deterministic
        faulty += bool(differing)
    assert faulty >= 5


def test_reference_table_gives_mean_and_spread_over_the_seeds_that_scored_a_mode():
    from forgeplan.llm.reference import RATES, REPORTED, spread, table

    def figures(x):
        return {**{k: x for k in (*REPORTED, *RATES)}, "HRQ": None, "samples": 5, "fault_samples": 4}

    runs = [{"seed": s, "figures": {"in_distribution": {"legal": figures(x), **({"grammar": figures(2 * x)} if s else {})},
                                    "heldout_assemblies": {"legal": figures(0.0)}}} for s, x in ((0, 10.0), (1, 20.0))]
    model = spread(runs)
    legal = model["in_distribution"]["legal"]
    assert legal["seeds"] == 2 and legal["DGTR"] == {"mean": 15.0, "sd": 7.07, "runs": [10.0, 20.0]}
    assert legal["HRQ"] is None and model["in_distribution"]["grammar"]["DGTR"]["sd"] == 0.0
    baselines = {label: {"no-op": figures(0.0)} for label in model}
    text = table({"model": model, "baselines": baselines})
    assert "| in_distribution (5) | reference model (2 seeds) | legal | 15.00 ± 7.07 |" in text
    assert "| in_distribution (5) | reference model (1 seed) | grammar | 40.00 |" in text
    assert "| heldout_assemblies (5) | no-op | – | 0.00 |" in text


@pytest.mark.slow
def test_reference_model_command_runs_the_whole_recipe(tmp_path, capsys):
    """bench build -> leak-free split -> per seed: tiny model -> train -> infer per mode -> scored beside the
    baselines; the table gives the mean and spread over the seeds."""
    out = tmp_path / "ref"
    docs = tmp_path / "results"
    argv = ["reference-model", "--out", str(out), "--tasks", "20", "--max-steps", "2", "--heldout", "2",
            "--test-fraction", "0.3", "--seeds", "1,2", "--modes", "none,legal"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "reference.json").read_text())
    assert lab_main(["reference-model", "--run", str(out), "--store", str(docs)]) == 0   # kept as the docs keep it
    assert json.loads(capsys.readouterr().out) == report
    kept = json.loads((docs / "reference-model.json").read_text())
    assert kept["result"] == report and kept["command"] == f"python -m lab reference-model --run {out}"
    assert (docs / "reference-model.md").read_text() == printed and (docs / "reference-model-loss-seed1.png").is_file()
    assert report["leaking_test_tasks"] == 0 and report["seeds"] == [1, 2] and report["budget"]["threads"] == 1
    assert set(report["model"]) == set(report["baselines"]) == {"in_distribution", "heldout_assemblies"}
    assert set(report["model"]["in_distribution"]) == {"unconstrained", "legal"}
    assert set(report["model"]["heldout_assemblies"]) == {"legal"}
    for label, baselines in report["baselines"].items():
        assert set(baselines) == {"no-op", "local-repair", "greedy-legal", "diagnosis-lookup"}
        assert baselines["no-op"]["DGTR"] in (0.0, None) and baselines["no-op"]["schema_valid"] == 100.0
        assert baselines["greedy-legal"]["illegal_plan"] == 0.0
        n = report["splits"]["test" if label == "in_distribution" else "heldout"]
        for mode, cell in report["model"][label].items():
            assert cell["samples"] == n and len(cell["DGTR"]["runs"]) == 2
            assert f"| {label} ({n}) | reference model (2 seeds) | {mode} |" in printed
        assert f"| {label} ({n}) | diagnosis-lookup | – |" in printed
    legal = report["model"]["in_distribution"]["legal"]
    assert legal["schema_valid"]["mean"] == 100.0 and legal["illegal_plan"]["mean"] == 0.0  # the mask's guarantee
    for seed in (1, 2):
        run = out / f"seed-{seed}"
        assert (run / "adapter" / "loss_curve.png").is_file() and (run / "predictions_test_none.jsonl").is_file()
        assert json.loads((run / "run.json").read_text())["training"]["steps"] == 2


def _curve_run(root: Path, bench: Path) -> Path:
    """A reference-model run folder as the command leaves it, without a model: seed 1 trained 2 steps with
    checkpoint-1 kept, the final model's legal predictions the references, and the losses the trainer logs."""
    import shutil

    shutil.copytree(bench, root / "iid")
    adapter = root / "seed-1" / "adapter"
    (adapter / "checkpoint-1").mkdir(parents=True)
    write_json(adapter / "checkpoint-1" / "trainer_state.json", {"global_step": 1})
    write_json(adapter / SAVED_NAME, {"run": {"prompt": "compact"}, "summary": {"steps": 2, "cpu_seconds": 1.5}})
    write_json(adapter / "log_history.json", [{"loss": 3.0, "step": 1}, {"eval_loss": 2.5, "step": 1},
                                              {"loss": 1.0, "step": 2}])
    refs = [(sid, load_sample(bench, sid)[1]) for sid in split_ids(bench, "test")]
    (root / "seed-1" / "predictions_test_legal.jsonl").write_text(
        "".join(json.dumps({"sample_id": sid, "raw_output": target_text(ref)}) + "\n" for sid, ref in refs))
    baseline = {"Overall-Core": 10.0, "DGTR": 20.0, "SAPF": 30.0, "schema_valid": 100.0, "illegal_plan": 0.0}
    write_json(root / "baselines.json", {"in_distribution": {"local-repair": baseline, "greedy-legal": baseline}})
    return root


def test_reference_curve_scores_each_step_beside_the_baselines(small_bench, tmp_path, capsys):
    """Every checkpoint and the final model of a seed, scored from their predictions (the final model's are
    the run's own; a checkpoint's come from --work), with the losses logged at that step; --store writes the
    result and its plot."""
    run = _curve_run(tmp_path / "run", small_bench)
    work = tmp_path / "work"
    (work / "seed-1").mkdir(parents=True)
    ids = split_ids(small_bench, "test")
    (work / "seed-1" / "step-1_test_legal.jsonl").write_text(
        "".join(json.dumps({"sample_id": sid, "raw_output": "not json"}) + "\n" for sid in ids))
    argv = ["reference-curve", "--run", str(run), "--work", str(work)]
    assert lab_main([*argv, "--store", str(tmp_path / "docs")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "docs" / "reference-curve.json").read_text())["result"] == result
    assert (tmp_path / "docs" / "reference-curve.png").read_bytes()[:4] == b"\x89PNG"
    first, final = result["curve"]
    assert [first["step"], final["step"]] == [1, 2] and result["seeds"] == [1] and result["modes"] == ["legal"]
    assert first["schema_valid"] == 0.0 and first["Overall-Core"] == 0.0
    assert final["schema_valid"] == 100.0 and final["illegal_plan"] == 0.0 and final["DGTR"] > 0
    assert (first["train_loss"], first["eval_loss"], final["train_loss"], final["eval_loss"]) == (3.0, 2.5, 1.0, 2.5)
    assert final["predictions"] == str(run / "seed-1" / "predictions_test_legal.jsonl")
    assert result["baselines"]["local-repair"]["DGTR"] == 20.0 and result["baselines_from"].endswith("baselines.json")
    assert result["training"]["1"]["steps"] == 2 and result["training"]["1"]["cpu_seconds"] == 1.5


def test_reference_curve_refuses_what_it_cannot_score(small_bench, tmp_path, capsys):
    run = _curve_run(tmp_path / "run", small_bench)
    assert lab_main(["reference-curve", "--run", str(tmp_path)]) == 2          # no iid/
    assert lab_main(["reference-curve", "--run", str(run), "--modes", "beam"]) == 2
    assert lab_main(["reference-curve", "--run", str(run), "--seeds", "7"]) == 2
    assert lab_main(["reference-curve", "--run", str(run), "--checkpoints", str(tmp_path)]) == 2
    assert lab_main(["reference-curve", "--run", str(run), "--checkpoints", f"2:{tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert "iid/" in err and "--modes" in err and "trainer_state.json" in err and "SEED:DIR" in err


@pytest.mark.slow
def test_reference_curve_scores_the_checkpoints_of_a_real_run(tmp_path, capsys):
    """A 2-step reference-model run saving every step: the curve decodes checkpoint-1 and reuses the final
    model's predictions, which score as the run scored them."""
    config = tmp_path / "ref.toml"
    text = (MODELS_DIR / "reference-cpu.toml").read_text()
    config.write_text(text.replace("save_steps = 400", "save_steps = 1").replace("eval_steps = 200", "eval_steps = 1")
                      .replace("logging_steps = 20", "logging_steps = 1"))
    out = tmp_path / "ref"
    assert main(["reference-model", "--out", str(out), "--tasks", "20", "--max-steps", "2", "--heldout", "2",
                 "--test-fraction", "0.3", "--seeds", "1", "--modes", "legal", "--config", str(config)]) == 0
    capsys.readouterr()
    assert lab_main(["reference-curve", "--run", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["step"] for r in result["curve"]] == [1, 2] and result["baselines_from"].endswith("baselines.json")
    first, final = result["curve"]
    assert first["model"].endswith("checkpoint-1") and final["model"] == str(out / "seed-1" / "adapter")
    run = json.loads((out / "seed-1" / "run.json").read_text())["figures"]["in_distribution"]["legal"]
    assert {k: final[k] for k in ("Overall-Core", "DGTR", "SAPF")} == {k: run[k] for k in ("Overall-Core", "DGTR", "SAPF")}
    assert first["schema_valid"] == 100.0 and first["illegal_plan"] == 0.0   # the legal mask's guarantee
    assert first["eval_loss"] is not None and first["train_loss"] is not None

"""Errors a researcher can act on, on the model side: a missing model or adapter folder (forgeplan never
downloads), an unknown training configuration, `verify` given a predictions JSONL; the Hugging Face
libraries held offline; the training progress bar and the loss plot of a short run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cases import write_case_tasks
from forgeplan.bench.digests import seal_folder
from forgeplan.cli import main
from forgeplan.io.task_files import write_json


@pytest.fixture(scope="module", autouse=True)
def llm_extra():
    """torch is imported by the tests that run, not when the suite is collected."""
    pytest.importorskip("torch", reason="the [llm] extra (torch, transformers, peft, trl) is required")


ROOT = Path(__file__).resolve().parents[1]
NEVER = "(forgeplan never downloads; pass a local Hugging Face folder)"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    ids = write_case_tasks(root, 3)
    seal_folder(root, {"schema_version": "1.0", "splits": {"train": ids[:2], "test": ids[2:]},
                                        "records": []})
    return root


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "huggingface" not in err[0].lower()
    return err[0]


def test_a_missing_model_or_adapter_folder_is_one_line_exit_2(bench, tiny_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = ["--out", str(tmp_path / "o")]
    cases = [
        (["infer", "--model", "NOSUCH", "--bench", str(bench), *out], "--model: no such model folder: NOSUCH"),
        (["infer", "--model", str(tiny_dir), "--adapter", "NOSUCH", "--bench", str(bench), *out],
         "--adapter: no such adapter folder: NOSUCH"),
        (["train", "--model", "NOSUCH", "--bench", str(bench), "--config", "tiny-cpu", *out],
         "--model: no such model folder: NOSUCH"),
        (["merge-adapter", "--model", "NOSUCH", "--adapter", "NOSUCH", *out], "--model: no such model folder: NOSUCH"),
        (["merge-adapter", "--model", str(tiny_dir), "--adapter", "org/adapter", *out],
         "--adapter: no such adapter folder: org/adapter"),
    ]
    for argv, expected in cases:
        assert main(argv) == 2, argv
        assert error_line(capsys) == f"forgeplan: error: {expected} {NEVER}"
    (tmp_path / "empty").mkdir()
    assert main(["infer", "--model", str(tmp_path / "empty"), "--bench", str(bench), *out]) == 2
    assert error_line(capsys).endswith("--model: is not a Hugging Face model folder: it has no config.json")
    assert not (tmp_path / "o").exists()


def test_an_unknown_config_lists_the_bundled_ones(bench, tiny_dir, tmp_path, capsys):
    from forgeplan.llm.config import MODELS_DIR

    assert main(["train", "--model", str(tiny_dir), "--bench", str(bench), "--out", str(tmp_path / "o"),
                 "--config", "tiny-gpu"]) == 2
    line = error_line(capsys)
    names = sorted(p.stem for p in MODELS_DIR.glob("*.toml"))
    assert line.startswith("forgeplan: error: --config: no such configuration 'tiny-gpu'")
    assert line.endswith(f"({', '.join(names)})") and "tiny-cpu" in names


def test_verify_given_a_predictions_jsonl_points_to_evaluate(bench, tmp_path, capsys):
    sid = json.loads((bench / "manifest.json").read_text())["splits"]["test"][0]
    task = bench / "tasks" / sid
    answer = (task / "reference.json").read_text()
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"sample_id": sid, "raw_output": answer}) + "\n" * 2)
    batch = tmp_path / "batch.json"   # a batch output file, whatever its name
    batch.write_text(json.dumps({"custom_id": sid, "response": {"body": {}}}) + "\n")
    for path in (preds, batch):
        assert main(["verify", str(task), str(path)]) == 2
        line = error_line(capsys)
        assert line.startswith(f"forgeplan: error: {path}: holds predictions JSONL rows; verify takes one JSON answer")
        assert "forgeplan evaluate --bench BENCH --predictions FILE" in line
    one = tmp_path / "answer.json"   # one answer on one line is still an answer
    one.write_text(json.dumps(json.loads(answer)) + "\n")
    assert main(["verify", str(task), str(one)]) == 0


def test_the_training_bar_counts_steps_with_an_eta(capsys):
    from transformers import TrainerControl, TrainerState

    from forgeplan.llm.train import progress_bar

    bar, state, control = progress_bar(), TrainerState(max_steps=4, global_step=1), TrainerControl()
    bar.on_train_begin(None, state, control)   # resumed at step 1
    for step in (2, 3, 4):
        state.global_step = step
        bar.on_step_end(None, state, control)
        bar.on_log(None, state, control, logs={"loss": 1.0 / step, "learning_rate": 1e-3})
    bar.on_train_end(None, state, control)
    err = capsys.readouterr().err
    assert "train: 100%" in err and "4/4" in err and "loss=0.25" in err and "learning_rate" not in err
    assert "<00:00" in err   # the ETA column


def test_the_loss_plot_of_short_and_empty_runs(tmp_path):
    from PIL import Image

    from forgeplan.llm.train import plot_losses

    short = [{"loss": 7.6, "step": 1}, {"loss": 7.1, "step": 2}, {"eval_loss": 7.2, "step": 2},
             {"train_runtime": 1.0, "step": 2}]
    for name, history in (("short", short), ("empty", [{"train_runtime": 1.0, "step": 1}]), ("none", [])):
        plot_losses(history, tmp_path / f"{name}.png")
        assert Image.open(tmp_path / f"{name}.png").size == (600, 360)


@pytest.mark.slow
def test_the_llm_commands_hold_hugging_face_offline(bench, tmp_path):
    probe = ("import sys; from forgeplan.cli import main; code = main(sys.argv[1:]); "
             "import huggingface_hub.constants as c; print(code, c.HF_HUB_OFFLINE)")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe, "infer", "--model", "NOSUCH", "--bench", str(bench),
                           "--out", str(tmp_path / "p.jsonl")], env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["2", "True"], done.stderr[-400:]

"""The reference model's learning curve: every saved checkpoint and the final model of each seed of a
`forgeplan reference-model --out DIR` run, scored on its in-distribution test split beside the baselines.

Each point is the model at one optimizer step (a trainer checkpoint-N folder, or the seed's final model,
which stands for a checkpoint of its own step: same weights), decoded in legal mode (`--modes` adds
others) and scored as `forgeplan reference-model` scores it (`llm.reference.score`), with the training
loss and held-out loss the trainer logged at or before that step (adapter/log_history.json). The final
model's predictions that the run wrote are reused; every other point is decoded here on one thread, into
`--work` (reused on a rerun) or a temporary folder, so the run folder is only read. `--checkpoints` adds
checkpoint folders kept elsewhere (`SEED:DIR`, or `DIR` when one seed is scored). The baselines come from the run's
baselines.json, or are scored here. With --store, NAME.png beside the stored result draws Overall-Core and
DGTR against the step, with local-repair and greedy-legal as horizontal lines, from the printed result alone.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from forgeplan.model.errors import InputError
from . import machine

NAME = "reference-curve"
KEYS = ("Overall-Core", "DGTR", "SAPF", "schema_valid", "illegal_plan")
LINES = ("local-repair", "greedy-legal")   # the baselines drawn beside the curve
SPLIT, LABEL = "test", "in_distribution"


def add_arguments(p) -> None:
    p.add_argument("--run", type=Path, required=True, metavar="DIR", help="a `forgeplan reference-model --out` folder")
    p.add_argument("--seeds", help="comma-separated seeds (default: every seed-N folder of DIR with a trained model)")
    p.add_argument("--checkpoints", default="", metavar="[SEED:]DIR,...",
                   help="extra trainer checkpoint folders, each of seed SEED (or of the one seed scored)")
    p.add_argument("--modes", default="legal", help="comma-separated decoding modes of none, grammar, legal")
    p.add_argument("--work", type=Path, metavar="DIR", help="write the predictions here and reuse them on a rerun "
                   "(default: a temporary folder)")


def _csv(text: str | None) -> list[str]:
    return [w for w in (text or "").split(",") if w]


def _seeds(run: Path, text: str | None) -> list[int]:
    if text:
        try:
            return [int(s) for s in _csv(text)]
        except ValueError:
            raise InputError(f"expected comma-separated integers, got {text!r}", field="--seeds") from None
    found = [int(p.name.split("-", 1)[1]) for p in run.glob("seed-*") if p.name.split("-", 1)[1].isdigit()]
    return sorted(s for s in found if _summary_file(run / f"seed-{s}").is_file())


def _summary_file(folder: Path) -> Path:
    from forgeplan.llm.config import SAVED_NAME

    return folder / "adapter" / SAVED_NAME


def _step(checkpoint: Path) -> int:
    state = checkpoint / "trainer_state.json"
    if not state.is_file():
        raise InputError("expected a trainer checkpoint folder (with trainer_state.json)", file=str(checkpoint),
                         field="--checkpoints")
    return int(json.loads(state.read_text(encoding="utf-8"))["global_step"])


def points(folder: Path, extra: list[Path]) -> list[tuple[int, Path]]:
    """(step, model folder) of every checkpoint of one seed and of its final model, by step; the final model
    replaces a checkpoint of the same step."""
    summary = json.loads(_summary_file(folder).read_text(encoding="utf-8"))["summary"]
    found = {_step(c): c for c in [*sorted((folder / "adapter").glob("checkpoint-*")), *extra]}
    return sorted({**found, int(summary["steps"]): folder / "adapter"}.items())


def losses_at(history: list[dict], step: int) -> dict:
    """The last training loss and held-out loss logged at or before `step` (None where none was)."""
    def last(key: str):
        return next((h[key] for h in reversed(history) if key in h and h["step"] <= step), None)

    return {"train_loss": last("loss"), "eval_loss": last("eval_loss")}


def _predictions(folder: Path, step: int, model_dir: Path, mode: str, work: Path, bench: Path, prompt: str):
    """sample id -> output of one model in one mode (the run's own file for the final model), and its file."""
    from forgeplan.llm.reference import model_predictions
    from forgeplan.llm.train import load_for_inference

    out = folder / f"predictions_{SPLIT}_{mode}.jsonl"
    if model_dir != folder / "adapter" or not out.is_file():
        out = work / folder.name / f"step-{step}_{SPLIT}_{mode}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
    model = tokenizer = None
    if not out.is_file():
        model, tokenizer, _ = load_for_inference(folder / "tiny-model", model_dir, "cpu", "float32")
    return model_predictions(model, tokenizer, bench, SPLIT, out, prompt, mode), out


def seed_curve(folder: Path, seed: int, extra: list[Path], modes: list[str], work: Path, bench: Path) -> list[dict]:
    """One row per (step, mode) of one seed."""
    from forgeplan.llm.reference import score

    saved = json.loads(_summary_file(folder).read_text(encoding="utf-8"))
    history = json.loads((folder / "adapter" / "log_history.json").read_text(encoding="utf-8"))
    rows = []
    for step, model_dir in points(folder, extra):
        for mode in modes:
            preds, out = _predictions(folder, step, model_dir, mode, work, bench, saved["run"]["prompt"])
            figures = score(bench, SPLIT, preds)
            rows.append({"seed": seed, "step": step, "mode": mode, **{k: figures[k] for k in KEYS},
                         **losses_at(history, step), "model": str(model_dir), "predictions": str(out)})
    return rows


def _training(folder: Path) -> dict:
    """The seed's whole training: steps, CPU and wall seconds (`forgeplan reference-model` records them)."""
    summary = json.loads(_summary_file(folder).read_text(encoding="utf-8"))["summary"]
    return {k: summary.get(k) for k in ("steps", "cpu_seconds", "seconds", "train_tokens")}


def _baselines(run: Path, bench: Path) -> tuple[dict, str]:
    from forgeplan.llm.reference import split_baselines

    saved = run / "baselines.json"
    if saved.is_file():
        return json.loads(saved.read_text(encoding="utf-8"))[LABEL], str(saved)
    return split_baselines(bench, SPLIT), "scored here"


def _check(args) -> tuple[list[int], list[str], dict[int, list[Path]]]:
    from forgeplan.llm.reference import MODES

    if not (args.run / "iid").is_dir():
        raise InputError("expected a `forgeplan reference-model --out` folder (with iid/)", file=str(args.run),
                         field="--run")
    modes = _csv(args.modes)
    if not modes or set(modes) - set(MODES):
        raise InputError(f"expected comma-separated modes of {list(MODES)}, got {args.modes!r}", field="--modes")
    seeds = _seeds(args.run, args.seeds)
    if not seeds:
        raise InputError("no seed-N folder with a trained model", file=str(args.run), field="--run")
    for s in seeds:
        if not _summary_file(args.run / f"seed-{s}").is_file():
            raise InputError("expected a trained model", file=str(_summary_file(args.run / f"seed-{s}")), field="--seeds")
    return seeds, modes, _extra(args.checkpoints, seeds)


def _extra(text: str, seeds: list[int]) -> dict[int, list[Path]]:
    """seed -> its extra checkpoint folders, from `SEED:DIR` items (a bare DIR when one seed is scored)."""
    extra: dict[int, list[Path]] = {s: [] for s in seeds}
    for item in _csv(text):
        seed, sep, folder = item.partition(":")
        if not sep and len(seeds) == 1:
            seed, folder = str(seeds[0]), item
        if not seed.isdigit() or int(seed) not in extra:
            raise InputError(f"expected SEED:DIR with SEED one of {seeds} (DIR alone when one seed is scored), "
                             f"got {item!r}", field="--checkpoints")
        extra[int(seed)].append(Path(folder))
    return extra


def run(args) -> dict:
    from forgeplan.cli.llm_cmd import _need_llm

    seeds, modes, extra = _check(args)
    _need_llm(1)   # one thread, as the reference model decodes
    bench = args.run / "iid"
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="forgeplan-curve-") as tmp:
        work = args.work or Path(tmp)
        curve = [row for s in seeds for row in seed_curve(args.run / f"seed-{s}", s, extra[s], modes, work, bench)]
    baselines, source = _baselines(args.run, bench)
    return {"benchmark": NAME, "run": str(args.run), "split": LABEL, "modes": modes, "seeds": seeds,
            "training": {str(s): _training(args.run / f"seed-{s}") for s in seeds}, "curve": curve, "baselines": {name: {k: m[k] for k in KEYS} for name, m in baselines.items()},
            "baselines_from": source, "seconds": round(time.perf_counter() - start, 1), **machine()}


def figure(result: dict, path: Path) -> None:
    """Overall-Core and DGTR against the step, one line per seed and mode, the LINES baselines horizontal."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), dpi=100)
    for ax, key in zip(axes, ("Overall-Core", "DGTR")):
        for seed in result["seeds"]:
            for mode in result["modes"]:
                pts = [(r["step"], r[key]) for r in result["curve"] if r["seed"] == seed and r["mode"] == mode]
                ax.plot(*zip(*pts), marker="o", label=f"seed {seed}, {mode}")
        for name, style, color in zip(LINES, ("--", ":"), ("tab:red", "black")):
            if result["baselines"].get(name, {}).get(key) is not None:
                ax.axhline(result["baselines"][name][key], color=color, linestyle=style, label=name)
        ax.set(xlabel="optimizer step", ylabel=key, title=f"{key}, {result['split']}")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)

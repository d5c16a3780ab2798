"""The CPU reference model: the whole chain on a model small enough to train on a laptop CPU.

benchmark -> leak-free in-distribution split (`iid.iid_split`) -> tokenizer + tiny random model
(`tiny.make_tiny`, compact prompts, part ids as single tokens) -> SFT (`train.train`,
models/reference-cpu.toml: full fine-tuning, a budget of optimizer steps on one thread, fixed seeds) ->
decoding in each mode (unconstrained, grammar, legal) on the in-distribution test split, and in legal mode
on held-out assemblies -> FORGE metrics, schema-valid and illegal-plan rates, beside the baselines:
no-op, local-repair and greedy-legal (both handed the true diagnosis) and the diagnosis lookup (reads the
deviations the prompt lists, copies a training answer). Every seed trains its own model from its own
initial weights and data order; the table gives the mean and spread over the seeds. The benchmark
leaves out the expert tier (burrs that need partial moves): legal masks over slides and insertions at
offsets cost seconds per task. (LoRA itself is checked by the tests: resume, merged weights equal to the
adapter's logits.)
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from ..bench.store import MANIFEST, build_bench
from ..evaluation.baselines import diagnosis_lookup, greedy_legal, local_repair, no_op
from ..evaluation.evaluate import score_split, summarise
from ..io.output import write_text
from ..library import BUILTIN, build
from ..semantics.grounded import Capability, assembly_capabilities
from ..verify import verify
from .bench import load_sample, split_ids
from .config import MODELS_DIR, SAVED_NAME, load_config, save_config
from .iid import iid_split, leaks

REPORTED = ("Overall-Core", "DGTR", "SSE", "SAPF", "VMRE", "MVE", "HRQ", "NoFault-Compliance")
RATES = ("schema_valid", "illegal_plan")
MODES = {"none": "unconstrained", "grammar": "grammar", "legal": "legal"}
SPLITS = {"test": "in_distribution", "heldout": "heldout_assemblies"}
RUN_FILE = "run.json"
MAX_NEW_TOKENS = 1024


def score(bench: Path, split: str, predictions: dict[str, str]) -> dict:
    """REPORTED metrics, and in % of the split's tasks: outputs that parse under the contract (schema_valid)
    and schema-valid outputs whose plan has an action the engine refuses on replay (illegal_plan)."""
    summary = summarise(score_split(bench, predictions, split), split)
    verdicts = [verify(load_sample(bench, sid)[0], predictions.get(sid, "")) for sid in split_ids(bench, split)]
    valid = [v for v in verdicts if v.category != "schema_failure"]
    n = max(1, len(verdicts))
    return {k: summary["metrics"][k] for k in REPORTED} | {
        "schema_valid": round(100 * len(valid) / n, 2),
        "illegal_plan": round(100 * sum(not v.replay_legal for v in valid) / n, 2),
        "samples": summary["samples"], "fault_samples": summary["fault_samples"]}


def baseline_predictions(bench: Path, split: str) -> dict[str, dict[str, str]]:
    """name -> predictions of every baseline on one split; the lookup reads the `train` split."""
    training = [load_sample(bench, sid) for sid in split_ids(bench, "train")]
    fns = {"no-op": no_op, "local-repair": local_repair, "greedy-legal": greedy_legal,
           "diagnosis-lookup": diagnosis_lookup(training)}
    samples = [(sid, *load_sample(bench, sid)) for sid in split_ids(bench, split)]
    return {name: {sid: fn(task, ref) for sid, task, ref in samples} for name, fn in fns.items()}


def split_baselines(bench: Path, split: str) -> dict:
    """baseline -> its figures on one split."""
    return {name: score(bench, split, preds) for name, preds in baseline_predictions(bench, split).items()}


def baseline_figures(bench: Path, saved: Path) -> dict:
    """label -> baseline -> figures on both splits, kept in SAVED (the split is a function of the folder)."""
    if saved.is_file():
        return json.loads(saved.read_text(encoding="utf-8"))
    figures = {label: split_baselines(bench, split) for split, label in SPLITS.items()}
    write_text(saved, json.dumps(figures, indent=1) + "\n")
    return figures


def model_predictions(model, tokenizer, bench: Path, split: str, out: Path, prompt: str, mode: str,
                      grounding: bool = False, max_new_tokens: int = MAX_NEW_TOKENS) -> dict[str, str]:
    """The model's answers on a split (decoded once into OUT, read back on a rerun); a grounded model gets
    twice the token budget, for the state renderings the decoder writes."""
    from .infer import run_infer  # noqa: PLC0415

    if not out.is_file():   # written whole (io.output): a killed run leaves no partial file to reuse
        run_infer(model, tokenizer, bench, split, out, mode=mode, device="cpu", prompt=prompt,
                  max_new_tokens=max_new_tokens * (2 if grounding else 1), progress=False, grounding=grounding)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {r["sample_id"]: r["raw_output"] for r in rows}


def train_seed(folder: Path, bench: Path, cfg, seed: int, tiny: Path | None = None) -> dict:
    """Tiny model (initial weights from `seed`, in TINY, default FOLDER/tiny-model) trained with trainer seed
    `seed` into FOLDER/adapter; a finished training is reused. Returns the training summary."""
    from dataclasses import replace  # noqa: PLC0415

    from .tiny import REFERENCE_SHAPE, make_tiny  # noqa: PLC0415
    from .train import train  # noqa: PLC0415

    saved = folder / "adapter" / SAVED_NAME
    if saved.is_file():
        return json.loads(saved.read_text(encoding="utf-8"))["summary"]
    tiny = tiny or folder / "tiny-model"
    if not (tiny / "config.json").is_file():
        make_tiny(tiny, bench=bench, seed=seed, prompt=cfg.run.prompt, **REFERENCE_SHAPE)
    cfg = replace(cfg, trainer={**cfg.trainer, "seed": seed})
    start = time.process_time()
    summary = train(tiny, bench, folder / "adapter", cfg)
    summary["cpu_seconds"] = round(time.process_time() - start, 1)
    save_config(cfg, folder / "adapter", {"summary": summary})
    return summary


def run_seed(folder: Path, bench: Path, cfg, seed: int, modes: tuple[str, ...], heldout_modes: tuple[str, ...] = ("legal",),
             tiny: Path | None = None, max_new_tokens: int = MAX_NEW_TOKENS) -> dict:
    """Train one seed and score it: `modes` in distribution, `heldout_modes` on held-out assemblies, each
    answer within `max_new_tokens` (twice that with grounding)."""
    from .train import load_for_inference  # noqa: PLC0415

    done = folder / RUN_FILE
    if done.is_file():
        return json.loads(done.read_text(encoding="utf-8"))
    summary = train_seed(folder, bench, cfg, seed, tiny)
    model, tokenizer, _ = load_for_inference(tiny or folder / "tiny-model", folder / "adapter", "cpu", "float32")
    figures: dict[str, dict] = {}
    start = time.perf_counter()
    for split, label in SPLITS.items():
        for mode in modes if split == "test" else heldout_modes:
            preds = model_predictions(model, tokenizer, bench, split, folder / f"predictions_{split}_{mode}.jsonl",
                                      cfg.run.prompt, mode, cfg.run.grounding, max_new_tokens)
            figures.setdefault(label, {})[MODES[mode]] = score(bench, split, preds)
    run = {"seed": seed, "training": summary, "figures": figures,
           "decode_and_score_seconds": round(time.perf_counter() - start, 1)}
    write_text(done, json.dumps(run, indent=1) + "\n")
    return run


def spread(runs: list[dict]) -> dict:
    """label -> mode -> metric -> {"mean", "sd", "runs"} over the seeds that scored that mode (sd 0 for one)."""
    out: dict = {}
    for label in SPLITS.values():
        for mode in MODES.values():
            scored = [r["figures"][label][mode] for r in runs if mode in r["figures"].get(label, {})]
            if not scored:
                continue
            cell = out.setdefault(label, {}).setdefault(mode, {"samples": scored[0]["samples"], "seeds": len(scored)})
            for key in (*REPORTED, *RATES):
                values = [s[key] for s in scored]
                if any(v is None for v in values):
                    cell[key] = None
                    continue
                cell[key] = {"mean": round(statistics.fmean(values), 2),
                             "sd": round(statistics.stdev(values), 2) if len(values) > 1 else 0.0,
                             "runs": values}
    return out


def prepare(out: Path, *, tasks: int, seed: int, jobs: int, config: Path | None, test_fraction: float, heldout: int,
            max_steps: int | None, threads: int):
    """(training config, split folder OUT/iid, split sizes): the configuration with the command line's
    overrides, the benchmark OUT/bench (built once) and its leak-free split (a function of the folder)."""
    from dataclasses import replace  # noqa: PLC0415

    cfg = load_config(config or MODELS_DIR / "reference-cpu.toml")
    cfg = replace(cfg, run=replace(cfg.run, threads=threads or cfg.run.threads),
                  trainer={**cfg.trainer, **({"max_steps": max_steps} if max_steps is not None else {})})
    if not (out / "bench" / MANIFEST).is_file():   # without the expert tier: legal masks on slides are slow
        build_bench(out / "bench", tasks, seed, jobs,
                    assemblies=[a for a in BUILTIN if Capability.SLIDES not in assembly_capabilities(build(a))])
    bench = out / "iid"
    return cfg, bench, iid_split(out / "bench", bench, test_fraction, seed, heldout_limit=heldout)


def common_report(cfg, bench: Path, splits: dict, seeds: tuple[int, ...]) -> dict:
    """What every report of a run states first: the split, its leaks (none), the budget and the seeds."""
    return {"splits": splits, "leaking_test_tasks": len(leaks(bench, split_ids(bench, "train"), split_ids(bench, "test"))),
            "budget": {"max_steps": cfg.trainer.get("max_steps"), "batch_size": cfg.trainer.get("per_device_train_batch_size"),
                       "learning_rate": cfg.trainer.get("learning_rate"), "threads": cfg.run.threads},
            "seeds": list(seeds)}


def reference_model(out: Path, *, tasks: int = 1000, seed: int = 42, jobs: int = 2, config: Path | None = None,
                    test_fraction: float = 0.1, heldout: int = 40, max_steps: int | None = None,
                    seeds: tuple[int, ...] = (42,), modes: tuple[str, ...] = tuple(MODES), threads: int = 1,
                    max_new_tokens: int = MAX_NEW_TOKENS) -> dict:
    """Run the recipe into OUT (bench/, iid/, seed-N/{tiny-model,adapter,predictions,run.json}) and return the
    figures. `seed` fixes the benchmark and the split, `seeds` the models; finished steps are reused."""
    out = Path(out)
    cfg, bench, splits = prepare(out, tasks=tasks, seed=seed, jobs=jobs, config=config, test_fraction=test_fraction,
                                 heldout=heldout, max_steps=max_steps, threads=threads)
    runs = [run_seed(out / f"seed-{s}", bench, cfg, s, modes, max_new_tokens=max_new_tokens) for s in seeds]
    report = {**common_report(cfg, bench, splits, seeds), "model": spread(runs),
              "baselines": baseline_figures(bench, out / "baselines.json"), "runs": runs,
              "loss_curves": [str(out / f"seed-{s}" / "adapter" / "loss_curve.png") for s in seeds]}
    write_text(out / "reference.json", json.dumps(report, indent=1) + "\n")
    return report


def cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, dict):
        return f"{value['mean']:.2f} ± {value['sd']:.2f}" if value["sd"] else f"{value['mean']:.2f}"
    return f"{value:.2f}"


def table(report: dict) -> str:
    """The figures as a Markdown table: the model per decoding mode (mean ± sd over the seeds) and the
    baselines, in distribution and on held-out assemblies."""
    keys = (*REPORTED, *RATES)
    lines = ["| split (tasks) | predictions | decoding | " + " | ".join(keys) + " |", "|" + "---|" * (len(keys) + 3)]
    for label in SPLITS.values():
        for mode, fig in report["model"].get(label, {}).items():
            n = fig["seeds"]
            who = f"reference model ({n} seed{'s' if n > 1 else ''})"
            lines.append(f"| {label} ({fig['samples']}) | {who} | {mode} | "
                         + " | ".join(cell(fig[k]) for k in keys) + " |")
        for name, m in report["baselines"][label].items():
            lines.append(f"| {label} ({m['samples']}) | {name} | – | " + " | ".join(cell(m[k]) for k in keys) + " |")
    return "\n".join(lines)


def summary(report: dict) -> str:
    """The table, then one line per seed: its training budget, time and losses."""
    lines = [table(report)]
    for run in report["runs"]:
        t = run["training"]
        tokens = f" ({t['train_tokens']} tokens)" if t.get("train_tokens") is not None else ""
        lines.append(f"seed {run['seed']}: {t['steps']} steps{tokens}, {t['seconds']} s wall, "
                     f"{t.get('cpu_seconds')} s CPU; loss {t['first_loss']} -> {t['last_loss']}, "
                     f"held-out loss {t['eval_loss']}")
    return "\n".join(lines)

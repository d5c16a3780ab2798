"""FORGE's Table 3 on the CPU reference model: Vanilla SFT, w/o Action Grounding, w/o Rework Structuring and
the full method, trained and scored on the same leak-free split, the same seeds and the same tiny models.

Each variant is a pair of training options (`run.targets`, `run.grounding`; llm.targets, llm.grounding):
Rework Structuring on means structured targets and off means plain ones (an order that ignores the
layers), Action Grounding on means the engine's state renderings in the context. Per seed one tiny model
(initial weights and tokenizer) is built and every variant trains from a copy of it, with the same data
order, so the variants differ only in their targets. Every variant is decoded in every mode asked for
(default: grammar, the paper's plain decoding made parseable, and legal, the executable action set as a
mask), in distribution and on held-out assemblies, and scored beside the rule baselines.

OUT/seed-N/tiny-model, OUT/seed-N/VARIANT/{adapter,predictions_*.jsonl,run.json}, OUT/ablation.json.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ..io.output import write_text
from .reference import MAX_NEW_TOKENS, SPLITS, baseline_figures, cell, common_report, prepare, run_seed, spread

# Table 3's rows: name -> (label, run.targets, run.grounding)
VARIANTS = {
    "vanilla-sft": ("Vanilla SFT", "plain", False),
    "without-ag": ("w/o Action Grounding", "structured", False),
    "without-rs": ("w/o Rework Structuring", "plain", True),
    "full": ("full method (FORGE)", "structured", True),
}
TABLE3 = ("SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ", "Overall-Core")
# FORGE's Table 3 as printed (Qwen3.5-9B + LoRA on FORGE-Bench; its judge column is not reproduced)
PAPER = {
    "vanilla-sft": (69.23, 61.11, 63.23, 71.56, 62.60, 77.44, 67.53),
    "without-ag": (62.38, 41.67, 62.19, 68.19, 60.10, 73.60, 61.35),
    "without-rs": (65.43, 66.67, 64.05, 67.38, 63.11, 80.67, 67.89),
    "full": (71.54, 61.11, 72.60, 75.93, 72.13, 83.17, 72.75),
}
RULES = ("local-repair", "greedy-legal")   # the rule baselines the full method has to beat
DEFAULT_MODES = ("grammar", "legal")


def ablation(out: Path, *, tasks: int = 1000, seed: int = 42, jobs: int = 2, config: Path | None = None,
             test_fraction: float = 0.1, heldout: int = 40, max_steps: int | None = None,
             seeds: tuple[int, ...] = (42,), modes: tuple[str, ...] = DEFAULT_MODES, threads: int = 1,
             variants: tuple[str, ...] = tuple(VARIANTS), max_new_tokens: int = MAX_NEW_TOKENS) -> dict:
    """Train and score every variant for every seed into OUT (finished steps are reused); write and return
    OUT/ablation.json."""
    out = Path(out)
    cfg, bench, splits = prepare(out, tasks=tasks, seed=seed, jobs=jobs, config=config, test_fraction=test_fraction,
                                 heldout=heldout, max_steps=max_steps, threads=threads)
    runs: dict[str, list[dict]] = {}
    for s in seeds:   # seed by seed: a stopped run has whole seeds to show
        for name in variants:
            _, targets, grounding = VARIANTS[name]
            variant = replace(cfg, run=replace(cfg.run, targets=targets, grounding=grounding))
            runs.setdefault(name, []).append(run_seed(out / f"seed-{s}" / name, bench, variant, s, modes, modes,
                                                      out / f"seed-{s}" / "tiny-model", max_new_tokens))
    baselines = baseline_figures(bench, out / "baselines.json")
    report = {**common_report(cfg, bench, splits, seeds), "modes": list(modes),
              "variants": {n: {"label": VARIANTS[n][0], "targets": VARIANTS[n][1], "grounding": VARIANTS[n][2]}
                           for n in variants},
              "model": {n: spread(r) for n, r in runs.items()}, "baselines": baselines,
              "above_rule_baselines": above_rules(runs, baselines), "paper_table3": PAPER, "runs": runs}
    write_text(out / "ablation.json", json.dumps(report, indent=1) + "\n")
    return report


def above_rules(runs: dict[str, list[dict]], baselines: dict) -> dict:
    """variant -> mode -> per seed, whether its in-distribution Overall-Core beats both rule baselines."""
    label = SPLITS["test"]
    best = max(baselines[label][r]["Overall-Core"] for r in RULES)
    return {name: {mode: [r["figures"][label][mode]["Overall-Core"] > best for r in seeds_runs]
                   for mode in seeds_runs[0]["figures"][label]}
            for name, seeds_runs in runs.items()}


def table(report: dict) -> str:
    """Table 3 as Markdown: per split and decoding, each variant (mean ± sd over the seeds) and the rule
    baselines, Table 3's metrics then NoFault-Compliance and the two rates; then the paper's rows."""
    keys = (*TABLE3, "NoFault-Compliance", "schema_valid", "illegal_plan")
    lines = ["| split (tasks) | decoding | variant | " + " | ".join(keys) + " |", "|" + "---|" * (len(keys) + 3)]
    for label in SPLITS.values():
        for mode in report["modes"]:
            for name, model in report["model"].items():
                fig = model.get(label, {}).get(mode)
                if fig is not None:
                    lines.append(f"| {label} ({fig['samples']}) | {mode} | {report['variants'][name]['label']} | "
                                 + " | ".join(cell(fig[k]) for k in keys) + " |")
        for name in RULES:
            m = report["baselines"][label][name]
            lines.append(f"| {label} ({m['samples']}) | – | {name} (rule baseline) | "
                         + " | ".join(cell(m[k]) for k in keys) + " |")
    lines += ["", "| FORGE's Table 3 (Qwen3.5-9B, FORGE-Bench: another model and data) | " + " | ".join(TABLE3) + " |",
              "|" + "---|" * (len(TABLE3) + 1)]
    lines += [f"| {VARIANTS[name][0]} | " + " | ".join(f"{v:.2f}" for v in row) + " |"
              for name, row in report["paper_table3"].items()]
    return "\n".join(lines)


def summary(report: dict) -> str:
    """The table, then per variant and seed its Overall-Core in distribution against the rule baselines, and
    its training budget, time and losses."""
    label = SPLITS["test"]
    best = max(report["baselines"][label][r]["Overall-Core"] for r in RULES)
    lines = [table(report), "", f"in distribution, Overall-Core per seed (rule baselines: best {best:.2f}):"]
    for name, seeds_runs in report["runs"].items():
        for mode in report["modes"]:
            values = ", ".join(f"{r['seed']}: {r['figures'][label][mode]['Overall-Core']:.2f}" for r in seeds_runs
                               if mode in r["figures"].get(label, {}))
            wins = sum(report["above_rule_baselines"][name].get(mode, []))
            lines.append(f"- {report['variants'][name]['label']}, {mode}: {values} "
                         f"({wins} of {len(seeds_runs)} seeds above both rule baselines)")
    for name, seeds_runs in report["runs"].items():
        for r in seeds_runs:
            t = r["training"]
            tokens = f"{t['train_tokens']} tokens, " if t.get("train_tokens") is not None else ""
            lines.append(f"{name} seed {r['seed']}: {t['steps']} steps ({tokens}"
                         f"{t.get('train_examples')} examples), {t['seconds']} s wall, {t.get('cpu_seconds')} s CPU; "
                         f"loss {t['first_loss']} -> {t['last_loss']}, held-out loss {t['eval_loss']}; "
                         f"decoding and scoring {r['decode_and_score_seconds']} s")
    return "\n".join(lines)

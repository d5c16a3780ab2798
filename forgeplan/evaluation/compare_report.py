"""compare.md, compare.json and compare.png: a comparison of runs (`compare.py`) for a reader."""

from __future__ import annotations

import json
from pathlib import Path

from ..io.output import Staged, staging
from ..io.quoting import markdown_cell, plot_text
from .report import fmt

P_FORMAT = "{:.4f}"


def _span(v: dict) -> str:
    return "–" if v["low"] is None else f"[{fmt(v['low'])}, {fmt(v['high'])}]"


def _p(value) -> str:
    return "–" if value is None else P_FORMAT.format(value)


def _pair_name(pair: dict) -> str:
    return f"{markdown_cell(pair['a'])} − {markdown_cell(pair['b'])}"


def _overall_lines(figure: str, table: dict) -> list[str]:
    lines = [f"### {figure}", "", "| run | n | value | 95 % interval |", "|---|---|---|---|"]
    lines += [f"| {markdown_cell(r['name'])} | {r['n']} | {fmt(r['value'])} | {_span(r)} |" for r in table["runs"]]
    if table["pairs"]:
        lines += ["", "| runs | n | difference | 95 % interval (paired bootstrap) | p (sign-flip) |", "|---|---|---|---|---|"]
        lines += [f"| {_pair_name(p)} | {p['n']} | {fmt(p['difference'])} | {_span(p)} | {_p(p['p'])} |"
                  for p in table["pairs"]]
    return lines + [""]


def _stratum_lines(label: str, figure: str, groups: dict) -> list[str]:
    """One table: a row per stratum, n, each run's value and interval, each pair's difference and p."""
    some = next(iter(groups.values()))[figure]
    runs = [r["name"] for r in some["runs"]]
    pairs = [_pair_name(p) for p in some["pairs"]]
    lines = [f"### {figure} per {label}", "",
             f"| {label} | n | " + " | ".join(markdown_cell(r) for r in runs) + "".join(f" | {p} | p" for p in pairs) + " |",
             "|---|---|" + "---|" * (len(runs) + 2 * len(pairs))]
    for value, table in groups.items():
        f = table[figure]
        if not f["runs"][0]["n"]:
            continue   # the metric does not apply to this stratum (no-fault samples and the core metrics)
        cells = [f"{fmt(r['value'])} {_span(r)}" for r in f["runs"]]
        cells += [c for p in f["pairs"] for c in (f"{fmt(p['difference'])} {_span(p)}", _p(p["p"]))]
        lines.append(f"| {markdown_cell(value)} | {f['runs'][0]['n']} | " + " | ".join(cells) + " |")
    return lines + [""]


def compare_markdown(result: dict) -> str:
    m = result["method"]
    lines = ["# forgeplan comparison", "",
             f"{result['shared_samples']} shared samples. Each figure is recomputed on them from the runs' "
             "samples.jsonl (docs/metrics.md). Interval: 95 % percentile bootstrap over samples "
             f"({m['resamples']} resamples, seed {m['seed']}). Differences: {m['paired_interval']}; "
             f"p: {m['paired_test']} ({m['permutations']} permutations). n: the samples a figure averages over. "
             "No correction for multiple comparisons.", ""]
    lines += ["| run | folder | benchmark | split | samples |", "|---|---|---|---|---|"]
    lines += [f"| {markdown_cell(r['name'])} | {markdown_cell(r['folder'])} | {markdown_cell(r['bench'] or '–')} | "
              f"{markdown_cell(r['split'] or '–')} | {r['samples']} |" for r in result["runs"]]
    lines += [""] + [f"- {markdown_cell(n)}" for n in result["notes"]] + ([""] if result["notes"] else [])
    lines += ["## All shared samples", ""]
    for figure in result["figures"]:
        lines += _overall_lines(figure, result["overall"][figure])
    for label, groups in result["strata"].items():
        lines += [f"## Per {label}", ""]
        for figure in result["figures"]:
            lines += _stratum_lines(label, figure, groups)
    return "\n".join(lines)


@staging
def write_compare(result: dict, out: Staged) -> list[Path]:
    """compare.md, compare.json and compare.png into the output folder `out` (renamed into place together)."""
    out.write_text("compare.json", json.dumps(result, indent=1) + "\n")
    out.write_text("compare.md", compare_markdown(result))
    with out.open("compare.png", "wb") as fh:
        plot_compare(result, fh)
    return [out.path("compare.md"), out.path("compare.json"), out.path("compare.png")]


def plot_compare(result: dict, path) -> None:
    """Per figure, each run's value as a point with its 95 % interval as a bar, runs side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = result["figures"]
    names = [r["name"] for r in result["runs"]]
    fig, ax = plt.subplots(figsize=(max(6.5, 0.75 * len(figures) + 2), 4.8))
    width = 0.7 / max(len(names), 1)
    for k, name in enumerate(names):
        xs, ys, lows, highs = [], [], [], []
        for i, figure in enumerate(figures):
            r = result["overall"][figure]["runs"][k]
            if r["value"] is None:
                continue
            xs.append(i - 0.35 + width * (k + 0.5))
            ys.append(r["value"])
            lows.append(r["value"] - (r["low"] if r["low"] is not None else r["value"]))
            highs.append((r["high"] if r["high"] is not None else r["value"]) - r["value"])
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="o", capsize=3, markersize=5, label=plot_text(name))
    ax.set_xticks(range(len(figures)), figures, rotation=45, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(figures) - 0.4)
    ax.set_ylim(-5, 105)
    ax.set_ylabel("value (x100)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Runs compared on {result['shared_samples']} shared samples")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.text(0.01, 0.01, "point: the figure on the shared samples; bar: its 95 % percentile bootstrap interval "
             f"({result['method']['resamples']} resamples over samples)", fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, format="png", dpi=110)
    plt.close(fig)

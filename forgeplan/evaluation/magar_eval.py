"""Score a MAGAR-profile benchmark split: Assembly Decision and Minimal Rework, MAGAR's columns and Overall."""

from __future__ import annotations

import json
from pathlib import Path

from ..bench.folder import Bench, open_bench
from ..io.output import Staged, staging
from ..io.quoting import markdown_cell
from .decisions import AD_METRICS, DecisionScore, decision_metrics, operation_recall, overall, score_decision
from .metrics import magar_metrics
from .report import answer_lines, fmt, interval_lines
from .evaluate import scored_ids
from .samples import SampleScore, score_sample

COLUMNS = ("OPG", "OBA", "SGF", "IBC", "MPA", "RCA", "Overall")
ANY_COLUMNS = ("OPG-any", "OBA-any", "SGF-any", "IBC-any")


def is_magar(bench: Path | Bench) -> bool:
    return open_bench(bench).profile == "magar"


def read_decision(bench: Path | Bench, sample_id: str) -> dict:
    """decision.json of an Assembly Decision sample (reference, valid decisions, first steps), checked by
    the benchmark's loader (digest, schema, the reference among the valid decisions)."""
    return open_bench(bench).decision(sample_id)


def task_family(bench: Path | Bench, sample_id: str) -> str:
    return open_bench(bench).meta(sample_id).get("task_family", "minimal_rework")


def score_one(bench: Path | Bench, sid: str, raw: str | None, extract: bool = False) -> DecisionScore | SampleScore:
    """The score of one sample of either family (`extract`: see io.contract.answer_json)."""
    bench = open_bench(bench)
    if bench.is_decision(sid):
        meta = bench.meta(sid)
        d = bench.decision(sid, meta)
        return score_decision(sid, meta["assembly_id"], raw, d["reference"], d["valid"], extract)
    sample = bench.rework(sid)
    return score_sample(sample.task, raw, sample.reference, sample.meta, sample.minimal_rework, extract=extract)


def score_magar_split(bench: Path | Bench, predictions: dict[str, str], split: str = "test", progress=None, *,
                      extract: bool = False, only_predicted: bool = False) -> list:
    """The score of every sample of the split (with `only_predicted`, of those that have a prediction)."""
    bench = open_bench(bench)
    ids = scored_ids(bench, predictions, split, only_predicted)
    out = []
    for sid in ids:
        out.append(score_one(bench, sid, predictions.get(sid), extract))
        if progress:
            progress(1)
    return out


def magar_summary(samples: list, split: str, answers: dict | None = None) -> dict:
    """MAGAR's figures; `answers` (report.answer_counts) says how the answers were read."""
    decisions = [s for s in samples if isinstance(s, DecisionScore)]
    rework = [s for s in samples if isinstance(s, SampleScore)]
    m: dict = {}
    if decisions:
        m.update(decision_metrics(decisions))
    else:
        m.update({k: None for k in (*AD_METRICS, *ANY_COLUMNS)})
    m.update(magar_metrics(rework) if rework else {"MPA": None, "RCA": None})
    m.update(overall(m))
    return {"split": split, "samples": len(samples), "assembly_decision_samples": len(decisions),
            "minimal_rework_samples": len(rework), **({"answers": answers} if answers is not None else {}), "metrics": m, "per_operation": operation_recall(decisions),
            "invalid_decisions": [{"sample_id": s.sample_id, "reason": s.reason} for s in decisions if not s.valid][:5]}


def print_line(summary: dict) -> str:
    m = summary["metrics"]
    return "\n".join(["  ".join(f"{k} {fmt(m[k])}" for k in COLUMNS),
                      "  ".join(f"{k} {fmt(m[k])}" for k in ANY_COLUMNS)
                      + f"  AD {fmt(m['Assembly Decision'])}  MR {fmt(m['Minimal Rework'])}"])


@staging
def write_magar_report(summary: dict, out: Staged, name: str = "predictions") -> list[Path]:
    """metrics.json and report.md into the output folder `out`."""
    out.write_text("metrics.json", json.dumps(summary, indent=1) + "\n")
    m = summary["metrics"]
    lines = [f"# forgeplan MAGAR-profile evaluation: {markdown_cell(name)}", "",
             f"Split {markdown_cell(summary['split'])}: {summary['assembly_decision_samples']} Assembly Decision and "
             f"{summary['minimal_rework_samples']} Minimal Rework samples. All metrics x100; \"–\": no eligible sample.",
             "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS),
             "| " + " | ".join(fmt(m[c]) for c in COLUMNS) + " |", "",
             "| " + " | ".join(ANY_COLUMNS) + " | Assembly Decision | Minimal Rework |", "|" + "---|" * 6,
             "| " + " | ".join(fmt(m[c]) for c in (*ANY_COLUMNS, "Assembly Decision", "Minimal Rework")) + " |", ""]
    lines += interval_lines(summary)
    lines += answer_lines(summary["answers"]) if "answers" in summary else []
    lines += ["## Operation recall (OBA's terms)", "", "| reference operation | samples | recall |", "|---|---|---|"]
    lines += [f"| {op} | {v['samples']} | {fmt(v['recall'])} |" for op, v in summary["per_operation"].items()]
    lines += ["", "## Glossary", "",
             "- OPG: operation and involved-part set exact, over samples with a nonempty reference part set (MAGAR C.3.1).",
             "- OBA: unweighted mean of per-operation recall over the operation classes present in the references.",
             "- SGF: next subgoal exact after Unicode normalisation (NFKC, whitespace collapsed).",
             "- IBC: operation, part set and subgoal jointly exact. Part ids compare as normalised sets; an invalid "
             "decision gets no field credit and stays in every denominator.",
             "- -any: the same, crediting any valid decision (a first step of any proven-optimal completion).",
             "- MPA, RCA: MAGAR eq. 12 on the Minimal Rework samples; Minimal Rework = (MPA + RCA) / 2.",
             "- Overall: MAGAR eq. 13 over the families built here: the mean of the Assembly Decision score "
             "(mean of OPG, OBA, SGF, IBC) and the Minimal Rework score; \"–\" counts as 0. Atomic Action (GUI "
             "events) is out of scope, so this Overall has two families, MAGAR's three.", ""]
    out.write_text("report.md", "\n".join(lines))
    return [out.path("metrics.json"), out.path("report.md")]

"""One flat row per scored sample (samples.jsonl): who the sample is, its verdict, and each metric the
report aggregates, on the report's scale (x100) or None where the metric does not apply to the sample.

The report's figures are formulas over these rows (`figures.py`, docs/metrics.md "samples.jsonl").
"""

from __future__ import annotations

from pathlib import Path

from ..bench.folder import Bench, open_bench
from .decisions import DecisionScore
from .samples import SampleScore

ID_FIELDS = ("sample_id", "family", "split", "assembly_id", "assembly_family", "fault_types", "stratum",
             "difficulty", "answered", "extracted", "verdict", "category", "failing_step", "reason")
FORGE_COLUMNS = ("SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ", "SSE-any", "MVE-any", "NoFault-Compliance", "MPA", "RCA")
MAGAR_COLUMNS = ("OPG", "OBA", "SGF", "IBC", "OPG-any", "OBA-any", "SGF-any", "IBC-any", "valid_decisions", "MPA", "RCA")
METRIC_COLUMNS = tuple(dict.fromkeys(FORGE_COLUMNS + MAGAR_COLUMNS))   # every metric a row may carry
DECISION_ERROR = "decision_error"   # a well-formed decision that is not the first step of any optimal plan


def _x100(value) -> float | None:
    return None if value is None else 100.0 * float(value)


def rework_values(s: SampleScore) -> dict[str, float | None]:
    """A rework sample's metrics: the core ones and MAGAR's on fault samples, compliance on no-fault ones."""
    fault = s.is_fault
    values = {"SSE": s.sse, "SAPF": s.p, "VMRE": s.vmre, "DGTR": s.g, "MVE": s.mve, "HRQ": s.hrq,
              "SSE-any": s.sse_any, "MVE-any": s.mve_any, "MPA": s.mpa, "RCA": s.rca}
    out = {k: _x100(v) if fault else None for k, v in values.items()}
    out["NoFault-Compliance"] = None if fault else _x100(bool(s.nofault_ok))
    return out


def decision_values(s: DecisionScore) -> dict[str, float | None]:
    """An Assembly Decision sample's metrics; OPG and OPG-any only where the reference names parts."""
    return {"OPG": _x100(s.op_parts) if s.applicable else None, "OBA": _x100(s.op), "SGF": _x100(s.subgoal),
            "IBC": _x100(s.joint), "OPG-any": _x100(s.op_parts_any) if s.applicable else None,
            "OBA-any": _x100(s.op_any), "SGF-any": _x100(s.subgoal_any), "IBC-any": _x100(s.joint_any),
            "valid_decisions": _x100(s.valid)}


def decision_verdict(s: DecisionScore) -> tuple[str | None, str]:
    """(failure category, reason) of a decision: correct when it is one of the valid decisions."""
    if not s.valid:
        return "schema_failure", s.reason
    if s.joint_any:
        return None, ""
    wrong = [name for name, ok in (("operation", s.op_any), ("involved parts", s.op_parts_any),
                                   ("next subgoal", s.subgoal_any)) if not ok]
    return DECISION_ERROR, ("not the first step of any optimal plan" +
                            (f": no valid decision has this {', '.join(wrong)}" if wrong else
                             ": its fields come from different valid decisions"))


def sample_row(score: SampleScore | DecisionScore, meta: dict, split: str, answered: bool,
               columns: tuple[str, ...]) -> dict:
    """The row of one sample, without its raw output (added when the file is written). `meta` is the
    sample's meta.json; `columns` the metrics of the report (FORGE_COLUMNS or MAGAR_COLUMNS)."""
    if isinstance(score, DecisionScore):
        family, stratum, step = "decision", score.reference_operation, None
        category, reason = decision_verdict(score)
        values = decision_values(score)
    else:
        family, stratum, step = "rework", score.stratum, score.failing_step
        category, reason = score.category, score.reason
        values = rework_values(score)
    verdict = "unanswered" if not answered else "correct" if category is None else "incorrect"
    row = {"sample_id": score.sample_id, "family": family, "split": split, "assembly_id": meta["assembly_id"],
           "assembly_family": meta["family"], "fault_types": list(meta.get("fault_types", [])), "stratum": stratum,
           "difficulty": meta["difficulty"], "answered": answered, "extracted": score.extracted, "verdict": verdict,
           "category": category, "failing_step": step, "reason": reason}
    return row | {c: values.get(c) for c in columns}


def sample_rows(bench: Path | Bench, scores: list, answered, split: str, columns: tuple[str, ...]) -> list[dict]:
    """The rows of scored samples (in their order); `answered` holds the ids that have a prediction."""
    bench = open_bench(bench)
    return [sample_row(s, bench.meta(s.sample_id), split, s.sample_id in answered, columns) for s in scores]

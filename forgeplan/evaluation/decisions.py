"""Assembly Decision metrics (MAGAR C.3.1): OPG, OBA, SGF, IBC, their `-any` variants, and Overall (C.3.4).

"An invalid structured decision receives no field-level credit" and, as every invalid or unparseable
prediction (C.3), stays in every denominator. "Part IDs are compared as normalized sets" and the subgoal
is "exact after Unicode-text normalization": both go through `normalise` (NFKC, surrounding whitespace
stripped, inner runs of whitespace made one space; case is kept, since part ids are case-sensitive).
The `-any` variants credit any valid decision of the state (every first step of every optimal
completion) instead of the one reference.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from statistics import mean

from ..io.contract import ContractError, answer_json
from ..semantics.intents import OPERATIONS

DECISION_FIELDS = ("operation", "involved_parts", "next_subgoal")
MAX_DECISION_CHARS = 100_000
AD_METRICS = ("OPG", "OBA", "SGF", "IBC")
MR_METRICS = ("MPA", "RCA")


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


@dataclass(frozen=True)
class Parsed:
    """A decision as compared: normalised operation, part set and subgoal."""

    operation: str
    parts: frozenset[str]
    subgoal: str


def as_parsed(d: dict) -> Parsed:
    return Parsed(normalise(d["operation"]), frozenset(normalise(p) for p in d["involved_parts"]),
                  normalise(d["next_subgoal"]))


def parse_decision(raw: str | None, extract: bool = False) -> tuple[Parsed | None, str]:
    """The decision of a raw output, or (None, why it is invalid). The output contract (MAGAR D): exactly
    one flat JSON object with the three fields and their types, nothing else ("Explanations, Markdown
    fences, comments, and additional fields are not allowed"); the operation one of MAGAR's six classes.
    `extract` takes the one JSON object out of a fenced or chatty answer (io.contract.answer_json)."""
    if raw is None:
        return None, "missing prediction"
    if len(raw) > MAX_DECISION_CHARS:
        return None, f"longer than {MAX_DECISION_CHARS} characters"
    try:
        obj, _extracted = answer_json(raw, extract)
    except ContractError as exc:
        return None, f"not JSON ({exc.reason})"
    if not isinstance(obj, dict) or sorted(obj) != sorted(DECISION_FIELDS):
        return None, f"expected exactly the fields {list(DECISION_FIELDS)}"
    if not isinstance(obj["operation"], str) or not isinstance(obj["next_subgoal"], str) or \
            not isinstance(obj["involved_parts"], list) or not all(isinstance(p, str) for p in obj["involved_parts"]):
        return None, "operation and next_subgoal must be strings, involved_parts a list of strings"
    parsed = as_parsed(obj)
    if parsed.operation not in OPERATIONS:
        return None, f"operation must be one of {list(OPERATIONS)}"
    return parsed, ""


@dataclass
class DecisionScore:
    sample_id: str
    assembly_id: str
    reference_operation: str
    applicable: bool            # nonempty reference part set (OPG's denominator)
    valid: bool                 # the output is a valid structured decision
    reason: str = ""
    op: bool = False            # operation exact (OBA's per-operation recall)
    op_parts: bool = False      # operation and part set exact (OPG)
    subgoal: bool = False       # SGF
    joint: bool = False         # IBC
    op_any: bool = False
    op_parts_any: bool = False
    subgoal_any: bool = False
    joint_any: bool = False
    extracted: bool = False     # the object was taken out of a fence or surrounding text (--extract-json)


def score_decision(sample_id: str, assembly_id: str, raw: str | None, reference: dict, valid: list[dict],
                   extract: bool = False) -> DecisionScore:
    ref = as_parsed(reference)
    s = DecisionScore(sample_id, assembly_id, ref.operation, bool(ref.parts), False)
    got, s.reason = parse_decision(raw, extract)
    if got is None:
        return s
    s.valid = True
    s.extracted = extract and parse_decision(raw)[0] is None   # it parses only once taken out
    s.op = got.operation == ref.operation
    s.op_parts = s.op and got.parts == ref.parts
    s.subgoal = got.subgoal == ref.subgoal
    s.joint = s.op_parts and s.subgoal
    options = [as_parsed(v) for v in valid]
    s.op_any = any(got.operation == v.operation for v in options)
    s.op_parts_any = any(got.operation == v.operation and got.parts == v.parts for v in options)
    s.subgoal_any = any(got.subgoal == v.subgoal for v in options)
    s.joint_any = got in options
    return s


def _rate(samples: list[DecisionScore], flag: str) -> float | None:
    return 100 * mean(getattr(s, flag) for s in samples) if samples else None


def operation_balanced(samples: list[DecisionScore], flag: str = "op") -> float | None:
    """OBA: "the unweighted mean of per-operation recall over operation classes represented in the
    reference set"; a class no reference has does not enter the mean."""
    per: dict[str, list[bool]] = defaultdict(list)
    for s in samples:
        per[s.reference_operation].append(getattr(s, flag))
    return 100 * mean(mean(v) for v in per.values()) if per else None


def operation_recall(samples: list[DecisionScore]) -> dict[str, dict]:
    """OBA's parts: per reference operation class, its samples and the recall of the operation."""
    per: dict[str, list[bool]] = defaultdict(list)
    for s in samples:
        per[s.reference_operation].append(s.op)
    return {op: {"samples": len(v), "recall": 100 * mean(v)} for op, v in sorted(per.items())}


def decision_metrics(samples: list[DecisionScore]) -> dict[str, float | None]:
    """OPG over the samples with a nonempty reference part set only; the others over every sample."""
    applicable = [s for s in samples if s.applicable]
    return {
        "OPG": _rate(applicable, "op_parts"), "OBA": operation_balanced(samples),
        "SGF": _rate(samples, "subgoal"), "IBC": _rate(samples, "joint"),
        "OPG-any": _rate(applicable, "op_parts_any"), "OBA-any": operation_balanced(samples, "op_any"),
        "SGF-any": _rate(samples, "subgoal_any"), "IBC-any": _rate(samples, "joint_any"),
        "valid_decisions": _rate(samples, "valid"),
    }


def family_score(m: dict, names: tuple[str, ...]) -> float | None:
    """A task family's score: the mean of its automatic metrics (a "–" counts as zero, C.3); None when the
    benchmark has no sample of the family."""
    values = [m.get(k) for k in names]
    return None if all(v is None for v in values) else sum(v or 0.0 for v in values) / len(names)


def overall(m: dict) -> dict[str, float | None]:
    """MAGAR C.3.4 eq. 13 over the families that exist: average the metrics within each family, then
    weight the families equally (MAGAR's third family, Atomic Action, is not built)."""
    ad, mr = family_score(m, AD_METRICS), family_score(m, MR_METRICS)
    present = [v for v in (ad, mr) if v is not None]
    return {"Assembly Decision": ad, "Minimal Rework": mr, "Overall": sum(present) / len(present) if present else None}

"""Aggregation with the papers' macro-averaging (FORGE App. D; MAGAR C.3.3), all in [0, 100]."""

from __future__ import annotations

from collections import Counter, defaultdict
from statistics import mean

from .samples import SampleScore

CORE = ("SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ")
FAILURE_CATEGORIES = ("misdiagnosis", "dependency_omission", "illegal_grounding", "parameter_error",
                      "incomplete_restoration", "over_disassembly", "no_fault_intervention", "schema_failure")


def macro_assembly(samples: list[SampleScore], value) -> float | None:
    """Mean within each assembly, then across assemblies (samples with value None are left out).

    None when no sample is eligible (e.g. HRQ on a split without hard tasks): undefined, not zero.
    """
    per: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        v = value(s)
        if v is not None:
            per[s.assembly_id].append(float(v))
    return 100 * mean(mean(v) for v in per.values()) if per else None


def macro_assembly_type(samples: list[SampleScore], value) -> float | None:
    """Mean within each (assembly, fault type) stratum, then across types, then across assemblies."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        v = value(s)
        if v is not None:
            per[s.assembly_id][s.stratum].append(float(v))
    if not per:
        return None
    return 100 * mean(mean(mean(vals) for vals in types.values()) for types in per.values())


def core_metrics(samples: list[SampleScore]) -> dict[str, float | None]:
    """The six core metrics, Overall-Core (mean of the defined ones), and the extra rates."""
    faults = [s for s in samples if s.is_fault]
    hard = [s for s in faults if s.hrq is not None]
    m = {
        "SSE": macro_assembly(faults, lambda s: s.sse),
        "SAPF": macro_assembly_type(faults, lambda s: s.p),
        "VMRE": macro_assembly_type(faults, lambda s: s.vmre),
        "DGTR": macro_assembly_type(faults, lambda s: s.g),
        "MVE": macro_assembly_type(faults, lambda s: s.mve),
        "HRQ": macro_assembly(hard, lambda s: s.hrq),
    }
    defined = [m[k] for k in CORE if m[k] is not None]
    m["Overall-Core"] = mean(defined) if defined else None
    m["SSE-any"] = macro_assembly(faults, lambda s: s.sse_any)
    m["MVE-any"] = macro_assembly_type(faults, lambda s: s.mve_any)
    nofault = [s for s in samples if not s.is_fault]
    m["NoFault-Compliance"] = 100 * mean(s.nofault_ok for s in nofault) if nofault else None
    m["MPA"] = 100 * mean(s.mpa for s in faults) if faults else None
    m["RCA"] = 100 * mean(s.rca for s in faults) if faults else None
    return m


def failure_breakdown(samples: list[SampleScore], examples: int = 3) -> dict:
    counts = Counter(s.category for s in samples if s.category)
    return {c: {"count": counts.get(c, 0),
                "examples": [{"sample_id": s.sample_id, "reason": s.reason} for s in samples if s.category == c][:examples]}
            for c in FAILURE_CATEGORIES}


def breakdown(samples: list[SampleScore], key) -> dict[str, dict[str, float]]:
    """Core metrics per group (assembly, fault type, difficulty)."""
    groups: dict[str, list[SampleScore]] = defaultdict(list)
    for s in samples:
        groups[key(s)].append(s)
    return {g: {**core_metrics(v), "samples": len(v)} for g, v in sorted(groups.items())}

"""Aggregation with the papers' macro-averaging (FORGE App. D; MAGAR C.3.3), all in [0, 100].

A metric with no eligible sample is None (printed "–"). Stratification: a sample's fault-type stratum is
its single fault's type; every sample with two or more faults forms the one stratum "multi_fault" (FORGE
does not say how multi-fault samples are stratified).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from statistics import mean

from ..verify import FAILURE_CATEGORIES
from .samples import SampleScore

CORE = ("SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ")


def macro_assembly(samples: list[SampleScore], value) -> float | None:
    """FORGE's Macro_assembly: mean within each assembly, then across assemblies (samples whose value is
    None are left out). None when no sample is eligible (e.g. HRQ on a split without hard tasks)."""
    per: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        v = value(s)
        if v is not None:
            per[s.assembly_id].append(float(v))
    return 100 * mean(mean(v) for v in per.values()) if per else None


def macro_assembly_type(samples: list[SampleScore], value) -> float | None:
    """FORGE's Macro_assembly,type: "each family is first averaged within a fault-type stratum and then
    macro-averaged across fault types and assemblies" (D.2)."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        v = value(s)
        if v is not None:
            per[s.assembly_id][s.stratum].append(float(v))
    if not per:
        return None
    return 100 * mean(mean(mean(vals) for vals in types.values()) for types in per.values())


def overall_core(m: dict[str, float | None]) -> float:
    """FORGE D.5 eq. 18: Overall-Core = (SSE + SAPF + VMRE + DGTR + MVE + HRQ) / 6, "computed from their
    unrounded values. A missing entry shown as "–" in the result tables denotes zero credit and contributes
    zero to this mean"."""
    return sum(m[k] or 0.0 for k in CORE) / len(CORE)


def core_metrics(samples: list[SampleScore]) -> dict[str, float | None]:
    """The six core metrics over the fault samples (FORGE D.3: "No-fault samples are not included"),
    Overall-Core, and the extra rates; unparseable outputs stay in every denominator."""
    faults = [s for s in samples if s.is_fault]
    hard = [s for s in faults if s.hrq is not None]
    m = {
        "SSE": macro_assembly(faults, lambda s: s.sse),            # eq. 11
        "SAPF": macro_assembly_type(faults, lambda s: s.p),        # eq. 12
        "VMRE": macro_assembly_type(faults, lambda s: s.vmre),     # eq. 14
        "DGTR": macro_assembly_type(faults, lambda s: s.g),        # eq. 13
        "MVE": macro_assembly_type(faults, lambda s: s.mve),       # eq. 15
        "HRQ": macro_assembly(hard, lambda s: s.hrq),              # eq. 17, "macro-averaged across assemblies"
    }
    m["Overall-Core"] = overall_core(m)
    m["SSE-any"] = macro_assembly(faults, lambda s: s.sse_any)
    m["MVE-any"] = macro_assembly_type(faults, lambda s: s.mve_any)
    nofault = [s for s in samples if not s.is_fault]
    m["NoFault-Compliance"] = 100 * mean(bool(s.nofault_ok) for s in nofault) if nofault else None
    m.update(magar_metrics(faults))
    return m


def magar_metrics(faults: list[SampleScore]) -> dict[str, float | None]:
    """MAGAR C.3.3 eq. 12: MPA and RCA are plain means over the N_MR rework (fault) samples; "Invalid or
    unparseable predictions receive zero credit [...] and remain in the corresponding denominator" (C.3)."""
    if not faults:
        return {"MPA": None, "RCA": None}
    return {"MPA": 100 * mean(s.mpa for s in faults), "RCA": 100 * mean(s.rca for s in faults)}


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

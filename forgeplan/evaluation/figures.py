"""The report's figures as formulas over samples.jsonl's rows, computed for many weightings at once.

Each metric is a mean of its non-null row values, taken in steps (`AGGREGATION`): first within the
groups of its innermost grouping, then the group means are averaged (unweighted) within the next
coarser grouping, and so on up to one figure. SSE is the mean over assemblies of each assembly's mean;
DGTR the mean over assemblies of the mean over their fault-type strata of each stratum's mean; MPA a
plain mean. A composite (Overall-Core, MAGAR's family scores and Overall) is the paper's formula over
the figures (`COMPOSITES`). `metrics.py` and `decisions.py` compute the same figures from the scores
themselves; a test holds both equal.

The rows enter as a `Columns`; weights (R, n) repeat or drop rows (a bootstrap resample), values (R, n)
exchange them (a permutation), so one call computes R figures (`resampling.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .decisions import AD_METRICS, MR_METRICS
from .metrics import CORE

AGGREGATION: dict[str, tuple[str, ...]] = {
    "SSE": ("assembly_id",), "SAPF": ("assembly_id", "stratum"), "VMRE": ("assembly_id", "stratum"),
    "DGTR": ("assembly_id", "stratum"), "MVE": ("assembly_id", "stratum"), "HRQ": ("assembly_id",),
    "SSE-any": ("assembly_id",), "MVE-any": ("assembly_id", "stratum"), "NoFault-Compliance": (),
    "MPA": (), "RCA": (),
    "OPG": (), "OBA": ("stratum",), "SGF": (), "IBC": (),
    "OPG-any": (), "OBA-any": ("stratum",), "SGF-any": (), "IBC-any": (), "valid_decisions": (),
}


def _zero_mean(arrays: list[np.ndarray]) -> np.ndarray:
    """The mean of the figures, "–" (NaN) counting as 0; NaN where every one is NaN."""
    stacked = np.stack(arrays)
    return np.where(np.isnan(stacked).all(axis=0), np.nan, np.nan_to_num(stacked).sum(axis=0) / len(arrays))


def _overall_core(f: dict[str, np.ndarray]) -> np.ndarray:
    """FORGE eq. 18 (`metrics.overall_core`): the six core figures' mean, "–" counting 0."""
    return np.nan_to_num(np.stack([f[k] for k in CORE])).sum(axis=0) / len(CORE)


def _family(names: tuple[str, ...]):
    """A MAGAR family score (`decisions.family_score`)."""
    return lambda f: _zero_mean([f[k] for k in names])


def _overall(f: dict[str, np.ndarray]) -> np.ndarray:
    """MAGAR eq. 13 over the families present (`decisions.overall`)."""
    families = np.stack([_zero_mean([f[k] for k in AD_METRICS]), _zero_mean([f[k] for k in MR_METRICS])])
    present = ~np.isnan(families)
    total = np.nan_to_num(families).sum(axis=0)
    return np.divide(total, present.sum(axis=0), out=np.full(total.shape, np.nan), where=present.any(axis=0))


# composite -> (the metrics it reads, the paper's formula over their (R,) figures, NaN for "–")
COMPOSITES = {
    "Overall-Core": (CORE, _overall_core),
    "Assembly Decision": (AD_METRICS, _family(AD_METRICS)),
    "Minimal Rework": (MR_METRICS, _family(MR_METRICS)),
    "Overall": ((*AD_METRICS, *MR_METRICS), _overall),
}
PROFILE_COMPOSITES = {"forge": ("Overall-Core",), "magar": ("Assembly Decision", "Minimal Rework", "Overall")}


@dataclass(frozen=True)
class Columns:
    """The metric columns of some rows as arrays: values (n,) with NaN for null, and each grouping's codes."""

    sample_ids: tuple[str, ...]
    values: dict[str, np.ndarray]
    groups: dict[str, np.ndarray]      # "assembly_id", "stratum" -> (n,) integer codes

    @property
    def n(self) -> int:
        return len(self.sample_ids)

    def subset(self, keep: np.ndarray) -> "Columns":
        ids = tuple(s for s, k in zip(self.sample_ids, keep) if k)
        return Columns(ids, {m: v[keep] for m, v in self.values.items()}, {g: c[keep] for g, c in self.groups.items()})


def columns_of(rows: list[dict], metrics: list[str]) -> Columns:
    """The columns of `metrics` (those of AGGREGATION) in the rows, ordered by assembly and stratum (stable),
    so that most groupings are runs of consecutive rows."""
    rows = sorted(rows, key=lambda r: (str(r["assembly_id"]), str(r["stratum"])))
    values = {m: np.array([np.nan if r[m] is None else float(r[m]) for r in rows], dtype=float) for m in metrics}
    groups = {g: np.unique([str(r[g]) for r in rows], return_inverse=True)[1].reshape(-1).astype(np.int64)
              for g in ("assembly_id", "stratum")}
    return Columns(tuple(r["sample_id"] for r in rows), values, groups)


def profile_of(metrics) -> str:
    """"magar" when the rows carry MAGAR's decision metrics, else "forge"."""
    return "magar" if set(AD_METRICS) <= set(metrics) else "forge"


def composites_of(metrics) -> tuple[str, ...]:
    """The composites the rows' metrics determine."""
    return tuple(c for c in PROFILE_COMPOSITES[profile_of(metrics)] if set(COMPOSITES[c][0]) <= set(metrics))


def steps_of(cols: Columns, levels: tuple[str, ...]) -> list[np.ndarray]:
    """The groupings a metric is averaged in, innermost first: rows -> cells of all levels, cells ->
    their parents one level up, ..., last all into one group. Codes run 0..G-1, each present."""
    steps, codes = [], np.zeros(cols.n, dtype=np.int64)
    keys = [codes] + [cols.groups[g] for g in levels]
    previous = None
    for depth in range(len(keys), 0, -1):
        stacked = np.stack(keys[:depth], axis=1) if cols.n else np.zeros((0, depth), dtype=np.int64)
        cells, inverse = np.unique(stacked, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        if previous is None:
            steps.append(inverse)
        else:   # each cell of the finer grouping -> its cell in this one
            parent = np.zeros(previous[0], dtype=np.int64)
            parent[previous[1]] = inverse
            steps.append(parent)
        previous = (len(cells), inverse)
    return steps


def _group_sums(x: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(R, m) -> (R, G): the sums over the columns of each group."""
    if not groups.any():
        return x.sum(axis=1, keepdims=True)
    if (np.diff(groups) >= 0).all():   # runs of consecutive columns: no reordering
        return np.add.reduceat(x, np.flatnonzero(np.r_[True, np.diff(groups) != 0]), axis=1)
    order = np.argsort(groups, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(groups[order]) != 0])
    return np.add.reduceat(x[:, order], starts, axis=1)


def aggregate(values: np.ndarray, weights: np.ndarray, steps: list[np.ndarray]) -> np.ndarray:
    """(R,) figures (x100 like the values; NaN where no row is eligible) from values and weights of
    shape (R, n) or (1, n): a weighted mean within the first grouping, unweighted means of the defined
    means above it."""
    defined = ~np.isnan(values)
    w = np.where(defined, weights, 0.0)
    x = np.where(defined, values, 0.0) * w
    if x.shape[1] == 0:
        return np.full(max(values.shape[0], weights.shape[0]), np.nan)
    for groups in steps:
        s, c = _group_sums(x, groups), _group_sums(w, groups)
        eligible = c > 0
        x = np.divide(s, c, out=np.zeros_like(s), where=eligible)
        w = eligible.astype(float)
    return np.where(w[:, 0] > 0, x[:, 0], np.nan)


def figure_arrays(cols: Columns, weights: np.ndarray | None = None,
                  values: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Every metric's and composite's (R,) figures under `weights` (default: every row once) and
    `values` (default: the columns' own)."""
    w = np.ones((1, cols.n)) if weights is None else weights
    out = {}
    for m, v in cols.values.items():
        vals = (values or {}).get(m, v)
        out[m] = aggregate(vals if vals.ndim == 2 else vals[None, :], w, steps_of(cols, AGGREGATION[m]))
    resamples = max(len(a) for a in out.values()) if out else 1
    for c in composites_of(cols.values):
        names, formula = COMPOSITES[c]
        out[c] = formula({k: np.broadcast_to(out[k], (resamples,)) for k in names})
    return out


def eligible(cols: Columns) -> dict[str, int]:
    """n per metric: the rows with a value; a composite's: the rows with a value in any of its metrics."""
    n = {m: int((~np.isnan(v)).sum()) for m, v in cols.values.items()}
    for c in composites_of(cols.values):
        n[c] = int(np.any([~np.isnan(cols.values[k]) for k in COMPOSITES[c][0]], axis=0).sum()) if cols.n else 0
    return n


def figures(rows: list[dict], metrics: list[str]) -> dict[str, float | None]:
    """The report's figures of the rows (None for "–")."""
    cols = columns_of(rows, metrics)
    return {k: _nan_none(v[0]) for k, v in figure_arrays(cols).items()}


def _nan_none(x) -> float | None:
    return None if np.isnan(x) else float(x)

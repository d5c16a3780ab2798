"""Uncertainty of the figures: percentile bootstrap intervals over samples, and a paired test between runs.

Interval: RESAMPLES resamples of the rows with replacement (seed SEED, the same resamples for every
metric and every run, so a composite is computed from its metrics' figures in each resample and two runs
are resampled in pairs); the 2.5th and 97.5th percentiles of a figure over the resamples in which it is
defined. Paired comparison of two runs on the same samples: the difference of their figures with a
paired bootstrap interval, and the two-sided p-value of a sign-flip permutation test: under the null
hypothesis that the two runs are exchangeable on every sample, each sample's two rows are swapped with
probability ½, PERMUTATIONS times (seed SEED), and p = (1 + #{|d*| >= |d|}) / (1 + PERMUTATIONS). A
run compared with itself has d = 0 and p = 1. docs/metrics.md states the same.

With every row counted once, a figure is a weighted sum of its rows' values (`coefficients`), so a
permuted difference is one product of the sign matrix with the weighted differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .figures import AGGREGATION, COMPOSITES, Columns, composites_of, eligible, figure_arrays, steps_of

RESAMPLES = 2000
PERMUTATIONS = 5000
SEED = 0
LEVEL = 0.95
METHOD = {"interval": "percentile bootstrap over samples", "resamples": RESAMPLES, "level": LEVEL, "seed": SEED,
          "paired_interval": "paired bootstrap of the difference (the same resamples for both runs)",
          "paired_test": "two-sided sign-flip permutation test on the shared samples", "permutations": PERMUTATIONS}
TOLERANCE = 1e-9   # figures this close count as equal in the permutation test (sums in another order)


def resample_weights(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(resamples, n): how many times each row is drawn in each bootstrap resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, max(n, 1), size=(resamples, n))
    flat = (draws + np.arange(resamples)[:, None] * n).reshape(-1)
    return np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(float)


@dataclass(frozen=True)
class Draws:
    """A run's figures on some rows: the point figure, the bootstrap figures and n, per figure."""

    cols: Columns
    point: dict[str, float]
    boot: dict[str, np.ndarray]
    n: dict[str, int]


def draws(cols: Columns) -> Draws:
    point = {k: float(v[0]) for k, v in figure_arrays(cols).items()}
    return Draws(cols, point, figure_arrays(cols, weights=resample_weights(cols.n)), eligible(cols))


def _interval(values: np.ndarray) -> tuple[float | None, float | None]:
    defined = values[~np.isnan(values)]
    if not defined.size:
        return None, None
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(defined, [tail, 100 - tail])
    return float(low), float(high)


def _number(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def intervals(d: Draws) -> dict[str, dict]:
    """Per metric and composite: n, the figure and its 95 % bootstrap interval."""
    return {k: {"n": d.n[k], "value": _number(d.point[k]), **dict(zip(("low", "high"), _interval(d.boot[k])))}
            for k in d.point}


def paired(a: Draws, b: Draws) -> dict[str, dict]:
    """Per metric and composite of two runs over the same samples (in the same order): n, the difference
    a - b, its paired bootstrap interval and the sign-flip permutation p-value."""
    if a.cols.sample_ids != b.cols.sample_ids:
        raise ValueError("paired runs must hold the same samples in the same order")
    permuted = permuted_differences(a.cols, b.cols)
    out = {}
    for k in a.point:
        d = a.point[k] - b.point[k]
        low, high = _interval(a.boot[k] - b.boot[k])
        out[k] = {"n": a.n[k], "difference": _number(d), "low": low, "high": high,
                  "p": None if np.isnan(d) else _p_value(d, permuted[k])}
    return out


def _p_value(observed: float, permuted: np.ndarray) -> float:
    permuted = permuted[~np.isnan(permuted)]
    extreme = int((np.abs(permuted) >= abs(observed) - TOLERANCE).sum())
    return (1 + extreme) / (1 + len(permuted))


def coefficients(cols: Columns, metric: str) -> np.ndarray:
    """(n,) weights with figure = sum(weights * values) when every row counts once: at each step of the
    metric's averaging, 1 / (the eligible members of the row's group)."""
    c = (~np.isnan(cols.values[metric])).astype(float)
    unit, members = np.arange(cols.n), c.copy()
    for groups in steps_of(cols, AGGREGATION[metric]):
        counts = np.bincount(groups, weights=members, minlength=int(groups.max()) + 1 if groups.size else 0)
        unit = groups[unit]
        c = np.divide(c, counts[unit], out=np.zeros_like(c), where=counts[unit] > 0)
        members = (counts > 0).astype(float)
    return c


def permuted_differences(a: Columns, b: Columns) -> dict[str, np.ndarray]:
    """(PERMUTATIONS,) differences a - b per metric and composite, each sample's two rows swapped at random."""
    flips = np.random.default_rng(SEED).random((PERMUTATIONS, a.n)) < 0.5
    out, linear = {}, {}
    for m, va in a.values.items():
        vb = b.values[m]
        if not (np.isnan(va) == np.isnan(vb)).all():   # the metric applies to other samples in each run
            out[m] = _swapped(a, b, m, flips)
        elif np.isnan(va).all():
            out[m] = np.full(PERMUTATIONS, np.nan)
        else:
            linear[m] = np.nan_to_num(va - vb) * coefficients(a, m)
    if linear:   # a swapped sample's weighted difference changes sign
        permuted = (1.0 - 2.0 * flips) @ np.stack(list(linear.values()), axis=1)
        out |= {m: permuted[:, k] for k, m in enumerate(linear)}
    for c in composites_of(a.values):
        names, formula = COMPOSITES[c]
        out[c] = formula({k: out[k] for k in names})
    return out


def _swapped(a: Columns, b: Columns, metric: str, flips: np.ndarray) -> np.ndarray:
    """The permuted differences of one metric by recomputing both runs' figures on swapped rows."""
    va, vb = a.values[metric], b.values[metric]
    one = Columns(a.sample_ids, {metric: va}, a.groups)
    fa = figure_arrays(one, values={metric: np.where(flips, vb, va)})[metric]
    fb = figure_arrays(one, values={metric: np.where(flips, va, vb)})[metric]
    return fa - fb


def summary_intervals(cols: Columns) -> dict:
    """metrics.json's "intervals": the method and, per figure, n and its 95 % interval."""
    return {"method": {k: METHOD[k] for k in ("interval", "resamples", "level", "seed")},
            "figures": {k: {"n": v["n"], "low": v["low"], "high": v["high"]} for k, v in intervals(draws(cols)).items()}}

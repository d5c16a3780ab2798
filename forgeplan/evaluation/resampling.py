"""Uncertainty of the figures: percentile bootstrap intervals over samples, and a paired test between runs.

Interval: RESAMPLES resamples of the rows with replacement (seed SEED, the same resamples for every
metric, so a composite is computed from its metrics' figures in each resample); the 2.5th and 97.5th
percentiles of a figure over the resamples in which it is defined. Paired comparison of two runs on the
same samples: the difference of their figures with a paired bootstrap interval (the same resamples for
both runs), and the two-sided p-value of a sign-flip permutation test: under the null hypothesis that
the two runs are exchangeable on every sample, each sample's two rows are swapped with probability ½,
PERMUTATIONS times (seed SEED), and p = (1 + #{|d*| >= |d|}) / (1 + PERMUTATIONS). A run compared with
itself has d = 0 and p = 1. docs/metrics.md states the same.
"""

from __future__ import annotations

import numpy as np

from .figures import Columns, eligible, figure_arrays

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


def _interval(draws: np.ndarray) -> tuple[float | None, float | None]:
    defined = draws[~np.isnan(draws)]
    if not defined.size:
        return None, None
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(defined, [tail, 100 - tail])
    return float(low), float(high)


def _value(a: np.ndarray) -> float | None:
    return None if np.isnan(a[0]) else float(a[0])


def intervals(cols: Columns) -> dict[str, dict]:
    """Per metric and composite: n, the figure and its 95 % bootstrap interval."""
    point = figure_arrays(cols)
    draws = figure_arrays(cols, weights=resample_weights(cols.n))
    n = eligible(cols)
    return {k: {"n": n[k], "value": _value(point[k]), **dict(zip(("low", "high"), _interval(draws[k])))}
            for k in point}


def paired(a: Columns, b: Columns) -> dict[str, dict]:
    """Per metric and composite of two runs' columns over the same samples (in the same order): n, the
    difference a - b, its paired bootstrap interval and the sign-flip permutation p-value."""
    if a.sample_ids != b.sample_ids:
        raise ValueError("paired columns must hold the same samples in the same order")
    point_a, point_b = figure_arrays(a), figure_arrays(b)
    weights = resample_weights(a.n)
    boot_a, boot_b = figure_arrays(a, weights=weights), figure_arrays(b, weights=weights)
    flips = np.random.default_rng(SEED).random((PERMUTATIONS, a.n)) < 0.5
    swapped_a = {m: np.where(flips, b.values[m], a.values[m]) for m in a.values}
    swapped_b = {m: np.where(flips, a.values[m], b.values[m]) for m in a.values}
    perm_a, perm_b = figure_arrays(a, values=swapped_a), figure_arrays(b, values=swapped_b)
    n = eligible(a)
    out = {}
    for k in point_a:
        d = point_a[k][0] - point_b[k][0]
        low, high = _interval(boot_a[k] - boot_b[k])
        out[k] = {"n": n[k], "difference": None if np.isnan(d) else float(d), "low": low, "high": high,
                  "p": None if np.isnan(d) else _p_value(d, perm_a[k] - perm_b[k])}
    return out


def _p_value(observed: float, permuted: np.ndarray) -> float:
    permuted = permuted[~np.isnan(permuted)]
    extreme = int((np.abs(permuted) >= abs(observed) - TOLERANCE).sum())
    return (1 + extreme) / (1 + len(permuted))


def summary_intervals(cols: Columns) -> dict:
    """metrics.json's "intervals": the method and, per figure, n and its 95 % interval."""
    return {"method": {k: METHOD[k] for k in ("interval", "resamples", "level", "seed")},
            "figures": {k: {"n": v["n"], "low": v["low"], "high": v["high"]} for k, v in intervals(cols).items()}}

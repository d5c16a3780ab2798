"""Compare evaluation runs (their samples.jsonl) on the samples they share: per metric, each run's n, figure
and bootstrap interval, and a paired test between every two runs; the same per stratum.

A sample is shared when every run scored it as the same sample: the same id with the same family,
assembly, stratum, fault types and difficulty (runs over different benchmarks may reuse an id for another
task). Only shared samples are compared, and the result says how many of each run's were left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model.errors import InputError
from .figures import Columns, columns_of, composites_of
from .resampling import METHOD, draws, intervals, paired
from .rows import METRIC_COLUMNS
from .run_dir import read_run

IDENTITY = ("family", "assembly_id", "stratum", "fault_types", "difficulty")
STRATA = {"fault type": "stratum", "difficulty": "difficulty", "assembly": "assembly_id"}


@dataclass(frozen=True)
class Run:
    name: str
    folder: Path
    info: dict
    rows: list[dict]

    @property
    def metrics(self) -> list[str]:
        return [m for m in METRIC_COLUMNS if m in self.rows[0]]


def load_runs(folders: list[Path], names: list[str] | None = None) -> list[Run]:
    """The runs, named by `names` or by their folders (their paths where two folders share a name)."""
    if names is not None and len(names) != len(folders):
        raise InputError(f"got {len(names)} names for {len(folders)} runs", field="--names")
    if names is None:
        names = [Path(f).name or str(f) for f in folders]
        if len(set(names)) < len(names):
            names = [str(f) for f in folders]
    if len(set(names)) < len(names):
        raise InputError(f"two runs have the same name ({names}); give --names", field="--names")
    return [Run(name, Path(f), *read_run(Path(f))) for name, f in zip(names, folders)]


def shared(runs: list[Run]) -> tuple[list[str], list[str], list[str]]:
    """(shared sample ids in the first run's order, the metrics every run has, notes saying what was left out)."""
    keys = [{r["sample_id"]: tuple(str(r[k]) for k in IDENTITY) for r in run.rows} for run in runs]
    ids = [sid for sid in keys[0] if all(k.get(sid) == keys[0][sid] for k in keys[1:])]
    metrics = [m for m in runs[0].metrics if all(m in run.metrics for run in runs[1:])]
    if not ids:
        raise InputError("the runs share no sample (the same sample id, family, assembly, stratum, fault types and "
                         "difficulty); compare runs over the same benchmark", field="RUN_DIR")
    if not metrics:
        raise InputError("the runs share no metric (a FORGE-profile and a MAGAR-profile run?)", field="RUN_DIR")
    notes = []
    benches = {run.info.get("bench") for run in runs} - {None}
    if len(benches) > 1:
        notes.append(f"The runs were scored on {len(benches)} different benchmark folders; compared on the samples "
                     "that are the same task in every run.")
    splits = {run.info.get("split") for run in runs} - {None}
    if len(splits) > 1:
        notes.append(f"The runs were scored on different splits ({', '.join(sorted(map(str, splits)))}).")
    for run in runs:
        left = len(run.rows) - len(ids)
        if left:
            notes.append(f"{run.name}: {left} of its {len(run.rows)} samples are not shared and are left out; its "
                         "figures here are over the shared samples, not its report's.")
    dropped = [m for run in runs for m in run.metrics if m not in metrics]
    if dropped:
        notes.append(f"Metrics not in every run are left out: {', '.join(sorted(set(dropped)))}.")
    return ids, metrics, notes


def _columns(run: Run, ids: list[str], metrics: list[str]) -> Columns:
    by_id = {r["sample_id"]: r for r in run.rows}
    return columns_of([by_id[sid] for sid in ids], metrics)


def _tables(cols: dict[str, Columns], names: list[str]) -> dict:
    """{figure: {"runs": [{name, n, value, low, high}], "pairs": [{a, b, n, difference, low, high, p}]}}."""
    drawn = {name: draws(cols[name]) for name in names}
    per_run = {name: intervals(d) for name, d in drawn.items()}
    pairs = {(a, b): paired(drawn[a], drawn[b]) for i, a in enumerate(names) for b in names[i + 1:]}
    out = {}
    for k in per_run[names[0]]:
        out[k] = {"runs": [{"name": name} | per_run[name][k] for name in names],
                  "pairs": [{"a": a, "b": b} | result[k] for (a, b), result in pairs.items()]}
    return out


def compare_runs(runs: list[Run]) -> dict:
    """compare.json's content: the runs, the shared samples, the method, the tables overall and per stratum."""
    ids, metrics, notes = shared(runs)
    names = [run.name for run in runs]
    cols = {run.name: _columns(run, ids, metrics) for run in runs}
    first = {r["sample_id"]: r for r in runs[0].rows}
    strata: dict[str, dict] = {}
    for label, key in STRATA.items():
        values = np.array([str(first[sid][key]) for sid in ids])
        strata[label] = {v: _tables({n: c.subset(values == v) for n, c in cols.items()}, names)
                         for v in sorted(set(values.tolist()))}
    return {"runs": [{"name": run.name, "folder": str(run.folder), "bench": run.info.get("bench"),
                      "predictions": run.info.get("predictions"), "split": run.info.get("split"),
                      "samples": len(run.rows)} for run in runs],
            "shared_samples": len(ids), "notes": notes, "method": METHOD,
            "figures": [*metrics, *composites_of(metrics)],
            "overall": _tables(cols, names), "strata": strata}

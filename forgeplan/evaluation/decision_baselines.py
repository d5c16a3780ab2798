"""Baselines of a MAGAR-profile benchmark: Assembly Decision answers, Minimal Rework delegated to the FORGE ones.

no-op: Inspect with no parts (right only where nothing is left to do); local-heuristic: the direct repair
of the first diagnosed mistake (for an Assembly Decision; for Minimal Rework the `local-repair` plan),
ignoring blockers, locks and the assembly sequence; oracle: the reference itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..bench.folder import Bench, open_bench
from ..semantics.diagnosis import diagnose, repair_action
from ..semantics.intents import INSPECT, decision_of
from ..semantics.task import Task
from .baselines import BASELINES

MAGAR_BASELINES = ("oracle", "local-heuristic", "no-op")
REWORK_BASELINE = {"oracle": "oracle", "local-heuristic": "local-repair", "no-op": "no-op"}


def local_decision(task: Task) -> dict:
    w = task.world
    mistakes = diagnose(w, task.actual, task.target)
    if not mistakes:
        return INSPECT.to_json()
    m = mistakes[0]
    i = w.index[m["part_id"]]
    action = repair_action(w, task.actual, i, m["type"])
    return decision_of(action).to_json() if action is not None else INSPECT.to_json()


def decision_answer(name: str, bench: Path | Bench, sid: str) -> str:
    bench = open_bench(bench)
    if name == "oracle":
        return json.dumps(bench.decision(sid)["reference"])
    if name == "no-op":
        return json.dumps(INSPECT.to_json())
    return json.dumps(local_decision(bench.task(sid)))


def magar_answer(name: str, bench: Path | Bench, sid: str) -> str:
    """The raw output of baseline `name` for one sample of either family."""
    bench = open_bench(bench)
    if bench.is_decision(sid):
        return decision_answer(name, bench, sid)
    sample = bench.rework(sid)
    return BASELINES[REWORK_BASELINE[name]](sample.task, sample.reference)

"""Baselines that frame the metrics: oracle, local-repair, greedy-legal and no-op."""

from __future__ import annotations

import json

from ..io.contract import output_json
from ..model.actions import Insert
from ..semantics.diagnosis import diagnose, repair_action
from ..semantics.legal import legal_actions
from ..semantics.task import Task


def oracle(task: Task, reference: dict) -> str:
    """The planner's proven-minimal reference, verbatim."""
    return json.dumps({k: reference[k] for k in ("annotation", "rework_plan")})


def no_op(task: Task, reference: dict) -> str:
    return json.dumps(output_json(task.sample_id, task.assembly.assembly_id, [], []))


def local_repair(task: Task, reference: dict) -> str:
    """Correct diagnosis, then only each faulty part's direct repair: ignores blockers and locks."""
    w = task.world
    mistakes = diagnose(w, task.actual, task.target)
    plan = []
    for m in mistakes:
        a = repair_action(w, task.actual, w.index[m["part_id"]], m["type"])
        plan.append(a if a is not None else Insert(m["part_id"]))
    return json.dumps(output_json(task.sample_id, task.assembly.assembly_id, mistakes, plan))


def greedy_legal(task: Task, reference: dict, max_steps: int = 200) -> str:
    """Correct diagnosis; repeatedly take the first legal action that reduces the distance to the target."""
    w = task.world
    state, plan = task.actual, []
    dist = len(w.differences(state, task.target))
    for _ in range(max_steps):
        if dist == 0:
            break
        for a in legal_actions(w, state):
            nxt = w.apply(state, a)
            d = len(w.differences(nxt, task.target))
            if d < dist:
                state, dist = nxt, d
                plan.append(a)
                break
        else:
            break
    return json.dumps(output_json(task.sample_id, task.assembly.assembly_id, diagnose(w, task.actual, task.target), plan))


BASELINES = {"oracle": oracle, "local-repair": local_repair, "greedy-legal": greedy_legal, "no-op": no_op}

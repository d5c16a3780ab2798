"""Baselines that frame the metrics: oracle, local-repair, greedy-legal, no-op, and a lookup.

local-repair and greedy-legal are handed the true diagnosis. The lookup (`diagnosis_lookup`) is what a
model prompted with the deviations alone can learn by heart: it reads which parts deviate and in which
fields (exactly what the compact prompt lists) and copies the answer of a training task with the same
assembly and deviations.
"""

from __future__ import annotations

import json

from collections import Counter

from ..io.contract import output_json
from ..io.task_files import public_files
from ..model.actions import Insert
from ..semantics.assembly_grounding import AssemblyGrounding
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
    offers = AssemblyGrounding(w)
    state, plan = task.actual, []
    dist = len(w.differences(state, task.target))
    for _ in range(max_steps):
        if dist == 0:
            break
        for a in legal_actions(offers, state):
            nxt = w.apply(state, a)
            d = len(w.differences(nxt, task.target))
            if d < dist:
                state, dist = nxt, d
                plan.append(a)
                break
        else:
            break
    return json.dumps(output_json(task.sample_id, task.assembly.assembly_id, diagnose(w, task.actual, task.target), plan))


def deviations(task: Task) -> tuple:
    """(assembly id, the sorted (part id, deviating fields) of every slot whose actual state differs from the
    target): the diagnosis as far as the compact prompt shows it."""
    files = public_files(task)
    target = files["target_state.json"]["slots"]
    out = []
    for pid, slot in files["actual_state.json"]["slots"].items():
        fields = tuple(sorted(k for k, v in slot.items() if target.get(pid, {}).get(k) != v))
        if fields:
            out.append((pid, fields))
    return task.assembly.assembly_id, tuple(sorted(out))


def diagnosis_lookup(training: list[tuple[Task, dict]]):
    """A baseline over training (task, reference) pairs: the most frequent training answer with the same
    `deviations`, else with the same assembly and deviating parts, else no-op; ties go to the earliest."""
    exact: dict[tuple, Counter] = {}
    parts: dict[tuple, Counter] = {}
    for task, ref in training:
        answer = json.dumps({"mistakes": ref["annotation"]["mistakes"], "rework_plan": ref["rework_plan"]})
        key = deviations(task)
        exact.setdefault(key, Counter())[answer] += 1
        parts.setdefault((key[0], tuple(p for p, _ in key[1])), Counter())[answer] += 1

    def lookup(task: Task, reference: dict) -> str:
        key = deviations(task)
        found = exact.get(key) or parts.get((key[0], tuple(p for p, _ in key[1])))
        if not found:
            return no_op(task, reference)
        answer = json.loads(found.most_common(1)[0][0])
        mistakes = answer["mistakes"]
        annotation = {"sample_id": task.sample_id, "assembly_id": task.assembly.assembly_id, "pass": not mistakes,
                      "mistakes": mistakes}
        return json.dumps({"annotation": annotation, "rework_plan": answer["rework_plan"]})

    return lookup


BASELINES = {"oracle": oracle, "local-repair": local_repair, "greedy-legal": greedy_legal, "no-op": no_op}

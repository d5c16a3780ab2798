"""Verifier-gated intervention on a model's answers (MAGAR §3.2-3.3, with a certain gate instead of a learned one).

A candidate keeps the anchor answer and replaces a non-empty subset of its fields (MAGAR's residual
variants):

- rework answers: `plan-from-diagnosis` keeps the diagnosis and replaces the plan with the proven-minimal
  plan for that diagnosis (the state with the actual values on the slots the diagnosis names and the
  target values elsewhere: the plan the model would have needed for what it diagnosed); `minimal-edit`
  keeps the diagnosis and replaces the plan with the valid plan closest to it in edit distance
  (`closest_valid_plan`), which is the anchor's own plan when that one is valid.
- decision answers (either mode): the valid decision that agrees with the anchor on the most fields, at
  least one (a residual keeps some of the anchor).

The gate: a candidate replaces the anchor only when none of the sample's metric values falls and at
least one rises. The values are computed against the sample's reference, which the planner derives
from the public task alone (the canonical proven optimum), so the gate is exact: by construction no
intervention lowers a score, and none turns a correct answer into a wrong one.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..bench.store import load_sample_task
from ..io.contract import ContractError, parse_output
from ..model.errors import ForgeplanError
from ..model.state import State
from ..semantics.task import Task
from .decisions import DecisionScore, as_parsed, parse_decision
from .magar_eval import read_decision, score_one, task_family
from .samples import SampleScore

MODES = ("plan-from-diagnosis", "minimal-edit")
PLAN_SECONDS = 120.0   # a diagnosis whose plan is not proved minimal within this gets no candidate


def metric_vector(s: DecisionScore | SampleScore) -> tuple[float, ...]:
    """Every per-sample value a metric aggregates (None, "not applicable", as 0 on both sides)."""
    if isinstance(s, DecisionScore):
        return tuple(float(x) for x in (s.valid, s.op, s.op_parts, s.subgoal, s.joint, s.op_any, s.op_parts_any,
                                         s.subgoal_any, s.joint_any))
    return tuple(float(x or 0) for x in (s.g, s.v, s.sse, s.sse_any, s.p, s.vmre, s.mve, s.mve_any, s.hrq,
                                         s.nofault_ok, s.mpa, s.rca))


def correct(s: DecisionScore | SampleScore) -> bool:
    """Strict case-level correctness: a valid decision; a verified, optimal repair with the exact diagnosis."""
    return s.joint_any if isinstance(s, DecisionScore) else (s.nofault_ok if not s.is_fault else s.mve_any)


def failure_kind(s: DecisionScore | SampleScore) -> str | None:
    """None for a correct answer; else contract / diagnosis / planning (rework) or decision."""
    if correct(s):
        return None
    if isinstance(s, DecisionScore):
        return "decision"
    if s.category == "schema_failure":
        return "contract"
    return "diagnosis" if s.category == "misdiagnosis" else "planning"


def diagnosed_task(task: Task, part_ids) -> Task | None:
    """The state a diagnosis describes: actual values on the slots it names, target values elsewhere."""
    w = task.world
    named = set(part_ids)
    if not named <= set(w.ids):
        return None
    slots = [task.actual.slots[i] if pid in named else task.target.slots[i] for i, pid in enumerate(w.ids)]
    return Task(task.sample_id, task.assembly, task.tolerances, task.initial, State(slots), task.target)


def plan_candidate(task: Task, raw: str, mode: str) -> str | None:
    """The rework residual: the anchor with its plan replaced, or None (unparseable, or nothing to do)."""
    from ..planners.asp.min_edit import closest_valid_plan
    from ..planners.registry import solve as solve_task

    try:
        out = parse_output(raw)
    except ContractError:
        return None
    if task.world.restoration(task.actual, out.actions, task.target).restored and mode == "minimal-edit":
        return None
    if mode == "plan-from-diagnosis":
        diagnosed = diagnosed_task(task, [m.part_id for m in out.mistakes])
        if diagnosed is None:
            return None
        result = solve_task(diagnosed, time_limit=PLAN_SECONDS)
        if not result.optimal:
            return None
        plan = result.plan
    else:
        plan = closest_valid_plan(task, out.actions).plan
    if tuple(plan) == tuple(out.actions):
        return None
    obj = json.loads(raw)
    obj["rework_plan"]["actions"] = [a.to_json() for a in plan]
    return json.dumps(obj)


def decision_candidate(raw: str, valid: list[dict]) -> str | None:
    """The valid decision sharing the most fields with the anchor (ties: the first in canonical order); a
    residual keeps at least one anchor field, so an answer sharing none with any valid decision has none."""
    got, _ = parse_decision(raw)
    if got is None or not valid:
        return None

    def agreement(v: dict) -> int:
        p = as_parsed(v)
        return (p.operation == got.operation) + (p.parts == got.parts) + (p.subgoal == got.subgoal)

    best = max(valid, key=agreement)   # max keeps the first of equals
    return None if agreement(best) in (0, 3) else json.dumps(best)


@dataclass
class InterventionReport:
    mode: str
    samples: int = 0
    interventions: int = 0
    corrections: int = 0
    introduced_errors: int = 0
    unchanged_correctness: int = 0
    rejected_by_gate: int = 0
    no_candidate: int = 0
    failures_before: Counter = field(default_factory=Counter)
    failures_after: Counter = field(default_factory=Counter)

    def to_json(self) -> dict:
        return {"mode": self.mode, "samples": self.samples, "interventions": self.interventions,
                "corrections": self.corrections, "introduced_errors": self.introduced_errors,
                "unchanged_correctness": self.unchanged_correctness, "rejected_by_gate": self.rejected_by_gate,
                "no_candidate": self.no_candidate, "failures_before": dict(sorted(self.failures_before.items())),
                "failures_after": dict(sorted(self.failures_after.items()))}


def intervene_one(bench: Path, sid: str, raw: str, mode: str, report: InterventionReport) -> str:
    """The final answer of one sample: the candidate if the gate accepts it, else the anchor."""
    anchor = score_one(bench, sid, raw)
    report.samples += 1
    report.failures_before[failure_kind(anchor) or "correct"] += 1
    if task_family(bench, sid) == "assembly_decision":
        cand = decision_candidate(raw, read_decision(bench, sid)["valid"])
    else:
        try:
            cand = plan_candidate(load_sample_task(bench, sid), raw, mode)
        except ForgeplanError:
            cand = None
    final, after = raw, anchor
    if cand is None:
        report.no_candidate += 1
    else:
        scored = score_one(bench, sid, cand)
        a, c = metric_vector(anchor), metric_vector(scored)
        if all(y >= x for x, y in zip(a, c)) and any(y > x for x, y in zip(a, c)):
            final, after = cand, scored
            report.interventions += 1
            before_ok, after_ok = correct(anchor), correct(scored)
            report.corrections += (not before_ok) and after_ok
            report.introduced_errors += before_ok and not after_ok
            report.unchanged_correctness += before_ok == after_ok
        else:
            report.rejected_by_gate += 1
    report.failures_after[failure_kind(after) or "correct"] += 1
    return final

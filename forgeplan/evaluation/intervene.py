"""Verifier-gated intervention on a model's answers (MAGAR §3.2-3.3), under two gates.

A candidate keeps the anchor answer and replaces a non-empty subset of its fields (MAGAR's residual
variants):

- rework answers: `plan-from-diagnosis` keeps the diagnosis and replaces the plan with the proven-minimal
  plan for that diagnosis (the state with the actual values on the slots the diagnosis names and the
  target values elsewhere: the plan the model would have needed for what it diagnosed); `minimal-edit`
  keeps the diagnosis and replaces the plan with the valid plan closest to it in edit distance
  (`closest_valid_plan`), which is the anchor's own plan when that one is valid. Both search under the
  cost rule the scores are computed with (`reference_cost`, as `evaluate --reference-cost`) and within a
  time budget; a search that does not finish within it is "undecided" and the anchor stands.
- decision answers (either mode): the valid decision that agrees with the anchor on the most fields, at
  least one (a residual keeps some of the anchor).

The gates decide whether the candidate replaces the anchor:

- **oracle**: none of the sample's metric values falls and at least one rises, computed against the
  sample's stored reference. By construction it lowers no score and introduces no error, but it reads
  the reference: an upper bound on what a gate can do, not comparable with MAGAR's learned gate.
- **deployed**: only what a deployed system has. A rework candidate is taken when the verifier rejects
  the model's own plan (its replay from the observed state is illegal or misses the target) and accepts
  the candidate's, or accepts both and the candidate costs less under the cost rule. A decision
  candidate is taken when the verifier rejects the model's own decision (not the first step of an
  optimal plan from the observed state). It can introduce errors, and the counts say how many.

Both gates are counted on every sample; `InterventionReport.gate` says whose answers are written.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..bench.folder import Bench, open_bench
from ..io.contract import ContractError, parse_output
from ..model.actions import moved_parts
from ..model.errors import ForgeplanError
from ..model.state import State
from ..semantics.task import Task
from .decisions import DecisionScore, as_parsed, parse_decision, score_decision
from .samples import SampleScore, plan_cost, score_sample

MODES = ("plan-from-diagnosis", "minimal-edit")
GATES = ("oracle", "deployed")
PLAN_SECONDS = 120.0   # the default budget of one candidate search; past it the anchor stands


def metric_vector(s: DecisionScore | SampleScore) -> tuple[float, ...]:
    """Every per-sample value a metric aggregates (None, "not applicable", as 0 on both sides)."""
    if isinstance(s, DecisionScore):
        return tuple(float(x) for x in (s.valid, s.op, s.op_parts, s.subgoal, s.joint, s.op_any, s.op_parts_any,
                                         s.subgoal_any, s.joint_any))
    return tuple(float(x or 0) for x in (s.g, s.v, s.sse, s.sse_any, s.p, s.vmre, s.mve, s.mve_any, s.hrq,
                                         s.nofault_ok, s.mpa, s.rca))


def correct(s: DecisionScore | SampleScore) -> bool:
    """Strict case-level correctness: a valid decision; a verified, optimal repair with the exact diagnosis."""
    return s.joint_any if isinstance(s, DecisionScore) else (bool(s.nofault_ok) if not s.is_fault else s.mve_any)


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


@dataclass(frozen=True)
class Candidate:
    """A search's answer: `raw` the residual variant, or None with `undecided` when the budget ran out."""
    raw: str | None
    undecided: bool = False


def plan_candidate(task: Task, raw: str, mode: str, reference_cost: str = "forgeplan",
                   time_limit: float = PLAN_SECONDS) -> Candidate:
    """The rework residual: the anchor with its plan replaced (None: unparseable, nothing to do, or no
    plan proved within `time_limit` seconds, then `undecided`)."""
    from ..planners.asp.min_edit import closest_valid_plan
    from ..planners.registry import solve as solve_task

    try:
        out = parse_output(raw)
    except ContractError:
        return Candidate(None)
    if mode == "minimal-edit" and task.world.restoration(task.actual, out.actions, task.target).restored:
        return Candidate(None)
    if mode == "plan-from-diagnosis":
        diagnosed = diagnosed_task(task, [m.part_id for m in out.mistakes])
        if diagnosed is None:
            return Candidate(None)
        objective = "actions" if reference_cost == "paper" else "moved-parts,actions"
        result = solve_task(diagnosed, objective, time_limit=time_limit)
        if not result.optimal:
            return Candidate(None, undecided=True)
        plan = result.plan
    else:
        closest = closest_valid_plan(task, out.actions, time_limit=time_limit, minimize_moved=reference_cost != "paper")
        if not closest.decided:
            return Candidate(None, undecided=True)
        plan = closest.plan
    if tuple(plan) == tuple(out.actions):
        return Candidate(None)
    obj = json.loads(raw)
    obj["rework_plan"]["actions"] = [a.to_json() for a in plan]
    return Candidate(json.dumps(obj))


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
class Sample:
    """What scoring one sample needs: the stored files, the reference under the cost rule."""
    sid: str
    meta: dict
    task: Task | None = None          # rework samples
    reference: dict | None = None
    rework: dict | None = None
    decision: dict | None = None      # decision samples
    reference_cost: str = "forgeplan"

    @classmethod
    def load(cls, bench: Path | Bench, sid: str, reference_cost: str = "forgeplan") -> "Sample":
        from .evaluate import paper_reference

        bench = open_bench(bench)
        if bench.is_decision(sid):
            meta = bench.meta(sid)
            return cls(sid, meta, decision=bench.decision(sid, meta))
        sample = bench.rework(sid)
        reference = sample.reference
        if reference_cost == "paper" and reference["rework_plan"]["actions"]:
            reference = paper_reference(sample.task, reference)
        return cls(sid, sample.meta, sample.task, reference, sample.minimal_rework, reference_cost=reference_cost)

    def score(self, raw: str | None) -> DecisionScore | SampleScore:
        if self.decision is not None:
            return score_decision(self.sid, self.meta["assembly_id"], raw, self.decision["reference"],
                                  self.decision["valid"])
        assert self.task is not None and self.reference is not None and self.rework is not None  # load: a rework sample
        return score_sample(self.task, raw, self.reference, self.meta, self.rework, self.reference_cost)


def oracle_accepts(anchor: DecisionScore | SampleScore, candidate: DecisionScore | SampleScore) -> bool:
    """No metric value of the sample falls and one rises, against the stored reference."""
    a, c = metric_vector(anchor), metric_vector(candidate)
    return all(y >= x for x, y in zip(a, c)) and any(y > x for x, y in zip(a, c))


def deployed_accepts(sample: Sample, anchor_raw: str, cand_raw: str, anchor: DecisionScore | SampleScore) -> bool:
    """The verifier on the model's own answer and on the candidate, no reference (module docstring)."""
    if isinstance(anchor, DecisionScore):
        return not anchor.joint_any
    assert sample.task is not None  # a rework sample (Sample.load)
    own = own_verdict(sample.task, anchor_raw, sample.reference_cost)
    cand = own_verdict(sample.task, cand_raw, sample.reference_cost)
    return cand is not None and (own is None or cand < own)


def own_verdict(task: Task, raw: str, reference_cost: str) -> tuple[int, ...] | None:
    """The cost of the answer's plan if it replays legally from the observed state to the target, else None."""
    try:
        out = parse_output(raw)
    except ContractError:
        return None
    if not task.world.restoration(task.actual, out.actions, task.target).restored:
        return None
    return plan_cost(len(moved_parts(out.actions)), len(out.actions), reference_cost)


@dataclass
class GateCounts:
    interventions: int = 0
    corrections: int = 0
    introduced_errors: int = 0
    unchanged_correctness: int = 0
    rejected: int = 0
    failures_after: Counter = field(default_factory=Counter)

    def count(self, anchor, after, taken: bool) -> None:
        """One sample: `after` is the answer's score once this gate has decided."""
        if taken:
            before_ok, after_ok = correct(anchor), correct(after)
            self.interventions += 1
            self.corrections += (not before_ok) and after_ok
            self.introduced_errors += before_ok and not after_ok
            self.unchanged_correctness += before_ok == after_ok
        self.failures_after[failure_kind(after) or "correct"] += 1

    def to_json(self) -> dict:
        return {"interventions": self.interventions, "corrections": self.corrections,
                "introduced_errors": self.introduced_errors, "unchanged_correctness": self.unchanged_correctness,
                "rejected_by_gate": self.rejected, "failures_after": dict(sorted(self.failures_after.items()))}


@dataclass
class InterventionReport:
    mode: str
    gate: str = "oracle"                  # whose answers are written
    reference_cost: str = "forgeplan"
    samples: int = 0
    no_candidate: int = 0
    undecided: int = 0                    # searches past their budget (the anchor stands)
    failures_before: Counter = field(default_factory=Counter)
    gates: dict[str, GateCounts] = field(default_factory=lambda: {g: GateCounts() for g in GATES})

    def __getattr__(self, name: str):
        """The written gate's counts (`interventions`, `corrections`, ...) read as the report's own."""
        if name == "rejected_by_gate":
            name = "rejected"
        if name in GateCounts.__dataclass_fields__:
            return getattr(self.gates[self.gate], name)
        raise AttributeError(name)

    def to_json(self) -> dict:
        chosen = self.gates[self.gate].to_json()
        return {"mode": self.mode, "gate": self.gate, "reference_cost": self.reference_cost, "samples": self.samples,
                **{k: v for k, v in chosen.items() if k != "failures_after"},
                "no_candidate": self.no_candidate, "undecided": self.undecided,
                "failures_before": dict(sorted(self.failures_before.items())),
                "failures_after": chosen["failures_after"],
                "gates": {g: c.to_json() for g, c in self.gates.items()}}


def intervene_one(bench: Path | Bench, sid: str, raw: str, mode: str, report: InterventionReport,
                  time_limit: float = PLAN_SECONDS) -> str:
    """The final answer of one sample under the report's gate; both gates are counted."""
    return intervene_sample(Sample.load(bench, sid, report.reference_cost), raw, mode, report, time_limit)


def intervene_sample(sample: Sample, raw: str, mode: str, report: InterventionReport,
                     time_limit: float = PLAN_SECONDS) -> str:
    anchor = sample.score(raw)
    report.samples += 1
    report.failures_before[failure_kind(anchor) or "correct"] += 1
    if sample.decision is not None:
        cand = Candidate(decision_candidate(raw, sample.decision["valid"]))
    else:
        assert sample.task is not None  # not a decision sample, so a rework sample (Sample.load)
        try:
            cand = plan_candidate(sample.task, raw, mode, sample.reference_cost, time_limit)
        except ForgeplanError:
            cand = Candidate(None)
    if cand.raw is None:
        report.no_candidate += 1
        report.undecided += cand.undecided
        for counts in report.gates.values():
            counts.count(anchor, anchor, False)
        return raw
    scored = sample.score(cand.raw)
    final = raw
    for gate, counts in report.gates.items():
        taken = oracle_accepts(anchor, scored) if gate == "oracle" else deployed_accepts(sample, raw, cand.raw, anchor)
        counts.rejected += not taken
        counts.count(anchor, scored if taken else anchor, taken)
        if taken and gate == report.gate:
            final = cand.raw
    return final

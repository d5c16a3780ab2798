"""The plan verifier: output contract, diagnosis, replay in the engine, final state (SPEC §4, §7)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .actions import moved_parts
from .closure import dependency_closure
from .contract import ContractError, Output, parse_output
from .diagnosis import diagnose
from .engine import DEPENDENCY_CODES, PARAMETER_CODES
from .task import Task

# FORGE Table 9, in the order the verifier tests them
FAILURE_CATEGORIES = ("schema_failure", "no_fault_intervention", "misdiagnosis", "illegal_grounding",
                      "dependency_omission", "parameter_error", "incomplete_restoration", "over_disassembly")


@dataclass
class Verdict:
    valid: bool
    category: str | None = None          # first failure (None when valid)
    reason: str = ""
    failing_step: int | None = None      # index of the first illegal action
    diagnosis_exact: bool = False
    replay_legal: bool = False
    restored: bool = False
    actions: int = 0
    moved_parts: list[str] = field(default_factory=list)
    over_disassembly: bool = False       # valid, but moves parts outside the dependency closure
    output: Output | None = None

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("output")
        return d


def mistake_key(m: dict) -> tuple:
    return (m["type"], m["part_id"], bool(m["visible"]))


def verify(task: Task, raw: str | bytes) -> Verdict:
    try:
        out = parse_output(raw)
    except ContractError as exc:
        return Verdict(False, "schema_failure", exc.reason)
    return verify_output(task, out)


def verify_output(task: Task, out: Output) -> Verdict:
    world = task.world
    expected = diagnose(world, task.actual, task.target)
    v = Verdict(False, actions=len(out.actions), output=out)
    if out.sample_id != task.sample_id:
        v.category, v.reason = "schema_failure", f"annotation.sample_id is {out.sample_id!r}, expected {task.sample_id!r}"
        return v
    if out.assembly_id != task.assembly.assembly_id:
        v.category, v.reason = "schema_failure", f"annotation.assembly_id is {out.assembly_id!r}, expected {task.assembly.assembly_id!r}"
        return v
    got = sorted((m.type, m.part_id, m.visible) for m in out.mistakes)
    v.diagnosis_exact = got == sorted(mistake_key(m) for m in expected) and out.passed == (not expected)
    rp = world.replay(task.actual, out.actions)
    v.replay_legal = rp.failure is None
    v.moved_parts = sorted(moved_parts(out.actions))
    v.restored = v.replay_legal and world.equivalent(rp.final, task.target)
    if not expected and (out.actions or not out.passed):
        v.category = "no_fault_intervention" if out.actions else "misdiagnosis"
        v.reason = (f"the task has no fault but the plan has {len(out.actions)} actions" if out.actions
                    else "the task has no fault but the annotation reports mistakes")
        return v
    if not v.diagnosis_exact:
        v.category, v.reason = "misdiagnosis", _diagnosis_diff(expected, out)
        return v
    if rp.failure is not None:
        code = rp.failure.reason.code
        v.category = ("dependency_omission" if code in DEPENDENCY_CODES else
                      "parameter_error" if code in PARAMETER_CODES else "illegal_grounding")
        v.failing_step, v.reason = rp.failure.step, f"step {rp.failure.step} {rp.failure.action}: {rp.failure.reason.message}"
        return v
    if not v.restored:
        diffs = world.differences(rp.final, task.target)
        v.category, v.reason = "incomplete_restoration", "final state differs: " + "; ".join(diffs[:5])
        return v
    v.valid = True
    faulty = [world.index[m["part_id"]] for m in expected]
    closure = {world.ids[i] for i in dependency_closure(world, task.actual, faulty)}
    slot_of = {w.part_id: w.variant_of for w in task.assembly.spares}
    outside = sorted(p for p in v.moved_parts if slot_of.get(p, p) not in closure)
    v.over_disassembly = bool(outside)
    v.reason = "valid" + (f" (moves parts outside the dependency closure: {outside})" if outside else "")
    return v


def _diagnosis_diff(expected: list[dict], out: Output) -> str:
    exp = {mistake_key(m) for m in expected}
    got = {(m.type, m.part_id, m.visible) for m in out.mistakes}
    parts = []
    if exp - got:
        parts.append(f"missed {sorted(exp - got)}")
    if got - exp:
        parts.append(f"wrongly reported {sorted(got - exp)}")
    if not parts:
        parts.append(f"pass is {out.passed} but the task has {len(expected)} mistakes")
    return "diagnosis differs: " + "; ".join(parts)

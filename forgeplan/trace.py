"""A plan replayed step by step: what each action changed, why the engine refused one, where it leaves the reference.

A verdict names a category, a step and one line; the trace shows the state after every action (only the
parts that changed: presence, occupant, position and offset, rotation and seating, lock), the engine's
reason at the step it refuses, and the first step where the plan and the task's reference part ways,
with what then differs between the two states. `verify --trace`, `show TASK PLAN --steps` and
`forgeplan view` read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .io.contract import ContractError, parse_output
from .io.task_files import read_json
from .model.actions import Action
from .model.errors import InputError
from .model.state import State
from .semantics.engine import World

REFERENCE = "reference.json"


@dataclass(frozen=True)
class Change:
    """One field of one part that an action changed: `what` is presence, occupant, position, offset,
    rotation, seated or lock; `before` and `after` are JSON values."""

    part_id: str
    what: str
    before: object
    after: object

    def __str__(self) -> str:
        what = "" if self.what == "presence" else f"{self.what} "
        return f"{self.part_id}: {what}{_value(self.what, self.before)} -> {_value(self.what, self.after)}"

    def to_json(self) -> dict:
        return {"part_id": self.part_id, "what": self.what, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class TraceStep:
    """Step `step` (from 1): the action, what it changed, or (`legal` false) the engine's reason."""

    step: int
    action: Action
    changes: tuple[Change, ...] = ()
    legal: bool = True
    code: str | None = None      # the engine's reason code at an illegal step (semantics.engine)
    reason: str | None = None

    def to_json(self) -> dict:
        return {"step": self.step, "action": self.action.to_json(), "text": str(self.action), "legal": self.legal,
                "changes": [c.to_json() for c in self.changes], "code": self.code, "reason": self.reason}


@dataclass(frozen=True)
class Divergence:
    """The first step where a plan and the reference differ: their actions there (None past a plan's end)
    and, part by part, how the states after that step differ (`plan`: the plan's value, `reference`: the
    reference's). `step` is None when the plans are the same."""

    step: int | None
    plan_action: Action | None = None
    reference_action: Action | None = None
    differences: tuple[dict, ...] = ()
    refused: bool = False    # the engine refuses the plan's action at that step (no state to compare)

    def to_json(self) -> dict:
        return {"step": self.step, "plan_action": _action_json(self.plan_action),
                "reference_action": _action_json(self.reference_action), "refused": self.refused,
                "differences": list(self.differences)}


@dataclass
class Trace:
    """The replay of a plan from a start state: a step per action up to and including the first illegal one."""

    steps: list[TraceStep] = field(default_factory=list)
    states: list[State] = field(default_factory=list)    # the start, then the state after each legal step
    divergence: Divergence | None = None                  # set when a reference was given

    @property
    def failing_step(self) -> int | None:
        return next((s.step for s in self.steps if not s.legal), None)

    def to_json(self) -> dict:
        out: dict = {"failing_step": self.failing_step, "steps": [s.to_json() for s in self.steps]}
        if self.divergence is not None:
            out["divergence"] = self.divergence.to_json()
        return out


def _action_json(a: Action | None) -> dict | None:
    return None if a is None else {**a.to_json(), "text": str(a)}


def _value(what: str, v) -> str:
    if what == "presence":
        return "present" if v else "absent"
    if what == "lock":
        return {True: "engaged", False: "disengaged"}.get(v, "none")
    if isinstance(v, list):
        return "[" + ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v) + "]"
    return f"{v:g}" if isinstance(v, float) else str(v)


def slot_fields(s) -> dict:
    """The fields of a slot the trace compares, as JSON values (an absent slot: presence only)."""
    if not s.present:
        return {"presence": False}
    return {"presence": True, "occupant": s.occupant, "position": [round(x, 6) for x in s.position],
            "offset": list(s.offset), "rotation": [round(x, 6) for x in s.rotation], "seated": round(s.seated, 6),
            "lock": s.locked}


def state_changes(world: World, before: State, after: State) -> tuple[Change, ...]:
    """What differs from `before` to `after`, part by part in catalog order (presence alone when it flips)."""
    out = []
    for pid, s, t in zip(world.ids, before.slots, after.slots):
        if s == t:
            continue
        a, b = slot_fields(s), slot_fields(t)
        if a["presence"] != b["presence"]:
            out.append(Change(pid, "presence", a["presence"], b["presence"]))
            continue
        out += [Change(pid, k, a[k], b[k]) for k in a if k != "presence" and a[k] != b[k]]
    return tuple(out)


def trace_plan(world: World, start: State, actions: Sequence[Action]) -> Trace:
    """Replay `actions` from `start`, keeping every intermediate state and what each step changed; the
    replay stops at the first action the engine refuses, whose step carries the engine's reason."""
    tr = Trace(states=[start])
    state = start
    for k, a in enumerate(actions, 1):
        why = world.check(state, a)
        if why is not None:
            tr.steps.append(TraceStep(k, a, legal=False, code=why.code, reason=why.message))
            break
        nxt = world.apply(state, a)
        tr.steps.append(TraceStep(k, a, state_changes(world, state, nxt)))
        tr.states.append(nxt)
        state = nxt
    return tr


def divergence(world: World, start: State, plan: Sequence[Action], reference: Sequence[Action]) -> Divergence:
    """The first step where `plan` and `reference` take different actions (or one has ended), and how
    the states they reach after that step differ; `step` None when the two plans are the same."""
    k = next((i for i, (a, b) in enumerate(zip(plan, reference)) if a.to_json() != b.to_json()),
             min(len(plan), len(reference)))
    if k == len(plan) == len(reference):
        return Divergence(None)
    mine = world.replay(start, plan[:k + 1])
    theirs = world.replay(start, reference[:k + 1]).final
    diffs = []
    if mine.failure is None:
        for pid, s, t in zip(world.ids, mine.final.slots, theirs.slots):
            a, b = slot_fields(s), slot_fields(t)
            keys = ["presence"] if a["presence"] != b["presence"] else [x for x in a if a[x] != b[x]]
            diffs += [{"part_id": pid, "what": x, "plan": a[x], "reference": b[x]} for x in keys]
    return Divergence(k + 1, plan[k] if k < len(plan) else None, reference[k] if k < len(reference) else None,
                      tuple(diffs), mine.failure is not None)


def divergence_lines(d: Divergence) -> list[str]:
    """The divergence in words, for a terminal (ids as they are: the caller escapes)."""
    if d.step is None:
        return ["the plan is the reference's, action for action"]
    mine = str(d.plan_action) if d.plan_action is not None else "(the plan has ended)"
    theirs = str(d.reference_action) if d.reference_action is not None else "(the reference has ended)"
    lines = [f"first divergence from the reference at step {d.step}: plan {mine}, reference {theirs}"]
    if d.refused:
        lines.append("  the engine refuses the plan's action there")
    elif not d.differences:
        lines.append("  the two states after it are the same")
    for x in d.differences:
        what = "" if x["what"] == "presence" else f"{x['what']} "
        lines.append(f"  {x['part_id']}: {what}{_value(x['what'], x['plan'])} "
                     f"(reference: {_value(x['what'], x['reference'])})")
    return lines


def trace_lines(tr: Trace) -> list[str]:
    """The trace in words: per step the action, then one indented line per change, or the engine's reason."""
    lines = []
    for s in tr.steps:
        lines.append(f"{s.step:>3}. {s.action}")
        if not s.legal:
            lines.append(f"     refused [{s.code}]: {s.reason}")
        elif not s.changes:
            lines.append("     (no change)")
        lines += [f"     {c}" for c in s.changes]
    return lines


def reference_actions(folder: Path) -> tuple[Action, ...] | None:
    """The plan of the reference.json beside a task's files, or None when there is none."""
    path = Path(folder) / REFERENCE
    if not path.is_file():
        return None
    try:
        return parse_output(json.dumps(read_json(path, "bench file")), strict=False).actions
    except ContractError as exc:
        raise InputError(f"the reference breaks the output contract ({exc.reason})", file=str(path),
                         field="rework_plan") from None


def trace_against(world: World, start: State, actions: Sequence[Action], reference: Sequence[Action] | None) -> Trace:
    """`trace_plan`, with the divergence from `reference` when one is given."""
    tr = trace_plan(world, start, actions)
    if reference is not None:
        tr.divergence = divergence(world, start, actions, reference)
    return tr

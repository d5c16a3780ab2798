"""Minimal rework with partial moves in clingo (`lab/asp/partial.lp`, SEMANTICS.md §9), horizon by horizon.

The steps are grounded once each (multi-shot: `step(t)`, `check(t)`), and at every horizon `h` clingo
optimises (distinct moved parts @2, actions @1) over all plans of at most `h` steps and exhausts its
search: `(J_h, c_h)` is the optimum of the grounded domain among plans that short. It is the optimum
over *every* plan length of that domain when `J_h` equals the lower bound (`partial_bound`: the
fewest parts of a moved set that the exact arguments of the moved-set search do not prove planless): a
plan with as few parts and fewer actions is shorter than `c_h <= h` and was searched
(`proof: moved-lower-bound`). Otherwise the result holds within the horizon only
(`proof: horizon`). With a `radius` the domain is the §9 domain cut to that many voxels per axis, and
every claim is about that sub-domain.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

from forgeplan.model.actions import Action, Insert, Join, Remove, ResetPose, Rotate, Separate, Slide
from forgeplan.planners.asp.partial_check import optimise
from forgeplan.semantics.grounded import rotation_fix
from forgeplan.semantics.task import Task
from .partial_bound import moved_lower_bound
from .partial_facts import encoding, partial_facts

NO_OFFSET = (0, 0, 0)


@dataclass
class PartialAspResult:
    """`plan` None when no plan of at most `horizon` steps exists (or the clock stopped the search first)."""

    plan: Optional[list[Action]]
    moved: Optional[int]
    actions: Optional[int]
    horizon: int              # the largest horizon whose search was exhausted
    proof: str                # "moved-lower-bound": optimal over every length; "horizon": no plan of at most
                              # `horizon` steps is better; "": the best plan found, nothing proved
    radius: Optional[int]
    lower_bound: int
    atoms: int = 0
    facts_seconds: float = 0.0
    ground_seconds: float = 0.0
    solve_seconds: float = 0.0
    timed_out: bool = False
    history: list = field(default_factory=list)   # (horizon, J, c) of every horizon with a plan

    @property
    def optimal(self) -> bool:
        """Proved over every plan length (of the grounded domain)."""
        return self.proof == "moved-lower-bound"


def solve_partial_asp(task: Task, max_horizon: int, radius: int | None = None,
                      time_limit: float | None = None, min_horizon: int = 1) -> PartialAspResult:
    """The (J_move, c)-optimum of the grounded domain over plans of at most `max_horizon` steps, horizon by
    horizon from `min_horizon`; it stops early once the lower bound proves the optimum over every length."""
    import clingo

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    facts = partial_facts(task, radius)
    result = PartialAspResult(None, None, None, 0, "", radius, moved_lower_bound(task, deadline=deadline),
                              facts_seconds=time.perf_counter() - t0)
    ctl = clingo.Control(["--opt-mode=opt", "--warn=none"])
    ctl.load(str(encoding()))
    ctl.add("base", [], facts)
    parts: list[tuple[str, list]] = [("base", [])]
    last_ground = 0.0
    for h in range(1, max_horizon + 1):
        parts += [("step", [clingo.Number(h)]), ("check", [clingo.Number(h)])]
        if h < min_horizon:
            continue
        if result.moved is not None:
            parts.append(("cap", [clingo.Number(h), clingo.Number(result.moved)]))
        t1 = time.perf_counter()
        if deadline is not None and h > min_horizon and t1 + last_ground > deadline:
            result.timed_out = True     # a ground call cannot be interrupted: do not start one that overruns
            break
        ctl.ground(parts)
        parts = []
        last_ground = time.perf_counter() - t1
        result.ground_seconds += last_ground
        if h > 1:
            ctl.release_external(clingo.Function("query", [clingo.Number(h - 1)]))
        ctl.assign_external(clingo.Function("query", [clingo.Number(h)]), True)
        found, exhausted = optimise(ctl, deadline)
        if not exhausted:   # a model found under the cap still beats every plan of <= result.horizon steps
            result.timed_out = True
            if found is not None:
                _record(task, result, found, h, "horizon" if result.horizon else "")
            break
        result.horizon = h
        if found is not None:   # under the cap, a model has fewer moved slots than the best so far
            _record(task, result, found, h, "horizon")
            if result.moved == result.lower_bound:
                result.proof = "moved-lower-bound"
                break
        if deadline is not None and time.perf_counter() > deadline:
            result.timed_out = h < max_horizon
            break
    result.atoms = len(ctl.symbolic_atoms)
    result.solve_seconds = time.perf_counter() - t0 - result.facts_seconds - result.ground_seconds
    return result


def _record(task: Task, result: PartialAspResult, found: tuple, h: int, proof: str) -> None:
    symbols, cost = found
    steps = sorted((a.arguments[1].number, a.arguments[0]) for a in symbols)
    plan = [_action(task, term) for _, term in steps]
    result.plan, result.moved, result.actions, result.proof = plan, cost[0], cost[1], proof
    result.history.append((h, cost[0], cost[1]))


def _members(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _offset(term) -> tuple[int, int, int]:
    return tuple(c.number for c in term.arguments)


def _action(task: Task, term) -> Action:
    """The engine's action for an `occurs` term (occupants are target parts, as the facts require)."""
    world, name, args = task.world, term.name, term.arguments
    if name == "mend":
        i = args[0].number
        s = task.actual.slots[i]
        if world.rot_off(i, s):
            return Rotate(world.ids[i], *rotation_fix(world, i, s.rotation))
        return ResetPose(world.ids[i])
    members = _members(args[0].number)
    names = tuple(world.ids[i] for i in members)
    direction = args[1].string
    if name == "slide":
        return Slide(names, direction, args[2].number)
    if name == "out":
        return Remove(names[0]) if len(names) == 1 else Separate(names, direction)
    offsets = tuple(_offset(a) for a in args[2:])
    if len(names) == 1:
        return Insert(names[0], offsets[0])
    if len(offsets) == 1:
        offsets = offsets * len(names)
    return Join(names, direction, offsets if any(o != NO_OFFSET for o in offsets) else ())

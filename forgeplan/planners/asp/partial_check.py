"""clingo's cross-check of partial-move tasks (SEMANTICS.md §9): `encodings/partial_check.lp` on a box of
the grounded position domain, over plans of at most a horizon of steps.

A rendering of the grounded task (`semantics.grounded`): offsets range over its position domain cut to a
radius per axis (`task_positions`), slides move its `slide_groups`, the pairwise geometry is the engine's
own gaps (`geometry.displacement.Shapes.gaps`) over every relative offset two slots of the box can have.
clingo optimises (distinct moved slots @2, actions @1) over every plan of at most `horizon` steps and
exhausts its search: the result is the optimum of that universe (the box, the horizon, and the groups'
*separable* condition left out), found without any argument of the moved-set search. The moves are the
engine's within the box, not only the grounded universe's: a group slides also with a clear ray ahead,
and arrivals land at any offset of the box, so an agreement with the moved-set search checks §9 "One
universe" (no plan the engine accepts beats the grounded optimum) for the plans inside the box. The encoding counts
moved slots; `J_move` counts part ids, so a slot that holds its spare counts twice there (the spare and
its target part) in every plan alike, and the order of plans is the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import product
from typing import Optional

from ...geometry.displacement import FREE, shapes
from ...io.resources import encodings_dir
from ...model.actions import Action, Insert, Join, Remove, Replace, ResetPose, Rotate, Separate, Slide
from ...model.assembly import DIRECTIONS
from ...model.errors import InputError
from ...model.limits import CHECK_MEMORY_MB
from ...semantics.grounded import rotation_fix, slide_groups, task_positions
from ...semantics.task import Task

AXIS = {"x": 1, "y": 2, "z": 3}


@dataclass
class CheckResult:
    """clingo's answer: `plan` None when no plan of at most `horizon` steps exists in the box (`exhausted`)
    or the clock stopped the search first (`exhausted` False)."""

    plan: Optional[tuple[Action, ...]]
    exhausted: bool                 # the optimisation was completed: the plan is the optimum of the universe
    horizon: int
    box: tuple[int, int, int]       # per axis the largest |offset|
    seconds: float = 0.0
    ground_seconds: float = 0.0
    atoms: int = 0
    cost: list = field(default_factory=list)
    stopped: str | None = None      # the budget that stopped it before the end ("time limit", "memory budget")


def optimise(ctl, deadline: float | None) -> tuple[Optional[tuple], bool]:
    """The last (best) model's actions and cost, and whether the optimisation was exhausted."""
    best = None
    with ctl.solve(yield_=True, async_=True) as handle:
        while True:
            handle.resume()
            wait = None if deadline is None else max(0.0, deadline - time.perf_counter())
            if not handle.wait(wait):
                handle.cancel()
                return best, False
            model = handle.model()
            if model is None:
                break
            best = (model.symbols(shown=True), list(model.cost))
        exhausted = handle.get().exhausted
    return best, exhausted


def encoding():
    """encodings/partial_check.lp, in a wheel or a checkout."""
    return encodings_dir() / "partial_check.lp"


def _faults(task: Task) -> list[Optional[Action]]:
    """Per slot, the action that mends it in place (None: not faulty); refuses locks and a slot that
    needs two repairs (§9's puzzles have neither)."""
    world, out = task.world, []
    for i, s in enumerate(task.actual.slots):
        if world.lock[i] is not None:
            raise InputError(f"{world.ids[i]} is a lock: the partial-move cross-check handles lock-free puzzles only",
                             field="assembly")
        out.append(_mend(world, i, s) if s.present else None)
    return out


def _mend(world, i: int, s) -> Optional[Action]:
    """The one repair of present slot i (a spare replaced, a turn, a pose reset), None when it is sound."""
    pid = world.ids[i]
    spare, turned, posed = s.occupant != pid, world.rot_off(i, s), world.pose_off(i, s)
    if spare + turned + posed > 1:
        raise InputError(f"slot {pid} needs two repairs: the partial-move cross-check repairs one per slot",
                         field="actual_state")
    if spare:
        return Replace(s.occupant, pid)
    if posed:
        return ResetPose(pid)
    if not turned:
        return None
    fix = rotation_fix(world, i, s.rotation)
    if fix is None:
        raise InputError(f"slot {pid}: no single turn repairs its rotation", field="actual_state")
    return Rotate(pid, *fix)


CRITERIA = {"moved-parts": "moved", "actions": "steps"}
# core-guided optimisation: it raises the lower bound of the moved slots first, which the (J, c) objective
# makes the hard part (branch-and-bound took two to three times as long on the level-5 burrs)
OPT_STRATEGY = "--opt-strategy=usc"


def check_facts(task: Task, radius, objective: str = "moved-parts,actions") -> str:
    """The facts of `encodings/partial_check.lp` for `task` over the offsets within `radius` per axis (one
    int, or one per axis), optimising `objective` (its criteria, most important first)."""
    world = task.world
    r = box(task, radius)
    n = len(world.ids)
    out = [f"slot(0..{n - 1})."]
    out += [f"domv({a + 1},{-b}..{b}). dist({a + 1},1..{2 * b})." for a, b in enumerate(r)]
    criteria = objective.split(",")
    out += [f"minimise({CRITERIA[c]},{len(criteria) - k})." for k, c in enumerate(criteria)]
    out += [f'dirv("{d}",{AXIS[d[1]]},{1 if d[0] == "+" else -1}).' for d in DIRECTIONS]
    out += [f'can({i},"{d}").' for i in range(n) for d in world.parts[i].removal_dirs]
    for g in slide_groups(world):
        out += [f"grp({g})."] + [f"member({g},{i})." for i in range(n) if g >> i & 1]
    out += _pair_facts(task, r)
    mends = _faults(task)
    for i, s in enumerate(task.actual.slots):
        if s.present:
            if any(abs(c) > b for c, b in zip(s.offset, r)):
                raise InputError(f"slot {world.ids[i]} is displaced by {list(s.offset)}, outside the box {list(r)}",
                                 field="actual_state")
            out += [f"init(co({i},{a + 1},{c}))." for a, c in enumerate(s.offset)]
        if mends[i] is not None:
            out.append(f"init(bad({i})).")
    return "\n".join(out) + "\n"


def box(task: Task, radius) -> tuple[int, int, int]:
    """Per axis, the largest |offset| of the box: `radius` (one int for every axis, or one per axis) within
    the grounded task's position bound (`task_positions`)."""
    bound = task_positions(task, field="radius").bound
    per_axis = (radius,) * 3 if isinstance(radius, int) else tuple(radius)
    if any(r < 1 for r in per_axis):
        raise InputError(f"radius must be whole numbers >= 1, got {list(per_axis)}", field="radius")
    return min(per_axis[0], bound[0]), min(per_axis[1], bound[1]), min(per_axis[2], bound[2])


def _pair_facts(task: Task, r: tuple[int, int, int]) -> list[str]:
    """`ray` and `gap` facts for every ordered pair of slots and every relative offset two slots of the box
    can have."""
    sh, n, out = shapes(task.world.assembly), len(task.world.ids), []
    spans = [range(-2 * b, 2 * b + 1) for b in r]
    for i, j in product(range(n), repeat=2):
        if i == j:
            continue
        for x, y, z in product(*spans):
            rel = (x, y, z)
            for d, g in zip(DIRECTIONS, sh.gaps(i, j, rel)):
                if g < FREE:
                    out.append(f'ray({i},{j},{rel[0]},{rel[1]},{rel[2]},"{d}").')
                    if g < 2 * r[AXIS[d[1]] - 1]:
                        out.append(f'gap({i},{j},{rel[0]},{rel[1]},{rel[2]},"{d}",{g}).')
    return out


GRACE_SECONDS = 1.0    # past the time limit, for the search to hand back the best plan it has


def check_partial(task: Task, radius, horizon: int, time_limit: float | None = None,
                  objective: str = "moved-parts,actions") -> CheckResult:
    """The optimum of `objective` over every plan of at most `horizon` steps in the box of `radius`, within
    `time_limit` seconds (grounding included) and CHECK_MEMORY_MB; past either the search is not exhausted and
    `stopped` says which budget ended it."""
    from ...executors import run_bounded

    t0 = time.perf_counter()
    r = box(task, radius)
    seconds = None if time_limit is None or time_limit > 1e6 else time_limit + GRACE_SECONDS
    how, result = run_bounded(_check, (task, r, horizon, time_limit, objective), seconds, CHECK_MEMORY_MB)
    if how == "done":
        return result
    return CheckResult(None, False, horizon, r, seconds=time.perf_counter() - t0,
                       stopped="time limit" if how == "time" else f"memory budget ({CHECK_MEMORY_MB:,} MB)")


def _check(task: Task, radius, horizon: int, time_limit: float | None, objective: str) -> CheckResult:
    """`check_partial` in this process, without a bound on grounding."""
    import clingo

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    result = CheckResult(None, False, horizon, box(task, radius))
    ctl = clingo.Control(["--opt-mode=opt", OPT_STRATEGY, "--warn=none", f"--const=h={horizon}"])
    ctl.load(str(encoding()))
    ctl.add("base", [], check_facts(task, radius, objective))
    ctl.ground([("base", [])])
    result.ground_seconds = time.perf_counter() - t0
    result.atoms = len(ctl.symbolic_atoms)
    best, result.exhausted = optimise(ctl, deadline)
    if best is not None:
        result.plan, result.cost = decode(task, best[0]), best[1]
    result.seconds = time.perf_counter() - t0
    return result


def decode(task: Task, symbols) -> tuple[Action, ...]:
    """The engine's actions for a model's `occurs` and `land` atoms, naming each slot's occupant (a spare
    until it leaves or is replaced)."""
    world = task.world
    occupant = [s.occupant if s.present and s.occupant is not None else world.ids[i]
                for i, s in enumerate(task.actual.slots)]
    mends = _faults(task)
    lands: dict = {}
    for s in symbols:
        if s.name == "land":
            slot, axis, value, t = (a.number for a in s.arguments)
            lands.setdefault((t, slot), [0, 0, 0])[axis - 1] = value
    steps = sorted((s.arguments[1].number, s.arguments[0]) for s in symbols if s.name == "occurs")
    out: list[Action] = []
    for t, term in steps:
        out.append(_action(world, term, occupant, mends, {slot: tuple(o) for (u, slot), o in lands.items() if u == t}))
    return tuple(out)


def _action(world, term, occupant: list[str], mends: list[Optional[Action]], landed: dict) -> Action:
    name, args = term.name, term.arguments
    if name == "mend":
        i = args[0].number
        occupant[i] = world.ids[i]
        return mends[i]
    members = [i for i in range(args[0].number.bit_length()) if args[0].number >> i & 1]
    names = tuple(occupant[i] for i in members)
    d = args[1].string
    if name == "slide":
        return Slide(names, d, args[2].number)
    if name == "out":
        for i in members:
            occupant[i] = world.ids[i]
        return Remove(names[0]) if len(names) == 1 else Separate(names, d)
    offsets = tuple(landed[i] for i in members)
    if len(names) == 1:
        return Insert(names[0], offsets[0])
    return Join(names, d, offsets)

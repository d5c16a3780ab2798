"""The symbolic abstraction of a task: slot fluents, the initial state, the goal and the grounded steps.

Every number-dependent fact (which rotations are off modulo symmetry, which turn repairs them, whether
a coupled lock's unlocked pose is off) is decided here with the engine's own functions; the steps are
the grounded action set (forgeplan.semantics.grounded) over every state the abstraction can reach.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

from ...model.actions import Action, Insert, Join, Remove, Replace, ResetPose, Rotate, Separate
from ...model.state import Slot, State
from ...semantics.engine import World
from ...semantics.grounded import (check_canonical_target, group_blockers, group_names, lock_action, removal_paths,
                                   rotation_fix)
from ...semantics.task import Task
from .groups import GroupCandidates, candidate_groups


Literal = tuple[str, str, bool]  # (fluent, part id, value)


@dataclass(frozen=True)
class GroundStep:
    """One grounded action in symbolic form: literals over slot fluents, and its clearance paths.

    `paths` are the alternatives of `∃d free(p, d)`: (direction, blockers that must be absent); empty
    when the action needs no clearance.
    """

    action: Action
    pre: tuple[Literal, ...]
    eff: tuple[Literal, ...]
    paths: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass
class Abstraction:
    """The task's symbolic initial state, goal and grounded steps (slot fluents keyed by part id)."""

    world: World
    init: set[Literal] = field(default_factory=set)      # true fluents
    goal: list[Literal] = field(default_factory=list)
    steps: list[GroundStep] = field(default_factory=list)
    fluents: set[tuple[str, str]] = field(default_factory=set)
    spare_in: dict[str, str] = field(default_factory=dict)           # slot -> its actual spare occupant
    turn_fix: dict[str, tuple[str, float]] = field(default_factory=dict)     # slot -> fix of actual rotation
    unlock_fix: dict[str, tuple[str, float]] = field(default_factory=dict)   # coupled slot -> fix of unlocked rotation
    unlock_pose_off: set[str] = field(default_factory=set)
    unlock_rot_off: set[str] = field(default_factory=set)
    groups: GroupCandidates | None = None    # assemblies that need group moves only


def abstraction(task: Task, every_direction: bool = False) -> Abstraction:
    """The symbolic abstraction of a task: SEMANTICS §2 facts, computed with the engine's functions.

    Group moves go along the directions `GroupCandidates.moves` keeps, or along every direction.
    """
    check_canonical_target(task)
    world = task.world
    ab = Abstraction(world)
    ids = world.ids
    for i, pid in enumerate(ids):
        s = task.actual.slots[i]
        ab.fluents.add(("present", pid))
        ab.fluents.update({("pose_off", pid), ("rot_off", pid)})
        if world.lock[i] is not None:
            ab.fluents.add(("locked", pid))
            ab.goal.append(("locked", pid, True))
        if s.present:
            ab.init.add(("present", pid, True))
            if s.occupant != pid:
                ab.spare_in[pid] = s.occupant  # type: ignore[assignment]
                ab.fluents.add(("wrong", pid))
                ab.init.add(("wrong", pid, True))
            if world.pose_off(i, s):
                ab.init.add(("pose_off", pid, True))
            if world.rot_off(i, s):
                ab.init.add(("rot_off", pid, True))
                fix = rotation_fix(world, i, s.rotation)
                if fix is not None:
                    ab.turn_fix[pid] = _checked_fix(world, i, s, fix)
            if s.locked:
                ab.init.add(("locked", pid, True))
        lock = world.lock[i]
        if lock is not None and lock.kind == "coupled":
            up = world.unlocked[i]
            after = Slot(True, pid, up.position, up.rotation, 0.0, False)
            if world.pose_off(i, after):
                ab.unlock_pose_off.add(pid)
            if world.rot_off(i, after):
                ab.unlock_rot_off.add(pid)
                ab.fluents.add(("unlock_turned", pid))
                fix = rotation_fix(world, i, up.rotation)
                if fix is not None:
                    ab.unlock_fix[pid] = _checked_fix(world, i, after, fix)
        ab.goal += [("present", pid, True), ("pose_off", pid, False), ("rot_off", pid, False)]
        if ("wrong", pid) in ab.fluents:
            ab.goal.append(("wrong", pid, False))
    paths = {pid: removal_paths(world, i) for i, pid in enumerate(ids)}
    for i, pid in enumerate(ids):
        ab.steps += _slot_steps(ab, i, paths[pid])
    if world.needs_groups:
        ab.groups = candidate_groups(world)
        ab.steps += _group_steps(ab, ab.groups.groups if every_direction else ab.groups.moves)
    return ab


def _checked_fix(world: World, i: int, slot: Slot, fix: tuple[str, float]) -> tuple[str, float]:
    """The repairing turn, checked with the engine to clear rot_off (the abstraction relies on it)."""
    turned = world.apply(State([slot if j == i else world.target_slot(j) for j in range(len(world.ids))]),
                         Rotate(slot.occupant, *fix))  # type: ignore[arg-type]
    if world.rot_off(i, turned.slots[i]):
        raise AssertionError(f"rotation fix {fix} does not restore {world.ids[i]}")
    return fix


def _slot_steps(ab: Abstraction, i: int, paths) -> list[GroundStep]:
    """The grounded actions on slot i over every state reachable in the abstraction (grounding.slot_actions)."""
    world = ab.world
    pid = world.ids[i]
    lock = world.lock[i]
    has = lambda f: (f, pid) in ab.fluents  # noqa: E731
    holders = [world.ids[j] for j in world.holders[i]]
    not_held = tuple(("locked", h, False) for h in holders)
    reset_all = _reset_all(ab, pid)
    steps = [GroundStep(Insert(pid),
                  (("present", pid, False), *(("present", q, True) for q in world.parts[i].supports), *not_held),
                  (("present", pid, True), *reset_all), paths)]
    clear = ((("locked", pid, False),) if lock is not None else ()) + not_held
    occupants = [(pid, (("present", pid, True),) + ((("wrong", pid, False),) if has("wrong") else ()))]
    if pid in ab.spare_in:
        occupants.append((ab.spare_in[pid], (("wrong", pid, True),)))
    for x, here in occupants:
        pre = here + clear
        steps.append(GroundStep(Remove(x), pre, (("present", pid, False), *reset_all), paths))
        steps.append(GroundStep(ResetPose(x), pre, (("pose_off", pid, False),), paths))
        actual_is_x = (ab.spare_in.get(pid, pid) == x)
        rot_done = (("rot_off", pid, False),) + ((("unlock_turned", pid, False),) if has("unlock_turned") else ())
        if actual_is_x and pid in ab.turn_fix:
            ax, ang = ab.turn_fix[pid]
            src = (("unlock_turned", pid, False),) if has("unlock_turned") else ()
            steps.append(GroundStep(Rotate(x, ax, ang), pre + (("rot_off", pid, True),) + src, rot_done, paths))
        if x == pid and pid in ab.unlock_fix:
            ax, ang = ab.unlock_fix[pid]
            steps.append(GroundStep(Rotate(x, ax, ang),
                              pre + (("rot_off", pid, True), ("unlock_turned", pid, True)), rot_done, paths))
        if x != pid:
            steps.append(GroundStep(Replace(x, pid), pre,
                              (("wrong", pid, False), ("pose_off", pid, False), ("rot_off", pid, False)), paths))
    if lock is not None:
        here = (("present", pid, True),)
        restored = tuple(lit for j in world.holds[i] for lit in _restored(ab, world.ids[j]))
        if lock.kind == "rotate":
            steps.append(GroundStep(lock_action(world, i, locking=False),
                              here + (("locked", pid, True),), (("locked", pid, False),)))
            steps.append(GroundStep(lock_action(world, i, locking=True),
                              here + (("locked", pid, False), ("pose_off", pid, False), ("rot_off", pid, False)) + restored,
                              (("locked", pid, True),)))
        else:
            eff = (("locked", pid, False), ("pose_off", pid, pid in ab.unlock_pose_off),
                   ("rot_off", pid, pid in ab.unlock_rot_off)) + ((("unlock_turned", pid, True),) if has("unlock_turned") else ())
            steps.append(GroundStep(lock_action(world, i, locking=False),
                              here + (("locked", pid, True),), eff))
            steps.append(GroundStep(lock_action(world, i, locking=True),
                              here + (("locked", pid, False),) + restored,
                              (("locked", pid, True), *rot_done, ("pose_off", pid, False))))
    return steps


def _reset_all(ab: Abstraction, pid: str) -> tuple[Literal, ...]:
    """A slot emptied or filled with its target part: every fault fluent and the lock go false."""
    return tuple((f, pid, False) for f in ("wrong", "pose_off", "rot_off", "unlock_turned", "locked") if (f, pid) in ab.fluents)


def _restored(ab: Abstraction, q: str) -> tuple[Literal, ...]:
    out = [("present", q, True), ("pose_off", q, False), ("rot_off", q, False)]
    if ("wrong", q) in ab.fluents:
        out.append(("wrong", q, False))
    return tuple(out)


def _group_steps(ab: Abstraction, along: dict[str, tuple[tuple[str, ...], ...]]) -> list[GroundStep]:
    """The separate and join moves of the groups `along` each direction, over every reachable state."""
    steps: list[GroundStep] = []
    for d, found in along.items():
        for g in found:
            steps += _separate_steps(ab, g, d)
            steps.append(_join_step(ab, g, d))
    return steps


def _not_held(world: World, group: Sequence[str]) -> list[Literal]:
    """No engaged lock holds a member (an engaged lock is present: removal resets `locked`)."""
    return [("locked", world.ids[h], False) for p in group for h in world.holders[world.index[p]]]


def _separate_steps(ab: Abstraction, group: tuple[str, ...], d: str) -> list[GroundStep]:
    """separate(G, d), one step per choice of occupants (a slot holding a spare is named by the spare)."""
    world = ab.world
    mask = sum(1 << world.index[p] for p in group)
    outside = group_blockers(world, mask, d)
    common = [("locked", p, False) for p in group if world.lock[world.index[p]] is not None]
    common += _not_held(world, group) + [("present", b, False) for b in group_names(world, outside)]
    eff = tuple(lit for p in group for lit in (("present", p, False), *_reset_all(ab, p)))
    choices = []
    for p in group:
        mine = [(p, (("present", p, True),) + ((("wrong", p, False),) if p in ab.spare_in else ()))]
        choices.append(mine + ([(ab.spare_in[p], (("wrong", p, True),))] if p in ab.spare_in else []))
    return [GroundStep(Separate(tuple(x for x, _ in combo), d),
                 tuple(dict.fromkeys([lt for _, here in combo for lt in here] + common)), eff)
            for combo in itertools.product(*choices)]


def _join_step(ab: Abstraction, group: tuple[str, ...], d: str) -> GroundStep:
    """join(G, d): members absent, supports present or joining too, not held, nothing present in the way."""
    world = ab.world
    mask = sum(1 << world.index[p] for p in group)
    pre = [("present", p, False) for p in group]
    pre += [("present", q, True) for p in group for q in world.parts[world.index[p]].supports if q not in group]
    pre += _not_held(world, group) + [("present", b, False) for b in group_names(world, group_blockers(world, mask, d))]
    eff = tuple(lit for p in group for lit in (("present", p, True), *_reset_all(ab, p)))
    return GroundStep(Join(group, d), tuple(dict.fromkeys(pre)), eff)

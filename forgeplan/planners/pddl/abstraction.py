"""The symbolic abstraction of a task: slot fluents, the initial state, the goal and the grounded steps.

Every number-dependent fact (which rotations are off modulo symmetry, whether a coupled lock's unlocked
pose is off) is decided here with the engine's own functions. The steps render the grounded task
(forgeplan.semantics.grounded): its single-part action universe (`slot_universe`, with the repairing
turns of `slot_rotations`) and its candidate groups, each action with its literals over the slot fluents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ...model.actions import Action, GroupMove, Insert, Remove, Replace, ResetPose, Rotate
from ...model.state import Slot, State
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.engine import LOCK_ACTIONS, World
from ...semantics.grounded import (GroundedTask, as_grounded, check_canonical_target, group_blockers, group_names,
                                   group_universe, removal_paths, slot_rotations, slot_universe)
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
    shared: AssemblyGrounding                             # the grounded task's answers about its assembly
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


def abstraction(task: Task | GroundedTask, every_direction: bool = False) -> Abstraction:
    """The symbolic abstraction of a task: SEMANTICS §2 facts, computed with the engine's functions.

    Group moves go along the directions `GroupCandidates.moves` keeps, or along every direction.
    """
    g = as_grounded(task)
    check_canonical_target(g.task)
    ab = slot_abstraction(g)
    if g.has_groups:
        ab.groups = candidate_groups(g.shared)
        ab.steps += _group_steps(ab, g.task.actual, ab.groups.groups if every_direction else ab.groups.moves)
    return ab


def slot_abstraction(task: Task | GroundedTask) -> Abstraction:
    """The single-part part of the abstraction: every slot's fluents, initial values, goal and steps
    (no target check, no group moves; `abstraction` adds those, the partial-move rendering its own)."""
    g = as_grounded(task)
    task, world = g.task, g.world
    ab = Abstraction(world, g.shared)
    for i, pid in enumerate(world.ids):
        _slot_facts(ab, task.actual, i)
        ab.goal += [("present", pid, True), ("pose_off", pid, False), ("rot_off", pid, False)]
        if ("wrong", pid) in ab.fluents:
            ab.goal.append(("wrong", pid, False))
    for i in range(len(world.ids)):
        ab.steps += _slot_steps(ab, i, slot_universe(g.shared, task.actual, i))
    return ab


def _slot_facts(ab: Abstraction, actual: State, i: int) -> None:
    """Slot i's fluents, its initial values, and the repairing turns of its actual rotation and of a
    coupled lock's unlocked rotation (the grounded task's `slot_rotations`)."""
    world = ab.world
    pid, s, lock = world.ids[i], actual.slots[i], world.lock[i]
    fixes = {r: (ax, ang) for r, ax, ang, _ in slot_rotations(ab.shared, actual, i)[0].fixes}
    ab.fluents.update({("present", pid), ("pose_off", pid), ("rot_off", pid)})
    if lock is not None:
        ab.fluents.add(("locked", pid))
        ab.goal.append(("locked", pid, True))
    if s.present:
        ab.init.add(("present", pid, True))
        if s.occupant != pid:
            ab.spare_in[pid] = s.occupant  # type: ignore[assignment]  # a present slot has an occupant
            ab.fluents.add(("wrong", pid))
            ab.init.add(("wrong", pid, True))
        if world.pose_off(i, s):
            ab.init.add(("pose_off", pid, True))
        if world.rot_off(i, s):
            ab.init.add(("rot_off", pid, True))
            if s.rotation in fixes:
                ab.turn_fix[pid] = fixes[s.rotation]
        if s.locked:
            ab.init.add(("locked", pid, True))
    up = world.unlocked[i]
    if lock is not None and lock.kind == "coupled" and up is not None:
        after = Slot(True, pid, up.position, up.rotation, 0.0, False)
        if world.pose_off(i, after):
            ab.unlock_pose_off.add(pid)
        if world.rot_off(i, after):
            ab.unlock_rot_off.add(pid)
            ab.fluents.add(("unlock_turned", pid))
            if up.rotation in fixes:
                ab.unlock_fix[pid] = fixes[up.rotation]


def _slot_steps(ab: Abstraction, i: int, actions: list[Action]) -> list[GroundStep]:
    """The symbolic form of the grounded actions on slot i (`grounded.slot_universe`), in their order.

    A turn gets one step per rotation the abstraction can reach that it repairs: the actual occupant's
    rotation, and a coupled lock's unlocked rotation; a turn that repairs neither gets none.
    """
    world = ab.world
    pid = world.ids[i]
    paths = removal_paths(world, i)
    not_held = tuple(("locked", world.ids[h], False) for h in world.holders[i])
    steps = []
    for a in actions:
        if isinstance(a, Insert):
            steps.append(GroundStep(a, (("present", pid, False), *(("present", q, True) for q in world.parts[i].supports),
                                        *not_held), (("present", pid, True), *_reset_all(ab, pid)), paths))
        elif a.name in LOCK_ACTIONS:
            steps.append(_lock_step(ab, i, a, *LOCK_ACTIONS[a.name]))
        else:
            clear = ((("locked", pid, False),) if world.lock[i] is not None else ()) + not_held
            steps += [GroundStep(a, pre, eff, paths) for pre, eff in _occupant_literals(ab, pid, a, clear)]
    return steps


def _occupant_literals(ab: Abstraction, pid: str, a: Action, clear: tuple[Literal, ...]):
    """[(pre, eff)] of remove, reset_pose, rotate or replace on slot `pid`'s occupant; `clear`: the
    preconditions that nothing holds it (its own lock and its holders disengaged)."""
    x = a.touched[0]
    has = lambda f: (f, pid) in ab.fluents  # noqa: E731
    here = ((("present", pid, True),) + ((("wrong", pid, False),) if has("wrong") else ()) if x == pid
            else (("wrong", pid, True),)) + clear
    if isinstance(a, Remove):
        return [(here, (("present", pid, False), *_reset_all(ab, pid)))]
    if isinstance(a, ResetPose):
        return [(here, (("pose_off", pid, False),))]
    if isinstance(a, Replace):
        return [(here, (("wrong", pid, False), ("pose_off", pid, False), ("rot_off", pid, False)))]
    assert isinstance(a, Rotate)
    turned = (("unlock_turned", pid, False),) if has("unlock_turned") else ()
    done = (("rot_off", pid, False),) + turned
    out = []
    if ab.spare_in.get(pid, pid) == x and ab.turn_fix.get(pid) == (a.axis, a.angle_deg):
        out.append((here + (("rot_off", pid, True),) + turned, done))
    if x == pid and ab.unlock_fix.get(pid) == (a.axis, a.angle_deg):
        out.append((here + (("rot_off", pid, True), ("unlock_turned", pid, True)), done))
    return out


def _lock_step(ab: Abstraction, i: int, a: Action, kind: str, locking: bool) -> GroundStep:
    """A lock's unlock or lock action: a rotate lock only flips `locked`; a coupled lock's unlock moves
    the part to its unlocked pose, and its lock needs the parts it holds restored and restores the part."""
    pid = ab.world.ids[i]
    here = (("present", pid, True),)
    restored = tuple(lit for j in ab.world.holds[i] for lit in _restored(ab, ab.world.ids[j]))
    turned = (("unlock_turned", pid, True),) if ("unlock_turned", pid) in ab.fluents else ()
    if not locking:
        eff = ((("locked", pid, False),) if kind == "rotate" else
               (("locked", pid, False), ("pose_off", pid, pid in ab.unlock_pose_off),
                ("rot_off", pid, pid in ab.unlock_rot_off)) + turned)
        return GroundStep(a, here + (("locked", pid, True),), eff)
    if kind == "rotate":
        return GroundStep(a, here + (("locked", pid, False), ("pose_off", pid, False), ("rot_off", pid, False)) + restored,
                          (("locked", pid, True),))
    done = (("rot_off", pid, False),) + tuple((f, p, False) for f, p, _ in turned)
    return GroundStep(a, here + (("locked", pid, False),) + restored, (("locked", pid, True), *done, ("pose_off", pid, False)))


def _reset_all(ab: Abstraction, pid: str) -> tuple[Literal, ...]:
    """A slot emptied or filled with its target part: every fault fluent and the lock go false."""
    return tuple((f, pid, False) for f in ("wrong", "pose_off", "rot_off", "unlock_turned", "locked") if (f, pid) in ab.fluents)


def _restored(ab: Abstraction, q: str) -> tuple[Literal, ...]:
    out = [("present", q, True), ("pose_off", q, False), ("rot_off", q, False)]
    if ("wrong", q) in ab.fluents:
        out.append(("wrong", q, False))
    return tuple(out)


def _group_steps(ab: Abstraction, actual: State, along: dict[str, tuple[tuple[str, ...], ...]]) -> list[GroundStep]:
    """The grounded task's separate and join moves (`grounded.group_universe`) of the groups `along`
    each direction, in that order, with their literals."""
    world = ab.world
    by_move: dict[tuple[str, tuple[str, ...], str], list[GroupMove]] = {}
    for a in group_universe(ab.shared, actual):
        assert isinstance(a, GroupMove)
        slots = tuple(world.ids[world.slot_index(x)] for x in a.part_ids)
        by_move.setdefault((a.name, slots, a.direction), []).append(a)
    steps: list[GroundStep] = []
    for d, found in along.items():
        for g in found:
            steps += [_separate_step(ab, a) for a in by_move[("separate", g, d)]]
            steps += [_join_step(ab, a) for a in by_move[("join", g, d)]]
    return steps


def _not_held(world: World, group: Sequence[str]) -> list[Literal]:
    """No engaged lock holds a member (an engaged lock is present: removal resets `locked`)."""
    return [("locked", world.ids[h], False) for p in group for h in world.holders[world.index[p]]]


def _separate_step(ab: Abstraction, a: GroupMove) -> GroundStep:
    """separate(G, d): each member present as named (its target part, or the spare in its slot), no lock
    engaged on or holding a member, nothing present in the way."""
    world = ab.world
    group = tuple(world.ids[world.slot_index(x)] for x in a.part_ids)
    mask = sum(1 << world.index[p] for p in group)
    common = [("locked", p, False) for p in group if world.lock[world.index[p]] is not None]
    common += _not_held(world, group) + [("present", b, False) for b in group_names(world, group_blockers(world, mask, a.direction))]
    here = [lt for x, p in zip(a.part_ids, group)
            for lt in ((("present", p, True),) + ((("wrong", p, False),) if p in ab.spare_in else ()) if x == p
                       else (("wrong", p, True),))]
    eff = tuple(lit for p in group for lit in (("present", p, False), *_reset_all(ab, p)))
    return GroundStep(a, tuple(dict.fromkeys(here + common)), eff)


def _join_step(ab: Abstraction, a: GroupMove) -> GroundStep:
    """join(G, d): members absent, supports present or joining too, not held, nothing present in the way."""
    world, group = ab.world, a.part_ids
    mask = sum(1 << world.index[p] for p in group)
    pre = [("present", p, False) for p in group]
    pre += [("present", q, True) for p in group for q in world.parts[world.index[p]].supports if q not in group]
    pre += _not_held(world, group) + [("present", b, False) for b in group_names(world, group_blockers(world, mask, a.direction))]
    eff = tuple(lit for p in group for lit in (("present", p, True), *_reset_all(ab, p)))
    return GroundStep(a, tuple(dict.fromkeys(pre)), eff)

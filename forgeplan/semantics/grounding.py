"""The finite action set the planners search (the engine itself accepts any parameters).

Planners (clingo, Fast Downward, the repair search, the greedy baseline, the legal-action mask) ground
actions only with parameters that can be part of a minimal plan: lock actions with their mechanism's
values, `rotate` only with the turn that repairs an observed single-axis orientation fault, `replace`
only for the spare in the slot. A rotate by any other angle leaves or creates a fault that a later action
on the same part must undo, so it never appears in a minimal plan (encodings/SEMANTICS.md §3).
"""

from __future__ import annotations

from ..model.actions import Action
from ..model.assembly import DIRECTIONS, Pose
from ..model.rotations import axis_angle_of, euler_to_matrix, matmul, transpose
from ..model.state import State
from .engine import ZERO3, World


def rotation_fix(world: World, i: int, rotation) -> tuple[str, float] | None:
    """The single-axis turn (axis, angle) that brings `rotation` back to the target modulo symmetry.

    Smallest |angle| first, then axis order x, y, z; None when no single principal-axis turn does it.
    """
    r = euler_to_matrix(rotation)
    best = None
    for g in world.symmetry[i]:
        aa = axis_angle_of(matmul(r, transpose(g)))
        if aa is None:
            continue
        axis, theta = aa
        cand = (abs(theta), "xyz".index(axis), axis, -theta)
        if best is None or cand < best:
            best = cand
    if best is None:
        return None
    return best[2], best[3]


def lock_action(world: World, i: int, locking: bool) -> Action:
    lock = world.lock[i]
    pid = world.ids[i]
    if lock.kind == "rotate":  # type: ignore[union-attr]
        return Action("rotate_to_lock" if locking else "rotate_to_unlock", pid, axis=lock.axis,  # type: ignore[union-attr]
                      angle_deg=-lock.angle_deg if locking else lock.angle_deg)  # type: ignore[union-attr,operator]
    pose = Pose(world.target_position[i], ZERO3) if locking else world.unlocked[i]
    return Action("translate_rotate_to_lock" if locking else "rotate_translate_to_unlock", pid, after_pose=pose)


def slot_actions(world: World, state: State, i: int) -> list[Action]:
    """Every grounded action on slot i in `state`, legal or not, in canonical order."""
    s = state.slots[i]
    pid = world.ids[i]
    if not s.present:
        return [Action("insert", pid)]
    out = [Action("remove", s.occupant), Action("reset_pose", s.occupant)]  # type: ignore[arg-type]
    if world.rot_off(i, s):
        fix = rotation_fix(world, i, s.rotation)
        if fix is not None:
            out.append(Action("rotate", s.occupant, axis=fix[0], angle_deg=fix[1]))  # type: ignore[arg-type]
    if world.lock[i] is not None and s.occupant == pid:
        out.append(lock_action(world, i, locking=not s.locked))
    if s.occupant != pid:
        out.append(Action("replace", s.occupant, target_part_id=pid))  # type: ignore[arg-type]
    return out


def group_actions(world: World, state: State) -> list[Action]:
    """Grounded separate/join moves (SEMANTICS §5), only for assemblies that need group moves.

    Every separable group of two or more parts (World.group_candidates) along every direction:
    separate when all members are in the assembly, join when all are absent. The engine checks
    locks, supports and paths.
    """
    if not world.needs_groups:
        return []
    ids = world.ids
    out = []
    for g in world.group_candidates:
        members = [j for j in range(len(ids)) if g >> j & 1]
        if g & state.mask == g:
            names = [state.slots[j].occupant for j in members]
            out.extend(Action.group("separate", names, d) for d in DIRECTIONS)
        elif not g & state.mask:
            out.extend(Action.group("join", [ids[j] for j in members], d) for d in DIRECTIONS)
    return out


def legal_actions(world: World, state: State, slots=None) -> list[Action]:
    idx = range(len(world.ids)) if slots is None else slots
    single = [a for i in idx for a in slot_actions(world, state, i) if world.check(state, a) is None]
    return single + [a for a in group_actions(world, state) if world.check(state, a) is None]

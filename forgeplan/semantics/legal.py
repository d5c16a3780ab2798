"""The grounded actions on offer in one state: the repair search, baselines and masks step with these.

The parameters come from `forgeplan.semantics.grounded` (lock values, the repairing turn, the candidate
groups); this module lists, per state, the actions whose part is in the right place for them, legal or
not (`slot_actions`, `group_actions`), and filters them with the engine (`legal_actions`).
"""

from __future__ import annotations

from ..model.actions import Action, Insert, Join, Remove, Replace, ResetPose, Rotate, Separate
from ..model.assembly import DIRECTIONS
from ..model.state import State
from .engine import World
from .grounded import lock_action, rotation_fix, separable_groups


def slot_actions(world: World, state: State, i: int) -> list[Action]:
    """Every grounded action on slot i in `state`, legal or not, in canonical order."""
    s = state.slots[i]
    pid = world.ids[i]
    if not s.present:
        return [Insert(pid)]
    out: list[Action] = [Remove(s.occupant), ResetPose(s.occupant)]  # type: ignore[arg-type]
    if world.rot_off(i, s):
        fix = rotation_fix(world, i, s.rotation)
        if fix is not None:
            out.append(Rotate(s.occupant, *fix))  # type: ignore[arg-type]
    if world.lock[i] is not None and s.occupant == pid:
        out.append(lock_action(world, i, locking=not s.locked))
    if s.occupant != pid:
        out.append(Replace(s.occupant, pid))  # type: ignore[arg-type]
    return out


def group_actions(world: World, state: State) -> list[Action]:
    """Grounded separate/join moves (SEMANTICS §5), only for assemblies that need group moves.

    Every separable group of two or more parts (grounded.separable_groups) along every direction:
    separate when all members are in the assembly, join when all are absent. The engine checks
    locks, supports and paths.
    """
    if not world.needs_groups:
        return []
    ids = world.ids
    out: list[Action] = []
    for g in sorted(separable_groups(world), key=lambda m: (bin(m).count("1"), m)):
        members = [j for j in range(len(ids)) if g >> j & 1]
        if g & state.mask == g:
            names = [state.slots[j].occupant for j in members]
            out.extend(Separate(tuple(names), d) for d in DIRECTIONS)
        elif not g & state.mask:
            out.extend(Join(tuple(ids[j] for j in members), d) for d in DIRECTIONS)
    return out


def legal_actions(world: World, state: State, slots=None) -> list[Action]:
    idx = range(len(world.ids)) if slots is None else slots
    single = [a for i in idx for a in slot_actions(world, state, i) if world.check(state, a) is None]
    return single + [a for a in group_actions(world, state) if world.check(state, a) is None]

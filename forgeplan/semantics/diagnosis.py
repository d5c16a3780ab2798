"""The expected annotation of a task: its mistakes (SEMANTICS §7) with `visible` and observable fields."""

from __future__ import annotations

from ..model.actions import Action, Insert, Replace, ResetPose, Rotate
from ..model.rotations import axis_angle_of, euler_to_matrix
from ..model.state import State
from .engine import World
from .grounded import lock_action, rotation_fix

MISTAKE_TYPES = ("missing_part", "wrong_orientation", "misplacement", "under_insertion", "wrong_part", "interference_lock")


def repair_action(world: World, state: State, i: int, mtype: str) -> Action | None:
    """The direct repair action of one mistake (used for `visible`, the repair search and baselines)."""
    s = state.slots[i]
    pid = world.ids[i]
    if mtype == "missing_part":
        return Insert(pid)
    if mtype == "wrong_part":
        return Replace(s.occupant, pid)  # type: ignore[arg-type]  # a present slot has an occupant
    if mtype == "wrong_orientation":
        fix = rotation_fix(world, i, s.rotation)
        return None if fix is None else Rotate(s.occupant, *fix)  # type: ignore[arg-type]  # a present slot has an occupant
    if mtype in ("misplacement", "under_insertion"):
        return ResetPose(s.occupant)  # type: ignore[arg-type]  # a present slot has an occupant
    if mtype == "interference_lock":
        return lock_action(world, i, locking=not s.locked)
    raise ValueError(mtype)


def diagnose(world: World, actual: State, target: State) -> list[dict]:
    """Mistakes of `actual` against `target`, in slot order then type order, as contract dicts."""
    out = []
    for i, (s, t) in enumerate(zip(actual.slots, target.slots)):
        pid = world.ids[i]
        found: list[tuple[str, dict]] = []
        if t.present and not s.present:
            found.append(("missing_part", {}))
        elif s.present:
            if s.occupant != pid:
                found.append(("wrong_part", {"observed_part_id": s.occupant}))
            if world.rot_off(i, s):
                obs = {}
                aa = axis_angle_of(euler_to_matrix(s.rotation))
                if aa is not None:
                    obs = {"axis": aa[0], "angle_deg": aa[1]}
                found.append(("wrong_orientation", obs))
            if world.position_off(i, s):
                t_pos = world.target_position[i]
                found.append(("misplacement", {"offset": [round(s.position[k] - t_pos[k], 6) for k in range(3)]}))
            if abs(s.seated) > world.tol.pos_tol:
                found.append(("under_insertion", {"offset": s.seated}))
            if world.lock[i] is not None and bool(s.locked) != bool(t.locked):
                found.append(("interference_lock", {"locked": bool(s.locked)}))
        for mtype, obs in found:
            act = repair_action(world, actual, i, mtype)
            visible = act is not None and world.check(actual, act) is None
            out.append({"type": mtype, "part_id": pid, "visible": visible, **obs})
    return out


def faulty_slots(world: World, actual: State, target: State) -> list[int]:
    ids = {m["part_id"] for m in diagnose(world, actual, target)}
    return [i for i, pid in enumerate(world.ids) if pid in ids]

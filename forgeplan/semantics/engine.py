"""The frozen symbolic engine: equivalence, legality and transition (encodings/SEMANTICS.md).

`World` compiles an assembly once (indices, blocker bitmasks, symmetry matrices); `check` says why an
action is illegal in a state (or None), `apply` performs a legal one, `replay` runs a plan and
`restoration` judges it against a target. The rules that differ between straight, group and partial
moves (how blocking is read, offsets, slides, separability) are the world's move model's
(`World.moves`, `semantics.moves`): the engine never asks which kind its assembly is.

One module on purpose (about 600 lines): the frozen semantics reads top to bottom here — states,
derived predicates, the legality table with one rule per action kind (partial moves included),
transition, equivalence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

from ..geometry.displacement import collision, out_of_bound, shapes, shifted
from ..geometry.relations import blocking_relation, symmetry_group
from ..model.actions import Action, GroupMove, Insert, PoseMove, Replace, Slide, Turn, lock_action
from ..model.assembly import DIRECTIONS, Assembly, unlocked_pose
from ..model.rotations import (angle_diff, angle_of, as_float, axis_matrix, euler_to_matrix, matmul, matrix_to_euler,
                               transpose)
from ..model.state import NO_OFFSET, NO_ROTATION, Offset, Slot, State, Tolerances, is_offset
from .moves import MoveModel, move_model

# reason codes -> the verifier's failure categories (FORGE Table 9)
DEPENDENCY_CODES = frozenset({"blocked", "held", "locked", "supports_missing", "holds_not_restored"})
PARAMETER_CODES = frozenset({"bad_axis", "bad_angle", "bad_after_pose", "bad_direction", "bad_distance", "bad_offset"})


class Illegal(NamedTuple):
    code: str
    message: str


class IllegalAction(Exception):
    def __init__(self, step: int, action: Action, reason: Illegal):
        self.step, self.action, self.reason = step, action, reason   # step: 0-based index into the plan
        super().__init__(f"step {step + 1} {action}: {reason.message}")


@dataclass
class Replay:
    final: State
    failure: IllegalAction | None


@dataclass
class Restoration(Replay):
    """A replay judged against a target (World.restoration)."""
    restored: bool   # every step legal and the final state target-equivalent


class World:
    """An assembly compiled for fast symbolic reasoning under fixed tolerances."""

    def __init__(self, assembly: Assembly, tolerances: Tolerances = Tolerances(), group_moves: bool | None = None):
        """`group_moves`: whether separate/join are in play; None (the default) means exactly when the
        assembly's kind needs them (SEMANTICS §5, §9). Forcing it lets tests study group moves on small fixtures."""
        self.assembly, self.tol = assembly, tolerances
        self.ids: tuple[str, ...] = assembly.part_ids
        self.index = {pid: i for i, pid in enumerate(self.ids)}
        self.parts = assembly.parts
        self.spare_slot = {w.part_id: self.index[w.variant_of] for w in assembly.spares}
        self.lock = [p.lock for p in self.parts]
        self.target_position = [p.centroid for p in self.parts]
        self.unlocked = [unlocked_pose(p) if p.lock and p.lock.kind == "coupled" else None for p in self.parts]
        blockers = {(p.part_id, d): 0 for p in self.parts for d in DIRECTIONS}
        for d, edges in blocking_relation(assembly).items():
            for b, q in edges:
                blockers[(q, d)] |= 1 << self.index[b]
        self.dir_masks = [tuple((d, blockers[(p.part_id, d)]) for d in p.removal_dirs) for p in self.parts]
        self.blockers_along = [{d: blockers[(p.part_id, d)] for d in DIRECTIONS} for p in self.parts]
        self._separable: dict[tuple, bool] = {}
        self._group_moves = group_moves
        self._moves: MoveModel | None = None
        self.supports_mask = [sum(1 << self.index[s] for s in p.supports) for p in self.parts]
        self.holders = [tuple(j for j, q in enumerate(self.parts) if q.lock and p.part_id in q.lock.holds)
                        for p in self.parts]
        self.holds = [tuple(self.index[h] for h in p.lock.holds) if p.lock else () for p in self.parts]
        self.symmetry = [tuple(as_float(g) for g in symmetry_group(p)) for p in self.parts]

    # ------------------------------------------------------------------ states

    def target_slot(self, i: int) -> Slot:
        return Slot(True, self.ids[i], self.target_position[i], NO_ROTATION, 0.0, True if self.lock[i] else None)

    def target_state(self) -> State:
        return State(self.target_slot(i) for i in range(len(self.ids)))

    def empty_slot(self, i: int) -> Slot:
        return Slot(False, None, self.target_position[i], NO_ROTATION, 0.0, False if self.lock[i] else None)

    # ------------------------------------------------------------------ derived predicates

    def pose_off(self, i: int, slot: Slot) -> bool:
        return self.position_off(i, slot) or abs(slot.seated) > self.tol.pos_tol

    def position_off(self, i: int, slot: Slot) -> bool:
        t = self.target_position[i]
        return math.sqrt(sum((slot.position[k] - t[k]) ** 2 for k in range(3))) > self.tol.pos_tol

    def rotation_error(self, i: int, rotation) -> float:
        """Angle (degrees) from the target orientation, modulo the part's symmetry group."""
        if rotation == NO_ROTATION:
            return 0.0
        r = euler_to_matrix(rotation)
        return min(angle_of(matmul(r, transpose(g))) for g in self.symmetry[i])

    def rot_off(self, i: int, slot: Slot) -> bool:
        if slot.rotation == NO_ROTATION or angle_of(euler_to_matrix(slot.rotation)) <= self.tol.rot_tol:
            return False  # within tolerance of the identity, which every symmetry group contains
        return self.rotation_error(i, slot.rotation) > self.tol.rot_tol

    def restored(self, state: State, i: int) -> bool:
        s = state.slots[i]
        return (s.present and s.occupant == self.ids[i] and not self.pose_off(i, s) and not self.rot_off(i, s)
                and s.offset == NO_OFFSET)

    def held(self, state: State, i: int) -> bool:
        return any(state.slots[j].present and state.slots[j].locked for j in self.holders[i])

    def free_direction(self, state: State, i: int, at: Offset | None = None) -> str | None:
        """A removal direction along which slot `i` (at its offset, or at `at`) has a clear ray."""
        return self.moves.free_direction(state, i, self.dir_masks[i], at)

    def blockers(self, state: State, i: int, d: str, at: Offset | None = None) -> int:
        """Mask of the present slots (other than `i`) that block slot `i` along `d`, every part where it is
        (SEMANTICS §1; displaced ones from their offsets, §9). `at`: slot `i`'s offset instead of its own."""
        return self.moves.blockers(state, i, d, self.blockers_along[i][d], at)

    @property
    def moves(self) -> MoveModel:
        """The move model of the assembly's kind (`semantics.moves`), decided on first use."""
        if self._moves is None:
            self._moves = move_model(self.assembly, self._group_moves)
        return self._moves

    def _clearance(self, state: State, i: int) -> Illegal | None:
        s = state.slots[i]
        if s.locked:
            return Illegal("locked", f"{self.ids[i]} is an engaged lock; unlock it first")
        if self.held(state, i):
            return Illegal("held", f"{self.ids[i]} is held by engaged lock {self._holder_names(state, i)}")
        if self.free_direction(state, i) is None:
            return Illegal("blocked", f"{self.ids[i]} is blocked in every removal direction by {self.blocker_names(state, i)}")
        return None

    def _holder_names(self, state: State, i: int) -> str:
        return ", ".join(self.ids[j] for j in self.holders[i] if state.slots[j].present and state.slots[j].locked)

    def blocker_names(self, state: State, i: int, at: Offset | None = None) -> str:
        return "; ".join(f"{d}: {self._names(self.blockers(state, i, d, at))}" for d in self.parts[i].removal_dirs)

    # ------------------------------------------------------------------ legality

    def _slot_of(self, part_id: str) -> int | None:
        i = self.index.get(part_id)
        return self.spare_slot.get(part_id) if i is None else i

    def slot_index(self, part_id: str) -> int:
        """The slot of a known part (a spare's: the slot it belongs in); KeyError for an unknown one."""
        return self.index[part_id] if part_id in self.index else self.spare_slot[part_id]

    def check(self, state: State, a: Action) -> Illegal | None:
        """None when `a` is legal in `state`, else the reason (one rule per action kind: CHECKS)."""
        return CHECKS[a.name](self, state, a)

    def _check_group(self, state: State, a: GroupMove) -> Illegal | None:
        """separate / join (SEMANTICS §5): a group of two or more parts moving along one direction."""
        if not self.moves.groups:
            return Illegal("not_applicable", f"{self.assembly.assembly_id} comes apart one part at a time: group moves "
                                             "(separate/join) exist only for assemblies that need them")
        if len(a.part_ids) < 2 or len(set(a.part_ids)) != len(a.part_ids):
            return Illegal("not_applicable", f"{a.name} needs two or more distinct parts (one part: remove/insert)")
        if a.direction not in DIRECTIONS:
            return Illegal("bad_direction", f"direction must be one of {list(DIRECTIONS)}, got {a.direction!r}")
        idx = []
        for x in a.part_ids:
            i = self._slot_of(x)
            if i is None:
                return Illegal("unknown_part", f"unknown part id {x!r}")
            if i in idx:
                return Illegal("not_applicable", f"{x} shares a slot with another member")
            idx.append(i)
        group = sum(1 << i for i in idx)
        at = self._group_offsets(state, a, idx)
        if isinstance(at, Illegal):
            return at
        member_rule = self._separate_member if a.name == "separate" else self._join_member
        for x, i, o in zip(a.part_ids, idx, at):
            if a.direction not in self.parts[i].removal_dirs:
                return Illegal("bad_direction", f"{x} cannot move along {a.direction} (removal directions "
                                                f"{list(self.parts[i].removal_dirs)})")
            reason = member_rule(state, x, i, a.direction, group, o)
            if reason is not None:
                return reason
        if not self.separable(group, tuple(o for _, o in sorted(zip(idx, at)))):
            return Illegal("not_separable", "the group cannot itself be taken apart in free space")
        return None

    def _group_offsets(self, state: State, a: Action, idx: list[int]) -> list[Offset] | Illegal:
        """The members' offsets: where they are (separate) or where join puts them (SEMANTICS §9)."""
        if a.name == "separate":
            return [state.slots[i].offset for i in idx]
        given = getattr(a, "offsets", ())
        if not given:
            return [NO_OFFSET] * len(idx)
        if len(given) != len(idx) or not all(is_offset(o) for o in given):
            return Illegal("bad_offset", f"join offsets must be one [dx, dy, dz] of whole numbers per member, got {given!r}")
        if any(tuple(o) != NO_OFFSET for o in given) and (why := self.moves.offsets_refused("joined")):
            return Illegal("not_applicable", why)
        if far := out_of_bound(self.assembly, given):
            return Illegal("bad_offset", f"join {far}")
        return [tuple(o) for o in given]

    def _separate_member(self, state: State, x: str, i: int, d: str, group: int, at: Offset) -> Illegal | None:
        s = state.slots[i]
        if not s.present or s.occupant != x:
            return Illegal("not_present", f"{x} is not in the assembly")
        if s.locked:
            return Illegal("locked", f"{x} is an engaged lock; unlock it first")
        if self.held(state, i):
            return Illegal("held", f"{x} is held by engaged lock {self._holder_names(state, i)}")
        return self._blocked_along(x, i, d, self.blockers(state, i, d) & ~group)

    def _join_member(self, state: State, x: str, i: int, d: str, group: int, at: Offset) -> Illegal | None:
        s = state.slots[i]
        if x not in self.index:
            return Illegal("not_applicable", f"{x} is a spare part; only target parts are inserted")
        if s.present:
            return Illegal("already_present", f"slot {x} is already occupied by {s.occupant}")
        missing = self.supports_mask[i] & ~(state.mask | group)
        if missing:
            return Illegal("supports_missing", f"{x} needs its supports present: {self._names(missing)}")
        if self.held(state, i):
            return Illegal("held", f"{x} is held by engaged lock {self._holder_names(state, i)}")
        return self._blocked_along(x, i, d, self.blockers(state, i, d, at) & ~group)

    def _blocked_along(self, x: str, i: int, d: str, blocking: int) -> Illegal | None:
        return Illegal("blocked", f"{x} is blocked along {d} by {self._names(blocking)}") if blocking else None

    def separable(self, group: int, offsets: tuple[Offset, ...] | None = None) -> bool:
        """Can the slots of bitmask `group` (at `offsets`, catalog order; default the target) be
        pre-assembled (separated) in free space? By the move model's rule (§5 or §9); cached."""
        key = (group, self.moves.where(offsets))
        ok = self._separable.get(key)
        if ok is None:
            members = [self.ids[j] for j in range(len(self.ids)) if group >> j & 1]
            ok = self._separable[key] = self.moves.separable(members, key[1])
        return ok

    def _names(self, mask: int) -> str:
        return ", ".join(self.ids[j] for j in range(len(self.ids)) if mask >> j & 1)

    # ------------------------------------------------------------------ transition

    def apply(self, state: State, a: Action) -> State:
        """The successor of `state` under a legal action `a` (call `check` first; one rule per kind: MOVES)."""
        return MOVES[a.name](self, state, a)

    def inserted_slot(self, i: int) -> Slot:
        """Slot i just after its target part goes in: at its target pose, a lock disengaged."""
        return self.target_slot(i)._replace(locked=False if self.lock[i] else None)

    def step(self, state: State, a: Action, step: int = 0) -> State:
        reason = self.check(state, a)
        if reason is not None:
            raise IllegalAction(step, a, reason)
        return self.apply(state, a)

    def replay(self, state: State, actions: Sequence[Action]) -> Replay:
        for k, a in enumerate(actions):
            reason = self.check(state, a)
            if reason is not None:
                return Replay(state, IllegalAction(k, a, reason))
            state = self.apply(state, a)
        return Replay(state, None)

    def restoration(self, actual: State, plan: Sequence[Action], target: State) -> Restoration:
        """Replay `plan` from `actual` and judge whether it restores `target`: every step legal and the end
        target-equivalent. The one test every plan passes, whoever made it (a planner, an LLM, a file);
        the replay comes along for the callers that explain a failure."""
        r = self.replay(actual, plan)
        return Restoration(r.final, r.failure, r.failure is None and self.equivalent(r.final, target))

    # ------------------------------------------------------------------ equivalence

    def differences(self, state: State, target: State) -> list[str]:
        """Why `state` is not target-equivalent (empty list when it is)."""
        return [d for i in range(len(self.ids)) for d in self.slot_differences(state, target, i)]

    def slot_differences(self, state: State, target: State, i: int) -> list[str]:
        """Why slot `i` of `state` is not target-equivalent (empty list when it is)."""
        s, t, pid = state.slots[i], target.slots[i], self.ids[i]
        if s.present != t.present:
            return [f"{pid}: {'present' if s.present else 'absent'}, target {'present' if t.present else 'absent'}"]
        if not s.present:
            return []
        out = []
        if s.occupant != t.occupant:
            out.append(f"{pid}: occupied by {s.occupant}, target {t.occupant}")
        if self.position_off(i, s):
            out.append(f"{pid}: position {list(s.position)}, target {list(t.position)}")
        if abs(s.seated - t.seated) > self.tol.pos_tol:
            out.append(f"{pid}: seated offset {s.seated:g}, target {t.seated:g}")
        if self.rotation_error(i, s.rotation) > self.tol.rot_tol + self.rotation_error(i, t.rotation):
            out.append(f"{pid}: rotation {list(s.rotation)} is {self.rotation_error(i, s.rotation):.1f} deg off")
        if s.offset != t.offset:
            out.append(f"{pid}: displaced by {list(s.offset)} voxels, target {list(t.offset)}")
        if self.lock[i] and bool(s.locked) != bool(t.locked):
            out.append(f"{pid}: {'engaged' if s.locked else 'disengaged'}, target {'engaged' if t.locked else 'disengaged'}")
        return out

    def equivalent(self, state: State, target: State) -> bool:
        return not self.differences(state, target)


# ----------------------------------------------------------------------------- legality, one rule per action kind
# Each single-part rule gets the world, the state, the action and the slot index of its part; `_on_part`
# has already resolved the part and, where the table says so, checked that it is present.

def _check_insert(w: World, state: State, a: Insert, i: int) -> Illegal | None:
    s = state.slots[i]
    if a.part_id not in w.index:
        return Illegal("not_applicable", f"{a.part_id} is a spare part; only target parts are inserted")
    if s.present:
        return Illegal("already_present", f"slot {a.part_id} is already occupied by {s.occupant}")
    missing = w.supports_mask[i] & ~state.mask
    if missing:
        return Illegal("supports_missing", f"{a.part_id} needs its supports present: {w._names(missing)}")
    if w.held(state, i):
        return Illegal("held", f"{a.part_id} is held by engaged lock {w._holder_names(state, i)}")
    at = a.offset
    if not is_offset(at):
        return Illegal("bad_offset", f"insert offset must be [dx, dy, dz] of whole numbers, got {at!r}")
    if at != NO_OFFSET and (why := w.moves.offsets_refused("inserted")):
        return Illegal("not_applicable", why)
    if far := out_of_bound(w.assembly, (at,)):
        return Illegal("bad_offset", f"insert {far}")
    if w.free_direction(state, i, at) is None:
        return Illegal("blocked", f"no free insertion path for {a.part_id}: {w.blocker_names(state, i, at)}")
    return None


def _check_clear(w: World, state: State, a: Action, i: int) -> Illegal | None:
    """remove, reset_pose: the part must be free to come out."""
    return w._clearance(state, i)


def _check_rotate(w: World, state: State, a: Turn, i: int) -> Illegal | None:
    if a.axis not in ("x", "y", "z"):
        return Illegal("bad_axis", f"rotate axis must be x, y or z, got {a.axis!r}")
    if not math.isfinite(a.angle_deg):
        return Illegal("bad_angle", "rotate needs a finite angle_deg")
    return w._clearance(state, i)


def _check_replace(w: World, state: State, a: Replace, i: int) -> Illegal | None:
    target = w.index.get(a.target_part_id)
    if a.part_id in w.index or w.spare_slot.get(a.part_id) != target:
        return Illegal("not_applicable", f"{a.part_id} is not a spare variant of {a.target_part_id}")
    return w._clearance(state, i)


# lock action -> (mechanism it needs, whether it engages the lock)
LOCK_ACTIONS = {"rotate_to_unlock": ("rotate", False), "rotate_to_lock": ("rotate", True),
                "rotate_translate_to_unlock": ("coupled", False), "translate_rotate_to_lock": ("coupled", True)}


def _check_lock(w: World, state: State, a: Turn | PoseMove, i: int) -> Illegal | None:
    want, locking = LOCK_ACTIONS[a.name]
    lock, s = w.lock[i], state.slots[i]
    if lock is None or lock.kind != want:
        return Illegal("not_applicable", f"{a.part_id} has no {want} lock mechanism")
    if locking and s.locked:
        return Illegal("already_locked", f"{a.part_id} is already engaged")
    if not locking and not s.locked:
        return Illegal("already_unlocked", f"{a.part_id} is already disengaged")
    reason = _lock_parameters(w, a, i, locking)
    if reason is not None or not locking:
        return reason
    if want == "rotate" and (w.pose_off(i, s) or w.rot_off(i, s)):
        return Illegal("holds_not_restored", f"{a.part_id} is not at its target pose")
    bad = [w.ids[j] for j in w.holds[i] if not w.restored(state, j)]
    if bad:
        return Illegal("holds_not_restored", f"{a.part_id} can lock only when {', '.join(bad)} are restored")
    return None


def _lock_parameters(w: World, a, i: int, locking: bool) -> Illegal | None:
    """The action's axis and angle, or its after_pose, must be the mechanism's (model.actions.lock_action)."""
    expected = lock_action(w.parts[i], locking)
    if isinstance(expected, PoseMove):
        if not w.tol.poses_close(a.after_pose, expected.after_pose):
            return Illegal("bad_after_pose", f"{a.part_id} after_pose must be {expected.after_pose.to_json()}")
        return None
    if a.axis != expected.axis:
        return Illegal("bad_axis", f"{a.part_id} turns about {expected.axis}, not {a.axis}")
    expect = expected.angle_deg
    if not math.isfinite(a.angle_deg) or angle_diff(a.angle_deg, expect) > w.tol.rot_tol:
        return Illegal("bad_angle", f"{a.part_id} {'locks' if locking else 'unlocks'} with angle {expect:g}, not {a.angle_deg}")
    return None


def _on_part(rule: Callable, needs_present: bool = True) -> Callable[[World, State, Action], Illegal | None]:
    """A single-part rule behind the checks every single-part kind shares: the part is known and, where
    `needs_present`, in its slot; the rule then gets the slot index too."""
    def check(w: World, state: State, a) -> Illegal | None:
        i = w._slot_of(a.part_id)
        if i is None:
            return Illegal("unknown_part", f"unknown part id {a.part_id!r}")
        s = state.slots[i]
        if needs_present and (not s.present or s.occupant != a.part_id):
            return Illegal("not_present", f"{a.part_id} is not in the assembly")
        return rule(w, state, a, i)
    return check


# ----------------------------------------------------------------------------- slide (SEMANTICS §9)
# Every intermediate position must be collision-free against the present non-members: no gap between a
# member and a non-member along the direction is below the distance (geometry/displacement.py).

def _slide_members(w: World, state: State, a: Slide) -> tuple[list[int], Illegal | None]:
    """The members' slot indices, or why one of them may not move."""
    idx: list[int] = []
    for x in a.part_ids:
        i = w._slot_of(x)
        if i is None:
            return idx, Illegal("unknown_part", f"unknown part id {x!r}")
        s = state.slots[i]
        if i in idx:
            return idx, Illegal("not_applicable", f"{x} shares a slot with another member")
        if not s.present or s.occupant != x:
            return idx, Illegal("not_present", f"{x} is not in the assembly")
        if s.locked:
            return idx, Illegal("locked", f"{x} is an engaged lock; unlock it first")
        if w.held(state, i):
            return idx, Illegal("held", f"{x} is held by engaged lock {w._holder_names(state, i)}")
        if a.direction not in w.parts[i].removal_dirs:
            return idx, Illegal("bad_direction", f"{x} cannot move along {a.direction} (removal directions "
                                                 f"{list(w.parts[i].removal_dirs)})")
        idx.append(i)
    return idx, None


def _check_slide(w: World, state: State, a: Slide) -> Illegal | None:
    """None when the slide is legal in `state`, else the reason."""
    if why := w.moves.slides_refused():
        return Illegal("not_applicable", why)
    if not a.part_ids:
        return Illegal("not_applicable", "slide needs one or more parts")
    if a.direction not in DIRECTIONS:
        return Illegal("bad_direction", f"direction must be one of {list(DIRECTIONS)}, got {a.direction!r}")
    if isinstance(a.distance, bool) or not isinstance(a.distance, int) or a.distance < 1:
        return Illegal("bad_distance", f"distance must be a whole number of voxels >= 1, got {a.distance!r}")
    idx, reason = _slide_members(w, state, a)
    if reason is not None:
        return reason
    far = out_of_bound(w.assembly, [shifted(state.slots[i].offset, a.direction, a.distance) for i in idx])
    if far:
        return Illegal("bad_distance", f"slide to {far}")
    group = sum(1 << i for i in idx)
    others = [j for j in range(len(w.ids)) if state.mask >> j & 1 and not group >> j & 1]
    hit = collision(shapes(w.assembly), [s.offset for s in state.slots], idx, others, a.direction, a.distance)
    if hit is not None:
        i, j, room = hit
        return Illegal("blocked", f"{w.ids[i]} would run into {w.ids[j]} along {a.direction} after "
                                  f"{max(room, 0)} of {a.distance} step(s)")
    return None


def _apply_slide(w: World, state: State, a: Slide) -> State:
    """Every member's offset moves `distance` steps along `direction`."""
    for x in a.part_ids:
        i = w.slot_index(x)
        s = state.slots[i]
        state = state.replace(i, s._replace(offset=shifted(s.offset, a.direction, a.distance)))
    return state


# action kind -> its legality rule (world, state, action)
CHECKS: dict[str, Callable[[World, State, Any], Illegal | None]] = {
    "insert": _on_part(_check_insert, needs_present=False),
    "remove": _on_part(_check_clear),
    "reset_pose": _on_part(_check_clear),
    "rotate": _on_part(_check_rotate),
    "replace": _on_part(_check_replace),
    **{name: _on_part(_check_lock) for name in LOCK_ACTIONS},
    "separate": World._check_group,
    "join": World._check_group,
    "slide": _check_slide,
}


def _at_slot(move: Callable[[World, State, Any, int], Slot]) -> Callable[[World, State, Action], State]:
    """A single-part transition: `move` gives the new content of the action's slot."""
    def apply(w: World, state: State, a) -> State:
        i = w.slot_index(a.part_id)
        return state.replace(i, move(w, state, a, i))
    return apply


def _turned(w: World, state: State, a: Turn, i: int) -> Slot:
    s = state.slots[i]
    return s._replace(rotation=matrix_to_euler(matmul(axis_matrix(a.axis, a.angle_deg), euler_to_matrix(s.rotation))))


def _unlocked(w: World, state: State, a: PoseMove, i: int) -> Slot:
    up = w.unlocked[i]
    assert up is not None, "the pose-move check admits only parts with a coupled lock"
    return state.slots[i]._replace(locked=False, position=up.position, rotation=up.rotation, seated=0.0)


def _move_group(w: World, state: State, a: GroupMove) -> State:
    """separate empties the members' slots; join fills them, at their offsets when it names any (§9)."""
    offsets = getattr(a, "offsets", ()) or (NO_OFFSET,) * len(a.part_ids)
    for x, o in zip(a.part_ids, offsets):
        j = w.slot_index(x)
        state = state.replace(j, w.empty_slot(j) if a.name == "separate" else w.inserted_slot(j)._replace(offset=o))
    return state


def _replace(w: World, state: State, a: Replace) -> State:
    """The target part takes the spare's place: at its target pose, displaced as the spare was (§9)."""
    t = w.index[a.target_part_id]
    return state.replace(t, w.inserted_slot(t)._replace(offset=state.slots[t].offset))


# action kind -> its transition (world, state, action) -> successor state
MOVES: dict[str, Callable[[World, State, Any], State]] = {
    "remove": _at_slot(lambda w, st, a, i: w.empty_slot(i)),
    "insert": _at_slot(lambda w, st, a, i: w.inserted_slot(i)._replace(offset=a.offset)),
    "reset_pose": _at_slot(lambda w, st, a, i: st.slots[i]._replace(position=w.target_position[i], seated=0.0)),
    "rotate": _at_slot(_turned),
    "replace": _replace,
    "rotate_to_unlock": _at_slot(lambda w, st, a, i: st.slots[i]._replace(locked=False)),
    "rotate_to_lock": _at_slot(lambda w, st, a, i: st.slots[i]._replace(locked=True)),
    "rotate_translate_to_unlock": _at_slot(_unlocked),
    "translate_rotate_to_lock": _at_slot(lambda w, st, a, i: w.target_slot(i)),
    "separate": _move_group,
    "join": _move_group,
    "slide": _apply_slide,
}

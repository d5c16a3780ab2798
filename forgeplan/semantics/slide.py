"""The `slide` action's legality and transition (SEMANTICS.md §8), registered in the engine's tables.

`slide(G, d, k)` translates the present parts `G` by `k` unit steps along `d`. Every intermediate
position must be collision-free against the present non-members, which the voxel gaps of
`geometry/displacement.py` answer pairwise: the slide is legal iff no gap between a member and a
non-member along `d` is below `k`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..geometry.displacement import shapes, shifted
from ..model.assembly import DIRECTIONS
from ..model.state import State

if TYPE_CHECKING:
    from .engine import Illegal, World


def _members(w: "World", state: State, a) -> "tuple[list[int], Illegal | None]":
    """The members' slot indices, or why one of them may not move."""
    from .engine import Illegal

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


def check_slide(w: "World", state: State, a) -> "Illegal | None":
    """None when the slide is legal in `state`, else the reason."""
    from .engine import Illegal

    if not w.partial:
        return Illegal("not_applicable", f"{w.assembly.assembly_id} comes apart with straight moves: slide exists only "
                                         "for assemblies that need partial moves")
    if not a.part_ids:
        return Illegal("not_applicable", "slide needs one or more parts")
    if a.direction not in DIRECTIONS:
        return Illegal("bad_direction", f"direction must be one of {list(DIRECTIONS)}, got {a.direction!r}")
    if isinstance(a.distance, bool) or not isinstance(a.distance, int) or a.distance < 1:
        return Illegal("bad_distance", f"distance must be a whole number of voxels >= 1, got {a.distance!r}")
    idx, reason = _members(w, state, a)
    if reason is not None:
        return reason
    group = sum(1 << i for i in idx)
    gaps, k = shapes(w.assembly).gaps, DIRECTIONS.index(a.direction)
    others = [j for j in range(len(w.ids)) if state.mask >> j & 1 and not group >> j & 1]
    for i in idx:
        oi = state.slots[i].offset
        for j in others:
            oj = state.slots[j].offset
            room = gaps(i, j, (oj[0] - oi[0], oj[1] - oi[1], oj[2] - oi[2]))[k]
            if room < a.distance:
                return Illegal("blocked", f"{w.ids[i]} would run into {w.ids[j]} along {a.direction} after "
                                          f"{max(room, 0)} of {a.distance} step(s)")
    return None


def apply_slide(w: "World", state: State, a) -> State:
    """Every member's offset moves `distance` steps along `direction`."""
    for x in a.part_ids:
        i = w.slot_index(x)
        s = state.slots[i]
        state = state.replace(i, s._replace(offset=shifted(s.offset, a.direction, a.distance)))
    return state

"""Symbolic states: one record per slot, immutable, with a presence bitmask for fast legality checks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, NamedTuple

from .rotations import angle_of, euler_to_matrix, matmul, transpose

if TYPE_CHECKING:
    from .assembly import Pose

Vec = tuple[float, float, float]
Offset = tuple[int, int, int]
NO_OFFSET: Offset = (0, 0, 0)        # the origin of a slot's offset (SEMANTICS §9): at its target position
NO_ROTATION: Vec = (0.0, 0.0, 0.0)    # and of its rotation (Euler degrees): the target orientation


def is_offset(o) -> bool:
    """Is `o` an offset as a plan may write it: three whole numbers (booleans are not)?"""
    return (isinstance(o, (list, tuple)) and len(o) == 3
            and all(isinstance(c, int) and not isinstance(c, bool) for c in o))


class Slot(NamedTuple):
    present: bool
    occupant: str | None
    position: Vec
    rotation: Vec
    seated: float
    locked: bool | None  # None for parts without a lock
    offset: Offset = NO_OFFSET   # displacement in voxel units (SEMANTICS §9); 0 unless a slide moved it


@dataclass(frozen=True)
class Tolerances:
    pos_tol: float = 0.05
    rot_tol: float = 2.0

    def to_json(self) -> dict:
        return {"pos_tol": self.pos_tol, "rot_tol_deg": self.rot_tol}

    def poses_close(self, a: Pose, b: Pose) -> bool:
        """Pose `a` is within tolerance of pose `b`: position and orientation (a non-finite value never is)."""
        if not all(math.isfinite(v) for v in (*a.position, *a.rotation)):
            return False
        dist = math.sqrt(sum((a.position[k] - b.position[k]) ** 2 for k in range(3)))
        rel = matmul(transpose(euler_to_matrix(b.rotation)), euler_to_matrix(a.rotation))
        return dist <= self.pos_tol and angle_of(rel) <= self.rot_tol


class State:
    """The slots in catalog order plus `mask`, bit i set when slot i is present."""

    __slots__ = ("slots", "mask")

    def __init__(self, slots: Iterable[Slot]):
        self.slots: tuple[Slot, ...] = tuple(slots)
        m = 0
        for i, s in enumerate(self.slots):
            if s.present:
                m |= 1 << i
        self.mask = m

    def replace(self, index: int, slot: Slot) -> "State":
        new = State.__new__(State)
        slots = list(self.slots)
        slots[index] = slot
        new.slots = tuple(slots)
        new.mask = (self.mask | (1 << index)) if slot.present else (self.mask & ~(1 << index))
        return new

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.slots == other.slots

    def __hash__(self) -> int:
        return hash(self.slots)

    def __repr__(self) -> str:
        return f"State({self.slots!r})"

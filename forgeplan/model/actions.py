"""The plan steps every plan producer returns: one frozen class per action kind, and their JSON form.

A kind's class fixes its name and its parameters. Kinds of the same parameter shape share a base that
says how the shape is written (`to_json`, `__str__`, `action_id`) and ordered (`sort_key`); every
shape but a group move acts on one part (`OnePart.part_id`):

- `PartMove` (part_id): remove, insert, reset_pose;
- `Turn` (part_id, axis, angle_deg): rotate, rotate_to_unlock, rotate_to_lock;
- `PoseMove` (part_id, after_pose): rotate_translate_to_unlock, translate_rotate_to_lock;
- `Replace` (part_id = the wrong part, target_part_id);
- `GroupMove` (part_ids, direction): separate, join (SEMANTICS §5);
- `Slide` (part_ids, direction, distance): slide (SEMANTICS §9).

`insert` may name an `offset` and `join` per-member `offsets` (SEMANTICS §9): optional contract fields
(`optional`), written only when non-zero, so plans without partial moves keep their JSON.

`KINDS` lists the kinds in library order, which is the canonical tie-break rank (SEMANTICS §4);
`KIND[name]` builds an action from its name (the decoders). To add a kind: a class here, appended to
`KINDS`, then the engine's tables (ARCHITECTURE.md lists the other places).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .assembly import DIRECTIONS, Part, Pose, unlocked_pose
from .state import NO_OFFSET


class Action:
    """What every action kind offers; the subclasses are frozen dataclasses (hashable, equal by kind and
    parameters)."""

    __slots__ = ()
    name: ClassVar[str]
    params: ClassVar[tuple[str, ...]]   # its JSON fields in the output contract (action_space.json)
    optional: ClassVar[tuple[str, ...]] = ()   # contract fields it may carry besides (written when non-zero)

    @property
    def touched(self) -> tuple[str, ...]:
        """Part ids this action moves (J_move counts distinct ones)."""
        raise NotImplementedError

    @property
    def action_id(self) -> str:
        """MAGAR's action id (minimal_rework.json): name and parts, and a group move's direction."""
        return f"{self.name}:{':'.join(self.touched)}"

    def to_json(self) -> dict:
        raise NotImplementedError

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        """The parameters' part of the canonical key (`rank` and this); `ranks` ranks the part ids."""
        raise NotImplementedError

    @property
    def rank(self) -> int:
        """The kind's canonical tie-break rank (library order)."""
        return RANKS[self.name]


@dataclass(frozen=True)
class OnePart(Action):
    """An action on one part (`part_id`), with the shape's parameters after it."""

    part_id: str

    @property
    def touched(self) -> tuple[str, ...]:
        return (self.part_id,)


@dataclass(frozen=True)
class PartMove(OnePart):
    params: ClassVar[tuple[str, ...]] = ("part_id",)

    def to_json(self) -> dict:
        return {"action": self.name, "part_id": self.part_id}

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return (ranks[self.part_id],)

    def __str__(self) -> str:
        return f"{self.name}({self.part_id})"


class Remove(PartMove):
    name = "remove"


@dataclass(frozen=True)
class Insert(PartMove):
    """A target part goes in; where partial moves are in play it may arrive displaced by `offset` voxels."""

    offset: tuple[int, int, int] = NO_OFFSET
    name: ClassVar[str] = "insert"
    optional: ClassVar[tuple[str, ...]] = ("offset",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "offset", tuple(self.offset))

    def to_json(self) -> dict:
        d = super().to_json()
        if self.offset != NO_OFFSET:
            d["offset"] = list(self.offset)
        return d

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return (ranks[self.part_id],) if self.offset == NO_OFFSET else (ranks[self.part_id], self.offset)

    def __str__(self) -> str:
        return f"insert({self.part_id})" if self.offset == NO_OFFSET else f"insert({self.part_id}, {list(self.offset)})"


class ResetPose(PartMove):
    name = "reset_pose"


@dataclass(frozen=True)
class Turn(OnePart):
    """A turn of `angle_deg` degrees about the principal `axis` ("x", "y" or "z")."""

    axis: str
    angle_deg: float
    params: ClassVar[tuple[str, ...]] = ("part_id", "axis", "angle_deg")

    def to_json(self) -> dict:
        return {"action": self.name, "part_id": self.part_id, "axis": self.axis, "angle_deg": self.angle_deg}

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return (ranks[self.part_id], self.axis, self.angle_deg)

    def __str__(self) -> str:
        return f"{self.name}({self.part_id}, {self.axis}, {self.angle_deg:g})"


class Rotate(Turn):
    name = "rotate"


class RotateToUnlock(Turn):
    name = "rotate_to_unlock"


class RotateToLock(Turn):
    name = "rotate_to_lock"


@dataclass(frozen=True)
class PoseMove(OnePart):
    """A coupled lock's move to `after_pose`."""

    after_pose: Pose
    params: ClassVar[tuple[str, ...]] = ("part_id", "after_pose")

    def to_json(self) -> dict:
        return {"action": self.name, "part_id": self.part_id, "after_pose": self.after_pose.to_json()}

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return (ranks[self.part_id], (self.after_pose.position, self.after_pose.rotation))

    def __str__(self) -> str:
        pose = self.after_pose
        return f"{self.name}({self.part_id}, pos={list(pose.position)}, rot={list(pose.rotation)})"


class RotateTranslateToUnlock(PoseMove):
    name = "rotate_translate_to_unlock"


class TranslateRotateToLock(PoseMove):
    name = "translate_rotate_to_lock"


@dataclass(frozen=True)
class Replace(OnePart):
    """The spare `part_id` (the wrong part) comes out and `target_part_id` goes into its slot."""

    target_part_id: str
    name: ClassVar[str] = "replace"
    params: ClassVar[tuple[str, ...]] = ("wrong_part_id", "target_part_id")

    @property
    def touched(self) -> tuple[str, ...]:
        return (self.part_id, self.target_part_id)

    def to_json(self) -> dict:
        return {"action": "replace", "wrong_part_id": self.part_id, "target_part_id": self.target_part_id}

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return (ranks[self.part_id], ranks[self.target_part_id])

    def __str__(self) -> str:
        return f"replace({self.part_id}, {self.target_part_id})"


@dataclass(frozen=True)
class GroupMove(Action):
    """A group of parts (catalog order) moving together along one direction (SEMANTICS §5)."""

    part_ids: tuple[str, ...]
    direction: str
    params: ClassVar[tuple[str, ...]] = ("part_ids", "direction")

    def __post_init__(self) -> None:
        object.__setattr__(self, "part_ids", tuple(self.part_ids))

    @property
    def touched(self) -> tuple[str, ...]:
        return self.part_ids

    @property
    def action_id(self) -> str:
        return f"{self.name}:{'+'.join(self.part_ids)}:{self.direction}"

    def to_json(self) -> dict:
        return {"action": self.name, "part_ids": list(self.part_ids), "direction": self.direction}

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return (ranks[self.part_ids[0]], DIRECTIONS.index(self.direction), tuple(ranks[x] for x in self.part_ids))

    def __str__(self) -> str:
        return f"{self.name}([{', '.join(self.part_ids)}], {self.direction})"


class Separate(GroupMove):
    name = "separate"


@dataclass(frozen=True)
class Join(GroupMove):
    """A pre-assembled group comes in; `offsets` (one per member, empty = all 0) places it displaced."""

    offsets: tuple[tuple[int, int, int], ...] = ()
    name: ClassVar[str] = "join"
    optional: ClassVar[tuple[str, ...]] = ("offsets",)

    def __post_init__(self) -> None:
        super().__post_init__()
        offsets = tuple(tuple(o) for o in self.offsets or ())
        object.__setattr__(self, "offsets", () if all(o == NO_OFFSET for o in offsets) else offsets)

    def to_json(self) -> dict:
        d = super().to_json()
        if self.offsets:
            d["offsets"] = [list(o) for o in self.offsets]
        return d

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return super().sort_key(ranks) + ((self.offsets,) if self.offsets else ())


@dataclass(frozen=True)
class Slide(Action):
    """One part or a group translating `distance` unit steps along `direction` (SEMANTICS §9)."""

    part_ids: tuple[str, ...]
    direction: str
    distance: int
    name: ClassVar[str] = "slide"
    params: ClassVar[tuple[str, ...]] = ("part_ids", "direction", "distance")

    def __post_init__(self) -> None:
        object.__setattr__(self, "part_ids", tuple(self.part_ids))

    @property
    def touched(self) -> tuple[str, ...]:
        return self.part_ids

    @property
    def action_id(self) -> str:
        return f"slide:{'+'.join(self.part_ids)}:{self.direction}:{self.distance}"

    def to_json(self) -> dict:
        return {"action": "slide", "part_ids": list(self.part_ids), "direction": self.direction, "distance": self.distance}

    def sort_key(self, ranks: dict[str, int]) -> tuple:
        return (ranks[self.part_ids[0]], DIRECTIONS.index(self.direction), self.distance,
                tuple(ranks[x] for x in self.part_ids))

    def __str__(self) -> str:
        return f"slide([{', '.join(self.part_ids)}], {self.direction}, {self.distance})"


# library order = canonical tie-break rank (encodings/SEMANTICS.md §4)
KINDS: tuple[type[Action], ...] = (
    Remove, Insert, ResetPose, Rotate, RotateToUnlock, RotateTranslateToUnlock,
    RotateToLock, TranslateRotateToLock, Replace, Separate, Join, Slide,
)
KIND: dict[str, type[Action]] = {k.name: k for k in KINDS}
ACTION_NAMES = tuple(KIND)
RANKS = {name: r for r, name in enumerate(ACTION_NAMES)}


def moved_parts(actions) -> frozenset[str]:
    return frozenset(p for a in actions for p in a.touched)


def lock_action(part: Part, locking: bool) -> Turn | PoseMove:
    """The one lock (`locking`) or unlock action of a lock part, with its mechanism's parameters."""
    if part.lock is None:
        raise ValueError(f"{part.part_id} has no lock")
    return lock_turn(part, locking) if part.lock.kind == "rotate" else lock_move(part, locking)


def lock_turn(part: Part, locking: bool) -> Turn:
    """A rotate lock unlocks by turning `angle_deg` about its axis and locks by turning back (`-angle_deg`)."""
    lock = part.lock
    if lock is None or lock.axis is None or lock.angle_deg is None:
        raise ValueError(f"{part.part_id} has no rotate lock")
    turn = RotateToLock if locking else RotateToUnlock
    return turn(part.part_id, lock.axis, -lock.angle_deg if locking else lock.angle_deg)


def lock_move(part: Part, locking: bool) -> PoseMove:
    """A coupled lock unlocks to its unlocked pose and locks back to its target pose."""
    pose = Pose(part.centroid, (0.0, 0.0, 0.0)) if locking else unlocked_pose(part)
    return (TranslateRotateToLock if locking else RotateTranslateToUnlock)(part.part_id, pose)

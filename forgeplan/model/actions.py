"""The action type every plan producer returns, and its JSON form in the output contract."""

from __future__ import annotations

from dataclasses import dataclass

from .assembly import Part, Pose, unlocked_pose

# library order = canonical tie-break rank (encodings/SEMANTICS.md §4)
ACTION_NAMES = (
    "remove", "insert", "reset_pose", "rotate", "rotate_to_unlock", "rotate_translate_to_unlock",
    "rotate_to_lock", "translate_rotate_to_lock", "replace", "separate", "join",
)
GROUP_ACTIONS = ("separate", "join")
# parameters beyond part_id, per action
ACTION_PARAMS = {
    "remove": (), "insert": (), "reset_pose": (),
    "rotate": ("axis", "angle_deg"), "rotate_to_unlock": ("axis", "angle_deg"),
    "rotate_to_lock": ("axis", "angle_deg"),
    "rotate_translate_to_unlock": ("after_pose",), "translate_rotate_to_lock": ("after_pose",),
    "replace": ("target_part_id",),
    "separate": ("direction",), "join": ("direction",),
}


@dataclass(frozen=True)
class Action:
    """One plan step. `part_id` is the part physically acted on (for replace: the wrong part; for a
    group move: the first of `part_ids`, which lists the whole group in catalog order)."""

    name: str
    part_id: str
    axis: str | None = None
    angle_deg: float | None = None
    after_pose: Pose | None = None
    target_part_id: str | None = None
    part_ids: tuple[str, ...] | None = None
    direction: str | None = None

    @classmethod
    def group(cls, name: str, part_ids, direction: str) -> "Action":
        ids = tuple(part_ids)
        return cls(name, ids[0] if ids else "", part_ids=ids, direction=direction)

    def to_json(self) -> dict:
        if self.part_ids is not None:
            return {"action": self.name, "part_ids": list(self.part_ids), "direction": self.direction}
        if self.name == "replace":
            return {"action": "replace", "wrong_part_id": self.part_id, "target_part_id": self.target_part_id}
        d: dict = {"action": self.name, "part_id": self.part_id}
        if self.axis is not None:
            d["axis"] = self.axis
            d["angle_deg"] = self.angle_deg
        if self.after_pose is not None:
            d["after_pose"] = self.after_pose.to_json()
        return d

    @property
    def action_id(self) -> str:
        """MAGAR's action id (minimal_rework.json): name and parts, and a group move's direction."""
        if self.part_ids is not None:
            return f"{self.name}:{'+'.join(self.part_ids)}:{self.direction}"
        return f"{self.name}:{self.part_id}" + (f":{self.target_part_id}" if self.target_part_id else "")

    @property
    def touched(self) -> tuple[str, ...]:
        """Part ids this action moves (J_move counts distinct ones)."""
        if self.part_ids is not None:
            return self.part_ids
        return (self.part_id, self.target_part_id) if self.name == "replace" else (self.part_id,)

    def __str__(self) -> str:
        if self.part_ids is not None:
            return f"{self.name}([{', '.join(self.part_ids)}], {self.direction})"
        extra = []
        if self.axis is not None:
            extra.append(f"{self.axis}, {self.angle_deg:g}")
        if self.after_pose is not None:
            extra.append(f"pos={list(self.after_pose.position)}, rot={list(self.after_pose.rotation)}")
        if self.target_part_id is not None:
            extra.append(self.target_part_id)
        return f"{self.name}({', '.join([str(self.part_id), *extra])})"


def moved_parts(actions) -> frozenset[str]:
    return frozenset(p for a in actions for p in a.touched)


def lock_action(part: Part, locking: bool) -> Action:
    """The one lock (`locking`) or unlock action of a lock part, with its mechanism's parameters.

    A rotate lock unlocks by turning `angle_deg` about its axis and locks by turning back (`-angle_deg`);
    a coupled lock unlocks to its unlocked pose and locks back to its target pose.
    """
    lock = part.lock
    if lock is None:
        raise ValueError(f"{part.part_id} has no lock")
    if lock.kind == "rotate":
        return Action("rotate_to_lock" if locking else "rotate_to_unlock", part.part_id, axis=lock.axis,
                      angle_deg=-lock.angle_deg if locking else lock.angle_deg)  # type: ignore[operator]
    pose = Pose(part.centroid, (0.0, 0.0, 0.0)) if locking else unlocked_pose(part)
    return Action("translate_rotate_to_lock" if locking else "rotate_translate_to_unlock", part.part_id,
                  after_pose=pose)

"""The action type every plan producer returns, and its JSON form in the output contract."""

from __future__ import annotations

from dataclasses import dataclass

from .assembly import Pose

# library order = canonical tie-break rank (encodings/SEMANTICS.md §4)
ACTION_NAMES = (
    "remove", "insert", "reset_pose", "rotate", "rotate_to_unlock", "rotate_translate_to_unlock",
    "rotate_to_lock", "translate_rotate_to_lock", "replace",
)
# parameters beyond part_id, per action
ACTION_PARAMS = {
    "remove": (), "insert": (), "reset_pose": (),
    "rotate": ("axis", "angle_deg"), "rotate_to_unlock": ("axis", "angle_deg"),
    "rotate_to_lock": ("axis", "angle_deg"),
    "rotate_translate_to_unlock": ("after_pose",), "translate_rotate_to_lock": ("after_pose",),
    "replace": ("target_part_id",),
}


@dataclass(frozen=True)
class Action:
    """One plan step. `part_id` is the part physically acted on (for replace: the wrong part)."""

    name: str
    part_id: str
    axis: str | None = None
    angle_deg: float | None = None
    after_pose: Pose | None = None
    target_part_id: str | None = None

    def to_json(self) -> dict:
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
    def touched(self) -> tuple[str, ...]:
        """Part ids this action moves (J_move counts distinct ones)."""
        return (self.part_id, self.target_part_id) if self.name == "replace" else (self.part_id,)

    def __str__(self) -> str:
        extra = []
        if self.axis is not None:
            extra.append(f"{self.axis}, {self.angle_deg:g}")
        if self.after_pose is not None:
            extra.append(f"pos={list(self.after_pose.position)}, rot={list(self.after_pose.rotation)}")
        if self.target_part_id is not None:
            extra.append(self.target_part_id)
        return f"{self.name}({', '.join([self.part_id, *extra])})"


def moved_parts(actions) -> frozenset[str]:
    return frozenset(p for a in actions for p in a.touched)

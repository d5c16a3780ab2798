"""Types, fluents and names shared by the lifted and the expanded problem, so that both read alike."""

from __future__ import annotations

DOMAIN_NAME = "rework"
# PDDL object names of the directions (a leading sign is not a legal PDDL name start)
DIRECTION_NAMES = {"+x": "xplus", "-x": "xminus", "+y": "yplus", "-y": "yminus", "+z": "zplus", "-z": "zminus"}


class Vocabulary:
    """Types and fluents shared by both renderings, so that lifted and expanded problems read alike."""

    def __init__(self):
        from unified_planning.shortcuts import BoolType, Fluent, IntType, UserType

        self.part = UserType("part")
        self.slot = UserType("slot", self.part)
        self.spare = UserType("spare", self.part)
        self.direction, self.axis, self.angle, self.pose = (UserType(n) for n in ("direction", "axis", "angle", "pose"))
        s, b = self.slot, BoolType()
        self.fluent = {n: Fluent(n, b, s=s) for n in ("present", "wrong", "pose_off", "rot_off", "unlock_turned", "locked")}
        self.touched = Fluent("touched", b, x=self.part)
        self.static = {
            "spare_in": Fluent("spare_in", b, x=self.part, s=s),
            "supports": Fluent("supports", b, q=s, p=s),
            "holds": Fluent("holds", b, l=s, p=s),   # lock l holds part p: ASP's lock_holds/2, not its holds/2
            "blocks": Fluent("blocks", b, b=s, p=s, d=self.direction),
            "removal_dir": Fluent("removal_dir", b, p=s, d=self.direction),
            "turn_fix": Fluent("turn_fix", b, s=s, a=self.axis, n=self.angle),
            "unlock_fix": Fluent("unlock_fix", b, s=s, a=self.axis, n=self.angle),
            "unlock_turn": Fluent("unlock_turn", b, l=s, a=self.axis, n=self.angle),
            "lock_turn": Fluent("lock_turn", b, l=s, a=self.axis, n=self.angle),
            "unlock_pose": Fluent("unlock_pose", b, l=s, q=self.pose),
            "lock_pose": Fluent("lock_pose", b, l=s, q=self.pose),
            "unlock_pose_off": Fluent("unlock_pose_off", b, l=s),
            "unlock_rot_off": Fluent("unlock_rot_off", b, l=s),
        }
        self.cost = [Fluent(n, IntType()) for n in ("step_cost", "first_touch_cost", "double_first_touch_cost")]

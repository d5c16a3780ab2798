"""A task's labels as functions of its reference: the difficulty and fault labels of meta.json, and MAGAR's
minimal_rework.json. The build writes them from here and every reader derives them again to check the
files (`bench.consistency`), so a label can never disagree with the reference it describes."""

from __future__ import annotations

import hashlib
import json

from ..model.actions import Action, moved_parts


def difficulty(condition: str, ref_actions: int, mistakes: list[dict]) -> str:
    """easy: nothing or one direct action; medium: <= 4 actions; hard: <= 9; expert: more, or a
    multi-fault task with a hidden fault."""
    if condition in ("nofault", "boundary") or ref_actions <= 1:
        return "easy"
    if condition == "multi" and any(not m["visible"] for m in mistakes) and ref_actions >= 6:
        return "expert"
    if ref_actions <= 4:
        return "medium"
    return "hard" if ref_actions <= 9 else "expert"


def fault_labels(mistakes: list[dict]) -> dict:
    """meta.json's fault fields: the fault types, how many faults, whether one is hidden."""
    return {"fault_types": sorted({m["type"] for m in mistakes}), "faults": len(mistakes),
            "hidden": any(not m["visible"] for m in mistakes)}


def route_id(plan: tuple[Action, ...]) -> str:
    """MAGAR's recovery route id: a short hash of the plan's action ids."""
    if not plan:
        return "R-empty"
    return "R-" + hashlib.sha1(json.dumps([a.action_id for a in plan]).encode()).hexdigest()[:12]


def minimal_rework(sample_id: str, plan: tuple[Action, ...]) -> dict:
    """minimal_rework.json: the parts the reference plan moves, their count, its route id, its action ids
    and the order in which it first touches each part."""
    first_touch: list[str] = []
    for a in plan:
        for p in a.touched:
            if p not in first_touch:
                first_touch.append(p)
    moved = sorted(moved_parts(plan))
    return {"sample_id": sample_id, "moved_parts": moved, "moved_part_count": len(moved), "route_id": route_id(plan),
            "action_ids": [a.action_id for a in plan], "first_touch_order": first_touch}

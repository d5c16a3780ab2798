"""reference.json: the expected annotation and a plan for a task, with how the plan was obtained."""

from __future__ import annotations

from .actions import moved_parts
from .contract import output_json
from .diagnosis import diagnose
from .repair import repair_plan
from .task import Task


def simple_reference(task: Task) -> dict | None:
    """Expected output with a valid (not necessarily minimal) plan from the repair search."""
    world = task.world
    plan = repair_plan(world, task.actual, task.target)
    if plan is None:
        return None
    out = output_json(task.sample_id, task.assembly.assembly_id, diagnose(world, task.actual, task.target), plan)
    out["sample_id"] = task.sample_id
    out["proof"] = {"method": "repair-search", "optimal": False, "moved_parts": len(moved_parts(plan)), "actions": len(plan)}
    return out

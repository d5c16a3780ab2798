"""reference.json: the expected annotation and a plan for a task, with how the plan was obtained."""

from __future__ import annotations

from ..io.contract import output_json
from ..model.actions import moved_parts
from ..semantics.diagnosis import diagnose
from ..semantics.grounded import GroundedTask, as_grounded
from ..semantics.task import Task
from .registry import feasible_plan, planner_for
from .result import Options, SolveResult, Status


def simple_reference(task: Task | GroundedTask) -> dict | None:
    """Expected output with a valid (not necessarily minimal) plan from the feasible planner of its kind."""
    grounded = as_grounded(task)
    task, world = grounded.task, grounded.world
    plan = feasible_plan(grounded)
    if plan is None:
        return None
    out = output_json(task.sample_id, task.assembly.assembly_id, diagnose(world, task.actual, task.target), plan)
    out["sample_id"] = task.sample_id
    out["proof"] = {"method": "repair-search", "optimal": False, "moved_parts": len(moved_parts(plan)), "actions": len(plan)}
    return out


def reference_output(task: Task, result: SolveResult) -> dict:
    """The output contract (annotation + rework_plan) for the solved task, plus the `proof` object."""
    world = task.world
    out = output_json(task.sample_id, task.assembly.assembly_id, diagnose(world, task.actual, task.target), result.plan)
    proof = result.to_json()
    proof.pop("plan")
    proof["method"] = "clingo" if result.proof not in ("moved-set-search", "repair-search") else result.proof
    if result.n_optimal is None and not result.optimal_plans:
        proof.pop("optimal_plans")
    out["proof"] = proof
    return out


def proven_reference(task: Task | GroundedTask, time_limit: float | None = None,
                     objective: str = "moved-parts,actions") -> dict | None:
    """Expected output with a plan the registry's proving planner proved minimal (distinct moved parts,
    then actions).

    None when no plan restores the target. When the planner stops at the time limit, its best plan (or
    else the repair search's) is returned with `proof.optimal: false`. The solve time is left out so that
    the file is the same on every run: a planner that stops on a state budget, not on the clock, runs
    without the time limit.
    """
    grounded = as_grounded(task)
    planner = planner_for(grounded, objective=objective)
    result = planner(grounded, Options(objective, None if planner.deterministic else time_limit))
    if result.status is Status.UNSOLVABLE:
        return None
    if result.status is Status.TIMEOUT:
        return simple_reference(grounded)
    task = grounded.task
    out = reference_output(task, result)
    out["proof"].pop("seconds", None)
    out["sample_id"] = task.sample_id
    return out


def describe_proof(ref: dict) -> str:
    """One phrase saying whether the reference plan is proven minimal, for messages."""
    proof = ref["proof"]
    if proof.get("optimal") and proof.get("method") == "moved-set-search":
        by = "the engine search" if proof.get("proved_by") == "engine-search" else "the moved-set search"
        return f"proved minimal over every plan the engine accepts (SEMANTICS §9 \"One universe\") by {by}"
    if proof.get("grounded_optimal"):
        return ("proved minimal in moved parts over every plan the engine accepts; in actions, over the grounded "
                "partial-move universe (SEMANTICS §9 \"One universe\"), so NOT proved minimal over every plan")
    if proof.get("optimal"):
        return f"proved minimal by clingo ({proof.get('objective', 'moved-parts,actions')})"
    if proof.get("method") == "moved-set-search":
        return "NOT proved minimal (the moved-set search stopped at its time limit or state cap)"
    if proof.get("method") == "clingo":
        return "NOT proved minimal (clingo stopped at the time limit)"
    return "NOT proved minimal (repair search; `forgeplan solve` proves one)"

"""`bench check`'s look at one sample: every check a reader makes at load, each kept as a finding rather
than stopping at the first, then what costs a solver: the reference's optimality proved again at the
level it claims, a decision's optimal plans and valid decisions derived again."""

from __future__ import annotations

import json

from ..model.actions import Action, moved_parts
from ..model.choices import OBJECTIVES
from ..semantics.intents import INSPECT, decision_of, valid_decisions
from ..semantics.task import Task
from . import consistency
from .folder import Bench


def check_rework_sample(bench: Bench, sid: str, time_limit: float, found) -> None:
    """A rework sample: its files against each other and the manifest, then its reference's proof."""
    folder = found.attempt(lambda: bench.folder(sid))
    if folder is None:
        return
    task = found.attempt(lambda: bench.task(sid))
    reference = found.attempt(lambda: bench.json(sid, "reference.json"))
    meta = found.attempt(lambda: bench.meta(sid))
    rework = found.attempt(lambda: bench.json(sid, "minimal_rework.json"))
    if task is None or reference is None:
        return
    ref_file = str(folder / "reference.json")
    plan = found.attempt(lambda: consistency.reference_plan(sid, reference, task, ref_file))
    found.attempt(lambda: consistency.check_diagnosis(sid, reference, task, ref_file))
    if plan is None:
        return
    found.attempt(lambda: consistency.check_proof_figures(reference, plan, ref_file))
    if meta is not None:
        found.attempt(lambda: consistency.check_assembly(meta, task, str(folder / "meta.json")))
        found.attempt(lambda: consistency.check_labels(meta, reference, plan, str(folder / "meta.json")))
    if rework is not None:
        found.attempt(lambda: consistency.check_rework(sid, rework, plan, str(folder / "minimal_rework.json")))
        if sid in bench.records:
            found.attempt(lambda: consistency.check_record(sid, bench.records[sid], plan, rework, bench.manifest_file))
    found.attempt(lambda: check_proof(task, reference, plan, ref_file, time_limit))


def _cost(plan: tuple[Action, ...], objective: str) -> tuple[int, ...]:
    value = {"moved-parts": len(moved_parts(plan)), "actions": len(plan)}
    return tuple(value[level] for level in OBJECTIVES[objective])


def check_proof(task: Task, reference: dict, plan: tuple[Action, ...], file: str, time_limit: float) -> None:
    """The reference is as good as it claims: `optimal` (no plan verify accepts is better) or
    `grounded_optimal` (no plan of the grounded universe is) proved again by the registry's proving planner
    for the task and the proof's objective; a reference claiming neither claims only to be valid."""
    from ..model.errors import InputError
    from ..planners.registry import planner_for
    from ..planners.result import Options
    from ..semantics.grounded import ground

    proof = reference.get("proof") or {}
    claim = "optimal" if proof.get("optimal") else "grounded_optimal" if proof.get("grounded_optimal") else None
    if claim is None:
        return
    objective = proof.get("objective", "moved-parts,actions")
    if objective not in OBJECTIVES:
        raise InputError(f"names no objective forgeplan knows ({sorted(OBJECTIVES)})", file=file, field="proof.objective")
    grounded = ground(task)
    planner = planner_for(grounded, objective=objective)
    result = planner(grounded, Options(objective, None if planner.deterministic else time_limit))
    proved = result.optimal or (claim == "grounded_optimal" and bool(result.grounded_optimal))
    levels = ", ".join(OBJECTIVES[objective])
    mine, best = _cost(plan, objective), _cost(result.plan, objective)
    if not proved:
        raise InputError(f"claims {claim}, but {planner.name} proves no optimum of the task now ({result.status.value}"
                         f"{'' if planner.deterministic else f' within {time_limit:g} s'})", file=file, field=f"proof.{claim}")
    if best < mine:
        raise InputError(f"claims {claim}, but {planner.name} proves a plan of {list(best)} ({levels}) against the "
                         f"reference's {list(mine)}", file=file, field=f"proof.{claim}")
    if best > mine:
        raise InputError(f"is below the optimum {planner.name} proves ({list(best)} against {list(mine)}, {levels}): "
                         "the proof or the planner is wrong", file=file, field="rework_plan.actions")


def check_decision_sample(bench: Bench, sid: str, time_limit: float, found) -> None:
    """A decision sample: its files against each other, then its state solved again."""
    folder = found.attempt(lambda: bench.folder(sid))
    if folder is None:
        return
    task = found.attempt(lambda: bench.task(sid))
    meta = found.attempt(lambda: bench.meta(sid))
    decision = found.attempt(lambda: bench.json(sid, "decision.json"))
    if decision is not None and meta is not None:
        found.attempt(lambda: consistency.check_decision(sid, decision, meta, str(folder / "decision.json"),
                                                         str(folder / "meta.json")))
    if meta is not None and task is not None:
        found.attempt(lambda: consistency.check_assembly(meta, task, str(folder / "meta.json")))
    if task is not None and decision is not None:
        found.attempt(lambda: check_decision_derived(task, decision, str(folder / "decision.json"), time_limit))


def check_decision_derived(task: Task, decision: dict, file: str, time_limit: float) -> None:
    """The decision's optimum, canonical plan, first steps, valid decisions and reference are those of the
    recorded state solved again (SEMANTICS §8: the first steps of every optimal plan)."""
    from ..model.errors import InputError
    from ..planners.asp.first_steps import solve_with_first_steps

    solved = solve_with_first_steps(task, time_limit)
    if solved is None:
        raise InputError(f"its state is not solved optimally again within {time_limit:g} s", file=file, field="optimum")
    result, first = solved
    valid = valid_decisions(task.world, task.actual, task.target, first)
    reference = decision_of(result.plan[0]) if result.plan else INSPECT
    want = {"optimum": {"moved_parts": result.moved_parts, "actions": result.actions},
            "reference_plan": [a.to_json() for a in result.plan], "first_steps": _sorted([a.to_json() for a in first]),
            "valid": [d.to_json() for d in valid], "reference": reference.to_json()}
    have = {**{k: decision[k] for k in want}, "first_steps": _sorted(decision["first_steps"])}
    for key, value in want.items():
        if json.loads(json.dumps(value)) != have[key]:
            raise InputError("is not what the state solved again gives (the first steps of every optimal plan)",
                             file=file, field=key)


def _sorted(items: list[dict]) -> list[dict]:
    return sorted(json.loads(json.dumps(items)), key=lambda d: json.dumps(d, sort_keys=True))

"""The proving planner vs the cross-checking one: the same task, two independent optima, one verdict.

Both are chosen through the planner registry (`planners.registry`) by the task's kind: clingo against
Fast Downward's optimal A* (lmcut, an admissible heuristic) on the grounded PDDL export for straight and
group moves; for partial moves (SEMANTICS §9) the moved-set search against Fast Downward's A* on the
grounded partial-move problem (`pddl.slide_groups`) over the offsets within a radius of the target (by
default the smallest radius that holds the search's plan). Both plans are replayed in the engine, so a
planner cannot agree by returning a plan the semantics rejects. A planner that stops at its time limit,
or returns a plan without an optimality proof, makes the task *unknown*, never an agreement.

On partial moves Fast Downward's optimum is one over a sub-domain (and over a relaxation of it: the
separable condition of group moves is left out, so its moves include the search's there): when the
search's plan lies inside the sub-domain, Fast Downward's optimum is at most the search's, and equal
values are an agreement over that sub-domain; a valid plan below the search's optimum is a disagreement
wherever it lies.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

from ..io.task_files import load_task
from ..model.actions import Action, moved_parts
from ..model.errors import InputError
from ..semantics.grounded import objective_value
from ..semantics.task import Task
from .registry import Guarantee, planner_for

VERDICTS = ("agree", "disagree", "unknown")


@dataclass
class Side:
    """One planner's answer, as the comparison sees it (status names are the planner's own)."""

    planner: str
    status: str
    optimal: bool
    unsolvable: bool                 # proved: no plan at all
    plan: tuple[Action, ...] | None
    moved_parts: int | None
    actions: int | None
    seconds: float
    valid: bool | None = None        # the engine's verdict on the plan (None without a plan)
    problem: str = ""                # an internal inconsistency of this side, if any
    own_seconds: float | None = None  # the planner's own timing (Fast Downward: translate + search)
    radius: int | None = None        # partial moves: the sub-domain's radius (None: the whole domain)

    def to_json(self) -> dict:
        d = asdict(self)
        d["plan"] = None if self.plan is None else [a.to_json() for a in self.plan]
        d["seconds"] = round(self.seconds, 4)
        return d


@dataclass
class Comparison:
    task_id: str
    objective: str
    verdict: str                     # one of VERDICTS
    reason: str
    prover: Side                     # the registry's proving planner (clingo, or the moved-set search)
    checker: Side                    # its cross-check (Fast Downward)
    path: str | None = None

    @property
    def ratio(self) -> float | None:
        """The checker's time over the prover's (Fast Downward's translate + search vs. the whole solve)."""
        return self.checker.seconds / self.prover.seconds if self.prover.seconds > 0 else None

    def to_json(self) -> dict:
        return {"task_id": self.task_id, "path": self.path, "objective": self.objective, "verdict": self.verdict,
                "reason": self.reason, "ratio": None if self.ratio is None else round(self.ratio, 2),
                "prover": self.prover.to_json(), "checker": self.checker.to_json()}


def value(objective: str, side: Side) -> tuple[int, ...]:
    """The optimised value of a side's plan: (J_move, c), (c,) or (J_move,)."""
    return objective_value(objective, side.moved_parts, side.actions)  # type: ignore[arg-type]  # a side with a plan has both counts


def labelled(objective: str, v: tuple[int, ...]) -> str:
    """A value with its names: '3 moved parts, 7 actions'."""
    names = {"moved-parts": "moved parts", "actions": "actions"}
    return ", ".join(f"{n} {names[k]}" for k, n in zip(objective.split(","), v))


def _replayed(task: Task, side: Side) -> Side:
    if side.plan is not None:
        side.valid = task.world.restoration(task.actual, side.plan, task.target).restored
        j, c = len(moved_parts(side.plan)), len(side.plan)
        if (side.moved_parts, side.actions) != (j, c) and not side.problem:
            side.problem = f"reports J={side.moved_parts}, c={side.actions} but its plan has J={j}, c={c}"
    return side


def prover_side(task: Task, objective: str, time_limit: float | None) -> Side:
    """The registry's proving planner for the task's kind (clingo, or the moved-set search)."""
    from .asp.solve import Status

    planner = planner_for(task, Guarantee.PROVED_MINIMAL)
    try:
        r = planner(task, objective, time_limit)
    except RuntimeError as exc:  # the planner's own replay check of its plan
        return Side(planner.name, "error", False, False, None, None, None, 0.0, problem=str(exc))
    except InputError as exc:  # a task the planner declines (e.g. too many separable groups to ground)
        return _unsupported(planner.name, exc.reason)
    has_plan = r.status in (Status.OPTIMAL, Status.FEASIBLE)
    return _replayed(task, Side(planner.name, r.status.value, r.optimal, r.status is Status.UNSOLVABLE,
                                r.plan if has_plan else None, r.moved_parts if has_plan else None,
                                r.actions if has_plan else None, r.seconds))


def fd_side(task: Task, objective: str, time_limit: float | None, radius: int | None = None) -> Side:
    """Fast Downward's answer on the grounded PDDL export (straight and group moves)."""
    from .pddl.fd import solve_fd

    try:
        r = solve_fd(task, objective, time_limit=time_limit)
    except InputError as exc:  # a task outside what the PDDL export encodes (e.g. a non-canonical target)
        return _unsupported("fast-downward", exc.reason)
    return _fd_answer(task, r)


def fd_partial_side(task: Task, objective: str, time_limit: float | None, radius: int | None = None) -> Side:
    """Fast Downward's answer on a partial-move task (SEMANTICS §9) over the offsets within `radius` per
    axis (a sub-domain: its optimum is one over the sub-domain), or the grounded task's whole domain."""
    from .pddl.fd import solve_fd_partial
    from .pddl.positions import position_tables

    try:
        r = solve_fd_partial(task, position_tables(task, radius), objective, time_limit=time_limit)
    except InputError as exc:  # e.g. a domain too large to write
        return _unsupported("fast-downward", exc.reason)
    side = _fd_answer(task, r)
    side.radius = radius
    return side


# the cross-checking planners of the registry, by name: how each one's answer is read
SIDES = {"fast-downward": fd_side, "fast-downward-partial": fd_partial_side}


def _fd_answer(task: Task, r) -> Side:
    from unified_planning.engines import PlanGenerationResultStatus as S

    plan = r.plan
    side = Side("fast-downward", r.status.name.lower(), r.optimal, r.status == S.UNSOLVABLE_PROVEN, plan,
                None if plan is None else len(moved_parts(plan)), None if plan is None else len(plan), r.seconds,
                own_seconds=r.planner_seconds)
    if plan is not None and r.reported_cost is not None and r.reported_cost != r.cost:
        side.problem = f"Fast Downward reports cost {r.reported_cost}, the plan costs {r.cost}"
    return _replayed(task, side)


def _unsupported(planner: str, why: str) -> Side:
    """A side that declined the task: no plan, no proof, so the verdict can only be unknown (an optimum
    over another action set would be neither agreement nor disagreement)."""
    return Side(planner, f"unsupported: {why}", False, False, None, None, None, 0.0)


def judge(objective: str, a: Side, b: Side) -> tuple[str, str]:
    """(verdict, reason) for two sides; any contradiction is a disagreement, any missing proof unknown."""
    for s in (a, b):
        if s.problem:
            return "disagree", f"{s.planner}: {s.problem}"
        if s.valid is False:
            return "disagree", f"{s.planner}'s plan is not valid in the engine"
    if a.unsolvable and b.unsolvable:
        return "agree", "both prove the task unsolvable"
    for s, t in ((a, b), (b, a)):
        if s.unsolvable and t.plan is not None:
            return "disagree", f"{s.planner} proves the task unsolvable, {t.planner} has a valid plan"
        if s.optimal and t.plan is not None and value(objective, t) < value(objective, s):
            return "disagree", (f"{t.planner}'s plan ({labelled(objective, value(objective, t))}) beats "
                                f"{s.planner}'s optimum ({labelled(objective, value(objective, s))})")
    if a.optimal and b.optimal:
        va, vb = value(objective, a), value(objective, b)
        if va != vb:
            return "disagree", f"optima differ: {a.planner} {labelled(objective, va)}; {b.planner} {labelled(objective, vb)}"
        return "agree", f"same optimum ({labelled(objective, va)})"
    missing = [s.planner for s in (a, b) if not (s.optimal or s.unsolvable)]
    return "unknown", f"no optimality proof from {' and '.join(missing)} ({', '.join(f'{s.planner}: {s.status}' for s in (a, b))})"


def judge_sub_domain(objective: str, prover: Side, checker: Side, holds_prover: bool) -> tuple[str, str]:
    """(verdict, reason) when the checker's optimum is one over a sub-domain of partial moves: an agreement
    when it holds the prover's plan and both values are equal (the checker's optimum is then at most the
    prover's), a disagreement as `judge` finds one, else unknown."""
    verdict, reason = judge(objective, prover, checker)
    if verdict != "unknown" or not (prover.optimal and checker.plan is not None and checker.valid):
        return verdict, reason
    if holds_prover and value(objective, checker) == value(objective, prover):
        return "agree", (f"same optimum ({labelled(objective, value(objective, prover))}); Fast Downward's over the "
                         f"offsets within {checker.radius} of the target, which hold the search's plan")
    return "unknown", (f"Fast Downward's optimum over the offsets within {checker.radius} "
                       f"({labelled(objective, value(objective, checker))}) is no proof beyond them")


def plan_radius(task: Task, plan) -> int:
    """The largest |offset| along any axis that any state of `plan` visits."""
    state, far = task.actual, max([0] + [max(map(abs, s.offset)) for s in task.actual.slots if s.present])
    for a in plan:
        state = task.world.apply(state, a)
        far = max([far] + [max(map(abs, s.offset)) for s in state.slots if s.present])
    return far


def compare_task(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
                 path: str | None = None, radius: int | None = None) -> Comparison:
    """The registry's proving planner against its cross-check (`radius`: the checker's sub-domain on a
    partial-move task; by default the smallest that holds the prover's plan, at least 1)."""
    prover = prover_side(task, objective, time_limit)
    name = planner_for(task, Guarantee.CROSS_CHECK).name
    if name == "fast-downward":
        checker = SIDES[name](task, objective, time_limit)
        verdict, reason = judge(objective, prover, checker)
        return Comparison(task.sample_id, objective, verdict, reason, prover, checker, path)
    reach = plan_radius(task, prover.plan) if prover.plan else None
    radius = radius if radius is not None else max(1, reach or 1)
    checker = SIDES[name](task, objective, time_limit, radius)
    verdict, reason = judge_sub_domain(objective, prover, checker, reach is not None and reach <= radius)
    return Comparison(task.sample_id, objective, verdict, reason, prover, checker, path)


def find_tasks(path: Path) -> list[Path]:
    """The task folders at or below `path` (a task folder holds part_catalog.json), sorted; symbolic links
    to folders are followed (each real folder once)."""
    path = Path(path)
    if (path / "part_catalog.json").is_file():
        return [path]
    if not path.is_dir():
        raise InputError("not a folder", file=str(path))
    found, seen = [], set()
    for root, dirs, files in os.walk(path, followlinks=True):
        dirs.sort()
        real = os.path.realpath(root)
        if real in seen:
            dirs.clear()
            continue
        seen.add(real)
        if "part_catalog.json" in files:
            found.append(Path(root))
    found.sort()
    if not found:
        raise InputError("no task folders (folders holding part_catalog.json) below this path", file=str(path))
    return found


CROSSCHECK_BATCH = 8


def crosscheck(path: Path, *, limit: int | None = None, time_limit: float | None = None,
               objective: str = "moved-parts,actions", jobs: int = 1, executor: str = "local",
               address: str | None = None) -> Iterator[Comparison]:
    """Compare every task below `path` (the first `limit`), in path order, `jobs` at a time (batches of
    consecutive folders; a bench folder's tasks are named by assembly, so a batch mostly shares one)."""
    from ..executors import run_ordered

    folders = [str(f) for f in find_tasks(path)[:limit]]
    batches = [(folders[i:i + CROSSCHECK_BATCH], objective, time_limit) for i in range(0, len(folders), CROSSCHECK_BATCH)]
    for _, comparisons in run_ordered(compare_folders, batches, jobs, executor, address):
        yield from comparisons


def compare_folders(folders: list[str], objective: str, time_limit: float | None) -> list[Comparison]:
    """One batch of `crosscheck`: the comparison of each task folder (clingo grounds each assembly of
    the batch once)."""
    from .asp.grounding import GROUNDINGS
    from .registry import accepted

    tasks = [load_task(Path(f)) for f in folders]
    GROUNDINGS.prepare(accepted("clingo", tasks))
    return [compare_task(task, objective, time_limit, f) for task, f in zip(tasks, folders)]


def summary(comparisons: list[Comparison]) -> dict:
    ratios = [c.ratio for c in comparisons if c.verdict == "agree" and c.ratio is not None]
    return {**{v: sum(c.verdict == v for c in comparisons) for v in VERDICTS}, "tasks": len(comparisons),
            "median_ratio_checker_over_prover": round(statistics.median(ratios), 2) if ratios else None,
            "median_prover_seconds": _median(c.prover.seconds for c in comparisons),
            "median_checker_seconds": _median(c.checker.seconds for c in comparisons)}


def _median(xs) -> float | None:
    xs = list(xs)
    return round(statistics.median(xs), 4) if xs else None

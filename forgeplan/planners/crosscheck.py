"""clingo vs Fast Downward: the same task, two independent optimality proofs, one verdict.

A reference is "provably minimal" only when clingo's proof and Fast Downward's optimal A*
search (lmcut, an admissible heuristic) reach the same optimum. Both plans are replayed in the engine,
so a planner cannot agree by returning a plan the semantics rejects. A planner that stops at its time
limit, or returns a plan without an optimality proof, makes the task *unknown*, never an agreement.
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
    clingo: Side
    fd: Side
    path: str | None = None
    bound: Side | None = None        # partial-move tasks clingo declines: the repair search's plan (an upper bound)

    @property
    def ratio(self) -> float | None:
        """Fast Downward's time over clingo's (translate + search vs. clingo's whole solve)."""
        return self.fd.seconds / self.clingo.seconds if self.clingo.seconds > 0 else None

    def to_json(self) -> dict:
        return {"task_id": self.task_id, "path": self.path, "objective": self.objective, "verdict": self.verdict,
                "reason": self.reason, "ratio": None if self.ratio is None else round(self.ratio, 2),
                "clingo": self.clingo.to_json(), "fast_downward": self.fd.to_json(),
                **({"repair_search": self.bound.to_json()} if self.bound is not None else {})}


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


def clingo_side(task: Task, objective: str, time_limit: float | None) -> Side:
    from .asp.solve import Status, solve_task

    try:
        r = solve_task(task, objective, time_limit=time_limit)
    except RuntimeError as exc:  # asp.py's own replay check of its plan
        return Side("clingo", "error", False, False, None, None, None, 0.0, problem=str(exc))
    except InputError as exc:  # a task the ASP side declines (e.g. too many separable groups to ground)
        return _unsupported("clingo", exc.reason)
    has_plan = r.status in (Status.OPTIMAL, Status.FEASIBLE)
    return _replayed(task, Side("clingo", r.status.value, r.optimal, r.status is Status.UNSOLVABLE,
                                r.plan if has_plan else None, r.moved_parts if has_plan else None,
                                r.actions if has_plan else None, r.seconds))


def fd_side(task: Task, objective: str, time_limit: float | None, radius: int | None = None) -> Side:
    """Fast Downward's answer; on a partial-move task over the grounded position domain, or over the
    offsets within `radius` per axis (a sub-domain: a plan, not an optimality proof)."""
    from unified_planning.engines import PlanGenerationResultStatus as S

    from .pddl.fd import solve_fd

    try:
        if task.world.partial:   # SEMANTICS §9: positions as objects, over the grounded position domains
            from .pddl.fd import solve_fd_partial
            from .pddl.positions import position_tables

            r = solve_fd_partial(task, position_tables(task, radius), objective, time_limit=time_limit)
        else:
            r = solve_fd(task, objective, time_limit=time_limit)
    except InputError as exc:  # a task outside what the PDDL export encodes (e.g. a non-canonical target)
        return _unsupported("fast-downward", exc.reason)
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


def repair_side(task: Task) -> Side:
    """The repair search's plan for a partial-move task (valid, not minimal): an upper bound."""
    import time

    from .partial_repair import partial_repair_plan

    t0 = time.perf_counter()
    plan = partial_repair_plan(task.world, task.actual, task.target)
    seconds = time.perf_counter() - t0
    if plan is None:
        return Side("repair-search", "no plan", False, False, None, None, None, seconds)
    return _replayed(task, Side("repair-search", "feasible", False, False, tuple(plan), len(moved_parts(plan)),
                                len(plan), seconds))


def judge_bound(objective: str, fd: Side, bound: Side) -> tuple[str, str]:
    """Fast Downward against the repair search's plan when no second optimality proof exists: a
    disagreement when either plan fails in the engine or the repair plan beats the optimum, else unknown."""
    verdict, reason = judge(objective, bound, fd)
    if verdict == "unknown" and fd.optimal and fd.valid and bound.plan is not None:
        reason = (f"no second optimality proof: Fast Downward's optimum ({labelled(objective, value(objective, fd))}) "
                  f"replays in the engine and is no worse than the repair search's plan "
                  f"({labelled(objective, value(objective, bound))})")
    return verdict, reason


def compare_task(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
                 path: str | None = None, radius: int | None = None) -> Comparison:
    """clingo against Fast Downward (`radius`: Fast Downward's position sub-domain on a partial-move task)."""
    cl = clingo_side(task, objective, time_limit)
    fd = fd_side(task, objective, time_limit, radius)
    if task.world.partial and cl.status.startswith("unsupported"):
        bound = repair_side(task)
        verdict, reason = judge_bound(objective, fd, bound)
        return Comparison(task.sample_id, objective, verdict, reason, cl, fd, path, bound)
    verdict, reason = judge(objective, cl, fd)
    return Comparison(task.sample_id, objective, verdict, reason, cl, fd, path)


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

    tasks = [load_task(Path(f)) for f in folders]
    GROUNDINGS.prepare(tasks)
    return [compare_task(task, objective, time_limit, f) for task, f in zip(tasks, folders)]


def summary(comparisons: list[Comparison]) -> dict:
    ratios = [c.ratio for c in comparisons if c.verdict == "agree" and c.ratio is not None]
    return {**{v: sum(c.verdict == v for c in comparisons) for v in VERDICTS}, "tasks": len(comparisons),
            "median_ratio_fd_over_clingo": round(statistics.median(ratios), 2) if ratios else None,
            "median_clingo_seconds": _median(c.clingo.seconds for c in comparisons),
            "median_fd_seconds": _median(c.fd.seconds for c in comparisons)}


def _median(xs) -> float | None:
    xs = list(xs)
    return round(statistics.median(xs), 4) if xs else None

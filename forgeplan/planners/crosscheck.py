"""The proving planner vs the cross-checking one: the same task, two independent optima, one verdict.

Both are chosen through the planner registry (`planners.registry`) by the task's kind: clingo against
Fast Downward's optimal A* (lmcut, an admissible heuristic) on the grounded PDDL export for straight and
group moves; for partial moves (SEMANTICS §9) the moved-set search against clingo on
`encodings/partial_check.lp` (`asp.partial_check`), the grounded universe rendered over a box of the
position domain and a horizon of steps: by default the smallest box (per axis, at least 1) and the
shortest horizon that hold the search's plan. Both plans are replayed in the engine, so a planner cannot
agree by returning a plan the semantics rejects. A planner that stops at its time limit, or returns a
plan without an optimality proof, makes the task *unknown*, never an agreement.

On partial moves clingo's optimum is one over that box and horizon, with the *separable* condition of
groups left out (a relaxation): its universe holds the search's plan, so its optimum is at most the
search's, and equal values are an agreement there; an optimum above the search's plan, or none, is a
disagreement (clingo missed a plan of its own universe), and a valid plan below the search's optimum is a
disagreement wherever it lies. A plan below it that only the relaxation allows proves nothing: unknown.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..io.task_files import load_task
from ..model.actions import Action, moved_parts
from ..model.errors import InputError
from ..semantics.assembly_grounding import AssemblyGrounding
from ..semantics.grounded import GroundedTask, as_grounded, ground, objective_value
from ..semantics.task import Task
from .registry import Guarantee, planner_for
from .result import Options

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
    box: tuple[int, ...] | None = None  # partial moves: the checker's box, per axis the largest |offset|
    horizon: int | None = None       # partial moves: the most steps of the checker's plans
    exhausted: bool = False          # the planner's search was completed (an optimum, or no plan, of its universe)
    relaxed: bool = False            # its plan fails in the engine only on a condition its universe relaxes

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


def prover_side(task: Task | GroundedTask, objective: str, time_limit: float | None) -> Side:
    """The registry's proving planner for the task (clingo, or the moved-set search)."""
    from .result import Status

    grounded = as_grounded(task)
    task = grounded.task
    try:
        planner = planner_for(grounded, Guarantee.PROVED_MINIMAL, objective)
    except InputError as exc:  # no proving planner for this objective on such tasks
        return _unsupported("no proving planner", exc.reason)
    try:
        r = planner(grounded, Options(objective, time_limit))
    except RuntimeError as exc:  # the planner's own replay check of its plan
        return Side(planner.name, "error", False, False, None, None, None, 0.0, problem=str(exc))
    except InputError as exc:  # a task the planner declines (e.g. too many separable groups to ground)
        return _unsupported(planner.name, exc.reason)
    has_plan = r.status in (Status.OPTIMAL, Status.FEASIBLE)
    # on a partial-move task the cross-check's universe is a bounded part of the grounded one: what it
    # checks is the search's grounded optimum (`grounded_optimal`), proved over every engine plan or not
    optimal = r.optimal or r.grounded_optimal is True
    return _replayed(task, Side(planner.name, r.status.value, optimal, r.status is Status.UNSOLVABLE,
                                r.plan if has_plan else None, r.moved_parts if has_plan else None,
                                r.actions if has_plan else None, r.seconds))


def fd_side(task: Task, objective: str, time_limit: float | None) -> Side:
    """Fast Downward's answer on the grounded PDDL export (straight and group moves)."""
    from .pddl.fd import solve_fd

    try:
        r = solve_fd(task, objective, time_limit=time_limit)
    except InputError as exc:  # a task outside what the PDDL export encodes (e.g. a non-canonical target)
        return _unsupported("fast-downward", exc.reason)
    return _fd_answer(task, r)


def clingo_partial_side(task: Task, objective: str, time_limit: float | None, box=(1, 1, 1),
                        horizon: int = 1) -> Side:
    """clingo's answer on a partial-move task (SEMANTICS §9): the optimum over the plans of at most
    `horizon` steps inside `box` (`asp.partial_check`)."""
    from .asp.partial_check import check_partial

    try:
        r = check_partial(task, box, horizon, time_limit, objective)
    except InputError as exc:  # e.g. a lock, or a slot needing two repairs
        return _unsupported("clingo-partial", exc.reason)
    plan = r.plan
    status = ("optimal" if plan is not None else "no-plan") if r.exhausted else \
        ("timeout" if r.stopped in (None, "time limit") else f"stopped at its {r.stopped}")
    side = _replayed(task, Side("clingo-partial", status, r.exhausted and plan is not None, False, plan,
                                None if plan is None else len(moved_parts(plan)), None if plan is None else len(plan),
                                r.seconds, box=r.box, horizon=horizon, exhausted=r.exhausted))
    if side.valid is False:
        failure = task.world.restoration(task.actual, plan, task.target).failure  # type: ignore[arg-type]  # valid is False only with a plan
        side.relaxed = failure is not None and failure.reason.code == "not_separable"
    return side



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


def judge_partial(objective: str, prover: Side, checker: Side) -> tuple[str, str]:
    """(verdict, reason) when the checker's universe (a box and a horizon, groups' separable condition
    relaxed) holds the prover's plan: its optimum is then at most the prover's value."""
    for s in (prover, checker):
        if s.problem:
            return "disagree", f"{s.planner}: {s.problem}"
    if prover.valid is False or (checker.valid is False and not checker.relaxed):
        return "disagree", f"{prover.planner if prover.valid is False else checker.planner}'s plan is not valid in the engine"
    if not checker.exhausted or not prover.optimal or prover.plan is None:
        return "unknown", f"no optimum from both ({prover.planner}: {prover.status}, {checker.planner}: {checker.status})"
    where = f"over the plans of at most {checker.horizon} steps inside the box {list(checker.box or ())}"
    vp = value(objective, prover)
    if checker.plan is None:
        return "disagree", f"{checker.planner} finds no plan {where}, which holds {prover.planner}'s plan"
    vc = value(objective, checker)
    if vc == vp:
        return "agree", f"same optimum ({labelled(objective, vp)}); {checker.planner}'s {where}, which hold the search's plan"
    if vc > vp:
        return "disagree", (f"{checker.planner}'s optimum {where} ({labelled(objective, vc)}) is above "
                            f"{prover.planner}'s plan there ({labelled(objective, vp)})")
    if checker.valid:
        return "disagree", (f"{checker.planner}'s plan ({labelled(objective, vc)}) beats {prover.planner}'s optimum "
                            f"({labelled(objective, vp)})")
    return "unknown", (f"{checker.planner}'s optimum {where} ({labelled(objective, vc)}) needs a group that does not "
                       "come apart (the separable condition it relaxes)")


def plan_box(task: Task, plan) -> tuple[int, int, int]:
    """Per axis, the largest |offset| that any state of `plan` visits (at least 1)."""
    state, far = task.actual, [1, 1, 1]
    for a in (None, *plan):
        state = state if a is None else task.world.apply(state, a)
        for slot in state.slots:
            if slot.present:
                far = [max(f, abs(c)) for f, c in zip(far, slot.offset)]
    return far[0], far[1], far[2]


PARTIAL_HORIZON = 8   # the checker's horizon on a partial-move task when the prover has no valid plan


def compare_task(task: Task | GroundedTask, objective: str = "moved-parts,actions", time_limit: float | None = None,
                 path: str | None = None, box=None, horizon: int | None = None, extra_steps: int = 0) -> Comparison:
    """The registry's proving planner against its cross-check (`box`, `horizon`: the checker's universe on
    a partial-move task; by default the smallest that hold the prover's plan, the horizon `extra_steps`
    longer: plans that many steps longer than the prover's, which may move fewer parts, are then covered)."""
    grounded = as_grounded(task)
    prover = prover_side(grounded, objective, time_limit)
    check = CHECKS[planner_for(grounded, Guarantee.CROSS_CHECK).name]
    verdict, reason, checker = check(grounded.task, prover, objective, time_limit, box, horizon, extra_steps)
    return Comparison(grounded.task.sample_id, objective, verdict, reason, prover, checker, path)


def _check_fd(task: Task, prover: Side, objective: str, time_limit: float | None, *universe) -> tuple[str, str, Side]:
    """Fast Downward's optimum against the prover's: (verdict, reason, its side)."""
    checker = fd_side(task, objective, time_limit)
    return (*judge(objective, prover, checker), checker)


def _check_partial(task: Task, prover: Side, objective: str, time_limit: float | None, box, horizon: int | None,
                   extra_steps: int) -> tuple[str, str, Side]:
    """clingo's optimum over a box and a horizon that hold the prover's plan: (verdict, reason, its side)."""
    plan = prover.plan if prover.valid else None
    box = box if box is not None else plan_box(task, plan or ())
    horizon = horizon if horizon is not None else (len(plan) if plan else PARTIAL_HORIZON) + extra_steps
    checker = clingo_partial_side(task, objective, time_limit, box, horizon)
    outside = plan is not None and (len(plan) > horizon or any(f > b for f, b in zip(plan_box(task, plan), checker.box or box)))
    if outside:
        return "unknown", (f"the checker's universe (box {list(checker.box or box)}, {horizon} steps) does not hold "
                           "the search's plan"), checker
    return (*judge_partial(objective, prover, checker), checker)


# the cross-checking planners of the registry, by name: how each one's optimum is compared with the proof
CHECKS: dict[str, Callable[..., tuple[str, str, Side]]] = {"fast-downward": _check_fd, "clingo-partial": _check_partial}


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
               address: str | None = None, extra_steps: int = 0) -> Iterator[Comparison]:
    """Compare every task below `path` (the first `limit`), in path order, `jobs` at a time (batches of
    consecutive folders; a bench folder's tasks are named by assembly, so a batch mostly shares one);
    `extra_steps` as in `compare_task`."""
    from ..executors import run_ordered

    folders = [str(f) for f in find_tasks(path)[:limit]]
    batches = [(folders[i:i + CROSSCHECK_BATCH], objective, time_limit, extra_steps) for i in range(0, len(folders), CROSSCHECK_BATCH)]
    for _, comparisons in run_ordered(compare_folders, batches, jobs, executor, address):
        yield from comparisons


def compare_folders(folders: list[str], objective: str, time_limit: float | None,
                    extra_steps: int = 0) -> list[Comparison]:
    """One batch of `crosscheck`: the comparison of each task folder (the batch's tasks on one assembly
    share one assembly grounding, and clingo grounds each assembly of the batch once)."""
    from .asp.grounding import prepare

    shared: dict[tuple, AssemblyGrounding] = {}
    tasks = []
    for f in folders:
        task = load_task(Path(f))
        key = (task.assembly, task.tolerances)
        tasks.append(ground(task, shared.setdefault(key, AssemblyGrounding(task.world))))
    prepare(tasks)
    return [compare_task(task, objective, time_limit, f, extra_steps=extra_steps) for task, f in zip(tasks, folders)]


def summary(comparisons: list[Comparison]) -> dict:
    ratios = [c.ratio for c in comparisons if c.verdict == "agree" and c.ratio is not None]
    return {**{v: sum(c.verdict == v for c in comparisons) for v in VERDICTS}, "tasks": len(comparisons),
            "median_ratio_checker_over_prover": round(statistics.median(ratios), 2) if ratios else None,
            "median_prover_seconds": _median(c.prover.seconds for c in comparisons),
            "median_checker_seconds": _median(c.checker.seconds for c in comparisons)}


def _median(xs) -> float | None:
    xs = list(xs)
    return round(statistics.median(xs), 4) if xs else None

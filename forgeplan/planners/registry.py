"""The planners, the task kinds each accepts and the guarantee each gives; commands choose through here.

In the manner of unified-planning's engine factory (`OneshotPlanner(problem_kind=..., optimality_guarantee=...)`):
a planner declares which kinds of task (`semantics.grounded.MoveKind`) it accepts and what its answer
guarantees, and `choose` returns the first planner of `PLANNERS` that fits a task's kind and the
guarantee asked for. `solve`, `task make`, `bench build` and `crosscheck` ask here; no other module
decides by the kind of a task which planner runs.

Guarantees:
* `PROVED_MINIMAL`: a plan proved lexicographically minimal (J_move, then c) over the grounded universe,
  or an honest status saying it was not (feasible, timeout, unsolvable); its result is a `SolveResult`;
* `CROSS_CHECK`: an independent optimum over the same task, compared with the proof by `crosscheck`;
* `FEASIBLE`: a valid plan, not minimal (a fallback and an upper bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

from ..model.errors import ForgeplanError, InputError
from ..semantics.grounded import MoveKind, kind_of
from ..semantics.task import Task


class Guarantee(Enum):
    PROVED_MINIMAL = "proved-minimal"
    CROSS_CHECK = "cross-check"
    FEASIBLE = "feasible"


@dataclass(frozen=True)
class Planner:
    """One planner: its name (as results and proof objects report it), what it accepts and guarantees."""

    name: str
    kinds: frozenset[MoveKind]
    guarantee: Guarantee
    run: Callable | None       # PROVED_MINIMAL: (task, objective, time_limit, all_optimal, max_plans) -> SolveResult;
                               # FEASIBLE: (world, actual, target) -> plan | None; CROSS_CHECK: see crosscheck.SIDES
    deterministic: bool = False  # stops on a state budget, not on the clock: an unproved answer is the same on every run
    summary: str = ""

    def accepts(self, kind: MoveKind) -> bool:
        return kind in self.kinds

    def __call__(self, *args, **kwargs):
        """Run the planner (the arguments of its guarantee, see `run`)."""
        if self.run is None:
            raise ForgeplanError(f"planner {self.name} runs only inside crosscheck")
        return self.run(*args, **kwargs)


def _clingo(task, objective="moved-parts,actions", time_limit=None, all_optimal=False, max_plans=100):
    from .asp.solve import solve_task

    return solve_task(task, objective, time_limit, all_optimal, max_plans)


def _moved_set_search(task, objective="moved-parts,actions", time_limit=None, all_optimal=False, max_plans=100):
    from .moved_set.solve import solve_result

    return solve_result(task, objective, time_limit, all_optimal)


def _repair_search(world, actual, target):
    from .repair import repair_plan

    return repair_plan(world, actual, target)


def _chain_repair(world, actual, target):
    from .partial_repair import partial_repair_plan

    return partial_repair_plan(world, actual, target)


STRAIGHT_OR_GROUPS = frozenset({MoveKind.STRAIGHT, MoveKind.GROUPS})
PARTIAL = frozenset({MoveKind.PARTIAL})

# in order of preference: `choose` takes the first that fits
PLANNERS: tuple[Planner, ...] = (
    Planner("clingo", STRAIGHT_OR_GROUPS, Guarantee.PROVED_MINIMAL, _clingo,
            summary="encodings/plan.lp over the grounded action universe, optimal over all plan lengths"),
    Planner("moved-set-search", PARTIAL, Guarantee.PROVED_MINIMAL, _moved_set_search, deterministic=True,
            summary="planners/moved_set/search.py over the grounded universe of SEMANTICS §9"),
    Planner("fast-downward", STRAIGHT_OR_GROUPS, Guarantee.CROSS_CHECK, None,
            summary="astar(lmcut()) on the grounded PDDL export"),
    Planner("clingo-partial", PARTIAL, Guarantee.CROSS_CHECK, None,
            summary="encodings/partial_check.lp over the box and horizon that hold the proving planner's plan"),
    Planner("repair-search", STRAIGHT_OR_GROUPS, Guarantee.FEASIBLE, _repair_search,
            summary="planners/repair.py: take out what blocks, repair, put back"),
    Planner("chain-repair", PARTIAL, Guarantee.FEASIBLE, _chain_repair,
            summary="planners/partial_repair.py: out and back along the level search's main chain"),
)
REGISTRY = {p.name: p for p in PLANNERS}


def choose(kind: MoveKind, guarantee: Guarantee) -> Planner:
    """The first planner that accepts `kind` with `guarantee`."""
    for p in PLANNERS:
        if p.guarantee is guarantee and p.accepts(kind):
            return p
    raise InputError(f"no planner gives {guarantee.value} plans for tasks with {kind.value} moves", field="task")


def planner_for(task: Task, guarantee: Guarantee = Guarantee.PROVED_MINIMAL) -> Planner:
    return choose(kind_of(task), guarantee)


def accepted(name: str, tasks) -> list[Task]:
    """The tasks whose kind planner `name` accepts (e.g. the ones a clingo grounding serves)."""
    planner = REGISTRY[name]
    return [t for t in tasks if planner.accepts(kind_of(t))]


def solve(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
          all_optimal: bool = False, max_plans: int = 100):
    """The proving planner's `SolveResult` for `task`."""
    return planner_for(task)(task, objective, time_limit, all_optimal, max_plans)


def renders_partial_moves(task: Task) -> bool:
    """Does the task's PDDL export take the grounded partial-move rendering (`pddl.slide_groups`, SEMANTICS §9)?"""
    return kind_of(task) is MoveKind.PARTIAL


def feasible_plan(task: Task):
    """A valid, not minimal, plan from the feasible planner of the task's kind (None when it finds none)."""
    return planner_for(task, Guarantee.FEASIBLE)(task.world, task.actual, task.target)

"""The planners, the capabilities of the tasks each plans, the objectives and the guarantee each gives;
commands choose through here.

In the manner of unified-planning's engine factory (`OneshotPlanner(problem_kind=..., optimality_guarantee=...)`,
engines declared by the problem kinds they support): a planner declares which capabilities of a grounded
task (`semantics.grounded.Capability`: group moves, slides, offsets) it plans with and which it needs, the
objectives it optimises and what its answer guarantees, and `choose` returns the first planner of
`PLANNERS` that fits a grounded task, the objective and the guarantee asked for. `solve`, `task make`,
`bench build` and `crosscheck` ask here; no other module decides by what a task needs which planner runs.

Every planner that runs takes `(grounded, options)` (a `GroundedTask` and `planners.result.Options`) and
returns a `planners.result.SolveResult`. Guarantees:
* `PROVED_MINIMAL`: a plan proved minimal in the objective over the grounded universe, or an honest status
  saying it was not (feasible, timeout, unsolvable);
* `CROSS_CHECK`: an independent optimum over the same task, compared with the proof by `crosscheck`
  (which runs it: `crosscheck.CHECKS`);
* `FEASIBLE`: a valid plan, not minimal (a fallback and an upper bound): status feasible, or timeout
  when it finds none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Iterable

from ..model.actions import Action, moved_parts
from ..model.choices import OBJECTIVES
from ..model.errors import ForgeplanError, InputError
from ..semantics.grounded import Capability, GroundedTask, as_grounded
from ..semantics.task import Task
from .result import Options, SolveResult, Status


class Guarantee(Enum):
    PROVED_MINIMAL = "proved-minimal"
    CROSS_CHECK = "cross-check"
    FEASIBLE = "feasible"


Run = Callable[[GroundedTask, Options], SolveResult]
ANSWERS = "planner answers"   # the memo of `AssemblyGrounding` that keeps the answers per state
ANSWERS_MAX = 4096            # answers kept per assembly grounding (a long-lived one starts over past it)
ALL_OBJECTIVES = frozenset(OBJECTIVES)


@dataclass(frozen=True)
class Planner:
    """One planner: its name (as results and proof objects report it), the capabilities it plans with
    (`handles`) and those a task must have for it (`needs`), the objectives it optimises, its guarantee."""

    name: str
    handles: frozenset[Capability]
    guarantee: Guarantee
    run: Run | None              # None: a cross-check, run by `crosscheck` against the proof
    needs: frozenset[Capability] = frozenset()
    objectives: frozenset[str] = ALL_OBJECTIVES
    deterministic: bool = False  # stops on a state budget, not on the clock: an unproved answer is the same on every run
    summary: str = ""

    def accepts(self, grounded: GroundedTask) -> bool:
        """Does it plan this task: every capability the task has is one it handles, and it has all it needs."""
        return self.needs <= grounded.capabilities <= self.handles

    def __call__(self, grounded: GroundedTask, options: Options = Options()) -> SolveResult:
        """The planner's answer; a proved one (or any answer of a deterministic planner) is kept on the
        task's assembly grounding, so a task in a state already solved there takes that answer: a benchmark
        batch draws the same faulty state many times. The answer is a function of the state, the target
        and the options (the `seconds` it reports are those of its solve)."""
        if self.run is None:
            raise ForgeplanError(f"planner {self.name} runs only inside crosscheck")
        kept = grounded.shared.memo(ANSWERS)
        key = (self.name, options, grounded.task.actual.slots, grounded.task.target.slots)
        hit = kept.get(key)
        if hit is None:
            hit = self.run(grounded, options)
            if self.deterministic or hit.status in (Status.OPTIMAL, Status.UNSOLVABLE):
                if len(kept) >= ANSWERS_MAX:
                    kept.clear()
                kept[key] = hit
        return hit


def _clingo(grounded: GroundedTask, options: Options) -> SolveResult:
    from .asp.solve import solve_task

    return solve_task(grounded, options.objective, options.time_limit, options.all_optimal, options.max_plans)


def _moved_set_search(grounded: GroundedTask, options: Options) -> SolveResult:
    from .moved_set.solve import solve_result

    return solve_result(grounded, options)


def _repair_search(grounded: GroundedTask, options: Options) -> SolveResult:
    from .repair import repair_plan

    return _feasible(grounded, options, "repair-search", lambda: repair_plan(grounded.world, grounded.task.actual,
                                                                              grounded.task.target))


def _chain_repair(grounded: GroundedTask, options: Options) -> SolveResult:
    from .partial_repair import partial_repair_plan

    return _feasible(grounded, options, "repair-search", lambda: partial_repair_plan(
        grounded.world, grounded.task.actual, grounded.task.target))


def _feasible(grounded: GroundedTask, options: Options, proof: str, find: Callable[[], list[Action] | None]) -> SolveResult:
    """A feasible planner's plan as a result: feasible, or timeout when it finds none."""
    t0 = time.perf_counter()
    plan = find()
    status = Status.TIMEOUT if plan is None else Status.FEASIBLE
    found = tuple(plan or ())
    return SolveResult(status, False, found, len(moved_parts(found)), len(found), [], time.perf_counter() - t0, None, (),
                       len(found), options.objective, proof=proof if plan is not None else "")


GROUPS = frozenset({Capability.GROUPS})
PARTIAL = frozenset({Capability.GROUPS, Capability.SLIDES, Capability.OFFSETS})
SLIDES = frozenset({Capability.SLIDES})

# in order of preference: `choose` takes the first that fits
PLANNERS: tuple[Planner, ...] = (
    Planner("clingo", GROUPS, Guarantee.PROVED_MINIMAL, _clingo,
            summary="encodings/plan.lp over the grounded action universe, optimal over all plan lengths"),
    Planner("moved-set-search", PARTIAL, Guarantee.PROVED_MINIMAL, _moved_set_search, needs=SLIDES,
            objectives=frozenset({"moved-parts,actions", "actions"}), deterministic=True,
            summary="planners/moved_set/search.py over the grounded universe of SEMANTICS §9"),
    Planner("fast-downward", GROUPS, Guarantee.CROSS_CHECK, None,
            summary="astar(lmcut()) on the grounded PDDL export"),
    Planner("clingo-partial", PARTIAL, Guarantee.CROSS_CHECK, None, needs=SLIDES,
            summary="encodings/partial_check.lp over the box and horizon that hold the proving planner's plan"),
    Planner("repair-search", GROUPS, Guarantee.FEASIBLE, _repair_search,
            summary="planners/repair.py: take out what blocks, repair, put back"),
    Planner("chain-repair", PARTIAL, Guarantee.FEASIBLE, _chain_repair, needs=SLIDES,
            summary="planners/partial_repair.py: out and back along the level search's main chain"),
)
REGISTRY = {p.name: p for p in PLANNERS}


def choose(grounded: GroundedTask, guarantee: Guarantee, objective: str = "moved-parts,actions") -> Planner:
    """The first planner that plans `grounded` for `objective` with `guarantee`."""
    for p in PLANNERS:
        if p.guarantee is guarantee and p.accepts(grounded) and objective in p.objectives:
            return p
    has = ", ".join(sorted(c.value for c in grounded.capabilities)) or "straight moves only"
    offered = sorted({o for p in PLANNERS if p.guarantee is guarantee and p.accepts(grounded) for o in p.objectives})
    raise InputError(f"no planner gives {guarantee.value} plans for the objective {objective} on tasks with {has}"
                     + (f" (objectives offered for them: {', '.join(offered)})" if offered else ""), field="--objective")


def planner_for(task: Task | GroundedTask, guarantee: Guarantee = Guarantee.PROVED_MINIMAL,
                objective: str = "moved-parts,actions") -> Planner:
    return choose(as_grounded(task), guarantee, objective)


def accepted(name: str, tasks: Iterable[Task | GroundedTask]) -> list:
    """The tasks (or grounded tasks) planner `name` plans (e.g. the ones a clingo grounding serves)."""
    planner = REGISTRY[name]
    return [t for t in tasks if planner.accepts(as_grounded(t))]


def solve(task: Task | GroundedTask, objective: str = "moved-parts,actions", time_limit: float | None = None,
          all_optimal: bool = False, max_plans: int = 100) -> SolveResult:
    """The proving planner's `SolveResult` for `task`."""
    grounded = as_grounded(task)
    options = Options(objective, time_limit, all_optimal, max_plans)
    return choose(grounded, Guarantee.PROVED_MINIMAL, objective)(grounded, options)


def renders_partial_moves(task: Task | GroundedTask) -> bool:
    """Does the task's PDDL export take the grounded partial-move rendering (`pddl.slide_groups`, SEMANTICS §9)?"""
    return as_grounded(task).has_slides


def feasible_plan(task: Task | GroundedTask) -> tuple[Action, ...] | None:
    """A valid, not minimal, plan from the feasible planner of the task's kind (None when it finds none)."""
    grounded = as_grounded(task)
    result = choose(grounded, Guarantee.FEASIBLE)(grounded, Options())
    return result.plan if result.status is Status.FEASIBLE else None

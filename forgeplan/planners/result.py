"""What every planner of the registry takes besides the grounded task (`Options`) and what it returns
(`SolveResult`, with its `Status`), in the manner of unified-planning's `PlanGenerationResult`: one
result type for clingo, the moved-set search and the repair searches alike."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..model.actions import Action
from ..model.choices import OBJECTIVES
from ..model.errors import InputError


@dataclass(frozen=True)
class Options:
    """How a planner is asked to plan: the objective (`model.choices.OBJECTIVES`), a time limit in
    seconds (None: none), and whether every optimal plan is enumerated (at most `max_plans` kept)."""

    objective: str = "moved-parts,actions"
    time_limit: float | None = None
    all_optimal: bool = False
    max_plans: int = 100

    def check(self) -> "Options":
        """The options themselves, when a planner can honour them (else InputError naming the option)."""
        check_arguments(self.objective, self.all_optimal, self.time_limit)
        return self


def check_arguments(objective: str, all_optimal: bool, time_limit: float | None) -> None:
    if objective not in OBJECTIVES:
        raise InputError(f"objective {objective!r} must be one of {list(OBJECTIVES)}", field="--objective")
    if all_optimal and objective == "moved-parts":
        raise InputError("--all-optimal needs a bounded plan set: J_move-optimal plans can be padded with loops; "
                         "use 'moved-parts,actions' or 'actions'", field="--all-optimal")
    if time_limit is not None and not time_limit > 0:
        raise InputError("the time limit must be a positive number of seconds", field="--time-limit")


class Status(Enum):
    OPTIMAL = "optimal"          # proved optimal over all plan lengths
    FEASIBLE = "feasible"        # a valid plan, optimality not proved (time limit)
    UNSOLVABLE = "unsolvable"    # proved: no plan of any length
    TIMEOUT = "timeout"          # no plan found within the time limit


@dataclass
class SolveResult:
    status: Status
    optimal: bool
    plan: tuple[Action, ...]
    moved_parts: int
    actions: int
    closure: list[str]
    seconds: float
    n_optimal: int | None
    optimal_plans: tuple[tuple[Action, ...], ...]
    horizon: int
    objective: str = "moved-parts,actions"
    lower_bound: int | None = None    # relaxation bound on J_move (None when not computed)
    proof: str = ""                   # how optimality was established (encodings/README.md)
    canonical: bool = False           # the plan is the tie-break reference (SEMANTICS §4), proved
    # partial moves (SEMANTICS §9 "One universe"): the objective's levels proved over every plan the engine
    # accepts, and whether no plan of the grounded universe is better; None: every level when optimal
    proved: tuple[str, ...] | None = None
    grounded_optimal: bool | None = None
    proved_by: str = ""               # "engine-search": the plan is the engine search's, which proved it shortest

    def to_json(self) -> dict:
        proved = self.proved if self.proved is not None else OBJECTIVES[self.objective] if self.optimal else ()
        out = {
            "status": self.status.value, "optimal": self.optimal, "objective": self.objective,
            "proved": list(proved),
            "moved_parts": self.moved_parts, "actions": self.actions, "proof": self.proof,
            "lower_bound_moved_parts": self.lower_bound, "horizon": self.horizon, "canonical": self.canonical,
            "closure": self.closure, "seconds": round(self.seconds, 4),
            "plan": [a.to_json() for a in self.plan], "n_optimal": self.n_optimal,
            "optimal_plans": [[a.to_json() for a in p] for p in self.optimal_plans],
        }
        if self.grounded_optimal is not None:
            out["grounded_optimal"] = self.grounded_optimal
        if self.proved_by:
            out["proved_by"] = self.proved_by
        return out

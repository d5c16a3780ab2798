"""Fast Downward (astar(lmcut()), through unified-planning) on the expanded problem."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ...model.actions import Action
from ...semantics.grounded import DEFAULT_WEIGHT, plan_value
from ...semantics.task import Task
from .problem import build_problem


FD_MAX_TIMEOUT = 1e6  # seconds (11.6 days)


@dataclass
class PlannerResult:
    """What Fast Downward returned for a task, mapped back to forgeplan actions."""

    status: Any                      # unified_planning.engines.PlanGenerationResultStatus
    plan: tuple[Action, ...] | None
    cost: int | None                 # the plan's total cost under the objective's action costs
    reported_cost: int | None        # the same as Fast Downward reported it (a consistency check)
    seconds: float                   # wall time of the planner call (write PDDL, translate, search)
    build_seconds: float             # task -> UP problem
    planner_seconds: float | None    # Fast Downward's own "Planner time" (translate + search)

    @property
    def optimal(self) -> bool:
        from unified_planning.engines import PlanGenerationResultStatus as S

        return self.status == S.SOLVED_OPTIMALLY


def solve_fd(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
             weight: int = DEFAULT_WEIGHT) -> PlannerResult:
    """Optimal plan by Fast Downward's astar(lmcut()) on the expanded problem.

    The translator's output.sas goes next to the plan file in UP's own temporary folder of the call
    (`_isolated`), never into the working directory, so calls may run side by side in one process or
    several; the time limit goes to `solve(timeout=...)` so that UP terminates the whole process group.
    """
    import time

    from unified_planning.engines import PlanGenerationResultStatus as S
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    get_environment().credits_stream = None
    t0 = time.perf_counter()
    enc = build_problem(task, objective, grounded=True, weight=weight)
    t1 = time.perf_counter()
    with OneshotPlanner(name="fast-downward-opt") as planner:
        _isolated(planner)
        # a subprocess timeout must fit a C time value: a limit beyond FD_MAX_TIMEOUT means none
        res = planner.solve(enc.problem, timeout=time_limit if time_limit is None or time_limit <= FD_MAX_TIMEOUT else None)
    t2 = time.perf_counter()
    plan = enc.decode(res.plan.actions) if res.plan is not None else None
    cost = plan_value(objective, plan, weight) if plan is not None else None
    status = res.status
    if plan is not None and objective == "moved-parts,actions" and len(plan) >= weight:
        status = S.SOLVED_SATISFICING  # the weight argument (domains/README.md) needs c < W
    log = "".join(m.message for m in res.log_messages or ())
    reported = _last_number(r"Plan cost: (\d+)", log)
    return PlannerResult(status, plan, cost, None if reported is None else int(reported) - 1, t2 - t1, t1 - t0,
                         _last_number(r"Planner time: ([\d.]+)s", log))


def _isolated(planner) -> None:
    """Make the Fast Downward driver write its intermediate output.sas beside the plan file (a fresh
    temporary folder per call) instead of into the process's working directory."""
    base = planner._base_cmd

    def command(plan_filename: str) -> list[str]:
        return [*base(plan_filename), "--sas-file", os.path.join(os.path.dirname(plan_filename), "output.sas")]

    planner._base_cmd = command


def _last_number(pattern: str, log: str) -> float | None:
    """A figure from Fast Downward's log (the plan cost there includes UP's artificial goal action, cost 1)."""
    import re

    found = re.findall(pattern, log)
    return float(found[-1]) if found else None

"""Export profiles: how rich a PDDL dialect the written task uses, so that simpler planners can read it.

* `full`: the export as built (`problem.build_problem`): lifted (quantifiers, conditional effects, numeric
  cost functions) or grounded (negative preconditions, action costs).
* `strips-costs`: the grounded export with negative conditions compiled away by unified-planning's
  `NegativeConditionsRemover` (`not_f` twins); requirements `:strips :typing :action-costs`.
* `strips`: the same without costs: objective `actions`, requirements `:strips :typing` (pyperplan).
* `strips-table`: the `strips-costs` problem without cost syntax (no `:functions`, no `increase`), so that
  parsers without numeric fluents (pyperplan's) read it, and its action costs as a table beside it
  (`costs.json`: PDDL action name -> cost). A plan's cost is the sum of its actions' entries; the
  optimum under the table is the `strips-costs` optimum.

The compiled problem keeps every action's name, so a plan of it decodes through the original encoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...model.choices import PROFILES
from ...model.errors import InputError
from ...semantics.grounded import DEFAULT_WEIGHT
from ...semantics.task import Task
from .codec import Encoding
from .problem import build_problem


@dataclass
class Export:
    """What is written for a task under a profile, and the encoding its plans decode through."""

    enc: Encoding
    problem: Any      # unified_planning.model.Problem: enc.problem, or its STRIPS compilation
    profile: str
    costs: dict | None = None   # strips-table: the written problem's action -> its cost (the table)

    @property
    def groups(self):
        return self.enc.groups

    @property
    def grounded(self) -> bool:
        return self.enc.grounded

    @property
    def objective(self) -> str:
        return self.enc.objective

    def decode(self, instances):
        """Action instances of the written problem -> forgeplan actions (names are shared with `enc`)."""
        return self.enc.decode(instances)

    def encode(self, actions):
        """A forgeplan plan as instances of `enc`'s problem (the written problem's actions have the same names)."""
        return self.enc.encode(actions)


def profile_objective(profile: str, objective: str | None) -> str:
    """The objective a profile exports: `strips` has no costs, so only `actions` fits it."""
    if profile == "strips":
        if objective not in (None, "actions"):
            raise InputError(f"the strips profile has no action costs, so its objective is 'actions', not {objective!r}",
                             field="--objective")
        return "actions"
    return objective or "moved-parts,actions"


def build_export(task: Task, profile: str = "full", objective: str | None = None, *, grounded: bool = False,
                 weight: int = DEFAULT_WEIGHT) -> Export:
    """The task under `profile`; the STRIPS profiles are always grounded (the lifted domain quantifies)."""
    if profile not in PROFILES:
        raise InputError(f"profile {profile!r} must be one of {list(PROFILES)}", field="--profile")
    objective = profile_objective(profile, objective)
    if profile == "full":
        enc = build_problem(task, objective, grounded=grounded, weight=weight)
        return Export(enc, enc.problem, profile)
    enc = build_problem(task, objective, grounded=True, weight=weight)
    compiled = strips_problem(enc.problem, with_costs=profile == "strips-costs")
    if profile != "strips-table":
        return Export(enc, compiled, profile)
    metric = enc.problem.quality_metrics[0]
    table = {a: metric.get_action_cost(enc.problem.action(a.name)).constant_value() for a in compiled.actions}
    return Export(enc, compiled, profile, table)


def strips_problem(problem, with_costs: bool):
    """`problem` (grounded) without negative conditions, with its action costs or with none.

    unified-planning 1.3's NegativeConditionsRemover maps the cost metric through an action table it
    fills only afterwards, so every cost comes out undefined; the costs are copied over by action name.
    """
    from unified_planning.engines import CompilationKind
    from unified_planning.shortcuts import Compiler, MinimizeActionCosts, get_environment

    get_environment().credits_stream = None
    source = problem.clone()
    source.clear_quality_metrics()
    kind = CompilationKind.NEGATIVE_CONDITIONS_REMOVING
    with Compiler(problem_kind=source.kind, compilation_kind=kind) as compiler:
        compiled = compiler.compile(source, kind).problem
    compiled.name = problem.name
    if with_costs:
        metric = problem.quality_metrics[0]
        compiled.add_quality_metric(MinimizeActionCosts(
            {a: metric.get_action_cost(problem.action(a.name)) for a in compiled.actions}))
    return compiled

"""The grounded (expanded) problem: plain STRIPS with action costs, what Fast Downward takes without axioms."""

from __future__ import annotations

import itertools
from typing import Any

from ...model.actions import Action, GroupMove, OnePart, PoseMove, Replace, Turn
from ...semantics.task import Task
from .abstraction import Abstraction, Literal, GroundStep
from .codec import Encoding, touch_variants
from .vocabulary import DIRECTION_NAMES, DOMAIN_NAME


def expanded_problem(task: Task, ab: Abstraction, objective: str, weight: int, costs, every_direction: bool) -> Encoding:
    """Plain STRIPS with action costs: one action per step x free direction x touch variant.

    Atoms are unary predicates over part constants (`present p`), not one nullary predicate per atom:
    with nullary predicates Fast Downward's invariant synthesis takes seconds on the join moves of a
    six-piece burr (each adds several atoms), with unary ones a hundredth of a second.
    """
    from unified_planning.shortcuts import (BoolType, Fluent, InstantaneousAction, Int, MinimizeActionCosts, Not, Object,
                                            Problem, UserType)

    problem = Problem(DOMAIN_NAME)
    part = UserType("part")
    fluents: dict[str, Any] = {}   # unified-planning Fluents
    objs: dict[str, object] = {}

    def atom(f: str, pid: str):
        if f not in fluents:
            fluents[f] = Fluent(f, BoolType(), x=part)
            problem.add_fluent(fluents[f], default_initial_value=False)
        if pid not in objs:
            objs[pid] = Object(pid, part)
            problem.add_object(objs[pid])
        return fluents[f](objs[pid])

    def lit(f: str, pid: str, value: bool):
        return atom(f, pid) if value else Not(atom(f, pid))

    with_touch = objective != "actions"
    enc = Encoding(task, problem, objective, weight, True, groups=ab.groups, every_direction=every_direction)
    action_costs = {}
    for step in ab.steps:
        a = step.action
        group = isinstance(a, GroupMove)
        touches = a.touched
        variants = touch_variants(touches) if with_touch and not group else [("", ())]
        for (suffix, new), (words, alt) in itertools.product(variants, _alternatives(step)):
            act = InstantaneousAction(enc.unique_name(" ".join([a.name + suffix, *_label(a), *words])))
            for lt in (*step.pre, *alt):
                act.add_precondition(lit(*lt))
            for f, pid, value in step.eff:
                act.add_effect(atom(f, pid), value)
            for p, is_new in zip(touches, new):
                act.add_precondition(lit("touched", p, not is_new))
                if is_new:
                    act.add_effect(atom("touched", p), True)
            if group and with_touch:  # the members' first touches are paid by `touch` actions
                for p in touches:
                    act.add_precondition(lit("touched", p, True))
            problem.add_action(act)
            enc.steps[act.name] = a
            action_costs[act] = Int(costs[sum(new)])
    if with_touch:
        action_costs.update(_touch_actions(enc, ab, atom, lit, Int(costs[1] - costs[0])))
    for f, pid, _ in sorted(ab.init):
        problem.set_initial_value(atom(f, pid), True)
    for lt in ab.goal:
        problem.add_goal(lit(*lt))
    problem.add_quality_metric(MinimizeActionCosts(action_costs))
    return enc


def _touch_actions(enc: Encoding, ab: Abstraction, atom, lit, cost) -> dict:
    """One `touch p` per member of a group move: it pays the first-touch cost a group move leaves out."""
    from unified_planning.shortcuts import InstantaneousAction

    costs = {}
    for p in dict.fromkeys(p for step in ab.steps if isinstance(step.action, GroupMove) for p in step.action.touched):
        act = InstantaneousAction(enc.unique_name(f"touch {p}"))
        act.add_precondition(lit("touched", p, False))
        act.add_effect(atom("touched", p), True)
        enc.problem.add_action(act)
        enc.touches[act.name] = p
        costs[act] = cost
    return costs


def _label(a: Action) -> list[str]:
    """The words that name a grounded action (its parameters; a group move: members and direction)."""
    if isinstance(a, GroupMove):
        return [*a.part_ids, f"along {DIRECTION_NAMES[a.direction]}"]
    assert isinstance(a, OnePart)
    if isinstance(a, Replace):
        return [a.part_id, a.target_part_id]
    if isinstance(a, PoseMove):
        return [a.part_id, "unlocked" if a.name.endswith("unlock") else "target"]
    if isinstance(a, Turn):
        return [a.part_id, a.axis, f"{a.angle_deg:g}"]
    return [a.part_id]


def _alternatives(step: GroundStep) -> list[tuple[list[str], tuple[Literal, ...]]]:
    """The free directions of a single-part move as (name words, blockers absent), one expanded action
    each (several may hold at once); one empty alternative for actions that need no clearance."""
    paths = step.paths or ((None, ()),)
    return [([f"along {DIRECTION_NAMES[d]}"] if len(paths) > 1 else [], tuple(("present", b, False) for b in blockers))
            for d, blockers in paths]

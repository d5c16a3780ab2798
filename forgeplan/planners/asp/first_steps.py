"""Every first step of every optimal completion of a state: the valid answers of an Assembly Decision.

clingo's brave consequences of the plans at the proven optimum (J_move, c): with the partial-order
reduction and the direction pruning switched off (encodings/README.md, "Pruning") every optimal plan is
a model, and `occurs(A,1)` is a brave consequence iff some optimal plan starts with A. Brave
enumeration needs at most one model per new atom, so this stays cheap where enumerating the optimal
plans (every order of independent actions) does not.
"""

from __future__ import annotations

import clingo
from clingo import Function, Number

from ...model.actions import Action
from ...model.errors import ForgeplanError
from ...semantics.task import Task
from .facts import task_facts
from .grounding import SOLVER_OPTIONS, load_encoding, quiet
from .solve import solve_task

FIRST_STEP_SECONDS = 60.0


def first_steps(task: Task, moved: int, length: int) -> tuple[Action, ...]:
    """The first actions of the plans of cost (moved, length), which must be the proven optimum."""
    if length == 0:
        return ()
    facts = task_facts(task)
    ctl = clingo.Control(["--opt-mode=enum", "--enum-mode=brave", "--models=0", *SOLVER_OPTIONS,
                          "-c", "prune_directions=0", "-c", "por=0"], logger=quiet)
    load_encoding(ctl, "plan.lp")
    ctl.add("base", [], facts.text)
    parts = [("base", []), ("state", [Number(0)]), ("check", [Number(0)])]
    for t in range(1, length + 1):
        parts += [("step", [Number(t)]), ("state", [Number(t)]), ("check", [Number(t)])]
    ctl.ground(parts)
    for name in ("minimize_moved", "minimize_actions"):
        ctl.assign_external(Function(name), True)
    ctl.assign_external(Function("query", [Number(length)]), True)
    ctl.configuration.solve.opt_mode = f"enum,{moved},{length}"  # type: ignore[union-attr]  # clingo types the solve group as str | Configuration | None; it is a Configuration
    last: list = []
    with ctl.solve(yield_=False, async_=True, on_model=lambda m: last.append(m.symbols(shown=True))) as handle:
        if not handle.wait(FIRST_STEP_SECONDS):
            handle.cancel()
            raise ForgeplanError(f"{task.sample_id}: the first steps were not enumerated within {FIRST_STEP_SECONDS:g} s")
        result = handle.get()
    if not result.satisfiable or not last:
        raise ForgeplanError(f"{task.sample_id}: no plan of cost ({moved}, {length}); is it the proven optimum?")
    terms = {str(s.arguments[0]) for s in last[-1] if s.name == "occurs" and s.arguments[1].number == 1}
    return tuple(sorted((facts.actions[t] for t in terms), key=lambda a: facts.terms[a]))


def solve_with_first_steps(task: Task, time_limit: float | None = None):
    """The proven-optimal canonical plan of `task` and the first steps of all its optimal plans; None
    when optimality was not proved within the time limit."""
    result = solve_task(task, time_limit=time_limit)
    if not result.optimal:
        return None
    return result, first_steps(task, result.moved_parts, result.actions)

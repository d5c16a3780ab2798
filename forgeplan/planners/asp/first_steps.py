"""What every optimal plan of a state may do, from clingo's brave consequences: the first steps of every
optimal completion (the valid answers of an Assembly Decision) and the parts some optimal plan moves (the
recovery route of FORGE Table 9's over-disassembly).

clingo's brave consequences of the plans at the proven optimum (J_move, c): with the partial-order
reduction and the direction pruning switched off (encodings/README.md, "Pruning") every optimal plan is
a model, and `occurs(A,T)` is a brave consequence iff some optimal plan takes A at step T. Brave
enumeration needs at most one model per new atom, so this stays cheap where enumerating the optimal
plans (every order of independent actions) does not.
"""

from __future__ import annotations

import clingo
from clingo import Function, Number

from ...model.actions import Action
from ...model.errors import ForgeplanError
from ...semantics.task import Task
from .facts import Facts, task_facts
from .grounding import SOLVER_OPTIONS, load_encoding, quiet
from .solve import solve_task

FIRST_STEP_SECONDS = 60.0
ROUTE_SECONDS = 60.0


def first_steps(task: Task, moved: int, length: int) -> tuple[Action, ...]:
    """The first actions of the plans of cost (moved, length), which must be the proven optimum."""
    if length == 0:
        return ()
    facts, steps = _brave_steps(task, (moved, length), length, FIRST_STEP_SECONDS, restrict=True)
    terms = {term for term, t in steps if t == 1}
    return tuple(sorted((facts.actions[t] for t in terms), key=lambda a: facts.terms[a]))


def route_parts(task: Task, reference_cost: str = "forgeplan", time_limit: float = ROUTE_SECONDS) -> frozenset[str] | None:
    """The parts some optimal plan moves (the union of the optimal plans' moved-part sets), under the cost
    rule `reference_cost`: "forgeplan", the lexicographic (J_move, c); "paper", the fewest actions c.

    FORGE Table 9's over-disassembly is a move outside this set. A part is in it iff some action moving it
    occurs in some optimal plan, a brave consequence: no enumeration of the optimal plans is needed.
    Under (J_move, c) every optimal plan lies in the dependency closure (SEMANTICS §6), so the moves are
    restricted to it; under c alone they are not. None when the optimum or the consequences are not
    found within `time_limit`, or the task needs partial moves (the clingo plan program has no slides)."""
    from ...semantics.grounded import ground

    if ground(task).has_slides:   # encodings/plan.lp has no slides
        return None
    paper = reference_cost == "paper"
    result = solve_task(task, "actions" if paper else "moved-parts,actions", time_limit=time_limit)
    if not result.optimal:
        return None
    if result.actions == 0:
        return frozenset()
    bound = (result.actions,) if paper else (result.moved_parts, result.actions)
    try:
        facts, steps = _brave_steps(task, bound, result.actions, time_limit, restrict=not paper)
    except ForgeplanError:
        return None
    return frozenset(p for term, _ in steps for p in facts.actions[term].touched)


def _brave_steps(task: Task, bound: tuple[int, ...], length: int, time_limit: float,
                 restrict: bool) -> tuple[Facts, set[tuple[str, int]]]:
    """The (action term, step) pairs of every plan of `length` steps at cost `bound` (one value per
    objective: (J_move, c) or (c,)), as brave consequences."""
    facts = task_facts(task)
    ctl = clingo.Control(["--opt-mode=enum", "--enum-mode=brave", "--models=0", *SOLVER_OPTIONS,
                          "-c", "prune_directions=0", "-c", "por=0", "-c", f"restrict={int(restrict)}"], logger=quiet)
    load_encoding(ctl, "plan.lp")
    ctl.add("base", [], facts.text)
    parts = [("base", []), ("state", [Number(0)]), ("check", [Number(0)])]
    for t in range(1, length + 1):
        parts += [("step", [Number(t)]), ("state", [Number(t)]), ("check", [Number(t)])]
    ctl.ground(parts)
    for name in ("minimize_moved", "minimize_actions")[2 - len(bound):]:
        ctl.assign_external(Function(name), True)
    ctl.assign_external(Function("query", [Number(length)]), True)
    ctl.configuration.solve.opt_mode = "enum," + ",".join(map(str, bound))  # type: ignore[union-attr]  # clingo types the solve group as str | Configuration | None; it is a Configuration
    last: list = []
    with ctl.solve(yield_=False, async_=True, on_model=lambda m: last.append(m.symbols(shown=True))) as handle:
        if not handle.wait(time_limit):
            handle.cancel()
            raise ForgeplanError(f"{task.sample_id}: the optimal plans' steps were not enumerated within {time_limit:g} s")
        result = handle.get()
    if not result.satisfiable or not last:
        raise ForgeplanError(f"{task.sample_id}: no plan of cost {bound}; is it the proven optimum?")
    return facts, {(str(s.arguments[0]), s.arguments[1].number) for s in last[-1] if s.name == "occurs"}


def solve_with_first_steps(task: Task, time_limit: float | None = None):
    """The proven-optimal canonical plan of `task` and the first steps of all its optimal plans; None
    when optimality was not proved within the time limit."""
    result = solve_task(task, time_limit=time_limit)
    if not result.optimal:
        return None
    return result, first_steps(task, result.moved_parts, result.actions)

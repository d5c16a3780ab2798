"""Provably minimal recovery plans with clingo, optimal over all plan lengths (encodings/README.md).

One multi-shot control grounds the time steps in a few batches (horizons) and, at each horizon h,
optimises over all plans of length <= h. A bounded horizon proves nothing by itself, so a result is
called optimal only with a horizon-free argument:

* `actions`: c_h <= h, so every plan with fewer actions was inside the search.
* J_move (`moved-parts`, `moved-parts,actions`): J_h equals the lower bound of a static relaxation
  (encodings/relaxation.lp), or clingo proves that no loop-free path of h steps touches fewer than
  J_h parts (encodings/simple_paths.lp). Then J_h is optimal, and c_h is optimal for it, because
  any plan with J_h parts and fewer actions fits into the horizon h.

When a time limit cuts the search the best plan found is returned with `optimal=False`. The limit
is checked between ground calls and interrupts solving; a ground call itself runs to its end.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass

import clingo
from clingo import Function, Number

from ...model.actions import Action, moved_parts
from ...model.errors import InputError
from ...semantics.closure import dependency_closure
from ...semantics.diagnosis import faulty_slots
from ...semantics.grounded import (OBJECTIVES, GroundedTask, as_grounded, canonical_key, check_canonical_target,
                                   part_ranks)
from ...semantics.task import Task
from ..repair import repair_plan
from ..result import SolveResult, Status, check_arguments
from .facts import Facts, task_facts
from .grounding import ENCODINGS, Grounding, grounding_for, load_encoding, quiet  # noqa: F401 (ENCODINGS: public path)



class _Clock:
    def __init__(self, time_limit: float | None):
        self.start = time.perf_counter()
        self.deadline = None if time_limit is None else self.start + time_limit

    def left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def over(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline


_WAIT_SLICE = 1.0


def _run(ctl: clingo.Control, clock: _Clock, assumptions=(), on_model=None):
    """One solve call under the deadline: (clingo SolveResult, interrupted).

    Waits in slices of at most _WAIT_SLICE seconds, so that any limit, however large or infinite,
    is wall time (clingo's own wait misreads timeouts beyond its range as already expired).
    """
    with ctl.solve(assumptions=list(assumptions), on_model=on_model, async_=True) as handle:
        while True:
            left = clock.left()
            if handle.wait(_WAIT_SLICE if left is None else min(left, _WAIT_SLICE)):
                return handle.get(), False
            if clock.over():
                handle.cancel()
                return handle.get(), True


@contextmanager
def _switched(ctl: clingo.Control, *names):
    """Externals set true for one solve call, false again afterwards.

    (Externals are false unless assigned; clingo treats an assumption on a false external as a
    contradiction, so switches are assigned, and only derived atoms go into assumptions.)
    """
    for sym in names:
        ctl.assign_external(sym, True)
    try:
        yield
    finally:
        for sym in names:
            ctl.assign_external(sym, False)


def _plan_of(model: clingo.Model, facts: Facts) -> tuple[Action, ...]:
    steps = sorted((s.arguments[1].number, str(s.arguments[0])) for s in model.symbols(shown=True) if s.name == "occurs")
    return tuple(facts.actions[a] for _, a in steps)


def _plans_into(found: list, facts: Facts):
    """An on_model callback that appends each model's plan to `found`. It must not hold the planner: a
    control keeps its last callback, so control -> callback -> planner -> grounding -> control would be a
    cycle that keeps a dropped grounding, and its clingo memory, until a full garbage collection."""
    return lambda m: found.append(_plan_of(m, facts))


@dataclass
class _Bound:
    """The relaxation's optimum: status "bound" | "unsolvable" | "unknown" (time limit)."""

    status: str
    moved: int | None = None      # lower bound on J_move
    length: int | None = None     # a low estimate of c from the relaxation's model


class _Planner:
    """One task on an assembly grounding (encodings/plan.lp), searching plans of length <= `horizon`."""

    def __init__(self, grounding: Grounding, task: Task, minimize_moved: bool, clock: _Clock):
        self.g, self.ctl, self.facts = grounding, grounding.ctl, grounding.facts
        self.world, self.clock = task.world, clock
        grounding.start(task, minimize_moved)
        self.horizon = 0

    def _idle_beyond(self, horizon: int) -> list:
        """Assumption: the steps grounded beyond `horizon` (for other tasks) carry no action."""
        return [(Function("active", [Number(horizon + 1)]), False)] if self.g.horizon > horizon else []

    def lower_bound(self, task: Task) -> _Bound:
        """Solve the relaxation (encodings/bound.lp) in the grounding's bound control."""
        best: list = []
        res, interrupted = _run(self.g.bound, self.clock, (), lambda m: best.append((m.cost, m.symbols(shown=True))))
        if interrupted:
            return _Bound("unknown")
        if res.unsatisfiable:
            return _Bound("unsolvable")
        cost, atoms = best[-1]
        world, actual = task.world, task.actual
        touched = {a.arguments[0].string for a in atoms if a.name == "touched"}
        emptied = {a.arguments[0].string for a in atoms if a.name == "emptied"}
        relock = {p for p in touched if world.lock[world.index[p]] is not None and actual.slots[world.index[p]].locked}
        present = {p for p in emptied if actual.slots[world.index[p]].present}
        return _Bound("bound", cost[0] if cost else 0, len(touched) + len(present) + len(relock))

    def extend(self, horizon: int) -> None:
        """Search plans of length <= `horizon` from now on, grounding steps that are not yet."""
        self.g.extend(horizon)
        self.horizon = horizon

    @property
    def query(self) -> clingo.Symbol:
        return Function("query", [Number(self.horizon)])

    def _length(self, lo: int, hi: int | None = None) -> list:
        """Assumptions: the plan has at least `lo` actions and at most `hi` (default: the horizon)."""
        out = [(Function("active", [Number(lo)]), True)] if lo > 0 else []
        return out + self._idle_beyond(self.horizon if hi is None else hi)

    def optimize(self):
        """Best plan of length <= horizon, the tie-break reference among the best: (plan or None, proved,
        interrupted). The `tiebreak` levels lie below J_move and c, so they do not change (J_h, c_h);
        they make the optimum the plan `canonical` would pick for that length, in the same call."""
        found: list[tuple[Action, ...]] = []
        with _switched(self.ctl, self.query, Function("tiebreak")):
            res, interrupted = _run(self.ctl, self.clock, self._length(0), _plans_into(found, self.facts))
        return (found[-1] if found else None), bool(res.exhausted) and not interrupted, interrupted

    def loop_free_path_exists(self, cap: int | None) -> bool | None:
        """Is there a loop-free path of exactly `horizon` steps touching <= cap parts? None: interrupted."""
        self.g.ground_simple()
        switches = [Function("simple")] + ([Function("jcap", [Number(cap)])] if cap is not None else [])
        conf = self.ctl.configuration.solve
        conf.opt_mode, conf.models = "ignore", "1"
        try:
            with _switched(self.ctl, *switches):
                res, interrupted = _run(self.ctl, self.clock, self._length(self.horizon))
        finally:
            conf.opt_mode, conf.models = "opt", "0"
        return None if interrupted else bool(res.satisfiable)

    def canonical(self, length: int):
        """The tie-break reference among the optimal plans, which have `length` actions: (plan, proved).

        (Capping the top levels with clingo's opt bounds was measured slower: it makes the first
        model harder to find.)
        """
        found: list[tuple[Action, ...]] = []
        with _switched(self.ctl, self.query, Function("tiebreak")):
            res, interrupted = _run(self.ctl, self.clock, self._length(length, length),
                                    _plans_into(found, self.facts))
        return (found[-1] if found else None), bool(res.exhausted) and not interrupted

    def enumerate_optimal(self, moved: int, length: int, cap: int):
        """All plans with cost (moved, length): (count, or None if cut; the `cap` smallest by key)."""
        ranks, facts = part_ranks(self.world), self.facts   # not `self` in the callback (see _plans_into)
        count = 0
        keep: list = []

        def on_model(m):
            nonlocal count
            count += 1
            plan = _plan_of(m, facts)
            keep.append((tuple(canonical_key(a, ranks) for a in plan), plan))
            if len(keep) > 2 * cap:
                keep.sort()
                del keep[cap:]

        conf = self.ctl.configuration.solve
        conf.opt_mode = f"enum,{moved},{length}"
        try:
            with _switched(self.ctl, self.query):
                _, interrupted = _run(self.ctl, self.clock, self._length(length, length), on_model)
        finally:
            conf.opt_mode = "opt"
            keep.sort()
        return (None if interrupted else count), tuple(p for _, p in keep[:cap])


def _horizons(task: Task, closure: list[str], bound: _Bound, minimize_moved: bool) -> list[int]:
    """The horizons tried before deepening one step at a time (encodings/README.md, "Horizons").

    The relaxation's length estimate first; then the length of the repair module's structured plan
    if it is known to contain an optimum (`actions` objective, or its J_move meets the bound); last
    the length of the plan that unlocks, empties and refills the closure and re-locks, which exists
    for every assembly that passes `check_geometry`. Any horizon is sound: only the proofs decide.
    """
    world = task.world
    idx = [world.index[p] for p in closure]
    locks = [i for i in idx if world.lock[i] is not None]
    refill = 2 * len(idx) + len(locks) + sum(1 for i in locks if task.actual.slots[i].locked)
    out = {min(bound.length or 0, refill), refill}
    known = repair_plan(world, task.actual, task.target, node_limit=0)  # the structured plan only, no search
    if known is not None:
        if world.restoration(task.actual, known, task.target).restored and \
                (not minimize_moved or len(moved_parts(known)) == bound.moved):
            out = {h for h in out if h < len(known)} | {len(known)}
    return sorted(out)


JUMP = 2   # scheduled horizons at most this far beyond the next one are searched in the same call


def _window(schedule: list[int]) -> list[int]:
    """Take the next scheduled horizons to search in one call at the last of them: the next one and
    those within JUMP of it (the relaxation's estimate is often one or two short of the optimum)."""
    k = 1
    while k < len(schedule) and schedule[k] - schedule[0] <= JUMP:
        k += 1
    window = schedule[:k]
    del schedule[:k]
    return window


def _deepen(planner: _Planner, schedule: list[int], lb: int | None, minimize_moved: bool, clock: _Clock):
    """Optimise at growing horizons until a proof closes: (best plan or None, proof or "", proved).
    `proved`: the search at the last horizon was exhausted, so the plan is the tie-break reference.

    A window of scheduled horizons is searched at its last one. When the proof closes there with
    c_h actions, the reported horizon is the window's smallest one >= c_h: the first horizon of the
    schedule whose search closes the proof (a smaller one holds no plan with J_h and at most its
    length actions, as c_h is minimal), so the result is that of searching them one by one.
    A proof without a plan ("loop-free-paths", None) says the task is unsolvable.
    """
    best = None
    while not clock.over():
        window = _window(schedule) if schedule else [planner.horizon + 1]
        planner.extend(window[-1])
        plan, proved, interrupted = planner.optimize()
        best = plan if plan is not None else best
        if interrupted:
            break
        if plan is not None and (not minimize_moved or len(moved_parts(plan)) == lb):
            planner.horizon = min(h for h in window if h >= len(plan))
            return best, "relaxation-bound" if minimize_moved else "horizon-contains-shorter", proved
        if schedule:
            continue
        # beyond the refill horizon: ask whether deeper horizons can still hold a better plan
        exists = planner.loop_free_path_exists(len(moved_parts(plan)) - 1 if plan is not None else None)
        if exists is None:
            break
        if not exists:
            return plan, "loop-free-paths", proved
    return best, "", False


def restored(task: Task, closure: list[str]) -> bool:
    """The actual state is already target-equivalent (nothing faulty, nothing to repair). Then the empty
    plan is optimal on every objective (J_move = c = 0), and the search would return exactly that:
    the relaxation's bound is 0 (it is <= J_move), the schedule starts at horizon 0 (the closure is
    empty), and there the empty plan meets the bound. So it is returned without solving."""
    return not closure and task.world.equivalent(task.actual, task.target)


def solve_task(task: Task | GroundedTask, objective: str = "moved-parts,actions", time_limit: float | None = None,
               all_optimal: bool = False, max_plans: int = 100) -> SolveResult:
    """A minimal recovery plan for `task`, proved optimal over all plan lengths when `optimal` is true."""
    check_arguments(objective, all_optimal, time_limit)
    g = as_grounded(task)
    task, clock = g.task, _Clock(time_limit)
    world = task.world
    closure = [world.ids[i] for i in dependency_closure(world, task.actual, faulty_slots(world, task.actual, task.target))]
    minimize_moved = objective != "actions"

    def result(status, plan=(), horizon=0, proof="", lb=None, canonical=False, n_optimal=None, plans=()) -> SolveResult:
        plan = tuple(plan)
        if plan or status is Status.OPTIMAL:
            replay = world.restoration(task.actual, plan, task.target)
            if not replay.restored:
                raise RuntimeError(f"internal: clingo plan does not replay in the engine: {replay.failure}")
        return SolveResult(status, status is Status.OPTIMAL, plan, len(moved_parts(plan)), len(plan), closure,
                           time.perf_counter() - clock.start, n_optimal, tuple(plans), horizon, objective, lb, proof,
                           canonical)

    check_canonical_target(task)   # what every planner refuses, before any shortcut
    if not all_optimal and restored(task, closure):
        return result(Status.OPTIMAL, (), 0, "relaxation-bound" if minimize_moved else "horizon-contains-shorter",
                      0, canonical=True)
    # every optimal plan is enumerated with the direction variants of group moves and every order of
    # independent actions; one reference needs neither (encodings/README.md, "Pruning")
    planner = _Planner(grounding_for(g, reduce=not all_optimal), task, minimize_moved, clock)
    bound = planner.lower_bound(task)
    lb = bound.moved
    if bound.status == "unsolvable":
        return result(Status.UNSOLVABLE, proof="relaxation-infeasible")
    best, proof, canonical = _deepen(planner, _horizons(task, closure, bound, minimize_moved), lb, minimize_moved, clock)
    if best is None:
        status = Status.UNSOLVABLE if proof else Status.TIMEOUT
        return result(status, horizon=planner.horizon, proof=proof, lb=lb)
    if not proof:
        return result(Status.FEASIBLE, best, planner.horizon, lb=lb)
    length, moved = len(best), len(moved_parts(best))
    canonical = canonical or len(best) == 0
    if not canonical:
        plan, canonical = planner.canonical(length)
        best = plan if plan is not None else best
    n_optimal, plans = None, ()
    if all_optimal:
        n_optimal, plans = planner.enumerate_optimal(moved if minimize_moved else 0, length, max_plans)
    return result(Status.OPTIMAL, best, planner.horizon, proof, lb, canonical, n_optimal, plans)


def check_plan(task: Task, plan) -> list[tuple[str, str, int]]:
    """The plan checker encoding's verdict: err(Code, Action-or-slot, Step) atoms, sorted by step.

    Steps count from 1; the final-state errors carry the plan length. Only grounded actions
    (forgeplan.semantics.grounded) can be checked; any other action raises InputError.
    """
    facts = task_facts(task)
    lines = []
    for t, a in enumerate(plan, start=1):
        term = facts.terms.get(a)
        if term is None:
            raise InputError(f"step {t} {a} is not in the grounded action set", field="plan")
        lines.append(f"occurs({term},{t}).")
    ctl = clingo.Control(["-c", "restrict=0"], logger=quiet)
    load_encoding(ctl, "check.lp")
    ctl.add("base", [], facts.text + "\n".join(lines))
    n = len(plan)
    parts = [("base", []), ("state", [Number(0)])]
    for t in range(1, n + 1):
        parts += [("step", [Number(t)]), ("state", [Number(t)])]
    parts.append(("check", [Number(n)]))
    ctl.ground(parts)
    ctl.assign_external(Function("query", [Number(n)]), True)
    errs: list[tuple[str, str, int]] = []

    def on_model(m):
        errs.extend((s.arguments[0].name, str(s.arguments[1]), s.arguments[2].number) for s in m.symbols(shown=True))

    ctl.solve(on_model=on_model)
    return sorted(errs, key=lambda e: (e[2], e))

"""The valid plan closest to a given one (encodings/edit.lp): fewest insertions, deletions and substitutions.

The plan space is every valid plan over forgeplan's grounded action set (encodings/README.md: a rotate
only as the repairing turn of the part's current rotation), with no pruning and every slot movable; a given step equals a grounded action when name, parts and parameters
agree within the task's tolerances (`same_action`). Among the closest plans the objective levels of the
planner decide: fewest distinct moved parts, then actions, then the canonical tie-break.

The horizon needs no proof of its own: with d0 the distance from the given plan (n steps) to any valid
plan (the proven reference), a plan longer than n + d0 is farther than d0, so the optimum within n + d0
steps is the optimum over all lengths.

The search runs within a budget of time and horizon; past it the answer is "undecided" (ClosestPlan.decided
is False), which a caller reads as "keep the given plan".
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import clingo
from clingo import Function, Number

from ...model.actions import Action, PoseMove, Turn
from ...model.errors import ForgeplanError
from ...model.rotations import angle_diff
from ...semantics.engine import World
from ...semantics.task import Task
from ..result import Status
from .facts import task_facts
from .grounding import SOLVER_OPTIONS, load_encoding, quiet
from .solve import solve_task

EDIT_SECONDS = 120.0
MAX_HORIZON = 200   # steps grounded at most; a longer given plan is undecided at once


def same_action(world: World, a: Action, g: Action) -> bool:
    """Equal up to the tolerances: same kind and parts; a turn's axis equal and angle within rot_tol; a
    pose move's pose within both tolerances; every other kind equal as it is."""
    if type(a) is not type(g):
        return False
    if isinstance(a, Turn) and isinstance(g, Turn):
        return (a.part_id, a.axis) == (g.part_id, g.axis) and angle_diff(a.angle_deg, g.angle_deg) <= world.tol.rot_tol
    if isinstance(a, PoseMove) and isinstance(g, PoseMove):
        return a.part_id == g.part_id and world.tol.poses_close(a.after_pose, g.after_pose)
    return a == g


def edit_distance(world: World, a, b) -> int:
    """Levenshtein distance of two action sequences under `same_action`."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (not same_action(world, x, y))))
        prev = cur
    return prev[-1]


@dataclass(frozen=True)
class ClosestPlan:
    plan: tuple[Action, ...]
    distance: int | None   # edit distance from the given plan (None: undecided)
    horizon: int
    decided: bool = True   # False: not proved within the budget; `plan` is then the given plan, unchanged


def closest_valid_plan(task: Task, given, reference=None, time_limit: float = EDIT_SECONDS,
                       max_horizon: int = MAX_HORIZON, minimize_moved: bool = True) -> ClosestPlan:
    """The valid plan with the fewest edits from `given`; `reference` is any valid plan (default: solved).
    Among the closest, the fewest moved parts then actions, or with `minimize_moved` False (FORGE's cost,
    evaluation.samples.plan_cost "paper") the fewest actions.

    The budget: `time_limit` seconds in all (solving for the reference, grounding step by step, the
    search) and a horizon (given steps plus their distance from the reference) of at most `max_horizon`
    steps, which bounds the grounding. Beyond either the answer is "undecided" (`decided` False), never a
    plan that is not proved closest."""
    world = task.world
    given = tuple(given)
    clock = _Deadline(time_limit)
    if len(given) > max_horizon:
        return ClosestPlan(given, None, len(given), decided=False)
    if reference is None:
        result = solve_task(task, time_limit=time_limit)   # any valid plan bounds the horizon, proved or not
        if result.status is Status.UNSOLVABLE:
            raise ForgeplanError(f"{task.sample_id}: no valid plan to edit towards")
        if result.status is Status.TIMEOUT:
            return ClosestPlan(given, None, len(given), decided=False)
        reference = result.plan
    horizon = len(given) + edit_distance(world, given, reference)
    if horizon > max_horizon:
        return ClosestPlan(given, None, horizon, decided=False)
    found = _search(task, given, horizon, clock, minimize_moved)
    if found is None:
        return ClosestPlan(given, None, horizon, decided=False)
    return _checked(task, given, horizon, found)


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.perf_counter() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.perf_counter())


def _search(task: Task, given: tuple[Action, ...], horizon: int, clock: _Deadline, minimize_moved: bool):
    """clingo's closest plan within `horizon` steps: (cost, shown atoms), or None when the deadline passes
    (checked between ground calls, one per step, and during the search)."""
    world, facts = task.world, task_facts(task)
    lines = [f"anchor_step({j})." for j in range(1, len(given) + 1)]
    for j, a in enumerate(given, 1):
        lines += [f"anchor({j},{term})." for g, term in facts.terms.items() if same_action(world, a, g)]
    ctl = clingo.Control(["--opt-mode=opt", "--models=0", *SOLVER_OPTIONS, "-c", "restrict=0", "-c", "prune_directions=0"],
                         logger=quiet)
    load_encoding(ctl, "edit.lp")
    ctl.add("base", [], facts.text + "\n".join(lines) + "\n")
    ctl.ground([("base", []), ("state", [Number(0)])])
    for t in range(1, horizon + 1):
        if clock.left() <= 0:
            return None
        ctl.ground([("step", [Number(t)]), ("state", [Number(t)])])
    ctl.ground([("check", [Number(horizon)]), ("edits", [])])
    for name in ("minimize_moved",) * minimize_moved + ("minimize_actions", "tiebreak"):
        ctl.assign_external(Function(name), True)
    ctl.assign_external(Function("query", [Number(horizon)]), True)
    found: list = []
    with ctl.solve(async_=True, on_model=lambda m: found.append((m.cost, m.symbols(shown=True)))) as handle:
        if not handle.wait(clock.left()):
            handle.cancel()
            return None
        if not handle.get().exhausted or not found:
            raise ForgeplanError(f"{task.sample_id}: no valid plan within the edit horizon {horizon}")
    return facts, found[-1]


def _checked(task: Task, given: tuple[Action, ...], horizon: int, found) -> ClosestPlan:
    """The plan of clingo's model, replayed in the engine and its edit count checked."""
    world = task.world
    facts, (cost, atoms) = found
    steps = sorted((s.arguments[1].number, str(s.arguments[0])) for s in atoms if s.name == "occurs")
    plan = tuple(facts.actions[a] for _, a in steps)
    replay = world.restoration(task.actual, plan, task.target)
    if not replay.restored:
        raise RuntimeError(f"internal: the closest plan does not replay in the engine: {replay.failure}")
    distance = edit_distance(world, given, plan)
    edits = cost[0] if cost else 0   # no optimisation statement at horizon 0
    if distance != edits:
        raise RuntimeError(f"internal: clingo's edit count {edits} is not the edit distance {distance}")
    return ClosestPlan(plan, distance, horizon)

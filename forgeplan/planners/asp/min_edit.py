"""The valid plan closest to a given one (encodings/edit.lp): fewest insertions, deletions and substitutions.

The plan space is every valid plan over forgeplan's grounded action set (encodings/README.md: a rotate
only as the repairing turn of the part's current rotation), with no pruning and every slot movable; a given step equals a grounded action when name, parts and parameters
agree within the task's tolerances (`same_action`). Among the closest plans the objective levels of the
planner decide: fewest distinct moved parts, then actions, then the canonical tie-break.

The horizon needs no proof of its own: with d0 the distance from the given plan (n steps) to any valid
plan (the proven reference), a plan longer than n + d0 is farther than d0, so the optimum within n + d0
steps is the optimum over all lengths.
"""

from __future__ import annotations

from dataclasses import dataclass

import clingo
from clingo import Function, Number

from ...model.actions import Action, PoseMove, Turn
from ...model.errors import ForgeplanError
from ...model.rotations import angle_diff
from ...semantics.engine import World
from ...semantics.task import Task
from .facts import task_facts
from .grounding import SOLVER_OPTIONS, load_encoding, quiet
from .solve import solve_task

EDIT_SECONDS = 120.0


def same_action(world: World, a: Action, g: Action) -> bool:
    """Equal up to the tolerances: same kind and parts; a turn's axis equal and angle within rot_tol; a
    pose move's pose within both tolerances; every other kind equal as it is."""
    if type(a) is not type(g):
        return False
    if isinstance(a, Turn) and isinstance(g, Turn):
        return (a.part_id, a.axis) == (g.part_id, g.axis) and angle_diff(a.angle_deg, g.angle_deg) <= world.tol.rot_tol
    if isinstance(a, PoseMove) and isinstance(g, PoseMove):
        return a.part_id == g.part_id and world.pose_close(a.after_pose, g.after_pose)
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
    distance: int          # edit distance from the given plan
    horizon: int


def closest_valid_plan(task: Task, given, reference=None) -> ClosestPlan:
    """The valid plan with the fewest edits from `given`; `reference` is any valid plan (default: solved)."""
    world = task.world
    given = tuple(given)
    if reference is None:
        result = solve_task(task, time_limit=EDIT_SECONDS)
        if result.plan == () and not world.equivalent(task.actual, task.target):
            raise ForgeplanError(f"{task.sample_id}: no valid plan to edit towards")
        reference = result.plan
    horizon = len(given) + edit_distance(world, given, reference)
    facts = task_facts(task)
    lines = [f"anchor_step({j})." for j in range(1, len(given) + 1)]
    for j, a in enumerate(given, 1):
        lines += [f"anchor({j},{term})." for g, term in facts.terms.items() if same_action(world, a, g)]
    ctl = clingo.Control(["--opt-mode=opt", "--models=0", *SOLVER_OPTIONS, "-c", "restrict=0", "-c", "prune_directions=0"],
                         logger=quiet)
    load_encoding(ctl, "edit.lp")
    ctl.add("base", [], facts.text + "\n".join(lines) + "\n")
    parts = [("base", []), ("state", [Number(0)])]
    for t in range(1, horizon + 1):
        parts += [("step", [Number(t)]), ("state", [Number(t)])]
    ctl.ground(parts + [("check", [Number(horizon)]), ("edits", [])])
    for name in ("minimize_moved", "minimize_actions", "tiebreak"):
        ctl.assign_external(Function(name), True)
    ctl.assign_external(Function("query", [Number(horizon)]), True)
    found: list = []
    with ctl.solve(async_=True, on_model=lambda m: found.append((m.cost, m.symbols(shown=True)))) as handle:
        if not handle.wait(EDIT_SECONDS):
            handle.cancel()
            raise ForgeplanError(f"{task.sample_id}: the closest valid plan was not proved within {EDIT_SECONDS:g} s")
        if not handle.get().exhausted or not found:
            raise ForgeplanError(f"{task.sample_id}: no valid plan within the edit horizon {horizon}")
    cost, atoms = found[-1]
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

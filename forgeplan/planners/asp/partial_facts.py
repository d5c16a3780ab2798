"""Facts and a bounded-horizon clingo run for `encodings/partial.lp` (SEMANTICS.md §9, small puzzles).

The gap facts cover every relative offset two slots of the position domain can have, so their number
grows with the domain's volume times the number of slot pairs: fine for the test puzzles, far too many
for a six-piece burr (which is why partial-move references come from `planners.slide_search`).
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

from ...geometry.displacement import FREE, shapes
from ...model.actions import Action, Insert, Remove, ResetPose, Rotate, Slide
from ...model.assembly import DIRECTION_VECTORS, DIRECTIONS
from ...semantics.grounded import position_bound, position_domain, rotation_fix
from ...semantics.task import Task

ENCODING = Path(__file__).resolve().parents[3] / "encodings" / "partial.lp"


def partial_facts(task: Task) -> str:
    """The facts of `encodings/partial.lp` for a task (header of that file)."""
    world, asm = task.world, task.assembly
    sh, bound, n = shapes(asm), position_bound(asm), len(world.ids)
    out = [f'slot("{p}").' for p in world.ids]
    out += [f"dom({x},{y},{z})." for x, y, z in position_domain(asm)]
    out += [f'dirv("{d}",{v[0]},{v[1]},{v[2]}).' for d, v in DIRECTION_VECTORS.items()]
    out += [f"dist(1..{2 * max(bound)})."]
    for g in range(1, 1 << n):
        out += [f"grp({g})."] + [f'member({g},"{world.ids[i]}").' for i in range(n) if g >> i & 1]
    spans = [range(-2 * b, 2 * b + 1) for b in bound]
    for i, j in product(range(n), repeat=2):
        if i != j:
            for rel in product(*spans):
                for d, g in zip(DIRECTIONS, sh.gaps(i, j, rel)):
                    if g < FREE:
                        out.append(f'gap("{world.ids[i]}","{world.ids[j]}",{rel[0]},{rel[1]},{rel[2]},"{d}",{g}).')
    for i, s in enumerate(task.actual.slots):
        if s.present:
            o = s.offset
            out.append(f'init(at("{world.ids[i]}",{o[0]},{o[1]},{o[2]})).')
            if world.pose_off(i, s) or world.rot_off(i, s):
                out.append(f'init(bad("{world.ids[i]}")).')
    return "\n".join(out) + "\n"


def solve_partial_asp(task: Task, horizon: int) -> tuple[int, int, list[Action]] | None:
    """The (J_move, c)-optimum among plans of at most `horizon` steps, and its plan; None when none."""
    import clingo

    ctl = clingo.Control(["-c", f"h={horizon}", "--opt-mode=opt"])
    ctl.load(str(ENCODING))
    ctl.add("base", [], partial_facts(task))
    ctl.ground([("base", [])])
    best: list = []
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            best = [model.symbols(shown=True), list(model.cost)]
    if not best:
        return None
    steps = sorted((a.arguments[1].number, a.arguments[0]) for a in best[0])
    plan = [a for _, term in steps for a in _action(task, term)]
    return best[1][0], best[1][1], plan


def _action(task: Task, term) -> list[Action]:
    world, name, args = task.world, term.name, term.arguments
    if name == "slide":
        g = args[0].number
        return [Slide(tuple(world.ids[i] for i in range(len(world.ids)) if g >> i & 1), args[1].string, args[2].number)]
    pid = args[0].string
    if name == "remove":
        return [Remove(pid)]
    if name == "insert":
        return [Insert(pid, (args[1].number, args[2].number, args[3].number))]
    i = world.index[pid]
    s = task.actual.slots[i]
    if world.rot_off(i, s):
        return [Rotate(pid, *rotation_fix(world, i, s.rotation))]
    return [ResetPose(pid)]

"""Facts of `lab/asp/partial.lp` (SEMANTICS.md §9): a task on an assembly that needs partial moves.

A rendering of the grounded task (`semantics.grounded`): positions range over its position domain
(`positions`) or, with a `radius`, over its offsets within `radius` voxels per axis (a sub-domain: an
optimum over it is an upper bound on the §9 optimum, proved for that sub-domain only); slides move its
`slide_groups`, departures and joins of two or more slots its `separable_groups`. Pairwise geometry is written for the
relative offsets two slots of the domain can have, with the engine's own gaps
(`geometry.displacement.Shapes.gaps`): `ray` where a part meets the other along a direction at all,
`gap` where it meets it within the longest slide of the universe.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

from forgeplan.geometry.displacement import FREE, shapes
from forgeplan.model.state import NO_OFFSET
from forgeplan.model.assembly import DIRECTION_VECTORS, DIRECTIONS
from forgeplan.model.errors import InputError
from forgeplan.semantics.grounded import Positions, ground, slide_groups, task_positions
from forgeplan.semantics.task import Task
from forgeplan.planners.moved_set.search import start_node


def encoding() -> Path:
    """lab/asp/partial.lp, beside this module."""
    return Path(__file__).with_name("partial.lp")


def domain(task: Task, radius: int | None = None) -> Positions:
    """The grounded position domain, cut to `radius` per axis when given; slides reach across it."""
    return task_positions(task, radius, field="--asp-radius")


def _term(o) -> str:
    return f"({o[0]},{o[1]},{o[2]})"


def partial_facts(task: Task, radius: int | None = None) -> str:
    """The facts of `lab/asp/partial.lp` for a task (header of that file); refuses what §9's minimal
    rework does not model (spares, locks, a slot needing two repairs) and a state outside the domain."""
    world = task.world
    dom = domain(task, radius)
    config, bad = start_node(world, task.actual)
    for i, o in enumerate(config):
        if o is not None and any(abs(c) > b for c, b in zip(o, dom.bound)):
            raise InputError(f"slot {world.ids[i]} is displaced by {list(o)}, outside the position domain "
                             f"+-{list(dom.bound)}: choose a larger radius", field="actual_state")
    n = len(world.ids)
    out = [f"slot(0..{n - 1})."]
    out += [f"dom({_term(o)})." for o in product(*(range(-b, b + 1) for b in dom.bound))]
    out += [f'dirv("{d}",{_term(v)}).' for d, v in DIRECTION_VECTORS.items()]
    out += [f"dist(1..{dom.longest})."]
    for g in sorted(slide_groups(world)):
        out += [f"grp({g})."] + [f"member({g},{i})." for i in range(n) if g >> i & 1]
    out += [f"sep({g})." for g in sorted(ground(task).separable_groups)]
    out += _pair_facts(task, dom) + _sep2_facts(task, dom)
    for i, o in enumerate(config):
        if o is not None:
            out.append(f"init(at({i},{_term(o)})).")
        if bad >> i & 1:
            out.append(f"init(bad({i})).")
    return "\n".join(out) + "\n"


def _pair_facts(task: Task, dom: Positions) -> list[str]:
    """`ray` and `gap` facts for every ordered pair of slots and every relative offset of the domain."""
    sh, n, out = shapes(task.world.assembly), len(task.world.ids), []
    spans = [range(-2 * b, 2 * b + 1) for b in dom.bound]
    for i, j in product(range(n), repeat=2):
        if i == j:
            continue
        for rel in product(*spans):
            for d, g in zip(DIRECTIONS, sh.gaps(i, j, rel)):
                if g < FREE:
                    out.append(f'ray({i},{j},{_term(rel)},"{d}").')
                    if g < dom.longest:
                        out.append(f'gap({i},{j},{_term(rel)},"{d}",{g}).')
    return out


def _sep2_facts(task: Task, dom: Positions) -> list[str]:
    """`pair` and `sep2` facts: every pair of slots and the relative offsets (differences of two domain
    offsets, apart from (0,0,0), which `sep` covers) at which the two do not overlap and come apart (§9)."""
    world, sh, n, out = task.world, shapes(task.world.assembly), len(task.world.ids), []
    spans = [range(-2 * b, 2 * b + 1) for b in dom.bound]
    for i in range(n):
        for j in range(i + 1, n):
            g = 1 << i | 1 << j
            out.append(f"pair({g},{i},{j}).")
            for rel in product(*spans):
                if rel != NO_OFFSET and sh.gaps(i, j, rel)[0] != -1 and world.separable(g, (NO_OFFSET, rel)):
                    out.append(f"sep2({i},{j},{_term(rel)}).")
    return out

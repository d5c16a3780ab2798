"""Is any plan the engine accepts shorter than the grounded optimum? (SEMANTICS.md §9 "One universe" 4.)

The moved-set search proves its optimum over the grounded universe, which leaves out slides of a group
with a clear ray ahead and arrivals outside the landing configurations. Where no argument of SEARCH.md
§2 reaches the action count, this search decides it directly: for one moved set and a length `c`, a
breadth-first search over *every* engine move of the set's slots inside the position bound (every
slide, a clear ray ahead too; every departure; an insertion at every offset with a clear ray; every
mend) to depth `c - 1`, dropping the nodes whose lower bound (`slide_bounds`, valid for every engine
move) does not fit. No goal met: no plan moving only that set has fewer than `c` actions.

A join of two or more slots may arrive in any arrangement of its members, too many to enumerate, so a
search that must expand a node with two or more of the set's slots absent gives up (`Undecided`), as
one past its cap or deadline does: it then proves nothing.
"""

from __future__ import annotations

from typing import Iterator

from ...geometry.displacement import FREE
from ...model.assembly import DIRECTIONS
from ...model.state import NO_OFFSET
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.partial_offers import Config, Universe, bits, room
from .bounds import LowerBound
from .reach import Undecided, within

Node = tuple[Config, int]     # offsets (None when absent) and the mask of present slots still faulty


def shorter_plan_exists(ag: AssemblyGrounding, start: Node, movable: int, c: int, bound: LowerBound, cap: int,
                        deadline: float | None = None) -> tuple[bool, int]:
    """Does a plan of fewer than `c` actions from `start` move only `movable` slots, over every engine
    move? And the nodes kept. Raises Undecided past `cap` or `deadline`, or where a join could follow.

    The last layer is never built: a node one move short of the depth is asked directly whether one
    move ends the plan (`_one_move_home`)."""
    limit = c - 1
    if _goal(start):
        return True, 1
    if limit == 0 or bound(start) > limit:
        return False, 1
    if limit == 1:
        return _one_move_home(ag, start, movable), 1
    goal = (tuple(NO_OFFSET for _ in start[0]), 0)
    seen, layer = {start}, [start]
    for depth in range(1, limit):
        near = depth == limit - 1

        def fits(nxt: Node) -> bool:
            return nxt not in seen and (near or depth + bound(nxt) <= limit)

        nxt_layer = []
        for node in layer:
            for nxt in _engine_moves(ag, node, movable, fits):
                if nxt in seen:
                    continue
                if nxt == goal:
                    return True, len(seen)
                if near:
                    if _one_move_home(ag, nxt, movable):
                        return True, len(seen)
                    continue
                if depth + bound(nxt) > limit:
                    continue
                seen.add(nxt)
                within(len(seen), cap, deadline)
                nxt_layer.append(nxt)
        layer = nxt_layer
    return False, len(seen)


def _goal(node: Node) -> bool:
    config, bad = node
    return bad == 0 and all(o == NO_OFFSET for o in config)


def _engine_moves(ag: AssemblyGrounding, node: Node, movable: int, fits=lambda nxt: True) -> Iterator[Node]:
    """The nodes every engine move of `movable` slots leads to: mends, slides (a clear ray ahead too, up
    to the bound), departures, insertions. A group's departure is offered only where `fits` admits the
    node it leads to, before its separability (a search of its own) is asked."""
    config, bad = node
    table = ag.offers
    pairs = table.pairs_of(config)
    for i in bits(bad & movable & pairs.present):
        if table.clear(config, i):
            yield config, bad & ~(1 << i)
    for move, nxt in table.moves(config, movable, Universe.ENGINE, admit=lambda g, after: fits((after, bad & ~g))):
        yield nxt, bad & ~move[1] if move[0] == "out" else bad
    absent = bits(movable & ~pairs.present)
    if len(absent) > 1:
        raise Undecided("two slots of the moved set are absent: a join may arrive in any arrangement")
    if absent:
        i = absent[0]
        for o in table.landings_of(config, i):
            yield tuple(o if j == i else x for j, x in enumerate(config)), bad


def _one_move_home(ag: AssemblyGrounding, node: Node, movable: int) -> bool:
    """Does one engine move of `movable` slots take `node` to the goal? Only a mend of its one faulty slot
    (every slot home), a slide back of the displaced slots (all by the same step along one axis), an
    insertion or a join at the target of the absent ones can."""
    config, bad = node
    table = ag.offers
    away = sum(1 << i for i, o in enumerate(config) if o != NO_OFFSET)
    if bad:
        return bad & (bad - 1) == 0 and not away and bool(bad & movable) and table.clear(config, bad.bit_length() - 1)
    if away & ~movable or not away:
        return False
    absent = sum(1 << i for i, o in enumerate(config) if o is None)
    if absent:
        if absent != away:
            return False
        home = tuple(NO_OFFSET for _ in config)
        pairs = table.pairs_of(home)
        if absent & (absent - 1) and not ag.world.separable(absent):
            return False
        others = bits(pairs.present & ~absent)
        return any(all(pairs.rows[i][j][d] >= FREE for i in bits(absent) for j in others)
                   for d in range(len(DIRECTIONS)))
    steps = {config[i] for i in bits(away)}
    if len(steps) != 1:
        return False
    v = steps.pop()
    axes = [a for a in range(3) if v[a]]   # type: ignore[index]  # present: an offset
    if len(axes) != 1:
        return False
    a = axes[0]
    d = 2 * a + (1 if v[a] > 0 else 0)     # type: ignore[index]  # back along the axis: -v
    return room(table.pairs_of(config), away, d) >= abs(v[a])  # type: ignore[index]  # present: an offset

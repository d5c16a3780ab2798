"""A lower bound on the moved parts of every plan with partial moves (SEMANTICS.md §9), for clingo's proof.

Take a plan that moves only the slots of `M` (every missing or faulty slot among them). The slots outside
`M` never move: they stay present where they are. A missing or faulty slot `f` must at some step have a
clear ray (it arrives through one, is mended with one, or leaves through one) and end at offset 0, and
between those it moves only by unit steps, each free of the slots outside `M`. So `f`, sliding alone from
offset 0 against the slots outside `M`, reaches a position with a clear ray. When that fails for some `f`,
no plan moves only `M`; the smallest `M` for which it holds for every such `f` bounds `J_move` from below.
The check searches `f`'s slides over the whole §9 position domain, so the bound holds for every box of it.
"""

from __future__ import annotations

from itertools import combinations

from ...semantics.task import Task
from ..slide_search import escapes, start_node


def moved_lower_bound(task: Task) -> int:
    """The fewest slots any plan moves: the missing, faulty and displaced ones, plus as many more as the
    missing and faulty ones need to get out of the way (the escape argument above)."""
    config, bad = start_node(task.world, task.actual)
    n = len(config)
    forced = bad | sum(1 << i for i, o in enumerate(config) if o is None or o != (0, 0, 0))
    needy = [i for i in range(n) if bad >> i & 1 or config[i] is None]
    others = [i for i in range(n) if not forced >> i & 1]
    for extra in range(len(others) + 1):
        for add in combinations(others, extra):
            movable = forced | sum(1 << i for i in add)
            if all(escapes(task.world, config, movable, f) for f in needy):
                return bin(forced).count("1") + extra
    return n

"""Lower bounds on the actions still needed from a configuration (SEMANTICS.md §9 "Lower bounds"), so
that a bounded search of one moved set skips what cannot end in time.

Two facts give them, both over every engine move inside the position bound (so over the grounded
universe too): every move can be undone by one move, and a part that left may stay away (its presence
only blocks). For a moved set `M`, with `e(q)` the fewest slides and departures that take the target
to a configuration from which slot `q` can leave (`slide_mirror`: no arrival is ever needed for that):

* a plan from a configuration where `q` is absent still has `q`'s last arrival ahead, and after it a
  way back to the target that, undone, is a way from the target to where `q` can leave: at least
  `e(q) + 1` moves;
* from a configuration where every slot is present, a plan either only slides and mends, or some `q`
  leaves and comes back (at least `e(q) + 2` moves). A slide adds the same step to one axis of its
  members' offsets, so `m` slides along an axis give the parts at most `2^m` different totals on it:
  the distinct non-zero values on an axis need at least `log2(values + 1)` slides along it; every
  faulty slot needs its mend.
"""

from __future__ import annotations

from typing import Optional

from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.partial_offers import Config, bits
from .mirror import _leaves, mirror_optimum, next_layer
from .reach import within

FAR = 10 ** 6     # no plan from here: a slot that is absent can never come back


class LowerBound:
    """`bound(node)`: at least this many actions remain from `node` (a configuration and its faulty
    mask) before every slot of the moved set is home (module docstring)."""

    def __init__(self, ag: AssemblyGrounding, movable: int, cap: int, deadline: float | None = None):
        self.leave: dict[int, Optional[int]] = {}     # e(q), None: q never leaves (an exhausted search)
        self.states = 0                               # configurations the searches for e(q) kept
        for q in bits(movable):
            found = mirror_optimum(ag, q, movable, cap, deadline)
            self.leave[q] = None if found is None else len(found[2]) - 1
            self.states += 0 if found is None else found[1]
        known = [e for e in self.leave.values() if e is not None]
        self.away = 2 + min(known) if known else FAR

    def __call__(self, node: tuple[Config, int]) -> int:
        config, bad = node
        if None in config:
            absent = [q for q, o in enumerate(config) if o is None]
            if any(q not in self.leave for q in absent):
                return FAR      # a slot outside the moved set is absent and never comes back
            return max(FAR if self.leave[q] is None else self.leave[q] + 1 for q in absent)  # type: ignore[operator]  # the conditional excludes None
        slides = 0
        for axis in range(3):
            values = {o[axis] for o in config}   # type: ignore[index]  # absent slots returned above: every offset is set
            values.discard(0)
            slides += len(values).bit_length()      # the least m with 2^m > values
        return min(slides + bin(bad).count("1"), self.away)


def leave_distances(ag: AssemblyGrounding, origin: Config, movable: int, cap: int,
                    deadline: float | None = None) -> dict[int, int]:
    """Per `movable` slot present in `origin`, the fewest slides and departures of `movable` slots that take
    `origin` to a configuration where it can leave (alone or with a group): `e(q)` of the module docstring
    from any origin, the mirror argument's moves. A slot missing from the result never can (every
    configuration was searched). Raises Undecided past `cap` configurations or the deadline."""
    todo, found = {q for q in bits(movable) if origin[q] is not None}, {}
    layer, seen, e = [origin], {origin}, 0
    while layer and todo:
        for config in layer:
            for q in sorted(todo):
                if config[q] is not None and _leaves(ag, config, q, movable):
                    found[q] = e
                    todo.discard(q)
        layer, e = next_layer(ag, layer, movable, seen, cap, deadline), e + 1
    return found

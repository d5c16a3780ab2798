"""The shortest plan that mends one faulty part of an otherwise assembled burr (SEMANTICS.md §9
"The mirror argument").

When the only fault is one present part `p` off its pose or turned (every slot at its target place),
every plan leaves the target, reaches a configuration where `p` can be mended (a clear ray) or leaves
with a group, and comes back. Every move of the engine can be undone by one move, so the way back is
no shorter than the way out, and the way out needs no arrival (a part that left may stay away: its
presence only blocks). So with `e` the fewest slides and departures of the moved set that take the
assembly from its target to a configuration where `p` is clear or can leave:

* the optimum is `2e + 1` when some configuration at that distance has `p` clear: the way out, the
  mend, the way out undone;
* otherwise `2e + 2`: the way out, `p`'s group leaves and comes back where it was (which mends it), the
  way out undone.

One breadth-first search from the target to depth `e` proves it, where a search from the faulty state
has to reach depth `2e + 1`. The plan returned is the mirror plan whose way out is smallest by the
canonical key (SEMANTICS §4), step by step.
"""

from __future__ import annotations

from typing import Optional

from ...geometry.separation import OPPOSITE
from ...model.actions import Action
from ...model.state import NO_OFFSET
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.grounded import canonical_key, part_ranks
from ...semantics.partial_offers import Config, SeparabilityCapped, Universe, bits
from ...semantics.partial_universe import Move, to_action
from .reach import Undecided, leaving_group, within

CAP = 200_000     # configurations before the search gives up


def mirror_optimum(ag: AssemblyGrounding, p: int, movable: int, cap: int = CAP,
                   deadline: float | None = None) -> Optional[tuple[int, int, list[list[Config]]]]:
    """(c, states, layers) for mending slot `p` moving only `movable` slots from the target: the optimal
    plan length, the configurations searched, and the breadth-first layers of the way out (the last
    one: the configurations where `p` is clear, or where it can leave when none has it clear). None
    when `p` can never be mended or leave; Undecided past `cap` or `deadline`."""
    home = tuple(NO_OFFSET for _ in ag.world.ids)
    table = ag.offers
    layers, seen = [[home]], {home}
    while layers[-1]:
        layer, e = layers[-1], len(layers) - 1
        clear = [c for c in layer if table.clear(c, p)]
        if clear:
            return 2 * e + 1, len(seen), layers[:-1] + [clear]
        leaving = [c for c in layer if _leaves(ag, c, p, movable)]
        if leaving:
            return 2 * e + 2, len(seen), layers[:-1] + [leaving]
        layers.append(next_layer(ag, layer, movable, seen, cap, deadline))
    return None


def mirror_plan(ag: AssemblyGrounding, p: int, movable: int, c: int, layers: list[list[Config]],
                mend: list[Action], named=lambda action: action) -> list[Action]:
    """The mirror plan of length `c` whose way out is canonically smallest, step by step; `mend` the
    actions that repair `p` in place, `named` the action as named while `p` is still faulty (a spare
    there is named by its own id)."""
    depth, ranks = len(layers) - 1, part_ranks(ag.world)
    alive: list[set] = [set() for _ in layers]
    alive[depth] = set(layers[depth])
    for t in range(depth - 1, -1, -1):
        alive[t] = {x for x in layers[t] if any(nxt in alive[t + 1] for _, nxt in _moves(ag, x, movable))}
    config, path = layers[0][0], []
    for t in range(depth):
        options = [(canonical_key(named(to_action(ag.world, config, m)), ranks), m, nxt)
                   for m, nxt in _moves(ag, config, movable) if nxt in alive[t + 1]]
        _, move, nxt = min(options, key=lambda o: o[0])
        path.append((config, move, nxt))
        config = nxt
    way_out = [named(to_action(ag.world, before, move)) for before, move, _ in path]
    back = [to_action(ag.world, after, _undo(before, move)) for before, move, after in reversed(path)]
    middle = mend if c == 2 * depth + 1 else _out_and_back(ag, config, p, movable, ranks, named)
    return way_out + middle + back


def _out_and_back(ag: AssemblyGrounding, config: Config, p: int, movable: int, ranks, named) -> list[Action]:
    """`p`'s group leaves (the smallest departure by the canonical key) and comes back where it was."""
    options = []
    for move, gone in ag.offers.steps(config, movable):
        if move[0] == "out" and move[1] >> p & 1:
            out = named(to_action(ag.world, config, move))
            options.append((canonical_key(out, ranks), out, to_action(ag.world, gone, _undo(config, move))))
    _, out, back = min(options, key=lambda o: o[0])
    return [out, back]


def _leaves(ag: AssemblyGrounding, config: Config, p: int, movable: int) -> bool:
    """Can a group of `movable` slots holding `p` leave `config`?"""
    return leaving_group(ag, config, ag.offers.pairs_of(config), movable, must=p) is not None


def next_layer(ag: AssemblyGrounding, layer: list, movable: int, seen: set, cap: int,
               deadline: Optional[float]) -> list:
    """The configurations one move of `movable` slots from `layer` not `seen` before (now seen), in order;
    past `cap` configurations or the deadline the search stops (`within`)."""
    nxt = []
    for config in layer:
        for _, after in _moves(ag, config, movable):
            if after not in seen:
                seen.add(after)
                nxt.append(after)
    within(len(seen), cap, deadline)
    return nxt


def _moves(ag: AssemblyGrounding, config: Config, movable: int):
    """The slides and departures of `movable` slots, no arrival. A group that could leave along a
    direction leaves rather than slides along it: what follows a slide away can follow its departure
    (the group only blocks), so the distances to the end of the way out are the same. The kernel's moves
    of that universe (`partial_offers.Universe.LEAVING`)."""
    try:
        yield from ag.offers.moves(config, movable, Universe.LEAVING, strict=True)
    except SeparabilityCapped:
        raise Undecided("a separability search was cut by its state cap") from None


def _undo(before: Config, move: Move) -> Move:
    """The move that takes the configuration `move` led to back to `before`."""
    if move[0] == "slide":
        return ("slide", move[1], OPPOSITE[move[2]], move[3])
    return ("in", move[1], move[2], tuple(before[i] for i in bits(move[1])))

"""The grounded universe of partial moves (SEMANTICS.md §9): positions and the moves a state offers.

Where partial moves are in play every planner grounds the same finite universe, computed here:

* the **position domain** (`position_bound`, `position_domain`): per axis, offsets of at most the
  assembly's bounding-box extent, the bound the engine keeps (§9 "Position bound"): there a part's box
  lies wholly outside the target box along the axis;
* the **slide universe** (`slide_universe`): `slide(G, d, k)` for every non-empty set `G` of slots,
  direction `d` and distance `1 <= k <= 2·bound` (the farthest any offset in the domain can travel);
* the **vocabulary of a plan** (`slide_members`, `slide_steps`, `offset_ranges`): the part ids, the
  (direction, distance) pairs and the offset coordinates a slide, an insertion or a join of the
  universe names; the task grammar and the decoding masks take theirs from here;
* the **arrivals a decoding mask offers** (`landing_arrivals`): the landing index's, every slot movable;
* the **offer of a configuration** (`offered_moves`): the moves of the universe that the engine allows
  in a configuration, restricted to a set of movable slots (the others stay where they are). A
  configuration is the tuple of the slots' offsets in catalog order, `None` for an absent slot.

Moves are plain tuples so that the searches stay fast; `to_action` turns one into the engine's action:

* `("slide", G, d, k)`: the members (a bitmask) translate `k` steps along `d`, every step collision-free;
* `("out", G, d)`: the members leave along `d` through clear rays (`remove` for one, `separate` for more);
* `("in", G, d, offsets)`: the members arrive along `-d` at `offsets` (`insert` / `join`);

Which insertion and join positions are offered is §9's "Grounded moves"; how far it is proved that the
others are never needed, §9's "One universe".
"""

from __future__ import annotations

import time
from collections import deque
from itertools import product
from typing import Iterator

from ..geometry.displacement import Shapes, Vec, max_slide
from ..model.actions import Action, Insert, Join, Remove, Separate, Slide
from ..model.assembly import DIRECTION_VECTORS, DIRECTIONS, Assembly
from ..model.state import NO_OFFSET
from .assembly_grounding import AssemblyGrounding
from .engine import World
from .partial_offers import (Config, Move, Step, bits, in_domain, position_bound,  # noqa: F401 (part of this API)
                             separable_at)
_VEC = tuple(DIRECTION_VECTORS[d] for d in DIRECTIONS)


def position_domain(asm: Assembly) -> tuple[Vec, ...]:
    """Every offset a slot may take (the same for every slot), sorted, (0, 0, 0) among them."""
    bx, by, bz = position_bound(asm)
    return tuple(product(range(-bx, bx + 1), range(-by, by + 1), range(-bz, bz + 1)))


def slide_universe(asm: Assembly) -> tuple[Slide, ...]:
    """Every slide(G, d, k) of the universe: G a non-empty set of slots (catalog order), k up to twice the bound."""
    ids, bound, out = asm.part_ids, position_bound(asm), []
    for mask in range(1, 1 << len(ids)):
        g = tuple(ids[i] for i in range(len(ids)) if mask >> i & 1)
        for d in DIRECTIONS:
            out += [Slide(g, d, k) for k in range(1, 2 * bound["xyz".index(d[1])] + 1)]
    return tuple(out)


def slide_steps(world: World) -> tuple[tuple[str, int], ...]:
    """Every (direction, distance) a slide of the universe takes, direction-major: up to twice the bound
    along the direction's axis. Empty where partial moves are not in play (no slide exists there)."""
    if world.moves.slides_refused():
        return ()
    bound = position_bound(world.assembly)
    return tuple((d, k) for d in DIRECTIONS for k in range(1, 2 * bound["xyz".index(d[1])] + 1))


def offset_ranges(world: World) -> tuple[range, range, range] | None:
    """Per axis, the coordinates an offset of the universe takes (`position_domain`'s axes); None where
    partial moves are not in play (every offset is 0 there)."""
    if world.moves.offsets_refused("inserted"):
        return None
    return tuple(range(-b, b + 1) for b in position_bound(world.assembly))  # type: ignore[return-value]  # one range per axis of a Vec


def slide_members(world: World) -> tuple[str, ...]:
    """The part ids a slide may name: every target part and every spare (a spare in its slot moves as the
    slot's part does, §1). Empty where partial moves are not in play."""
    if world.moves.slides_refused():
        return ()
    return tuple(world.ids) + tuple(w.part_id for w in world.assembly.spares)


def landing_arrivals(ag: AssemblyGrounding, config: Config) -> list[Action]:
    """The universe's arrivals into `config` with every slot movable (`landing_index` from the target),
    the index cut at LANDING_DEPTH moves: what a decoding mask offers without knowing which parts a plan
    will move (the searches index the arrivals of each moved set to the depth of the plan they seek)."""
    n = len(ag.world.ids)
    try:
        index = landing_index(ag, (1 << n) - 1, (NO_OFFSET,) * n, LANDING_CAP, LANDING_DEPTH)
    except OverflowError as err:
        index = err.partial  # type: ignore[attr-defined]  # landing_index attaches the index built before the cap
    return [to_action(ag.world, config, move) for move, _ in index.get(config, ())]


LANDING_DEPTH = 7       # slides and departures from the target whose reverses a mask offers as arrivals
LANDING_CAP = 50_000    # and the configurations it indexes at most


def room(sh: Shapes, config: Config, group: int, d: int) -> int:
    """How many steps `group` can slide along direction index `d` (FREE: a clear ray; -1: a collision)."""
    others = [j for j, o in enumerate(config) if o is not None and not group >> j & 1]
    return max_slide(sh, config, bits(group), others, DIRECTIONS[d])  # type: ignore[arg-type]  # present slots have offsets


def _shift(o: Vec, v: Vec, k: int) -> Vec:
    return (o[0] + v[0] * k, o[1] + v[1] * k, o[2] + v[2] * k)


def apply_move(config: Config, move: Move) -> Config:
    kind, group = move[0], move[1]
    if kind == "slide":
        v, k = _VEC[DIRECTIONS.index(move[2])], move[3]
        return tuple(_shift(o, v, k) if group >> i & 1 else o for i, o in enumerate(config))  # type: ignore[arg-type]  # members of a group are present: offset not None
    if kind == "out":
        return tuple(None if group >> i & 1 else o for i, o in enumerate(config))
    placed = dict(zip(bits(group), move[3]))
    return tuple(placed.get(i, o) for i, o in enumerate(config))


def offered_steps(ag: AssemblyGrounding, config: Config, movable: int, landings: dict | None = None) -> Iterator[Step]:
    """`offered_moves` with the configuration each move leads to: what the searches expand."""
    yield from ag.offers.steps(config, movable)
    if landings is None:
        yield from ag.offers.arrivals(config, movable & ~sum(1 << i for i, o in enumerate(config) if o is not None))
    else:
        yield from landings.get(config, ())


def offered_moves(ag: AssemblyGrounding, config: Config, movable: int, landings: dict | None = None) -> Iterator[Move]:
    """The universe's moves legal in `config` that move slots of `movable` only (§9 "Grounded moves").

    `landings` (config -> its arrival steps, from `landing_index`) offers only the arrivals that land where
    the target can be reached by slides and arrivals; None offers every arrival of the domain."""
    return (m for m, _ in offered_steps(ag, config, movable, landings))


def landing_index(ag: AssemblyGrounding, movable: int, home: Config, cap: int = 1_000_000,
                  depth: int | None = None, deadline: float | None = None) -> dict[Config, list[Step]]:
    """Every configuration reachable from `home` by finite slides and departures of `movable` slots
    (within `depth` moves when given), indexed by what a departure leaves: config -> the arrival steps
    (departures reversed, each with the configuration it restores) that lead back into the set. Arrivals
    elsewhere are never needed (§9 "Grounded moves"). Past `cap` configurations or the `deadline`
    (time.perf_counter) it raises OverflowError, whose `partial` holds the arrivals found so far.

    The index depends on the assembly, the slots and the limits only, so it is kept by the assembly
    grounding: every task on an assembly asks for the same moved sets (a clock-cut index is not kept)."""
    kept = ag.memo(LANDINGS)
    key = (movable, home, cap, depth)
    hit = kept.get(key)
    if hit is None:
        out, complete, by_clock = _landings(ag, movable, home, cap, depth, deadline)
        if by_clock:
            hit = (out, complete)
        else:
            if len(kept) >= LANDINGS_MAX:
                kept.clear()
            hit = kept[key] = (out, complete)
    out, complete = hit
    if not complete:
        err = OverflowError(f"more than {cap} configurations, or past the deadline")
        err.partial = out   # type: ignore[attr-defined]  # the configurations found so far ride on the exception; the moved-set search reads them
        raise err
    return out


LANDINGS = "landing indexes"   # the memo of `AssemblyGrounding` that keeps them
LANDINGS_MAX = 512             # and how many it keeps


def _landings(ag: AssemblyGrounding, movable: int, home: Config, cap: int, depth: int | None,
              deadline: float | None) -> tuple[dict[Config, list[Step]], bool, bool]:
    """landing_index's breadth-first search: (index, complete, cut by the clock). A cut index keeps its
    arrivals in the order met; a complete one sorts them."""
    seen, queue = {home: 0}, deque([home])
    out: dict[Config, list[Step]] = {}
    table = ag.offers
    while queue:
        config = queue.popleft()
        t = seen[config]
        if depth is not None and t >= depth:
            continue
        for move, nxt in table.steps(config, movable):
            if move[0] == "out":
                back = ("in", move[1], move[2], _offsets_of(config, move[1]))
                out.setdefault(nxt, []).append((back, config))
            if nxt not in seen:
                seen[nxt] = t + 1
                queue.append(nxt)
                if len(seen) > cap:
                    return out, False, False
                if deadline is not None and time.perf_counter() > deadline:
                    return out, False, True
    for steps in out.values():
        steps.sort()
    return out, True, False


def _offsets_of(config: Config, group: int) -> tuple[Vec, ...]:
    return tuple(config[i] for i in bits(group))  # type: ignore[misc]  # members of a group are present: offset not None


def to_action(world: World, config: Config, move: Move) -> Action:
    """The engine's action for a move made in `config` (occupants are the target parts)."""
    kind, group = move[0], move[1]
    names = tuple(world.ids[i] for i in bits(group))
    if kind == "slide":
        return Slide(names, move[2], move[3])
    if kind == "out":
        return Remove(names[0]) if len(names) == 1 else Separate(names, move[2])
    if len(names) == 1:
        return Insert(names[0], move[3][0])
    return Join(names, move[2], move[3] if any(o != NO_OFFSET for o in move[3]) else None)

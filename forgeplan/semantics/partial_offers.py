"""The partial-move kernel (SEMANTICS.md §9): the one generator of the moves a configuration offers.

A configuration is the tuple of the slots' offsets in catalog order, `None` for an absent slot; a move is a
plain tuple (`("slide", G, d, k)`, `("out", G, d)`, `("in", G, d, offsets)`, G a bitmask of slots) with the
configuration it leads to (a `Step`). `OfferTable.moves` generates the slides and departures of a set of
movable slots, and `OfferTable.arrivals` / `landings_of` the insertions and joins, in one of three
universes (`Universe`):

* `GROUNDED`, §9's grounded moves: a group with a clear ray ahead leaves (if it is separable there), it
  never slides; what the moved-set search, the landing index and the offer of a configuration take;
* `ENGINE`, every engine move inside the position bound: a group with a clear ray ahead may also slide;
  what the search over every engine move (`planners.moved_set.engine_search`), the reachability proof
  (`planners.moved_set.reach`) and the decoding masks (`semantics.legal`) take;
* `LEAVING`, the engine's moves where a group that can leave leaves rather than slides along that
  direction (what follows such a slide can follow the departure): what the mirror argument takes.

Every search asks the same questions again and again: every moved set of a task, every task of a
benchmark's batch on one assembly, meets the same configurations. So per configuration the pairwise gaps
of its present slots are looked up once (`_Pairs`: the gap rows and, per direction, which slots each one
touches ahead), and per (configuration, movable slots) the grounded steps are kept. Both tables are
bounded; dropping them changes no answer, only the time. A world's table is kept by its assembly
grounding (`semantics.assembly_grounding.AssemblyGrounding.offers`). The geometric primitives (gaps,
closures, unions of closures, arrival offsets) are `geometry.displacement`'s, shared with the level
search of `geometry.partial` and the engine's slide rule.
"""

from __future__ import annotations

from enum import Enum
from itertools import product
from typing import Callable, Iterator, NamedTuple, Optional, Sequence

from ..geometry.displacement import (FREE, Vec, arrival_offsets, bits, closure, position_bound,  # noqa: F401 (bits, closure: part of this API)
                                     shapes, unions)
from ..geometry.partial import separation_tree
from ..model.assembly import DIRECTION_VECTORS, DIRECTIONS
from .engine import World

Config = tuple[Optional[Vec], ...]
Move = tuple
Step = tuple[Move, Config]       # a move and the configuration it leads to
PAIRS_MAX = 8_000                # configurations whose gap rows are kept, per world
OFFERS_MAX = 4_000               # (configuration, movable) offers kept, per world (each holds its steps)
_VEC = tuple(DIRECTION_VECTORS[d] for d in DIRECTIONS)


class Universe(Enum):
    """Which moves `OfferTable.moves` generates (module docstring)."""

    GROUNDED = "grounded"
    ENGINE = "engine"
    LEAVING = "leaving"


class SeparabilityCapped(Exception):
    """A separability verdict asked for strictly was negative only because the level search hit its cap."""


class _Pairs(NamedTuple):
    """A configuration's gaps: `rows[i][j]` the 6 gaps of present slot i against present slot j (None
    otherwise); `touch[d][i]` the mask of slots that must move along when i takes a step along `d`."""

    present: int
    rows: list
    touch: list


def separable_at(world: World, group: int, offsets: Sequence[Vec], strict: bool = False) -> bool:
    """Is `group` at `offsets` separable (§9)? Only relative offsets matter in free space, so the question
    is asked relative to the first member and each arrangement is searched once. `strict`: a negative
    verdict that the level search's cap cut raises SeparabilityCapped (it is the engine's answer, not a
    proof that the group does not come apart)."""
    base = offsets[0]
    rel = tuple((o[0] - base[0], o[1] - base[1], o[2] - base[2]) for o in offsets)
    if world.separable(group, rel):
        return True
    if strict and separation_tree(world.assembly, [world.ids[i] for i in bits(group)], rel).capped_anywhere():
        raise SeparabilityCapped(f"the separability of {[world.ids[i] for i in bits(group)]} was cut by its state cap")
    return False


class OfferTable:
    """The offers of one world's configurations (see the module docstring)."""

    def __init__(self, world: World):
        self.world, self.shapes, self.bound = world, shapes(world.assembly), position_bound(world.assembly)
        self.pairs: dict[Config, _Pairs] = {}
        self.offers: dict[tuple[Config, int], tuple[Step, ...]] = {}

    def steps(self, config: Config, movable: int) -> tuple[Step, ...]:
        """The slides and departures of `movable` slots offered in `config`, each with where it leads."""
        key = (config, movable)
        hit = self.offers.get(key)
        if hit is None:
            if len(self.offers) >= OFFERS_MAX:
                self.offers.clear()
            hit = self.offers[key] = tuple(self._compute(config, movable))
        return hit

    def clear(self, config: Config, i: int) -> bool:
        """Has present slot `i` a clear ray along some direction (every other present slot out of its way)?"""
        row = self.pairs_of(config).rows[i]
        return any(all(g is None or g[d] >= FREE for g in row) for d in range(len(DIRECTIONS)))

    def pairs_of(self, config: Config) -> _Pairs:
        """The configuration's gap rows and touch masks (kept)."""
        hit = self.pairs.get(config)
        if hit is None:
            if len(self.pairs) >= PAIRS_MAX:
                self.pairs.clear()
            hit = self.pairs[config] = self._compute_pairs(config)
        return hit

    def _compute_pairs(self, config: Config) -> _Pairs:
        n, gaps = len(config), self.shapes.gaps
        present = [i for i, o in enumerate(config) if o is not None]
        rows: list = [[None] * n for _ in range(n)]
        for a, i in enumerate(present):
            oi = config[i]
            for j in present[a + 1:]:
                oj = config[j]
                g = gaps(i, j, (oj[0] - oi[0], oj[1] - oi[1], oj[2] - oi[2]))  # type: ignore[index]  # offsets of present slots are not None
                rows[i][j], rows[j][i] = g, (g[1], g[0], g[3], g[2], g[5], g[4])
        touch = [[sum(1 << j for j in present if rows[i][j] is not None and rows[i][j][d] < 1) for i in range(n)]
                 for d in range(len(DIRECTIONS))]
        return _Pairs(sum(1 << i for i in present), rows, touch)

    def _compute(self, config: Config, movable: int) -> Iterator[Step]:
        return self.moves(config, movable)

    def moves(self, config: Config, movable: int, universe: Universe = Universe.GROUNDED, departures: bool = True,
              admit: Callable[[int, Config], bool] | None = None, strict: bool = False,
              slides_ok: Callable[[int, int], bool] | None = None) -> Iterator[Step]:
        """The slides and departures of `movable` slots in `config`, in the order the searches rely on: per
        direction, per group (ascending mask), its departure, then its slides by distance (in the universe's
        measure, module docstring). Without `departures`, slides only. `admit(group, after)`: whether a
        departure of two or more slots is worth its separability question (a search of its own); `strict`
        as in `separable_at`; `slides_ok(group, d)`: whether a group's slides along `d` are worth listing
        (a bounded search that no distance of them fits)."""
        pairs = self.pairs_of(config)
        for d, name in enumerate(DIRECTIONS):
            for group in groups(pairs, movable, d):
                r = room(pairs, group, d)
                if r >= FREE:
                    leaves = None
                    if departures or universe is Universe.LEAVING:
                        after = tuple(None if group >> i & 1 else o for i, o in enumerate(config))
                        leaves = group & (group - 1) == 0 or (admit is None or admit(group, after)) and separable_at(
                            self.world, group, [config[i] for i in bits(group)], strict)  # type: ignore[misc]  # members are present
                        if departures and leaves:
                            yield ("out", group, name), after
                    if universe is Universe.GROUNDED or universe is Universe.LEAVING and leaves:
                        continue
                if slides_ok is None or slides_ok(group, d):
                    yield from self.slides(config, group, d, r)

    def landings_of(self, config: Config, i: int) -> list[Vec]:
        """The offsets inside the position domain where absent slot `i` can arrive: a clear ray from there."""
        present = [j for j, o in enumerate(config) if o is not None]
        return [o for o in arrival_offsets(self.shapes, i, present, [config[j] for j in present],  # type: ignore[misc]  # present slots have offsets
                                           DIRECTIONS, max(self.bound)) if in_domain(self.bound, o)]

    def arrivals(self, config: Config, absent: int) -> Iterator[Step]:
        """Insertions of one `absent` slot at every offset of the domain with a clear ray, and joins of a
        separable set of `absent` slots translated rigidly from its target arrangement (§9), each with the
        direction it arrives along (the first with a clear ray)."""
        for i in bits(absent):
            for o in self.landings_of(config, i):
                yield _arrived(config, ("in", 1 << i, self.clear_direction(config, 1 << i, (o,)), (o,)))
        domain: list[Vec] = list(product(*(range(-b, b + 1) for b in self.bound)))  # type: ignore[arg-type]  # one coordinate per axis
        for group in _subsets(absent):
            if group & (group - 1) == 0 or not self.world.separable(group):
                continue
            n = len(bits(group))
            for at in domain:
                d = self.clear_direction(config, group, (at,) * n)
                if d is not None:
                    yield _arrived(config, ("in", group, d, (at,) * n))

    def clear_direction(self, config: Config, group: int, offsets: Sequence[Vec]) -> str | None:
        """The first direction along which every member, at `offsets`, has a clear ray against `config`."""
        placed, gaps = dict(zip(bits(group), offsets)), self.shapes.gaps
        others = [(j, oj) for j, oj in enumerate(config) if oj is not None and j not in placed]
        for d, name in enumerate(DIRECTIONS):
            if all(gaps(i, j, (oj[0] - o[0], oj[1] - o[1], oj[2] - o[2]))[d] >= FREE
                   for i, o in placed.items() for j, oj in others):
                return name
        return None

    def slides(self, config: Config, group: int, d: int, r: int) -> Iterator[Step]:
        """slide(group, d, k) for every k <= r whose destination keeps every member inside the domain."""
        axis, sign, name = d // 2, _VEC[d][d // 2], DIRECTIONS[d]
        members, bound = bits(group), self.bound
        lo, hi = 1, r
        for i in members:
            o = config[i]
            if any(abs(o[a]) > bound[a] for a in range(3) if a != axis):  # type: ignore[index]  # members of a group are present: offset not None
                return
            c = o[axis] * sign  # type: ignore[index]  # members of a group are present: offset not None
            lo, hi = max(lo, -bound[axis] - c), min(hi, bound[axis] - c)
        v = _VEC[d]
        for k in range(lo, hi + 1):
            nxt = list(config)
            for i in members:
                o = config[i]
                nxt[i] = (o[0] + v[0] * k, o[1] + v[1] * k, o[2] + v[2] * k)  # type: ignore[index]  # members of a group are present: offset not None
            yield ("slide", group, name, k), tuple(nxt)


def groups(pairs: _Pairs, movable: int, d: int) -> list[int]:
    """Every set of present movable slots that can take a step along `d` (or leave) without moving a slot
    outside it: the unions of the closures that stay inside `movable`, ascending."""
    touch = pairs.touch[d]
    closures = {c for s in bits(movable & pairs.present) if (c := closure(touch, s)) & ~movable == 0}
    found = unions(sorted(closures)) or set()   # no cap: every union
    found.discard(0)
    return sorted(found)


def room(pairs: _Pairs, group: int, d: int) -> int:
    """The steps `group` can take along `d` before a member meets a present non-member (FREE: a clear ray)."""
    best, rows, others = FREE, pairs.rows, bits(pairs.present & ~group)
    for i in bits(group):
        row = rows[i]
        for j in others:
            g = row[j][d]
            if g < best:
                best = g
    return best


def in_domain(bound: Vec, o: Vec) -> bool:
    return abs(o[0]) <= bound[0] and abs(o[1]) <= bound[1] and abs(o[2]) <= bound[2]


def _arrived(config: Config, move: Move) -> Step:
    placed = dict(zip(bits(move[1]), move[3]))
    return move, tuple(placed.get(i, o) for i, o in enumerate(config))


def _subsets(mask: int) -> list[int]:
    out, sub = [], mask
    while sub:
        out.append(sub)
        sub = (sub - 1) & mask
    return sorted(out)

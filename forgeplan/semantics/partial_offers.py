"""The slides and departures a configuration offers (SEMANTICS.md §9 "Grounded moves"), compiled per world.

The moved-set search asks the same questions again and again: every moved set of a task, every task of a
benchmark's batch on one assembly, meets the same configurations. So per configuration the pairwise gaps
of its present slots are looked up once (`_Pairs`: the gap rows and, per direction, which slots each one
touches ahead), and per (configuration, movable slots) the offered steps are kept: each move with the
configuration it leads to, so a search never rebuilds a configuration it has seen offered. Both tables
are bounded; dropping them changes no answer, only the time. A world's table is kept by its assembly
grounding (`semantics.assembly_grounding.AssemblyGrounding.offers`).
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Optional, Sequence

from ..geometry.displacement import FREE, Vec, position_bound, shapes  # noqa: F401 (position_bound: part of this API)
from ..model.assembly import DIRECTION_VECTORS, DIRECTIONS
from .engine import World

Config = tuple[Optional[Vec], ...]
Move = tuple
Step = tuple[Move, Config]       # a move and the configuration it leads to
PAIRS_MAX = 8_000                # configurations whose gap rows are kept, per world
OFFERS_MAX = 4_000               # (configuration, movable) offers kept, per world (each holds its steps)
_VEC = tuple(DIRECTION_VECTORS[d] for d in DIRECTIONS)


def bits(mask: int) -> list[int]:
    """The members of a bitmask, ascending (tabled for the small masks every search asks about)."""
    if mask < len(_BITS):
        return _BITS[mask]
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


_BITS = [[i for i in range(m.bit_length()) if m >> i & 1] for m in range(1 << 12)]


class _Pairs(NamedTuple):
    """A configuration's gaps: `rows[i][j]` the 6 gaps of present slot i against present slot j (None
    otherwise); `touch[d][i]` the mask of slots that must move along when i takes a step along `d`."""

    present: int
    rows: list
    touch: list


def separable_at(world: World, group: int, offsets: Sequence[Vec]) -> bool:
    """Is `group` at `offsets` separable (§9)? Only relative offsets matter in free space, so the question
    is asked relative to the first member and each arrangement is searched once."""
    base = offsets[0]
    rel = tuple((o[0] - base[0], o[1] - base[1], o[2] - base[2]) for o in offsets)
    return world.separable(group, rel)


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
        """In the order the searches rely on: per direction, per group (ascending mask), its departure or
        its slides by distance. A group with a clear ray leaves instead of sliding (§9 "Grounded moves")."""
        pairs = self.pairs_of(config)
        for d, name in enumerate(DIRECTIONS):
            for group in groups(pairs, movable, d):
                r = room(pairs, group, d)
                if r >= FREE:
                    if group & (group - 1) == 0 or separable_at(self.world, group, [config[i] for i in bits(group)]):  # type: ignore[misc]  # offsets of a group's members (present slots) are not None
                        yield ("out", group, name), tuple(None if group >> i & 1 else o for i, o in enumerate(config))
                    continue
                yield from self.slides(config, group, d, r)

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


def closure(touch: list[int], seed: int) -> int:
    """The smallest set holding `seed` and, with each member, the slots its row of `touch` names."""
    group = frontier = 1 << seed
    while frontier:
        new = 0
        for a in bits(frontier):
            new |= touch[a]
        frontier = new & ~group
        group |= frontier
    return group


def groups(pairs: _Pairs, movable: int, d: int) -> list[int]:
    """Every set of present movable slots that can take a step along `d` (or leave) without moving a slot
    outside it: the unions of the closures that stay inside `movable`, ascending."""
    touch = pairs.touch[d]
    closures = {c for s in bits(movable & pairs.present) if (c := closure(touch, s)) & ~movable == 0}
    unions = {0}
    for c in sorted(closures):
        unions |= {u | c for u in unions}
    unions.discard(0)
    return sorted(unions)


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


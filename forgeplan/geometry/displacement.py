"""Displaced parts (SEMANTICS.md §9): voxel collision, slide legality and clear rays between translated parts.

A part displaced by an integer offset `o` (voxel units) occupies its target voxels shifted by `o`. All
questions asked about displaced parts reduce to one pairwise quantity, the *gap*: how many unit steps
part `i` can translate along `d` before a voxel of `i` would enter a voxel of `j`, given `j`'s offset
relative to `i` (`rel = o_j - o_i`). A gap of `FREE` means never (a clear ray to infinity), `-1` means
the two already overlap. Then

- a slide of group `G` by `k` along `d` passes through collision-free positions only iff every member
  `g` and present non-member `h` have `gap(g, h, d) >= k` (the first collision along a line is at the
  nearest voxel ahead, so every intermediate unit step is free exactly when the last one is);
- `G` can leave to infinity along `d` iff every such gap is `FREE`.

Gaps are computed from each part's voxel lines (per axis, the sorted coordinates on each grid line) and
memoised per (unordered pair, relative offset): a disassembly search meets the same relative offsets
again and again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, NamedTuple, Sequence

from ..model.assembly import DIRECTION_VECTORS, DIRECTIONS, Assembly
from ..model.state import NO_OFFSET

Vec = tuple[int, int, int]
FREE = 1 << 30          # gap of a clear ray: the part never meets the other one


def bits(mask: int) -> list[int]:
    """The members of a bitmask, ascending (tabled for the small masks every search asks about)."""
    if mask < len(_BITS):
        return _BITS[mask]
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


_BITS = [[i for i in range(m.bit_length()) if m >> i & 1] for m in range(1 << 12)]


def closure(touch: Sequence[int], seed: int) -> int:
    """The smallest set holding `seed` and, with each member, the parts its row of `touch` names (the
    parts a member meets within one step along a direction: they must move along with it)."""
    group = frontier = 1 << seed
    while frontier:
        new = 0
        for a in bits(frontier):
            new |= touch[a]
        frontier = new & ~group
        group |= frontier
    return group


def unions(closures: Iterable[int], cap: int | None = None) -> set[int] | None:
    """Every union of some of `closures` (0 among them): the groups that can move along a direction are
    exactly these, for the closures of their members. None once there are more than `cap`."""
    out = {0}
    for c in closures:
        out |= {u | c for u in out}
        if cap is not None and len(out) > cap:
            return None
    return out


def _voxel_lines(voxels, axis: int) -> dict[tuple[int, int], tuple[int, ...]]:
    """Grid lines parallel to `axis` -> the sorted coordinates of the voxels on the line."""
    out: dict[tuple[int, int], list[int]] = {}
    for v in voxels:
        key = (v[(axis + 1) % 3], v[(axis + 2) % 3])
        out.setdefault(key, []).append(v[axis])
    return {k: tuple(sorted(c)) for k, c in out.items()}


def _line_gaps(mine: tuple[int, ...], theirs: Iterable[int]) -> tuple[int, int]:
    """(gap along +axis, gap along -axis) of the coordinates `mine` against `theirs` on one line."""
    merged = sorted([(c, 0) for c in mine] + [(c, 1) for c in theirs])
    up = down = FREE
    for (a, wa), (b, wb) in zip(merged, merged[1:]):
        if wa == wb:
            continue
        if a == b:
            return -1, -1
        g = b - a - 1
        if wa == 0:
            up = min(up, g)
        else:
            down = min(down, g)
    return up, down


@dataclass(frozen=True, eq=False)
class Shapes:
    """The parts' voxels and voxel lines, compiled once per assembly; the gap memo lives here."""

    ids: tuple[str, ...]
    voxels: tuple[frozenset[Vec], ...]
    lines: tuple[tuple[dict, dict, dict], ...]
    memo: dict = field(default_factory=dict)

    def gaps(self, i: int, j: int, rel: Vec) -> tuple[int, ...]:
        """Per direction (DIRECTIONS order), the gap of part `i` against part `j` at offset `rel`."""
        if i > j:
            g = self.gaps(j, i, (-rel[0], -rel[1], -rel[2]))
            return (g[1], g[0], g[3], g[2], g[5], g[4])
        key = (i, j, rel)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._compute(i, j, rel)
        return hit

    def _compute(self, i: int, j: int, rel: Vec) -> tuple[int, ...]:
        out: list[int] = []
        for axis in range(3):
            up = down = FREE
            a1, a2 = (axis + 1) % 3, (axis + 2) % 3
            shift = rel[axis]
            theirs_all = self.lines[j][axis]
            for (u, w), mine in self.lines[i][axis].items():
                theirs = theirs_all.get((u - rel[a1], w - rel[a2]))
                if theirs is not None:
                    g_up, g_down = _line_gaps(mine, (c + shift for c in theirs))
                    up, down = min(up, g_up), min(down, g_down)
            out += [up, down]
        return tuple(out)


@lru_cache(maxsize=64)
def position_bound(asm: Assembly) -> Vec:
    """Per axis, the largest |offset| a slot may take (SEMANTICS §9 "Position bound"): the extent of the
    assembly's target voxel box. There a part's box lies wholly outside the target box along the axis."""
    cells = [v for p in asm.parts for v in p.voxels]
    return tuple(max(c[a] for c in cells) - min(c[a] for c in cells) + 1 for a in range(3))  # type: ignore[return-value]  # a tuple over range(3) is a Vec


def out_of_bound(asm: Assembly, offsets: Iterable[Sequence[int]]) -> str | None:
    """Why an offset is past the position bound (the first such), or None when all are within it."""
    bound = position_bound(asm)
    far = next((o for o in offsets if any(abs(c) > b for c, b in zip(o, bound))), None)
    return None if far is None else f"offset {list(far)} is past the position bound {list(bound)} (SEMANTICS §9)"


@lru_cache(maxsize=64)
def shapes(asm: Assembly) -> Shapes:
    """The compiled shapes of an assembly's parts, in catalog order."""
    return Shapes(asm.part_ids, tuple(frozenset(p.voxels) for p in asm.parts),
                  tuple(tuple(_voxel_lines(p.voxels, a) for a in range(3)) for p in asm.parts))


def relative(offsets: Sequence[Vec], i: int, j: int) -> Vec:
    a, b = offsets[i], offsets[j]
    return (b[0] - a[0], b[1] - a[1], b[2] - a[2])


def overlaps(sh: Shapes, offsets: Sequence[Vec], i: int, j: int) -> bool:
    """Do parts `i` and `j`, displaced by their offsets, share a voxel."""
    return sh.gaps(i, j, relative(offsets, i, j))[0] == -1


def max_slide(sh: Shapes, offsets: Sequence[Vec], group: Iterable[int], others: Iterable[int], direction: str) -> int:
    """How far `group` can translate along `direction` without a voxel entering one of `others`
    (`FREE`: to infinity). `-1` when a member already overlaps another part."""
    d = DIRECTIONS.index(direction)
    others = tuple(others)
    best = FREE
    for g in group:
        for h in others:
            best = min(best, sh.gaps(g, h, relative(offsets, g, h))[d])
    return best


def collision(sh: Shapes, offsets: Sequence[Vec], group: Iterable[int], others: Sequence[int], direction: str,
              distance: int) -> tuple[int, int, int] | None:
    """The first member of `group` and part of `others` (at `offsets`) that meet within `distance` steps
    along `direction`, with the steps the member could go; None when the slide is free (SEMANTICS §9: the
    first collision along a grid line is at the nearest voxel ahead)."""
    d = DIRECTIONS.index(direction)
    for g in group:
        for h in others:
            gap = sh.gaps(g, h, relative(offsets, g, h))[d]
            if gap < distance:
                return g, h, gap
    return None


def shifted(offset: Vec, direction: str, distance: int) -> Vec:
    v = DIRECTION_VECTORS[direction]
    return (offset[0] + v[0] * distance, offset[1] + v[1] * distance, offset[2] + v[2] * distance)


class MoveReplay(NamedTuple):
    """Outcome of `replay_moves`: `valid` plans end with every part on its own."""

    valid: bool
    executed: int
    reason: str | None
    components: tuple[tuple[str, ...], ...]


def _parse_step(raw, k: int) -> tuple[tuple[str, ...], str, int | None] | str:
    """(parts, direction, distance or None for "out") or the reason the step is malformed."""
    move, d, dist = raw.get("move", ()), raw.get("dir"), raw.get("distance", "out")
    if d not in DIRECTIONS:
        return f"step {k + 1}: direction {d!r} is not one of {list(DIRECTIONS)}"
    if dist != "out" and (isinstance(dist, bool) or not isinstance(dist, int) or dist < 1):
        return f"step {k + 1}: distance {dist!r} is neither a whole number >= 1 nor \"out\""
    if not isinstance(move, (list, tuple)) or not all(isinstance(p, str) for p in move):
        return f"step {k + 1}: move must be a list of part ids"
    return tuple(move), d, None if dist == "out" else dist


def replay_moves(asm: Assembly, steps: Sequence[dict]) -> MoveReplay:
    """Check a disassembly plan with partial moves (`{move: [ids], dir, distance: k | "out"}` steps).

    Each step moves a proper subset of one current subassembly: by `k` unit steps, every one of them
    collision-free against the rest of that subassembly, or out to infinity along a clear ray. Parts keep
    their displacements; a removed group floats away rigidly. Valid when every part ends on its own.
    """
    sh = shapes(asm)
    index = {p: i for i, p in enumerate(sh.ids)}
    offsets: list[Vec] = [NO_OFFSET] * len(sh.ids)
    components: list[frozenset[int]] = [frozenset(range(len(sh.ids)))]

    def result(valid: bool, k: int, reason: str | None) -> MoveReplay:
        names = tuple(tuple(sh.ids[i] for i in sorted(c)) for c in components)
        return MoveReplay(valid, k, reason, names)

    for k, raw in enumerate(steps):
        parsed = _parse_step(raw, k)
        if isinstance(parsed, str):
            return result(False, k, parsed)
        move, d, dist = parsed
        unknown = [p for p in move if p not in index]
        if unknown:
            return result(False, k, f"step {k + 1}: unknown part {unknown[0]!r}")
        g = frozenset(index[p] for p in move)
        home = [c for c in components if c & g]
        if not g or len(home) != 1 or not g <= home[0] or g == home[0]:
            return result(False, k, f"step {k + 1}: {list(move)} is not a proper part of one current subassembly")
        comp = home[0]
        room = max_slide(sh, offsets, g, comp - g, d)
        need = FREE if dist is None else dist
        if room < need:
            what = "out to infinity" if dist is None else f"{dist} step(s)"
            return result(False, k, f"step {k + 1}: moving {list(move)} {what} along {d} collides after {max(room, 0)} "
                                    "step(s)")
        if dist is None:
            components.remove(comp)
            components += [comp - g, g]
        else:
            for i in g:
                offsets[i] = shifted(offsets[i], d, dist)
    if any(len(c) > 1 for c in components):
        left = [[sh.ids[i] for i in sorted(c)] for c in components if len(c) > 1]
        return result(False, len(steps), f"plan ends with parts still together: {left}")
    return result(True, len(steps), None)


def arrival_offsets(sh: Shapes, i: int, present: Sequence[int], offsets: Sequence[Vec], directions: Sequence[str],
                    reach: int) -> list[Vec]:
    """Every offset within `reach` (per axis) from which part `i` has a clear ray along one of `directions`
    against the `present` parts at their `offsets`: where an insertion may put it (SEMANTICS §9).

    Vectorised over all candidate offsets: along +x, say, `i` at `o` is blocked iff some pair of voxels
    `v` of `i` and `w` of the others has `w - v` equal to `o` across the axis and `w_x - v_x >= o_x`; so
    per cross-axis difference only the largest `w_x - v_x` matters.
    """
    import numpy as np

    mine = np.array(sorted(sh.voxels[i]), dtype=np.int64)
    others = [np.array(sorted(sh.voxels[j]), dtype=np.int64) + np.array(offsets[k], dtype=np.int64)
              for k, j in enumerate(present)]
    size = 2 * reach + 1
    free = np.zeros((size, size, size), dtype=bool)
    if not others:
        free[:] = True
    else:
        diff = (np.concatenate(others)[None, :, :] - mine[:, None, :]).reshape(-1, 3)
        for d in directions:
            free |= _ray_clear(diff, d, reach)
    grid = np.argwhere(free) - reach
    return [tuple(int(c) for c in o) for o in grid]


def _ray_clear(diff, direction: str, reach: int):
    """Boolean grid over offsets in [-reach, reach]^3: clear ray along `direction` (see arrival_offsets)."""
    import numpy as np

    axis, sign = "xyz".index(direction[1]), 1 if direction[0] == "+" else -1
    size = 2 * reach + 1
    along = diff[:, axis] * sign
    cross = [a for a in range(3) if a != axis]
    inside = np.all(np.abs(diff[:, cross]) <= reach, axis=1)
    far = np.full((size, size), -10 ** 9, dtype=np.int64)          # per cross offset: largest blocking `along`
    idx = diff[inside][:, cross] + reach
    np.maximum.at(far, (idx[:, 0], idx[:, 1]), along[inside])
    coords = np.arange(-reach, reach + 1) * sign                  # o_axis * sign per grid index along the axis
    shape = [1, 1, 1]
    shape[axis] = size
    o_along = coords.reshape(shape)
    far_b = np.expand_dims(far, axis)                             # broadcast over the axis
    return o_along > far_b

"""Static relations over grounded positions (SEMANTICS.md §9): which displaced parts block a ray, a
slide's sweep, or overlap, computed from voxels with the engine's own gaps (`geometry.displacement`).

Positions are offsets (voxel units) from a slot's target position; each slot has a finite domain of
them (the grounded task's). Every relation is between slot `i` at `o` and another slot `j` at `oj`,
and depends on the relative offset `oj - o` only, through `Shapes.gaps`:

- `ray(i, o, d)`: the (j, oj) whose voxels a ray of `i` from `o` along `d` meets (gap < FREE);
- `sweep(i, o, d, k)`: the (j, oj) that `i` runs into within `k` unit steps from `o` (gap < k);
- `overlap(i, o, j)`: the `oj` at which `j` shares a voxel with `i` at `o` (gap = -1).

Pairs whose bounding boxes are apart across two axes never meet: a numpy filter drops them before
any gap is looked up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ...geometry.displacement import FREE, Vec, shapes
from ...model.assembly import DIRECTION_VECTORS, DIRECTIONS
from ...semantics.engine import World


@dataclass
class PositionTables:
    """A world's position domains (slot index -> offsets, the target offset (0,0,0) first) and distances."""

    world: World
    positions: dict[int, tuple[Vec, ...]]
    distances: tuple[int, ...]
    full: bool = True          # the grounded task's whole domain (an optimum over it is a proof), or a sub-domain
    _near: dict = field(default_factory=dict, repr=False)   # (i, o, j) -> [(oj, gaps)] with some finite gap

    @cached_property
    def _boxes(self):
        import numpy as np

        return [(np.array(sorted(p.voxels)).min(axis=0), np.array(sorted(p.voxels)).max(axis=0)) for p in self.world.parts]

    def _near_positions(self, i: int, o: Vec, j: int) -> list[tuple[Vec, tuple[int, ...]]]:
        """(oj, gaps of i at o against j at oj) for every oj of j's domain whose gaps are not all FREE."""
        key = (i, o, j)
        hit = self._near.get(key)
        if hit is not None:
            return hit
        import numpy as np

        (lo_i, hi_i), (lo_j, hi_j) = self._boxes[i], self._boxes[j]
        cand = np.array(self.positions[j], dtype=np.int64)
        rel = cand - np.array(o, dtype=np.int64)
        # boxes overlap across axis a when j's shifted range meets i's
        across = (rel + lo_j <= hi_i) & (rel + hi_j >= lo_i)
        keep = across.sum(axis=1) >= 2
        gaps = shapes(self.world.assembly).gaps
        out = []
        for oj, r in zip(cand[keep], rel[keep]):
            g = gaps(i, j, (int(r[0]), int(r[1]), int(r[2])))
            if any(x < FREE for x in g):
                out.append(((int(oj[0]), int(oj[1]), int(oj[2])), g))
        self._near[key] = out
        return out

    def ray(self, i: int, o: Vec, d: str) -> list[tuple[int, Vec]]:
        k = DIRECTIONS.index(d)
        return [(j, oj) for j in range(len(self.world.ids)) if j != i
                for oj, g in self._near_positions(i, o, j) if g[k] < FREE]

    def sweep(self, i: int, o: Vec, d: str, dist: int) -> list[tuple[int, Vec]]:
        k = DIRECTIONS.index(d)
        return [(j, oj) for j in range(len(self.world.ids)) if j != i
                for oj, g in self._near_positions(i, o, j) if g[k] < dist]

    def overlap(self, i: int, o: Vec, j: int) -> list[Vec]:
        return [oj for oj, g in self._near_positions(i, o, j) if g[0] == -1]

    def shifted(self, i: int, o: Vec, d: str, dist: int) -> Vec | None:
        """`o` moved `dist` steps along `d`, or None outside slot i's domain."""
        v = DIRECTION_VECTORS[d]
        to = (o[0] + v[0] * dist, o[1] + v[1] * dist, o[2] + v[2] * dist)
        return to if to in self._domain[i] else None

    @cached_property
    def _domain(self) -> dict[int, frozenset[Vec]]:
        return {i: frozenset(ps) for i, ps in self.positions.items()}

    def pairs(self) -> int:
        """How many pairs of positions of two different slots the problem relates (its blocking rules grow with them)."""
        counts = [len(p) for p in self.positions.values()]
        return sum(counts) ** 2 - sum(c * c for c in counts)

    def size(self) -> int:
        """How many move steps the grounded problem has (pick, settle, shift, out, place per position)."""
        per = 2 + len(DIRECTIONS) * (len(self.distances) + 2)
        return sum(len(p) for p in self.positions.values()) * per


def position_tables(task, radius: int | None = None) -> PositionTables:
    """The grounded task's position domain and slide distances (`semantics.grounded.positions`), the same
    for every slot; with `radius`, only the offsets within `radius` per axis and distances up to `2·radius`
    (a sub-domain: its optimum is an upper bound, proved for the sub-domain only)."""
    from ...semantics.grounded import task_positions

    dom = task_positions(task, radius, field="--radius")
    return PositionTables(task.world, {i: dom.offsets for i in range(len(task.world.ids))},
                          tuple(range(1, dom.longest + 1)), full=dom.full)

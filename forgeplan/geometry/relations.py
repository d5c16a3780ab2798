"""Voxel geometry -> blocking, contact and symmetry relations (derived, never typed by hand)."""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from functools import lru_cache

from ..model.assembly import DIRECTIONS, Assembly, Part
from ..model.rotations import cube_rotations

IntMatrix = tuple[tuple[int, int, int], ...]


def _lines(voxels, axis: int) -> dict[tuple[int, int], tuple[int, int]]:
    """For each grid line parallel to `axis`, the min and max coordinate of the voxels on it."""
    out: dict[tuple[int, int], list[int]] = {}
    for v in voxels:
        key = tuple(v[i] for i in range(3) if i != axis)
        c = v[axis]
        cur = out.get(key)
        if cur is None:
            out[key] = [c, c]
        else:
            cur[0] = min(cur[0], c)
            cur[1] = max(cur[1], c)
    return {k: (a, b) for k, (a, b) in out.items()}


@lru_cache(maxsize=256)
def blocking_relation(asm: Assembly) -> dict[str, frozenset[tuple[str, str]]]:
    """For each direction, the (blocker, blocked) pairs between the assembly's parts at target pose.

    `b` blocks `p` along +axis when some grid line parallel to the axis holds a voxel of `b` beyond
    `p`'s first voxel on it (along -axis: before `p`'s last). Per line, the parts on it sorted by those
    ends give each part's blockers as one prefix mask, so 200 parts of 500 voxels take a fraction of a second."""
    ids = asm.part_ids
    masks = {d: [0] * len(ids) for d in DIRECTIONS}
    for axis in range(3):
        on_line: dict[tuple, list[tuple[int, int, int]]] = defaultdict(list)
        for i, p in enumerate(asm.parts):
            for key, (mn, mx) in _lines(p.voxels, axis).items():
                on_line[key].append((mn, mx, i))
        up, down = masks["+" + "xyz"[axis]], masks["-" + "xyz"[axis]]
        for entries in on_line.values():
            if len(entries) > 1:
                _line_blockers(entries, up, down)
    return {d: frozenset((ids[b], ids[p]) for p, m in enumerate(masks[d]) for b in _bits(m)) for d in DIRECTIONS}


def _line_blockers(entries: list[tuple[int, int, int]], up: list[int], down: list[int]) -> None:
    """Add to up[p] the parts with a voxel after p's first on this line, to down[p] those before p's last."""
    by_max = sorted(entries, key=lambda e: -e[1])          # largest max first
    maxes = [-e[1] for e in by_max]
    prefix, acc = [], 0
    for e in by_max:
        acc |= 1 << e[2]
        prefix.append(acc)
    by_min = sorted(entries)                               # smallest min first
    mins = [e[0] for e in by_min]
    prefix_min, acc = [], 0
    for e in by_min:
        acc |= 1 << e[2]
        prefix_min.append(acc)
    for mn, mx, i in entries:
        k = bisect_left(maxes, -mn)                        # parts whose max > mn
        if k:
            up[i] |= prefix[k - 1] & ~(1 << i)
        k = bisect_left(mins, mx)                          # parts whose min < mx
        if k:
            down[i] |= prefix_min[k - 1] & ~(1 << i)


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@lru_cache(maxsize=256)
def contact_relation(asm: Assembly) -> dict[tuple[str, str], int]:
    """Face contacts: (a, b) with a before b in catalog order -> number of shared unit faces."""
    owner = {}
    for p in asm.parts:
        for v in p.voxels:
            owner[v] = p.part_id
    order = {pid: i for i, pid in enumerate(asm.part_ids)}
    count: dict[tuple[str, str], int] = defaultdict(int)
    for v, a in owner.items():
        for dx, dy, dz in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
            b = owner.get((v[0] + dx, v[1] + dy, v[2] + dz))
            if b is not None and b != a:
                key = (a, b) if order[a] < order[b] else (b, a)
                count[key] += 1
    return dict(sorted(count.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]])))


@lru_cache(maxsize=1024)
def symmetry_group(part: Part) -> tuple[IntMatrix, ...]:
    """Cube rotations that map the part's voxels onto themselves about their centroid (identity first)."""
    # work in doubled coordinates of voxel centres so everything stays integral
    pts = {(2 * x + 1, 2 * y + 1, 2 * z + 1) for x, y, z in part.voxels}
    n = len(pts)
    sx, sy, sz = (sum(p[i] for p in pts) for i in range(3))
    group = []
    for g in cube_rotations():
        ok = True
        for p in pts:
            # q = g (p - c) + c, with c = s/n  =>  n q = g (n p - s) + s
            d = (n * p[0] - sx, n * p[1] - sy, n * p[2] - sz)
            q = tuple(g[i][0] * d[0] + g[i][1] * d[1] + g[i][2] * d[2] + (sx, sy, sz)[i] for i in range(3))
            if any(c % n for c in q) or tuple(c // n for c in q) not in pts:
                ok = False
                break
        if ok:
            group.append(g)
    return tuple(group)



"""Voxel geometry -> blocking, contact and symmetry relations (derived, never typed by hand)."""

from __future__ import annotations

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
    """For each direction, the (blocker, blocked) pairs between the assembly's parts at target pose."""
    lines = {(p.part_id, a): _lines(p.voxels, a) for p in asm.parts for a in range(3)}
    out: dict[str, set[tuple[str, str]]] = {d: set() for d in DIRECTIONS}
    for p in asm.parts:
        for b in asm.parts:
            if b is p:
                continue
            for d in DIRECTIONS:
                axis, positive = "xyz".index(d[1]), d[0] == "+"
                lb, lm = lines[(b.part_id, axis)], lines[(p.part_id, axis)]
                for key, (mn, mx) in lm.items():
                    other = lb.get(key)
                    if other is not None and ((positive and other[1] > mn) or (not positive and other[0] < mx)):
                        out[d].add((b.part_id, p.part_id))
                        break
    return {d: frozenset(v) for d, v in out.items()}


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



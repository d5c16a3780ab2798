"""A flat jigsaw panel: pieces whose tabs lock them to their neighbours in the plane.

Every piece is trapped sideways by the tabs and blanks around it but lifts straight up off the
table, so the whole panel is blocking depth 1: the shallow end of the library, where a repair never
needs to disturb a neighbour. The tabs make every piece fit one way round only.
"""

from __future__ import annotations

from ..model.assembly import Assembly, SparePart
from .voxels import box, part, part_id

ROWS, COLS, CELL = 2, 3, 3


def _tab(r: int, c: int, toward: tuple[int, int]) -> frozenset:
    """The voxel in the middle of the neighbour's facing edge, seen from piece (r, c)."""
    dr, dc = toward
    mid = CELL // 2
    if dc:
        x = (c + 1) * CELL if dc > 0 else c * CELL - 1
        return box(x, 0, r * CELL + mid, x + 1, 1, r * CELL + mid + 1)
    z = (r + 1) * CELL if dr > 0 else r * CELL - 1
    return box(c * CELL + mid, 0, z, c * CELL + mid + 1, 1, z + 1)


def jigsaw_panel() -> Assembly:
    camel = "JigsawPanel"
    shapes = {(r, c): set(box(c * CELL, 0, r * CELL, (c + 1) * CELL, 1, (r + 1) * CELL)) for r in range(ROWS) for c in range(COLS)}
    for (r, c) in list(shapes):
        for dr, dc in ((0, 1), (1, 0)):
            other = (r + dr, c + dc)
            if other not in shapes:
                continue
            # alternate which side carries the tab so that pieces differ
            owner, taker, toward = ((r, c), other, (dr, dc)) if (r + c) % 2 == 0 else (other, (r, c), (-dr, -dc))
            tab = _tab(*owner, toward)
            shapes[owner] |= tab
            shapes[taker] -= tab
    parts = []
    for n, ((r, c), voxels) in enumerate(sorted(shapes.items()), start=1):
        corner = r in (0, ROWS - 1) and c in (0, COLS - 1)
        kind = "corner" if corner else "edge"
        parts.append(part(part_id(camel, n, kind.capitalize()), kind, frozenset(voxels), dirs=("+y",)))
    spares = (SparePart(f"{parts[1].part_id}_Mirrored", "edge", parts[1].part_id, "the same piece cut mirror-image"),
              SparePart(f"{parts[0].part_id}_OtherSet", "corner", parts[0].part_id, "a corner piece from another puzzle"))
    return Assembly("jigsaw_panel", "jigsaw", tuple(parts), spares,
                    "A flat 2x3 jigsaw panel: tabs lock the pieces sideways; every piece lifts straight up.")


ASSEMBLIES = {"jigsaw_panel": jigsaw_panel}

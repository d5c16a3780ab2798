"""Nested boxes: lidded boxes inside each other around a small keepsake, the outer lid latched.

Each box sits on the floor of the next larger one with its lid just under that box's lid, so the
only way in is lid after lid and the blocking depth is twice the box count plus the latch and the
keepsake: the deepest chains of the library.
"""

from __future__ import annotations

from ..model.assembly import Assembly, Part, SparePart
from .voxels import UP, box, coupled_lock, part, part_id, rotate_lock, shell, union


def _nested(assembly_id: str, camel: str, count: int, elongation: int, latch: str, description: str) -> Assembly:
    """`count` boxes, each 2 voxels smaller per side and 2 lower than the one around it.

    `elongation` makes every box that much longer in x than in z (0: square boxes);
    `latch` is the lock kind of the hasp over the outer lid's front edge.
    """
    ids: list[str] = []

    def new_id(kind: str) -> str:
        ids.append(part_id(camel, len(ids) + 1, kind))
        return ids[-1]

    box_ids = [new_id("Box") for _ in range(count)]
    lid_ids = [new_id("Lid") for _ in range(count)]
    gem, latch_id = new_id("Keepsake"), new_id("Lock")
    parts: list[Part] = []
    lids: list[Part] = []
    for k in range(count):
        lo, size, height = k, 2 * (count - k) + 3, 2 * (count - k)
        hi = (lo + size + elongation, lo + height, lo + size)
        below = () if k == 0 else (box_ids[k - 1],)
        parts.append(part(box_ids[k], "box", shell((lo, k, lo), hi, "+y"), dirs=UP, supports=below))
        lids.append(part(lid_ids[k], "lid", box(lo, hi[1], lo, hi[0], hi[1] + 1, hi[2]), dirs=("+y",), supports=(box_ids[k],)))
    inner = count  # the innermost box's floor is at y = count - 1, its inside starts one voxel in
    keepsake = union(box(inner + 1, inner, inner + 1, inner + 3, inner + 1, inner + 2), box(inner + 1, inner, inner + 2, inner + 2, inner + 1, inner + 3))
    outer_top = 2 * count
    hasp = union(box(2, outer_top - 2, -1, 3, outer_top + 2, 0), box(2, outer_top + 1, 0, 3, outer_top + 2, 1))
    lock = (rotate_lock((lid_ids[0],), "x", 90) if latch == "rotate"
            else coupled_lock((lid_ids[0],), (0.0, 0.5, -0.5), (90.0, 0.0, 0.0)))
    parts += lids + [
        part(gem, "keepsake", keepsake, dirs=("+y",), supports=(box_ids[-1],)),
        part(latch_id, "lock", hasp, dirs=("-z", "+y"), supports=(box_ids[0],), lock=lock),
    ]
    spares = (SparePart(f"{lid_ids[1]}_Loose", "lid", lid_ids[1], "lid of the wrong box: 1 mm too small"),
              SparePart(f"{gem}_Replica", "keepsake", gem, "a replica of the keepsake"))
    return Assembly(assembly_id, "nested_boxes", tuple(parts), spares, description)


def nested_boxes_3() -> Assembly:
    return _nested("nested_boxes_3", "NestedBoxes3", 3, 0, "rotate",
                   "Three square lidded boxes nested around a keepsake; a turning hasp holds the outer lid.")


def nested_boxes_4() -> Assembly:
    return _nested("nested_boxes_4", "NestedBoxes4", 4, 2, "coupled",
                   "Four oblong lidded boxes nested around a keepsake; a lift-and-swing hasp holds the outer lid.")


ASSEMBLIES = {"nested_boxes_3": nested_boxes_3, "nested_boxes_4": nested_boxes_4}

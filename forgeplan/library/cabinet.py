"""Drawer cabinets: drawers on shelves between two sides, held shut by vertical locking bars.

The carcass is a base, two sides, shelves sliding in dadoes of the sides, an optional back in
grooves and a top resting on the sides. Drawers slide out of the front (-z) only; their overlay
fronts cover the shelf edges, and a locking bar standing in front of the drawer fronts blocks the
drawers and, as a lock, holds them. The sides lift off
the base (+y) only, so they wait for the top and every shelf.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.assembly import Assembly, Part, SparePart
from .voxels import UP, box, carve, coupled_lock, part, part_id, rotate_lock, shell, union

WIDTH, DEPTH = 9, 8
BAR_UNLOCK = {"coupled": ((0.0, 0.5, -0.5), (0.0, 0.0, 90.0)), "rotate": ("z", 90)}


@dataclass(frozen=True)
class Bar:
    """A locking bar at column `x` in front of the drawers `drawers` (indices, bottom up)."""

    kind: str
    x: int
    drawers: tuple[int, ...]


def _cabinet(assembly_id: str, camel: str, drawer_heights: list[int], bars: list[Bar], back: bool,
             description: str) -> Assembly:
    ids: list[str] = []

    def new_id(kind: str) -> str:
        ids.append(part_id(camel, len(ids) + 1, kind))
        return ids[-1]

    base, left, right = new_id("Base"), new_id("Side"), new_id("Side")
    back_id = new_id("Back") if back else None
    shelf_ids = [new_id("Shelf") for _ in drawer_heights[1:]]
    drawer_ids = [new_id("Drawer") for _ in drawer_heights]
    bar_ids = [new_id("Lock") for _ in bars]
    top_id = new_id("Top")

    inner_depth = DEPTH - 2 if back else DEPTH  # drawers and shelves stop at the back panel
    levels, y = [], 1
    for h in drawer_heights:
        levels.append(y)
        y += h + 1
    top_y = y - 1
    shelves = {sid: box(1, lv - 1, 0, WIDTH - 1, lv, inner_depth) for sid, lv in zip(shelf_ids, levels[1:])}
    back_voxels = box(1, 1, DEPTH - 2, WIDTH - 1, top_y, DEPTH - 1) if back else frozenset()
    cut = union(*shelves.values(), back_voxels)
    parts: list[Part] = [
        part(base, "base", box(0, 0, 0, WIDTH, 1, DEPTH), dirs=UP),
        part(left, "side", carve(box(0, 1, 0, 2, top_y, DEPTH), cut), dirs=("+y",), supports=(base,)),
        part(right, "side", carve(box(WIDTH - 2, 1, 0, WIDTH, top_y, DEPTH), cut), dirs=("+y",), supports=(base,)),
    ]
    if back_id:
        parts.append(part(back_id, "back", back_voxels, dirs=UP, supports=(base,)))
    parts += [part(sid, "shelf", v, dirs=("-z",), supports=(left, right)) for sid, v in shelves.items()]
    below = [base] + shelf_ids
    for did, lv, h, under in zip(drawer_ids, levels, drawer_heights, below):
        drawer = shell((2, lv, 0), (WIDTH - 2, lv + h, inner_depth - 1), "+y")
        # overlay front: covers the edge of the shelf below, so that shelf cannot slide out first
        front = box(1, lv - 1, -1, WIDTH - 1, lv + h - 1, 0)
        handle = box(3, lv + h - 2, -2, 5, lv + h - 1, -1)  # off-centre pull: the drawer fits one way only
        parts.append(part(did, "drawer", union(drawer, front, handle), dirs=("-z",), supports=(under,)))
    for bid, b in zip(bar_ids, bars):
        held = tuple(drawer_ids[i] for i in b.drawers)
        lo, hi = levels[b.drawers[0]] - 1, levels[b.drawers[-1]] + drawer_heights[b.drawers[-1]] - 1
        lock = coupled_lock(held, *BAR_UNLOCK["coupled"]) if b.kind == "coupled" else rotate_lock(held, *BAR_UNLOCK["rotate"])
        parts.append(part(bid, "lock", box(b.x, lo, -2, b.x + 1, hi, -1), dirs=("-z", "+y"), lock=lock))
    parts.append(part(top_id, "top", box(0, top_y, 0, WIDTH, top_y + 1, DEPTH), dirs=("+y",), supports=(left, right)))
    spares = [SparePart(f"{drawer_ids[0]}_NoRunner", "drawer", drawer_ids[0], "drawer without its runner groove"),
              SparePart(f"{top_id}_Veneered", "top", top_id, "top with a veneer lip: too thick for the carcass")]
    if shelf_ids:
        spares.append(SparePart(f"{shelf_ids[0]}_Narrow", "shelf", shelf_ids[0], "shelf 3 mm narrow: drops out of the dadoes"))
    return Assembly(assembly_id, "drawer_cabinet", tuple(parts), tuple(spares), description)


def drawer_cabinet_2() -> Assembly:
    return _cabinet("drawer_cabinet_2", "DrawerCabinet2", [3, 3], [Bar("coupled", WIDTH - 3, (0, 1))], back=False,
                    description="Two deep drawers in an open-backed carcass, one lift-and-swing locking bar.")


def drawer_cabinet_3() -> Assembly:
    return _cabinet("drawer_cabinet_3", "DrawerCabinet3", [2, 2, 2], [Bar("rotate", WIDTH - 3, (0, 1, 2))], back=True,
                    description="Three drawers with a back panel in grooves and one pivoting locking bar.")


def drawer_cabinet_4() -> Assembly:
    return _cabinet("drawer_cabinet_4", "DrawerCabinet4", [2, 2, 2, 2],
                    [Bar("coupled", WIDTH - 3, (0, 1)), Bar("rotate", 2, (2, 3))], back=True,
                    description="Four drawers with a back panel; a lift-and-swing bar holds the lower two, a pivoting bar the upper two.")


ASSEMBLIES = {"drawer_cabinet_2": drawer_cabinet_2, "drawer_cabinet_3": drawer_cabinet_3, "drawer_cabinet_4": drawer_cabinet_4}

"""Dovetail boxes: sides with sliding dovetails dropped into the front and back boards, on a bottom.

A voxel dovetail is an L-shaped tail (neck plus a head turned sideways) in a matching stopped
pocket: the side can only slide up and out, and the front and back are trapped until the sides are
gone. Something must stop the sides from lifting: a locking bar laid
across their tops (the drawer) or a lid held down by a quarter-turn bolt (the boxes and the chest).
"""

from __future__ import annotations

from ..model.assembly import Assembly, Part, SparePart
from .voxels import NOT_DOWN, UP, Voxels, box, carve, coupled_lock, part, part_id, rotate_lock, union


def _tails(x_wall: int, inward: int, z_neck: int, z_head: int, y0: int, y1: int) -> Voxels:
    """An L tail: neck in line with the side wall, head turned `inward` (+1 or -1) in x."""
    return union(box(x_wall, y0, z_neck, x_wall + 1, y1, z_neck + 1),
                 box(min(x_wall, x_wall + inward), y0, z_head, max(x_wall, x_wall + inward) + 1, y1, z_head + 1))


def _carcass(width: int, depth: int, height: int) -> dict[str, Voxels]:
    """Shapes of the bottom, front, back and two dovetailed sides, to be carved further by the caller."""
    top = 1 + height
    # stopped dovetails: the pockets end one voxel above the bottom, so the boards cannot slide up
    left_tails = union(_tails(1, +1, 2, 1, 2, top), _tails(1, +1, depth - 3, depth - 2, 2, top))
    right_tails = union(_tails(width - 2, -1, 2, 1, 2, top), _tails(width - 2, -1, depth - 3, depth - 2, 2, top))
    return {
        "bottom": box(0, 0, 0, width, 1, depth),
        "front": carve(box(0, 1, 0, width, top, 3), left_tails, right_tails),
        "back": carve(box(0, 1, depth - 3, width, top, depth), left_tails, right_tails),
        "left": union(box(1, 1, 3, 2, top, depth - 3), left_tails),
        "right": union(box(width - 2, 1, 3, width - 1, top, depth - 3), right_tails),
    }


KINDS = {"bottom": "Bottom", "front": "Front", "back": "Back", "left": "Side", "right": "Side",
         "divider": "Divider", "lid": "Lid", "lock": "Lock", "pull": "Pull"}


def _ids(camel: str, keys: list[str]) -> dict[str, str]:
    """Part ids numbered in catalog order."""
    return {key: part_id(camel, n, KINDS[key]) for n, key in enumerate(keys, start=1)}


def _walls(ids: dict[str, str], shapes: dict[str, Voxels]) -> list[Part]:
    b = ids["bottom"]
    return [
        part(b, "bottom", shapes["bottom"], dirs=UP),
        part(ids["front"], "board", shapes["front"], dirs=NOT_DOWN, supports=(b,)),
        part(ids["back"], "board", shapes["back"], dirs=NOT_DOWN, supports=(b,)),
        part(ids["left"], "side", shapes["left"], dirs=("+y",), supports=(b,)),
        part(ids["right"], "side", shapes["right"], dirs=("+y",), supports=(b,)),
    ]


def dovetail_drawer_box() -> Assembly:
    """An open drawer: a coupled locking bar lies in notches across the side tops; an L pull on the front."""
    camel, width, depth, height = "DovetailDrawer", 7, 9, 3
    ids = _ids(camel, ["bottom", "front", "back", "left", "right", "lock", "pull"])
    s = _carcass(width, depth, height)
    zm = depth // 2
    bar = box(1, height, zm, width - 1, height + 1, zm + 1)
    pull = union(box(2, 2, -2, 5, 3, -1), box(2, 2, -1, 3, 3, 0))
    s["left"], s["right"] = carve(s["left"], bar), carve(s["right"], bar)
    parts = _walls(ids, s) + [
        part(ids["lock"], "lock", bar, dirs=("+y",),
             lock=coupled_lock((ids["left"], ids["right"]), (0.0, 0.5, 0.0), (0.0, 90.0, 0.0))),
        part(ids["pull"], "pull", pull, dirs=("-z",), supports=(ids["front"],)),
    ]
    spares = (SparePart(ids["pull"] + "_Round", "pull", ids["pull"], "round knob where the L pull belongs"),
              SparePart(ids["left"] + "_Pins", "side", ids["left"], "side cut with pins instead of tails"))
    return Assembly("dovetail_drawer_box", "dovetail_box", tuple(parts), spares,
                    "Dovetailed drawer box on a bottom board, a coupled locking bar across the sides, an L pull.")


def _lidded(assembly_id: str, camel: str, width: int, depth: int, height: int, divider: bool, description: str) -> Assembly:
    """A box closed by a lid; a quarter-turn bolt through the lid into the front holds the lid down."""
    ids = _ids(camel, ["bottom", "front", "back", "left", "right"] + (["divider"] if divider else []) + ["lid", "lock"])
    s = _carcass(width, depth, height)
    top = 1 + height
    cx = width // 2
    bolt = union(box(cx, top - 1, 1, cx + 1, top + 1, 2), box(cx - 1, top + 1, 1, cx + 2, top + 2, 2))
    s["front"] = carve(s["front"], bolt)
    lid = carve(box(0, top, 0, width, top + 1, depth), bolt)
    extra: list[Part] = []
    if divider:  # a partition sliding down stopped dadoes in the front and back boards
        wall = carve(box(cx, 1, 2, cx + 1, top, depth - 2), box(cx, 1, 2, cx + 1, 2, 3), box(cx, 1, depth - 3, cx + 1, 2, depth - 2))
        s["front"], s["back"] = carve(s["front"], wall), carve(s["back"], wall)
        extra.append(part(ids["divider"], "divider", wall, dirs=("+y",), supports=(ids["bottom"],)))
    parts = _walls(ids, s) + extra + [
        part(ids["lid"], "lid", lid, dirs=("+y",), supports=(ids["front"], ids["back"])),
        part(ids["lock"], "lock", bolt, dirs=("+y",), supports=(ids["lid"],), lock=rotate_lock((ids["lid"],), "y", 90)),
    ]
    spares = (SparePart(ids["lid"] + "_Warped", "lid", ids["lid"], "lid warped 1 mm: does not sit flat"),
              SparePart(ids["front"] + "_NoBore", "board", ids["front"], "front board without the bolt bore"))
    return Assembly(assembly_id, "dovetail_box", tuple(parts), spares, description)


def dovetail_box_lid() -> Assembly:
    return _lidded("dovetail_box_lid", "DovetailBox", 7, 7, 3, False,
                   "Dovetailed box with a lid held down by a quarter-turn bolt into the front board.")


def dovetail_chest_divided() -> Assembly:
    return _lidded("dovetail_chest_divided", "DovetailChest", 11, 9, 4, True,
                   "Wide dovetailed chest with a partition in dadoes, a lid and a quarter-turn bolt.")


ASSEMBLIES = {"dovetail_drawer_box": dovetail_drawer_box, "dovetail_box_lid": dovetail_box_lid,
              "dovetail_chest_divided": dovetail_chest_divided}

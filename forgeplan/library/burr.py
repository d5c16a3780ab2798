"""Six-piece burrs: three that come apart with straight moves and two that need partial moves.

The six 2x2x8 sticks sit in the classic burr layout: a pair along each axis, crossing in a 4x4x4
core. Each design is the list of notches cut from each stick (boxes, in BurrTools' spirit of
describing a piece by what is removed). Assembly and blocking graphs follow from the voxels.

- `burr_6_key`, `burr_6_split`, `burr_6_pairs` come from a search over the 32 core voxels that two
  sticks share, for designs whose pieces are connected and that come apart with straight moves: one
  piece at a time after an uncut key, or in groups (SEMANTICS.md §5).
- `burr_6_level4` and `burr_6_level5` are the project's own higher-level burrs: nothing moves out
  straight; the first piece leaves after 3 or 4 partial moves (SEMANTICS.md §9, BurrTools levels 4
  and 5), and both come apart completely. They were found by a hill-climb over the same 32 voxels:
  a seeded random assignment of each contested voxel to one of its two sticks or to a hole, then
  single-voxel changes, each kept when every piece stays connected and the level of the first
  separation (`geometry.partial.disassemble_partial`) does not drop. The search is not shipped: it
  took minutes per design; tests/test_expert_burrs.py checks the levels and plans of the result.
"""

from __future__ import annotations

from ..model.assembly import Assembly, SparePart
from .voxels import Voxels, box, carve, part, part_id

Box = tuple[int, int, int, int, int, int]

# the full sticks; a pair along each axis through the core [2,6)^3
STICKS: dict[str, Voxels] = {
    "X1": box(0, 3, 2, 8, 5, 4), "X2": box(0, 3, 4, 8, 5, 6),
    "Y1": box(2, 0, 3, 4, 8, 5), "Y2": box(4, 0, 3, 6, 8, 5),
    "Z1": box(3, 2, 0, 5, 4, 8), "Z2": box(3, 4, 0, 5, 6, 8),
}

# design -> stick -> notch boxes (x0, y0, z0, x1, y1, z1); an empty list marks the key
DESIGNS: dict[str, dict[str, list[Box]]] = {
    "burr_6_key": {
        "X1": [(2, 3, 3, 4, 5, 4), (4, 4, 2, 5, 5, 4), (5, 3, 3, 6, 4, 4)],
        "X2": [(2, 3, 4, 6, 5, 5), (4, 4, 5, 5, 5, 6)],
        "Y1": [],
        "Y2": [(4, 2, 3, 5, 6, 4), (4, 2, 4, 5, 3, 5), (4, 4, 4, 5, 6, 5), (5, 4, 3, 6, 5, 4)],
        "Z1": [(3, 2, 3, 4, 4, 5), (3, 3, 2, 5, 4, 3), (3, 3, 5, 5, 4, 6), (4, 3, 3, 5, 4, 5)],
        "Z2": [(3, 4, 2, 4, 5, 6), (3, 5, 3, 4, 6, 5)],
    },
    "burr_6_split": {
        "X1": [(2, 3, 3, 5, 4, 4), (2, 4, 3, 4, 5, 4)],
        "X2": [(2, 3, 4, 6, 4, 5), (2, 4, 4, 3, 5, 5), (4, 4, 4, 6, 5, 5), (4, 4, 5, 5, 5, 6)],
        "Y1": [(3, 2, 3, 4, 4, 5), (3, 4, 4, 4, 5, 5)],
        "Y2": [(4, 4, 3, 6, 5, 4), (4, 4, 4, 5, 6, 5), (4, 5, 3, 5, 6, 4), (5, 3, 3, 6, 4, 4)],
        "Z1": [(3, 3, 2, 5, 4, 3), (3, 3, 5, 5, 4, 6), (4, 2, 3, 5, 4, 5)],
        "Z2": [(3, 4, 2, 5, 5, 4), (3, 4, 4, 4, 6, 5), (3, 4, 5, 4, 5, 6), (3, 5, 3, 4, 6, 4)],
    },
    "burr_6_pairs": {
        "X1": [(3, 4, 3, 6, 5, 4), (4, 3, 3, 6, 4, 4)],
        "X2": [(2, 3, 4, 3, 5, 5), (3, 4, 4, 6, 5, 5), (3, 4, 5, 5, 5, 6), (4, 3, 4, 5, 4, 5)],
        "Y1": [(2, 3, 3, 4, 5, 4), (3, 2, 3, 4, 3, 5), (3, 3, 4, 4, 4, 5), (3, 5, 3, 4, 6, 5)],
        "Y2": [(4, 2, 4, 5, 6, 5), (4, 4, 3, 5, 6, 4), (5, 3, 4, 6, 5, 5)],
        "Z1": [(3, 3, 2, 5, 4, 4), (3, 3, 4, 4, 4, 6), (4, 2, 3, 5, 3, 4), (4, 3, 5, 5, 4, 6)],
        "Z2": [(3, 4, 2, 5, 5, 5), (3, 5, 4, 4, 6, 5)],
    },
    "burr_6_level4": {
        "X1": [(2, 3, 3, 6, 4, 4), (2, 4, 3, 5, 5, 4), (3, 4, 2, 5, 5, 3)],
        "X2": [(2, 3, 4, 6, 4, 5), (2, 4, 4, 4, 5, 5), (3, 3, 5, 4, 4, 6), (5, 4, 4, 6, 5, 5)],
        "Y1": [(2, 3, 3, 4, 5, 4), (3, 2, 3, 4, 3, 4), (3, 3, 4, 4, 4, 5), (3, 5, 3, 4, 6, 5)],
        "Y2": [(4, 2, 3, 5, 3, 5), (4, 4, 3, 6, 5, 4), (4, 4, 4, 5, 5, 5), (4, 5, 3, 5, 6, 4), (5, 3, 3, 6, 4, 4)],
        "Z1": [(3, 2, 3, 4, 4, 5), (3, 3, 2, 5, 4, 3), (4, 3, 3, 5, 4, 6)],
        "Z2": [(3, 4, 2, 5, 5, 3), (3, 4, 4, 5, 5, 6), (4, 5, 3, 5, 6, 5)],
    },
    "burr_6_level5": {
        "X1": [(2, 3, 3, 6, 4, 4), (2, 4, 3, 5, 5, 4), (3, 4, 2, 4, 5, 3)],
        "X2": [(2, 3, 4, 3, 5, 5), (3, 3, 5, 4, 4, 6), (4, 3, 4, 6, 4, 5), (5, 4, 4, 6, 5, 5)],
        "Y1": [(2, 3, 3, 4, 5, 4), (3, 2, 3, 4, 3, 5), (3, 3, 4, 4, 6, 5)],
        "Y2": [(4, 2, 3, 5, 6, 5), (5, 3, 3, 6, 5, 4)],
        "Z1": [(3, 2, 3, 4, 4, 4), (3, 3, 2, 5, 4, 3), (3, 3, 4, 4, 4, 6), (4, 3, 5, 5, 4, 6)],
        "Z2": [(3, 4, 2, 5, 5, 3), (3, 4, 4, 5, 5, 6), (3, 5, 3, 4, 6, 4)],
    },
}
# the designs that need partial moves (SEMANTICS.md §9), with their BurrTools level
LEVELS = {"burr_6_level4": "4", "burr_6_level5": "5"}
CAMEL = {"burr_6_key": "Burr6Key", "burr_6_split": "Burr6Split", "burr_6_pairs": "Burr6Pairs",
         "burr_6_level4": "Burr6Level4", "burr_6_level5": "Burr6Level5"}
DESCRIPTION = {
    "burr_6_key": "Solid six-piece burr; the uncut key runs along y and slides out first.",
    "burr_6_split": "Solid six-piece burr with no free piece: it splits into two halves of three pieces along y, "
                    "then each half comes apart one piece at a time.",
    "burr_6_pairs": "Six-piece burr with five internal holes and no free piece: a pair of pieces slides out along x, "
                    "then another pair along z, then single pieces.",
    "burr_6_level4": "Six-piece burr of level 4 with nine internal holes: three partial moves (five pieces, then three, "
                     "then three slide one voxel) before three pieces leave together along x.",
    "burr_6_level5": "Six-piece burr of level 5 with seven internal holes: four partial moves before the first piece "
                     "leaves along y; the rest comes apart one piece at a time.",
}


def _burr(assembly_id: str) -> Assembly:
    design = DESIGNS[assembly_id]
    camel = CAMEL[assembly_id]
    parts = []
    for n, (stick, notches) in enumerate(design.items(), start=1):
        kind = "key" if not notches else "stick"
        voxels = carve(STICKS[stick], *(box(*b) for b in notches))
        parts.append(part(part_id(camel, n, kind.capitalize()), kind, voxels))
    cut = next(p for p in parts if p.kind == "stick")
    spares = (SparePart(f"{cut.part_id}_Miscut", "stick", cut.part_id, "stick with one notch cut a voxel too deep"),)
    return Assembly(assembly_id, "burr6", tuple(parts), spares, DESCRIPTION[assembly_id])


ASSEMBLIES = {aid: (lambda aid=aid: _burr(aid)) for aid in DESIGNS}

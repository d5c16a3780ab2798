"""Mortise-and-tenon joinery: pegged frames, a frame-and-panel door, and a wedged trestle.

Tenons run right through their mortises. In the frames a peg driven through stile and tenon stops the
rail from sliding, so the pegs come out first (along their own axis), then the stiles slide off the
tenons, then rails and panels are free. In the trestle the stretcher's tusk tenons stick out beyond
the legs and a wedge through each tusk (a coupled lock: knocked up and loose) keeps the legs on.
"""

from __future__ import annotations

from ..model.assembly import Assembly, Part, SparePart
from .voxels import NOT_DOWN, Voxels, box, carve, coupled_lock, part, part_id, union

THICK = 3        # frame thickness along z; tenons and panels take the middle layer
STILE = 3        # stile width along x; the peg goes through its middle column
PEG_DIRS = ("+z", "-z")


def _frame(assembly_id: str, camel: str, width: int, height: int, rails: list[int], panels: bool,
           description: str, spares: list[tuple[str, str, str]]) -> Assembly:
    """Two stiles, rails (2 tall) whose bottom rows are `rails`, one peg per tenon, panels between rails."""
    ids: list[str] = []

    def new_id(kind: str) -> str:
        ids.append(part_id(camel, len(ids) + 1, kind))
        return ids[-1]

    left, right = new_id("Stile"), new_id("Stile")
    rail_ids = [new_id("Rail") for _ in rails]
    panel_shapes = {new_id("Panel"): box(STILE, lower + 1, 1, width - STILE, upper + 1, 2)
                    for lower, upper in zip(rails, rails[1:])} if panels else {}
    pegs = {new_id("Peg"): box(x, y + 1, -1, x + 1, y + 2, THICK + 1) for y in rails for x in (1, width - 2)}
    tenons = union(*(union(box(0, y, 1, STILE, y + 2, 2), box(width - STILE, y, 1, width, y + 2, 2)) for y in rails))
    peg_voxels, panel_voxels = union(*pegs.values()), union(*panel_shapes.values())
    parts: list[Part] = [
        part(left, "stile", carve(box(0, 0, 0, STILE, height, THICK), tenons, peg_voxels), dirs=("-x",)),
        part(right, "stile", carve(box(width - STILE, 0, 0, width, height, THICK), tenons, peg_voxels), dirs=("+x",)),
    ]
    for rid, y in zip(rail_ids, rails):
        body = union(box(0, y, 1, width, y + 2, 2), box(STILE, y, 0, width - STILE, y + 2, THICK))
        parts.append(part(rid, "rail", carve(body, peg_voxels, panel_voxels)))
    parts += [part(pid, "panel", v) for pid, v in panel_shapes.items()]
    parts += [part(pid, "peg", v, dirs=PEG_DIRS) for pid, v in pegs.items()]
    first = {"stile": left, "rail": rail_ids[0], "peg": next(iter(pegs)), **{"panel": pid for pid in list(panel_shapes)[:1]}}
    spare_parts = tuple(SparePart(f"{first[kind]}_{suffix}", kind, first[kind], diff) for kind, suffix, diff in spares)
    return Assembly(assembly_id, "mortise_tenon", tuple(parts), spare_parts, description)


def mortise_frame() -> Assembly:
    return _frame("mortise_frame", "MortiseFrame", 13, 12, [1, 9], False,
                  "A pegged mortise-and-tenon frame: two stiles, two rails with through tenons, four pegs.",
                  [("peg", "Oversize", "peg 1 mm oversize: splits the stile"), ("rail", "Short", "rail 2 mm short: the shoulders gap")])


def mortise_door() -> Assembly:
    return _frame("mortise_door", "MortiseDoor", 11, 16, [1, 7, 13], True,
                  "Frame-and-panel door: stiles, three pegged rails, two panels floating in the rails' grooves.",
                  [("panel", "Thick", "panel 2 mm too thick for the groove"), ("peg", "Short", "peg too short to reach through")])


def mortise_trestle() -> Assembly:
    """Two legs on feet, a stretcher with tusk tenons through both legs, a wedge through each tusk, a top."""
    camel, width = "MortiseTrestle", 15
    foot_l, foot_r, leg_l, leg_r, stretcher, wedge_l, wedge_r, top = (
        part_id(camel, n, kind) for n, kind in enumerate(
            ("Foot", "Foot", "Leg", "Leg", "Stretcher", "Lock", "Lock", "Top"), start=1))
    tusks = union(box(0, 3, 3, 4, 5, 4), box(width - 4, 3, 3, width, 5, 4))
    wedges = {wedge_l: box(1, 2, 3, 2, 6, 4), wedge_r: box(width - 2, 2, 3, width - 1, 6, 4)}
    wedge_voxels = union(*wedges.values())

    def leg(x0: int) -> Voxels:
        return carve(box(x0, 1, 2, x0 + 2, 9, 5), tusks)

    loosen = ((0.0, 0.5, 0.0), (0.0, 0.0, 0.0))
    parts = (
        part(foot_l, "foot", box(0, 0, 0, 6, 1, 7), dirs=NOT_DOWN),
        part(foot_r, "foot", box(width - 6, 0, 0, width, 1, 7), dirs=NOT_DOWN),
        part(leg_l, "leg", leg(2), dirs=("-x",), supports=(foot_l,)),
        part(leg_r, "leg", leg(width - 4), dirs=("+x",), supports=(foot_r,)),
        part(stretcher, "stretcher", carve(union(box(4, 3, 2, width - 4, 5, 5), tusks), wedge_voxels)),
        part(wedge_l, "lock", wedges[wedge_l], dirs=("+y", "-y"), lock=coupled_lock((leg_l, stretcher), *loosen)),
        part(wedge_r, "lock", wedges[wedge_r], dirs=("+y", "-y"), lock=coupled_lock((leg_r, stretcher), *loosen)),
        part(top, "top", box(0, 9, 0, width, 10, 7), dirs=("+y",), supports=(leg_l, leg_r)),
    )
    spares = (SparePart(f"{stretcher}_Short", "stretcher", stretcher, "stretcher with tusks 5 mm short: no room for the wedges"),
              SparePart(f"{leg_r}_NoMortise", "leg", leg_r, "leg blank without the mortise cut"))
    return Assembly("mortise_trestle", "mortise_tenon", parts, spares,
                    "Trestle: legs on feet, a stretcher with wedged tusk tenons through both legs, a top on the legs.")


ASSEMBLIES = {"mortise_frame": mortise_frame, "mortise_door": mortise_door, "mortise_trestle": mortise_trestle}

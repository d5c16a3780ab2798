"""Bayonet mounts: pins standing on a base plate, held by a lock ring that turns to release them.

The three identities differ in pin count and layout, lock kind (a plain turn, or a coupled
turn-and-lift) and what covers the ring: nothing, a small cap on the barrel, or a screwed cover plate.
"""

from __future__ import annotations

from ..model.assembly import Assembly, SparePart
from .voxels import box, coupled_lock, frame, part, part_id, ring, rotate_lock, union


def bayonet_structure() -> Assembly:
    """Four corner pins under a 30-degree lock ring, a barrel through the ring, a tabbed cap on top."""
    p = "BayonetStructure_Part"
    base, ring_id, barrel, cap = f"{p}00_Base", f"{p}01_Lock", f"{p}06_Barrel", f"{p}07_Cap"
    pins = [f"{p}0{i}_Pin" for i in range(2, 6)]
    corners = [(0, 0), (4, 0), (0, 4), (4, 4)]
    parts = [
        part(base, "base", box(0, 0, 0, 5, 1, 5), dirs=("+y",)),
        # the ring rests on the pins' tops: it needs them in place before it can be inserted
        part(ring_id, "lock", ring(0, 3, 0, 5), dirs=("+y",), supports=tuple(pins), lock=rotate_lock(tuple(pins), "y", 30)),
        *[part(pid, "pin", box(x, 1, z, x + 1, 3, z + 1), dirs=("+y",), supports=(base,)) for pid, (x, z) in zip(pins, corners)],
        part(barrel, "barrel", box(2, 1, 2, 3, 6, 3), dirs=("+y",), supports=(base,)),
        # the index tab makes the cap fit one way round (up to a flip)
        part(cap, "cap", union(box(0, 6, 0, 5, 7, 5), box(5, 6, 2, 6, 7, 3)), dirs=("+y",), supports=(barrel,)),
    ]
    spares = (SparePart(f"{p}02_Pin_Short", "pin", pins[0], "pin 1 mm short: does not reach the ring"),
              SparePart(f"{p}07_Cap_NoTab", "cap", cap, "cap without the index tab"))
    return Assembly("bayonet_structure", "bayonet", tuple(parts), spares,
                    "Four pins under a bayonet lock ring, a barrel through the ring, a cap on top.")


def bayonet_mount_3pin() -> Assembly:
    """Three unevenly spaced pins (so the mount fits one way), a lens core inside a tubular barrel."""
    a = "BayonetMount3"
    base, lock, barrel, lens, cap = (part_id(a, 0, "Base"), part_id(a, 1, "Lock"), part_id(a, 5, "Barrel"),
                                     part_id(a, 6, "Lens"), part_id(a, 7, "Cap"))
    pins = [part_id(a, i, "Pin") for i in (2, 3, 4)]
    spots = [(0, 2), (6, 1), (3, 6)]
    parts = [
        part(base, "base", box(0, 0, 0, 7, 1, 7), dirs=("+y",)),
        part(lock, "lock", ring(0, 3, 0, 7), dirs=("+y",), supports=tuple(pins), lock=rotate_lock(tuple(pins), "y", 40)),
        *[part(pid, "pin", box(x, 1, z, x + 1, 3, z + 1), dirs=("+y",), supports=(base,)) for pid, (x, z) in zip(pins, spots)],
        part(barrel, "barrel", frame((2, 1, 2), (5, 5, 5), "y"), dirs=("+y",), supports=(base,)),
        part(lens, "lens", box(3, 1, 3, 4, 4, 4), dirs=("+y",), supports=(base,)),
        part(cap, "cap", union(box(2, 5, 2, 5, 6, 5), box(5, 5, 3, 6, 6, 4)), dirs=("+y",), supports=(barrel,)),
    ]
    spares = (SparePart(part_id(a, 6, "Lens_Scratched"), "lens", lens, "lens element with a scratched coating"),
              SparePart(part_id(a, 3, "Pin_Long"), "pin", pins[1], "pin 1 mm too long: the ring cannot turn"))
    return Assembly("bayonet_mount_3pin", "bayonet", tuple(parts), spares,
                    "Three uneven pins under a 40-degree lock ring; a lens core in a tubular barrel, a small cap.")


def bayonet_twist_6pin() -> Assembly:
    """Six pins under a twist-and-lift (coupled) ring, covered by a plate held with one screw."""
    a = "BayonetTwist6"
    base, lock, barrel, cover, screw = (part_id(a, 0, "Base"), part_id(a, 1, "Lock"), part_id(a, 8, "Barrel"),
                                        part_id(a, 9, "Cover"), part_id(a, 10, "Screw"))
    pins = [part_id(a, i, "Pin") for i in range(2, 8)]
    spots = [(0, 0), (3, 0), (6, 0), (0, 6), (3, 6), (6, 6)]
    parts = [
        part(base, "base", box(0, 0, 0, 7, 1, 7), dirs=("+y",)),
        part(lock, "lock", ring(0, 3, 0, 7), dirs=("+y",), supports=tuple(pins),
             lock=coupled_lock(tuple(pins), (0.0, 0.5, 0.0), (0.0, 30.0, 0.0))),
        *[part(pid, "pin", box(x, 1, z, x + 1, 3, z + 1), dirs=("+y",), supports=(base,)) for pid, (x, z) in zip(pins, spots)],
        part(barrel, "barrel", box(2, 1, 2, 5, 6, 5), dirs=("+y",), supports=(base,)),
        part(cover, "cover", box(0, 6, 0, 7, 7, 7) - box(3, 6, 3, 4, 7, 4), dirs=("+y",), supports=(barrel,)),
        part(screw, "screw", union(box(3, 6, 3, 4, 7, 4), box(2, 7, 2, 5, 8, 5)), dirs=("+y",), supports=(cover,)),
    ]
    spares = (SparePart(part_id(a, 10, "Screw_M3"), "screw", screw, "M3 screw instead of M4: strips the thread"),
              SparePart(part_id(a, 8, "Barrel_Short"), "barrel", barrel, "barrel 2 mm short: the cover rocks"))
    return Assembly("bayonet_twist_6pin", "bayonet", tuple(parts), spares,
                    "Six pins under a twist-and-lift lock ring, a barrel, a cover plate held by one screw.")


ASSEMBLIES = {"bayonet_structure": bayonet_structure, "bayonet_mount_3pin": bayonet_mount_3pin,
              "bayonet_twist_6pin": bayonet_twist_6pin}

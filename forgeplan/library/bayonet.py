"""Bayonet mounts: pins under a lock ring that turns to release them, capped from above."""

from __future__ import annotations

from ..assembly import Assembly, SparePart
from .voxels import box, part, ring, rotate_lock


def bayonet_structure() -> Assembly:
    p = "BayonetStructure_Part"
    base, ring_id, barrel, cap = f"{p}00_Base", f"{p}01_Lock", f"{p}06_Barrel", f"{p}07_Cap"
    pins = [f"{p}0{i}_Pin" for i in range(2, 6)]
    corners = [(0, 0), (4, 0), (0, 4), (4, 4)]
    parts = [
        part(base, "base", box(0, 0, 0, 5, 1, 5), dirs=("+y",)),
        part(ring_id, "lock", ring(0, 3, 0, 5), dirs=("+y",), supports=(), lock=rotate_lock(tuple(pins), "y", 30)),
        *[part(pid, "pin", box(x, 1, z, x + 1, 3, z + 1), dirs=("+y",), supports=(base,)) for pid, (x, z) in zip(pins, corners)],
        part(barrel, "barrel", box(2, 1, 2, 3, 6, 3), dirs=("+y",), supports=(base,)),
        part(cap, "cap", box(0, 6, 0, 5, 7, 5), dirs=("+y",), supports=(barrel,)),
    ]
    # the ring rests on the pins' tops: it needs them in place before it can be inserted
    parts[1] = part(ring_id, "lock", ring(0, 3, 0, 5), dirs=("+y",), supports=tuple(pins), lock=rotate_lock(tuple(pins), "y", 30))
    spares = (SparePart(f"{p}02_Pin_Short", "pin", pins[0], "pin 1 mm short: does not reach the ring"),)
    return Assembly("bayonet_structure", "bayonet", tuple(parts), spares,
                    "Four pins under a bayonet lock ring, a barrel through the ring, a cap on top.")


ASSEMBLIES = {"bayonet_structure": bayonet_structure}

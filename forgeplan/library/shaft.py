"""Shaft stacks: rings threaded on a shaft, held by a coupled retaining clip and a nut."""

from __future__ import annotations

from ..assembly import Assembly, SparePart
from .voxels import box, coupled_lock, part, ring


def shaft_stack() -> Assembly:
    p = "ShaftStack_Part"
    housing, shaft, nut, clip = f"{p}01_Housing", f"{p}02_Shaft", f"{p}08_Nut", f"{p}07_Clip"
    rings = [(f"{p}03_Bearing", "bearing"), (f"{p}04_Gear", "gear"), (f"{p}05_Spacer", "spacer"), (f"{p}06_Bearing", "bearing")]
    parts = [
        part(housing, "housing", box(0, 0, 0, 3, 1, 3), dirs=("+y",)),
        part(shaft, "shaft", box(1, 1, 1, 2, 8, 2), dirs=("+y",), supports=(housing,)),
    ]
    below = housing
    for level, (rid, kind) in enumerate(rings, start=1):
        parts.append(part(rid, kind, ring(0, level, 0, 3), dirs=("+y",), supports=(below, shaft)))
        below = rid
    parts.append(part(clip, "lock", ring(0, 5, 0, 3), dirs=("+y",), supports=(below,),
                      lock=coupled_lock(tuple(r for r, _ in rings[1:]), (0.0, 0.5, 0.0), (0.0, 45.0, 0.0))))
    parts.append(part(nut, "nut", box(1, 8, 1, 2, 9, 2), dirs=("+y",), supports=(shaft,)))
    spares = (SparePart(f"{p}04_Gear_WrongTeeth", "gear", rings[1][0], "gear with 23 instead of 24 teeth"),)
    return Assembly("shaft_stack", "shaft_stack", tuple(parts), spares,
                    "Bearings, gear and spacer on a shaft over a housing, a coupled clip and a nut on top.")


ASSEMBLIES = {"shaft_stack": shaft_stack}

"""Wheel hubs on a horizontal spindle (axis z), secured by a castle nut and a cotter pin.

Outward from the knuckle: inner bearing, hub (bearing seats with a shoulder between them, a flange
with studs), wheels on the studs under lug nuts, outer bearing, washer, castle nut, a cotter pin
through the nut's crown, and a dust cap over it all. The pin only comes out along its own axis and
only once the cap is off; the chain from the cap to the spindle is the whole depth of the hub.
"""

from __future__ import annotations

from ..model.assembly import Assembly, Part, SparePart
from .voxels import box, carve, coupled_lock, frame, part, part_id, rotate_lock, union

SIZE, C = 9, 4                                  # flange footprint and spindle column
OUT = ("+z",)                                   # everything on the spindle slides off outward
STUDS = ((1, 1), (7, 1), (1, 7), (7, 7))


def _collar(z: int, size: int = 3) -> frozenset:
    """A square collar of `size` around the spindle column, one voxel thick along z."""
    o = C - size // 2
    return frame((o, o, z), (o + size, o + size, z + 1), "z")


def _hub(assembly_id: str, camel: str, wheels: int, lock_on: str, description: str) -> Assembly:
    """`lock_on` is "nut" (a turning castle nut, the lock) or "cap" (a twist-off dust cap, the lock)."""
    ids: list[str] = []

    def new_id(kind: str) -> str:
        ids.append(part_id(camel, len(ids) + 1, kind))
        return ids[-1]

    spindle, inner, hub = new_id("Spindle"), new_id("Bearing"), new_id("Hub")
    wheel_ids = [new_id("Wheel") for _ in range(wheels)]
    lug_ids = [new_id("LugNut") for _ in STUDS]
    outer, washer = new_id("Bearing"), new_id("Washer")
    nut = new_id("Lock" if lock_on == "nut" else "CastleNut")
    pin = new_id("CotterPin")
    cap = new_id("Lock" if lock_on == "cap" else "DustCap")

    zl = 2 + 2 * wheels                           # lug nuts and outer bearing
    column = box(C, C, 1, C + 1, C + 1, zl + 3)
    studs = union(*(box(x, y, 2, x + 1, y + 1, zl) for x, y in STUDS))
    body = carve(box(2, 2, 1, 7, 7, zl + 1), column, _collar(1), _collar(zl))
    flange = box(0, 0, 1, SIZE, SIZE, 2) - box(2, 2, 1, 7, 7, 2)
    cotter = box(C, C - 1, zl + 3, C + 1, C + 2, zl + 4)
    nut_shape = carve(union(_collar(zl + 2), _collar(zl + 3)), cotter)
    cap_shape = union(frame((2, 2, zl + 3), (7, 7, zl + 4), "z"), box(2, 2, zl + 4, 7, 7, zl + 5))

    def lug(x: int, y: int) -> frozenset:
        return union(box(x - 1, y, zl, x + 2, y + 1, zl + 1), box(x, y - 1, zl, x + 1, y + 2, zl + 1))

    nut_lock = rotate_lock((washer, outer), "z", 60) if lock_on == "nut" else None
    cap_lock = coupled_lock((pin,), (0.0, 0.0, 0.5), (0.0, 0.0, 30.0)) if lock_on == "cap" else None
    parts: list[Part] = [
        part(spindle, "spindle", union(box(0, 0, 0, SIZE, SIZE, 1), column), dirs=("-z",)),
        part(inner, "bearing", _collar(1), dirs=OUT, supports=(spindle,)),
        part(hub, "hub", union(body, flange, studs), dirs=OUT, supports=(inner,)),
        *[part(wid, "wheel", carve(box(0, 0, 2 + 2 * j, SIZE, SIZE, 4 + 2 * j) - box(2, 2, 0, 7, 7, zl), studs), dirs=OUT, supports=(hub,))
          for j, wid in enumerate(wheel_ids)],
        *[part(lid, "lug_nut", lug(x, y), dirs=OUT, supports=(hub,)) for lid, (x, y) in zip(lug_ids, STUDS)],
        part(outer, "bearing", _collar(zl), dirs=OUT, supports=(hub,)),
        part(washer, "washer", _collar(zl + 1), dirs=OUT, supports=(outer,)),
        part(nut, "lock" if nut_lock else "nut", nut_shape, dirs=OUT, supports=(washer,), lock=nut_lock),
        part(pin, "pin", cotter, dirs=("+y", "-y"), supports=(nut,)),
        part(cap, "lock" if cap_lock else "cap", cap_shape, dirs=OUT, lock=cap_lock),
    ]
    spares = (SparePart(f"{lug_ids[0]}_Metric", "lug_nut", lug_ids[0], "M12 nut on a 1/2-inch stud"),
              SparePart(f"{pin}_Reused", "pin", pin, "a reused, fatigued cotter pin"),
              SparePart(f"{outer}_Inner", "bearing", outer, "the inner bearing's larger cone in the outer seat"))
    return Assembly(assembly_id, "wheel_hub", tuple(parts), spares, description)


def wheel_hub() -> Assembly:
    return _hub("wheel_hub", "WheelHub", 1, "nut",
                "Trailer wheel hub: bearings, hub with studs, one wheel under four lug nuts, a turning castle nut, "
                "cotter pin and dust cap.")


def wheel_hub_dual() -> Assembly:
    return _hub("wheel_hub_dual", "WheelHubDual", 2, "cap",
                "Dual-wheel hub: two wheels on long studs; a twist-off dust cap locks the cotter pin in the castle nut.")


ASSEMBLIES = {"wheel_hub": wheel_hub, "wheel_hub_dual": wheel_hub_dual}

"""Shaft stacks: rings threaded on a vertical shaft over a housing, held by clips and lock nuts.

Each ring rests on the one below and on the shaft, so the stack comes apart top down and the
blocking depth grows with the ring count. The identities differ in ring count and sizes (a wide gear
plate, a keyed pulley), in the lock kinds (coupled clip, turning lock nut, both) and in which rings
each lock holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.assembly import Assembly, Part, SparePart
from .voxels import box, coupled_lock, frame, part, part_id, ring, rotate_lock, union

CLIP_UNLOCK = ((0.0, 0.5, 0.0), (0.0, 45.0, 0.0))


@dataclass(frozen=True)
class Ring:
    """One element threaded on the shaft: `size` is its square footprint, `keyed` adds a side key."""

    kind: str
    size: int = 3
    keyed: bool = False


def _ring_voxels(r: Ring, level: int, half: int) -> frozenset:
    """The ring's voxels centred on the shaft column (half, half) at height `level`."""
    o = half - r.size // 2
    shape = frame((o, level, o), (o + r.size, level + 1, o + r.size), "y", width=r.size // 2)
    if r.keyed:  # a key on one side: the pulley goes on one way round only
        shape = union(shape, box(o + r.size, level, half, o + r.size + 1, level + 1, half + 1))
    return shape


def _stack(assembly_id: str, camel: str, rings: list[Ring], locks: list[tuple[int, str, list[int]]],
           description: str, spares: list[tuple[int, str, str]]) -> Assembly:
    """Housing, shaft, `rings` bottom up, lock rings inserted at given levels, an end nut on top.

    `locks` lists (position in the stack, "coupled" | "rotate", indices of the rings it holds);
    `spares` lists (ring index, kind suffix, difference).
    """
    width = max(r.size for r in rings)
    half = width // 2
    housing, shaft = part_id(camel, 1, "Housing"), part_id(camel, 2, "Shaft")
    lock_at = {pos: (kind, held) for pos, kind, held in locks}
    pending = iter(rings)
    stack: list[tuple[str, Ring, tuple[str, list[int]] | None]] = []  # bottom up: id, ring, lock spec
    for pos in range(len(rings) + len(locks)):
        if pos in lock_at:
            stack.append((part_id(camel, pos + 3, "Lock"), Ring("lock"), lock_at[pos]))
        else:
            r = next(pending)
            stack.append((part_id(camel, pos + 3, r.kind.capitalize()), r, None))
    ring_ids = [pid for pid, _, spec in stack if spec is None]
    height = len(stack) + 1
    parts: list[Part] = [
        part(housing, "housing", box(0, 0, 0, width, 1, width), dirs=("+y",)),
        part(shaft, "shaft", box(half, 1, half, half + 1, height + 1, half + 1), dirs=("+y",), supports=(housing,)),
    ]
    below = housing
    for level, (pid, r, spec) in enumerate(stack, start=1):
        lock = None
        if spec is not None:
            holds = tuple(ring_ids[i] for i in spec[1])
            lock = coupled_lock(holds, *CLIP_UNLOCK) if spec[0] == "coupled" else rotate_lock(holds, "y", 60)
        parts.append(part(pid, r.kind, _ring_voxels(r, level, half), dirs=("+y",), supports=(below, shaft), lock=lock))
        below = pid
    nut = part_id(camel, len(stack) + 3, "Nut")
    parts.append(part(nut, "nut", box(half, height + 1, half, half + 1, height + 2, half + 1), dirs=("+y",), supports=(shaft,)))
    spare_parts = tuple(SparePart(f"{ring_ids[i]}_{suffix}", rings[i].kind, ring_ids[i], diff) for i, suffix, diff in spares)
    return Assembly(assembly_id, "shaft_stack", tuple(parts), spare_parts, description)


def shaft_stack() -> Assembly:
    """Bearings, gear and spacer on a shaft over a housing, a coupled clip and a nut on top.

    The foundation's first assembly, kept exactly as it was (ids, geometry, graphs): its clip is
    named Clip and its shaft stands two voxels proud of the stack, unlike the `_stack` builds.
    """
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
                      lock=coupled_lock(tuple(r for r, _ in rings[1:]), *CLIP_UNLOCK)))
    parts.append(part(nut, "nut", box(1, 8, 1, 2, 9, 2), dirs=("+y",), supports=(shaft,)))
    spares = (SparePart(f"{p}04_Gear_WrongTeeth", "gear", rings[1][0], "gear with 23 instead of 24 teeth"),)
    return Assembly("shaft_stack", "shaft_stack", tuple(parts), spares,
                    "Bearings, gear and spacer on a shaft over a housing, a coupled clip and a nut on top.")


def shaft_stack_3() -> Assembly:
    return _stack("shaft_stack_3", "ShaftStack3",
                  [Ring("bearing"), Ring("gear", 5), Ring("bearing")], [(3, "rotate", [1, 2])],
                  "A wide gear plate between two bearings, held by a turning lock nut; an end nut on the shaft.",
                  [(1, "WrongModule", "gear of module 1.5 instead of 1.0")])


def shaft_stack_5() -> Assembly:
    return _stack("shaft_stack_5", "ShaftStack5",
                  [Ring("bearing"), Ring("spacer"), Ring("gear", 5), Ring("pulley", 3, keyed=True), Ring("bearing")],
                  [(5, "coupled", [2, 3, 4])],
                  "Bearing, spacer, wide gear, keyed pulley and bearing under a coupled clip and an end nut.",
                  [(3, "Unkeyed", "pulley without the keyway"), (0, "Sealed", "sealed bearing of the wrong width")])


def shaft_stack_6() -> Assembly:
    return _stack("shaft_stack_6", "ShaftStack6",
                  [Ring("bearing"), Ring("gear", 5), Ring("spacer"), Ring("pulley", 3, keyed=True), Ring("gear", 5, keyed=True), Ring("bearing")],
                  [(3, "coupled", [0, 1, 2]), (7, "rotate", [3, 4, 5])],
                  "Six elements in two groups: a coupled clip holds the lower three, a lock nut the upper three.",
                  [(1, "WrongTeeth", "gear with 31 instead of 32 teeth"), (3, "Unkeyed", "pulley without the keyway"),
                   (5, "Open", "open bearing where a shielded one belongs")])


ASSEMBLIES = {"shaft_stack": shaft_stack, "shaft_stack_3": shaft_stack_3, "shaft_stack_5": shaft_stack_5,
              "shaft_stack_6": shaft_stack_6}

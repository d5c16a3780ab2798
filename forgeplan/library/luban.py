"""Three-piece Luban locks: a beam with a window, a bar through the window, a key pin through both.

The key pin runs perpendicular to both sticks through bores in the beam's walls and in the bar, so
while it is in, neither stick can slide; it comes out along its own axis, then the bar slides out
of the window along its length, and the beam is free. No lock mechanism: the key is geometric.
"""

from __future__ import annotations

from ..model.assembly import Assembly, SparePart
from .voxels import box, carve, part, part_id


def _luban(assembly_id: str, camel: str, beam_len: int, window: tuple[int, int], thickness: int,
           bar_len: int, key_x: int, description: str) -> Assembly:
    """Beam along x (window [w0,w1) through it along y), bar along y in the window, key pin along z.

    The beam is `thickness` deep in y and 4 tall in z with walls at z=0 and z=3; the key pin sits at
    column x=`key_x`, y=thickness//2 and pierces both walls and the bar.
    """
    beam_id, bar_id, key_id = part_id(camel, 1, "Beam"), part_id(camel, 2, "Bar"), part_id(camel, 3, "Key")
    w0, w1 = window
    ky = thickness // 2
    key = box(key_x, ky, -2, key_x + 1, ky + 1, 6)
    beam = carve(box(0, 0, 0, beam_len, thickness, 4), box(w0, 0, 1, w1, thickness, 3), key)
    y0 = ky - bar_len // 2
    bar = carve(box(w0, y0, 1, w1, y0 + bar_len, 3), key)
    parts = (
        part(beam_id, "beam", beam),
        part(bar_id, "bar", bar, dirs=("+y", "-y")),
        part(key_id, "key", key, dirs=("+z", "-z")),
    )
    spares = (SparePart(part_id(camel, 3, "Key_Tapered"), "key", key_id, "key pin with a tapered end: works loose"),
              SparePart(part_id(camel, 2, "Bar_Undersize"), "bar", bar_id, "bar 0.5 mm undersize: rattles in the window"))
    return Assembly(assembly_id, "luban3", parts, spares, description)


def luban_lock_3() -> Assembly:
    """Centred window and key: every piece has a two-fold symmetry."""
    return _luban("luban_lock_3", "LubanLock3", beam_len=9, window=(3, 6), thickness=3, bar_len=9, key_x=4,
                  description="Three-piece Luban lock: beam with a centred window, bar through it, key pin through both.")


def luban_lock_3_offset() -> Assembly:
    """Off-centre window and key: beam and bar fit one way round only."""
    return _luban("luban_lock_3_offset", "LubanLockOffset", beam_len=10, window=(2, 4), thickness=4, bar_len=8, key_x=2,
                  description="Three-piece Luban lock with an off-centre window and key: asymmetric beam and bar.")


ASSEMBLIES = {"luban_lock_3": luban_lock_3, "luban_lock_3_offset": luban_lock_3_offset}

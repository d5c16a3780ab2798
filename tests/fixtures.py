"""A small hand-built assembly with every mechanism, for precise legality tests.

    y=2  Cover  Cover  Cover   | Latch (rotate lock about x, 90 deg, holds Cover)
    y=1  .      Pin    .       | Clip  (coupled lock at x=-1, holds Pin)
    y=0  Base   Base   Base    |
Key: an asymmetric piece at z=2..3 (for orientation faults). Spare: Pin_Bent for Pin.
"""

from forgeplan.library.voxels import box, coupled_lock, part, rotate_lock
from forgeplan.model.assembly import Assembly, SparePart

BASE, PIN, COVER, LATCH, CLIP, KEY, BENT = "Fx_Part01_Base", "Fx_Part02_Pin", "Fx_Part03_Cover", "Fx_Part04_Latch", "Fx_Part05_Clip", "Fx_Part06_Key", "Fx_Part02_Pin_Bent"


def fixture_assembly() -> Assembly:
    key = frozenset({(0, 0, 2), (1, 0, 2), (2, 0, 2), (2, 1, 2), (1, 0, 3)})
    return Assembly("fixture_latch", "fixture", (
        part(BASE, "base", box(0, 0, 0, 3, 1, 1), dirs=("+y",)),
        part(PIN, "pin", box(1, 1, 0, 2, 2, 1), dirs=("+y",), supports=(BASE,)),
        part(COVER, "cover", box(0, 2, 0, 3, 3, 1), dirs=("+y",)),
        part(LATCH, "lock", box(3, 0, 0, 4, 3, 1), dirs=("+x",), lock=rotate_lock((COVER,), "x", 90)),
        part(CLIP, "lock", box(-1, 0, 0, 0, 3, 1), dirs=("-x",), lock=coupled_lock((PIN,), (0, 0.5, 0), (0, 0, 45))),
        part(KEY, "key", key, dirs=("+z",)),
    ), (SparePart(BENT, "pin", PIN, "bent pin"),))

"""The built-in assembly library: one builder per assembly id, grouped by family modules.

Builders are code, not hand-typed voxel lists: each family module composes voxel boxes
(`forgeplan.library.voxels`) so that the geometry-derived graphs follow from the shapes. Every
identity but two comes apart with straight moves: one part at a time, except the Luban locks
burr_6_split and burr_6_pairs, which come apart only when groups of pieces slide out together
(`separate`/`join`, encodings/SEMANTICS.md §5), like most real level-1 burrs. The two others,
burr_6_level4 and burr_6_level5 (`burr.LEVELS`), are the project's own burrs of BurrTools level 4
and 5: pieces slide part way (`slide`, SEMANTICS.md §9) before the first one comes out (which built-ins need
what is the grounded task's answer, `semantics.grounded.assembly_capabilities`, not a list kept here). Removal directions are restricted
where the physical part only has one way out (pins along their axis, parts on a spindle outward,
parts standing on a table or floor never downward).

Families (`Assembly.family`) and their identities, 28 in all:

| family          | module   | identities | what varies                                              |
|-----------------|----------|-----------:|----------------------------------------------------------|
| bayonet         | bayonet  | 3 | pin count 3/4/6, rotate or coupled ring, cap or screwed cover     |
| shaft_stack     | shaft    | 4 | 3..6 rings, wide and keyed rings, clip / lock nut / both          |
| luban3          | luban    | 2 | three-piece Luban lock, centred or off-centre key                 |
| burr6           | burr     | 5 | six-piece burrs: a solid one with a key; a solid and a hollow one needing group moves; levels 4 and 5 |
| dovetail_box    | dovetail | 3 | drawer with a locking bar, lidded box, divided chest              |
| mortise_tenon   | mortise  | 3 | pegged frame, frame-and-panel door, wedged trestle                |
| drawer_cabinet  | cabinet  | 3 | 2/3/4 drawers on shelves, one or two locking bars, open or backed |
| nested_boxes    | nested   | 2 | 3 or 4 lidded boxes, square or oblong, latched outer lid          |
| wheel_hub       | hub      | 2 | one or two wheels; castle nut or dust cap is the lock             |
| jigsaw          | jigsaw   | 1 | flat panel, every piece lifts straight off (blocking depth 1)     |

Every family but burr6 has at most 4 identities. wheel_hub (2) and jigsaw (1) share no structure with any
other family (an axle stack along z; a flat panel with no depth), nested_boxes (2) hardly any, so
these are the natural test-only families for the benchmark; luban3 is kin to burr6. Blocking depth
runs from 1 (jigsaw_panel) to 10 (shaft_stack_6, nested_boxes_4).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from ..model.assembly import Assembly
from . import bayonet, burr, cabinet, dovetail, hub, jigsaw, luban, mortise, nested, shaft

FAMILY_MODULES = (bayonet, shaft, luban, burr, dovetail, mortise, cabinet, nested, hub, jigsaw)

# assembly id -> builder; order is the listing order of `forgeplan assemblies`
BUILTIN: dict[str, Callable[[], Assembly]] = {}
for _module in FAMILY_MODULES:
    BUILTIN.update(_module.ASSEMBLIES)


@lru_cache(maxsize=None)
def build(assembly_id: str) -> Assembly:
    return BUILTIN[assembly_id]()

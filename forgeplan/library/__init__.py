"""The built-in assembly library: one builder per assembly id, grouped by family modules.

Builders are code, not hand-typed voxel lists: each family module composes voxel boxes
(`forgeplan.library.voxels`) so that the geometry-derived graphs follow from the shapes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from ..assembly import Assembly
from . import bayonet, shaft

# assembly id -> builder; order is the listing order of `forgeplan assemblies`
BUILTIN: dict[str, Callable[[], Assembly]] = {}
for _module in (bayonet, shaft):
    BUILTIN.update(_module.ASSEMBLIES)


@lru_cache(maxsize=None)
def build(assembly_id: str) -> Assembly:
    return BUILTIN[assembly_id]()

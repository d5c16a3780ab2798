"""Synthetic scaling assemblies: a fault under a blocking chain of a given depth, among filler parts.

The chain is a staircase of two-voxel bars that leave only upwards (+y): bar k rests on bar k-1 and
covers its right half, so each bar is blocked by the next one only and the bottom bar is buried under
`depth` others. Filler parts are unit cubes stacked in columns away from the chain (they block each
other, never the chain), so they grow the assembly without growing the dependency closure. Used by
`python -m lab solve` and the PDDL cross-check; the optimum of a fault at the bottom of the chain is
known in closed form (e.g. missing part: J_move = depth + 1, c = 2 depth + 1).
"""

from __future__ import annotations

import random

from ..library.voxels import box, part
from ..model.assembly import Assembly, SparePart
from ..model.errors import InputError
from ..model.state import State, Tolerances
from ..semantics.faults import FaultSpec, candidates, inject
from ..semantics.engine import World
from ..semantics.task import Task

FILLER_COLUMN = 4   # filler cubes per column


def chain_part_id(k: int) -> str:
    """Bar k of the chain (0 = the bottom bar, the one the faults hit)."""
    return f"Chain_Bar{k:03d}"


def chain_assembly(parts: int, depth: int) -> Assembly:
    """`parts` parts in all: a chain of `depth` bars over the bottom bar, and filler cubes."""
    if depth < 1 or parts < depth + 1:
        raise InputError(f"a chain of depth {depth} needs depth >= 1 and at least depth + 1 parts (got {parts})",
                         field="parts")
    chain = [part(chain_part_id(k), "bar", box(k, k, 0, k + 2, k + 1, 1), dirs=("+y",),
                  supports=(chain_part_id(k - 1),) if k else ()) for k in range(depth + 1)]
    fillers = []
    for j in range(parts - depth - 1):
        col, level = divmod(j, FILLER_COLUMN)
        fillers.append(part(f"Filler_{j:03d}", "block", box(col, level, 3, col + 1, level + 1, 4), dirs=("+y",),
                            supports=(f"Filler_{j - 1:03d}",) if level else ()))
    spare = SparePart(f"{chain_part_id(0)}_Warped", "bar", chain_part_id(0), "warped bar: does not seat")
    return Assembly(f"chain_{parts}_{depth}", "synthetic_chain", tuple(chain + fillers), (spare,),
                    f"Staircase chain of depth {depth} over a bottom bar, {parts - depth - 1} filler cubes.",
                    source="synthetic")


def chain_task(parts: int, depth: int, fault: str = "missing_part", seed: int = 0) -> Task:
    """A task on `chain_assembly(parts, depth)` with one fault of type `fault` on the bottom bar.

    Built like `faults.make_task`, but the initial state is written down directly: the bottom bar
    is the first part of the natural assembly sequence (chain upwards, then the filler columns), so
    nothing was verified before it. (The general sequence search takes seconds at 200 parts.)
    """
    asm = chain_assembly(parts, depth)
    spec = FaultSpec.parse(f"{fault}:{chain_part_id(0)}")
    world = World(asm, Tolerances())
    if 0 not in candidates(world, spec.type):
        raise InputError(f"the bottom bar cannot carry a fault of type {spec.type}", field="fault")
    actual = inject(world, world.target_state(), 0, spec.type, random.Random(seed))
    initial = State(world.empty_slot(i) for i in range(len(world.ids)))
    return Task(f"{asm.assembly_id}_{fault}_{seed}", asm, Tolerances(), initial, actual, world.target_state(), world)

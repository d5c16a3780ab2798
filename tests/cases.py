"""The one registry of test cases shared by the engine, ASP, PDDL, grammar and verifier tests.

A case is (name, task). Tasks are built deterministically from the built-in library: every assembly x
every applicable fault type x a few seeds, plus multi-fault, boundary no-fault and plain no-fault tasks.
"""

from __future__ import annotations

from functools import lru_cache

from forgeplan.io.catalog import load_assembly
from forgeplan.library import BUILTIN
from forgeplan.model.state import Tolerances
from forgeplan.semantics.diagnosis import MISTAKE_TYPES
from forgeplan.semantics.faults import FaultSpec, candidates, make_task
from forgeplan.semantics.task import Task, world_for


@lru_cache(maxsize=None)
def all_cases(seeds: int = 2) -> tuple[tuple[str, Task], ...]:
    out = []
    for asm_id in BUILTIN:
        asm = load_assembly(asm_id)
        world = world_for(asm, Tolerances())
        out.append((f"{asm_id}/nofault", make_task(asm, [], seed=0)))
        out.append((f"{asm_id}/boundary", make_task(asm, [], seed=1, boundary=True)))
        for ftype in MISTAKE_TYPES:
            if not candidates(world, ftype):
                continue
            for seed in range(seeds):
                out.append((f"{asm_id}/{ftype}/{seed}", make_task(asm, [FaultSpec(ftype)], seed=seed)))
        types = [t for t in MISTAKE_TYPES if candidates(world, t)]
        for seed in range(seeds):
            pair = [FaultSpec(types[seed % len(types)]), FaultSpec(types[(seed + 2) % len(types)])]
            out.append((f"{asm_id}/multi/{seed}", make_task(asm, pair, seed=100 + seed)))
    return tuple(out)


def fault_cases(seeds: int = 2) -> tuple[tuple[str, Task], ...]:
    return tuple(c for c in all_cases(seeds) if not c[0].endswith(("/nofault", "/boundary")))

"""Fault tasks inside real level-1 burr puzzles: the puzzles, and a fault on the piece the main body grows from.

Shared by `python -m lab pddl-groups` and the tests that run Fast Downward and clingo on real burrs.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..geometry.separation import main_body
from ..model.errors import InputError
from ..model.state import Tolerances
from ..semantics.faults import FaultSpec, candidates, make_task
from ..semantics.engine import World

FAULTS = ("missing_part", "wrong_orientation")


def level1_puzzles(folder: Path) -> list[Path]:
    """The puzzles of `folder` marked `level1_disassembly` (straight moves suffice), sorted by name."""
    found = sorted(p for p in Path(folder).glob("*.json") if json.loads(p.read_text(encoding="utf-8")).get("level1_disassembly"))
    if not found:
        raise InputError("no level-1 puzzles (level1_disassembly: true) here", file=str(folder))
    return found


def inner_part(world, ftype: str) -> str | None:
    """The piece a fault "inside" the puzzle goes to: the first that can carry it in the order the main
    body grows (the core, which every two-handed disassembly keeps to the end, comes first) and that
    no straight move frees while the puzzle is assembled."""
    able = {world.ids[i] for i in candidates(world, ftype)}
    target = world.target_state()
    return next((p for p in main_body(world.assembly).insertion_order
                 if p in able and world.free_direction(target, world.index[p]) is None), None)


def fault_task(asm, ftype: str):
    """(piece, task) with `ftype` on the inner piece of `asm`, or None when no inner piece can carry it."""
    world = World(asm, Tolerances())
    pid = inner_part(world, ftype)
    return None if pid is None else (pid, make_task(asm, [FaultSpec(ftype, pid)], seed=0, world=world))

"""Geometry checks an assembly must pass before it is used: no overlaps, sound supports, disassemblable."""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter

from ..model.assembly import Assembly
from ..model.errors import AssemblyError
from .relations import contact_relation
from .partial import Budget, partial_verdict
from .separation import disassembly_verdict


def check_geometry(asm: Assembly, *, disassembly: bool = True, partial_moves: bool = False,
                   budget: Budget | None = None) -> None:
    """Reject overlapping voxels, supports without contact or in a cycle, and (unless `disassembly` is
    False) assemblies that straight single-part and group moves cannot take apart; with `partial_moves`
    those that partial moves take apart completely pass too (SEMANTICS §9), found within `budget`
    (an assembly the budget leaves undecided is refused)."""
    owner: dict = {}
    for p in asm.parts:
        for v in p.voxels:
            if v in owner:
                raise AssemblyError(f"parts {owner[v]} and {p.part_id} overlap at voxel {list(v)}",
                                    file=f"assembly {asm.assembly_id}")
            owner[v] = p.part_id
    contacts = contact_relation(asm)
    for p in asm.parts:
        for s in p.supports:
            if (p.part_id, s) not in contacts and (s, p.part_id) not in contacts:
                raise AssemblyError(f"support {s} of {p.part_id} is not in face contact with it",
                                    file=f"assembly {asm.assembly_id}")
    try:  # the standard library's sorter: loading a task stays clear of networkx's import time
        TopologicalSorter({p.part_id: p.supports for p in asm.parts}).prepare()
    except CycleError as exc:
        cycle = list(reversed(exc.args[1][1:]))  # support -> supported, as the support graph's edges run
        raise AssemblyError(f"supports form a cycle: {cycle}", file=f"assembly {asm.assembly_id}") from None
    if disassembly:
        verdict = disassembly_verdict(asm)
        if verdict["disassemblable"]:
            return
        partial = partial_verdict(asm, budget=budget) if partial_moves else None
        if partial is not None and partial["mode"] == "undecided":
            raise AssemblyError("straight moves do not take it apart, and the partial-move search stopped at "
                                f"{partial['budget']['limit']} without a way to separate it (`forgeplan assemblies "
                                "--check FILE --time-limit S` searches longer)", file=f"assembly {asm.assembly_id}")
        if partial is None or not partial["disassemblable"]:
            raise AssemblyError(verdict["verdict"], file=f"assembly {asm.assembly_id}")

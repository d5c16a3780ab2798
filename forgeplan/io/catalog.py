"""The assembly catalog: a built-in assembly by id or an assembly JSON file by path, and that file format."""

from __future__ import annotations

import json
from pathlib import Path

from ..geometry.checks import check_geometry
from ..geometry.partial import LOAD_POSITIONS, Budget
from ..library import BUILTIN, build
from ..model.assembly import Assembly, LockMechanism, Part, Pose, SparePart, validate_assembly
from ..model.errors import UnknownAssembly
from .guarded import read_json
from .output import write_text
from .schema import AssemblyFileModel, parse_model

ASSEMBLY_SCHEMA_VERSION = "1.0"


def mechanism_json(lk: LockMechanism) -> dict:
    """A lock's kind, the parts it holds and, for a rotate lock, its turn (shared by assembly and task files)."""
    d: dict = {"kind": lk.kind, "holds": list(lk.holds)}
    if lk.kind == "rotate":
        d.update(axis=lk.axis, angle_deg=lk.angle_deg)
    return d


def assembly_to_json(asm: Assembly) -> dict:
    def lock_json(lk: LockMechanism | None):
        if lk is None:
            return None
        d = mechanism_json(lk)
        if lk.kind == "coupled":
            d["unlocked_offset"] = lk.unlocked_offset.to_json()  # type: ignore[union-attr]  # a coupled lock has an unlocked offset (checked by Assembly.validate)
        return d

    return {
        "schema_version": ASSEMBLY_SCHEMA_VERSION,
        "assembly_id": asm.assembly_id,
        "family": asm.family,
        "description": asm.description,
        "source": asm.source,
        "parts": [
            {"part_id": p.part_id, "kind": p.kind, "voxels": [list(v) for v in sorted(p.voxels)],
             "removal_dirs": list(p.removal_dirs), "supports": list(p.supports), "lock": lock_json(p.lock)}
            for p in asm.parts
        ],
        "spares": [{"part_id": w.part_id, "kind": w.kind, "variant_of": w.variant_of, "difference": w.difference}
                   for w in asm.spares],
    }


def assembly_from_json(data: dict, file: str) -> Assembly:
    m = parse_model(AssemblyFileModel, data, file)
    parts = []
    for p in m.parts:
        lock = None
        if p.lock is not None:
            off = p.lock.unlocked_offset
            lock = LockMechanism(
                kind=p.lock.kind, holds=tuple(p.lock.holds), axis=p.lock.axis, angle_deg=p.lock.angle_deg,
                unlocked_offset=Pose(tuple(off.position), tuple(off.rotation)) if off else None,
            )
        parts.append(Part(p.part_id, p.kind, frozenset(tuple(v) for v in p.voxels), lock,
                          tuple(p.removal_dirs), tuple(p.supports)))
    spares = tuple(SparePart(w.part_id, w.kind, w.variant_of, w.difference) for w in m.spares)
    return Assembly(m.assembly_id, m.family, tuple(parts), spares, m.description, m.source)


def load_assembly(ref: str | Path, *, check_disassembly: bool = True) -> Assembly:
    """A built-in assembly by id, or an assembly JSON file by path; validated and geometry-checked (it must
    come apart, with straight moves or with partial moves)."""
    key = str(ref)
    if key in BUILTIN:
        asm = build(key)
    else:
        path = Path(key)
        if not key or not path.is_file():
            raise UnknownAssembly(f"unknown assembly {key!r}: not a built-in id (see `forgeplan assemblies`) and not a file")
        data = read_json(path, "assembly file")
        asm = assembly_from_json(data, str(path))
    validate_assembly(asm)
    # a file's partial-move search runs under the loading budget, as a task folder's does; a built-in's needs none
    budget = None if key in BUILTIN else Budget(LOAD_POSITIONS)
    check_geometry(asm, disassembly=check_disassembly, partial_moves=True, budget=budget)
    return asm


def load_checkable(ref: str | Path) -> Assembly:
    """What `assemblies --check` accepts: a built-in id, an assembly JSON file, or a puzzle file (a data/burr
    JSON puzzle, recognised by its `pieces`, or a BurrTools `.xmpuzzle`), imported as `import` would. Not
    checked for disassembly: the caller reports how the assembly comes apart."""
    from .importers import import_puzzle

    path = Path(str(ref))
    if str(ref) not in BUILTIN and path.is_file():
        if path.suffix.lower() == ".xmpuzzle":
            return import_puzzle(path)
        data = read_json(path, "assembly file")
        if isinstance(data, dict) and "pieces" in data and "parts" not in data:
            return import_puzzle(path)
    return load_assembly(ref, check_disassembly=False)


def save_assembly(asm: Assembly, path: Path) -> None:
    write_text(path, json.dumps(assembly_to_json(asm), indent=1) + "\n")

"""Where a benchmark's assemblies come from: built-in ids or assembly JSON files (`forgeplan import`).

Every assembly is loaded once, in the parent process, and the `Assembly` itself travels to the
workers: an imported assembly is never looked up again by id. The manifest records each origin (the
built-in id, or the file path and the SHA-256 of its bytes) so that a build can be reproduced.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..geometry.checks import check_geometry
from ..io.catalog import assembly_from_json, load_assembly
from ..io.guarded import decode, loads, read_bytes
from ..library import BUILTIN
from ..model.assembly import Assembly, validate_assembly
from ..model.errors import AssemblyError, InputError
from ..semantics.grounded import assemblies_by_kind

OPTION = "--assemblies"
# assembly ids become task folder names (`<id>_<split>_<index>`): no separators, no dot-names
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Source:
    """A loaded assembly and where it came from (`origin` goes into the manifest)."""

    assembly: Assembly
    origin: dict

    @property
    def label(self) -> str:
        return self.origin.get("path", f"built-in {self.assembly.assembly_id}")


def load_sources(items: list[str | Path] | None) -> dict[str, Source]:
    """Assemblies by id (sorted) from built-in ids and file paths; default: every built-in.

    Rejects unknown items, invalid files, duplicate ids and libraries too small to split.
    """
    out: dict[str, Source] = {}
    for item in list(BUILTIN) if items is None else items:
        src = load_source(item)
        aid = src.assembly.assembly_id
        if aid in out:
            file = src.origin.get("path")
            raise InputError(f"assembly id {aid!r} is given twice ({out[aid].label} and {src.label}); "
                             "every assembly needs its own id", file=file, field="assembly_id" if file else OPTION)
        out[aid] = src
    _check_splittable(out)
    return dict(sorted(out.items()))


def load_source(item: str | Path) -> Source:
    """A built-in id, else a path to an assembly JSON file (recorded as given)."""
    item = str(item)
    if item in BUILTIN:
        asm = load_assembly(item)
        return Source(asm, {"assembly_id": item, "family": asm.family, "origin": "built-in"})
    path = Path(item)
    if not path.is_file():
        raise InputError("no such assembly file, and not a built-in id (see `forgeplan assemblies`)",
                         file=item, field=OPTION)
    raw = read_bytes(path, "assembly file")
    asm = _checked(assembly_from_json(_parse(raw, path), str(path)), path)
    return Source(asm, {"assembly_id": asm.assembly_id, "family": asm.family, "origin": "file", "path": item,
                        "sha256": hashlib.sha256(raw).hexdigest()})


def _parse(raw: bytes, path: Path) -> dict:
    """The JSON object of an assembly file; a puzzle file gets a pointer to `forgeplan import`."""
    data = loads(decode(raw, str(path), "assembly file"), str(path), kind="assembly file")
    if not isinstance(data, dict):
        raise InputError("expected an assembly JSON object", file=str(path), field="(top level)")
    if "pieces" in data and "parts" not in data:
        raise InputError("a puzzle file, not an assembly file: convert it with "
                         f"`forgeplan import {path} --out ASSEMBLY.json`", file=str(path), field="parts")
    return data


def _checked(asm: Assembly, path: Path) -> Assembly:
    """Id, family, static and geometric checks (straight-move disassembly), errors naming the file."""
    if not SAFE_ID.match(asm.assembly_id):
        raise InputError(f"{asm.assembly_id!r} must be letters, digits, '_' or '-' (it names task folders)",
                         file=str(path), field="assembly_id")
    if not asm.family.strip():
        raise InputError("must not be empty (the train/test split groups assemblies by family)",
                         file=str(path), field="family")
    try:
        validate_assembly(asm)
        check_geometry(asm)
    except InputError as exc:
        raise AssemblyError(exc.reason, file=str(path), field=exc.field or "parts") from None
    return asm


def _check_splittable(sources: dict[str, Source]) -> None:
    """The split needs an assembly for each side and a family the test side can hold out, among the
    assemblies that need no partial moves (those join as the expert tier, bench/composition.py)."""
    partial = assemblies_by_kind({a: s.assembly for a, s in sources.items()}).partial
    straight = {a: s for a, s in sources.items() if a not in partial}
    families = {s.assembly.family for s in straight.values()}
    if len(straight) < 2 or len(families) < 2:
        have = ", ".join(f"{a} ({s.assembly.family})" for a, s in sorted(straight.items())) or "none"
        raise InputError("need two or more assemblies of two or more families that need no partial moves for "
                         f"the assembly-disjoint train/test split; have {have}", field=OPTION)

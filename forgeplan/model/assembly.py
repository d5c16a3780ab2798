"""The assembly model: parts as unit voxels at their target pose, locks, spares.

An `Assembly` is plain frozen data. The built-in library (`forgeplan.library`) builds them in code;
`forgeplan.io.catalog.load_assembly` also reads the assembly JSON files that `forgeplan import` writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import AssemblyError
from .limits import MAX_COORD, MAX_LOCK_ANGLE, MAX_PARTS, MAX_VOXELS, MIN_LOCK_ANGLE
from .names import name_problem
from .rotations import triple

Voxel = tuple[int, int, int]
DIRECTIONS = ("+x", "-x", "+y", "-y", "+z", "-z")
DIRECTION_VECTORS = {
    "+x": (1, 0, 0), "-x": (-1, 0, 0), "+y": (0, 1, 0),
    "-y": (0, -1, 0), "+z": (0, 0, 1), "-z": (0, 0, -1),
}
LOCK_KINDS = ("rotate", "coupled")


@dataclass(frozen=True)
class Pose:
    """A position (scene units) and Euler rotation (degrees, extrinsic x-y-z)."""

    position: tuple[float, float, float]
    rotation: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def to_json(self) -> dict:
        return {"position": list(self.position), "rotation": list(self.rotation)}


@dataclass(frozen=True)
class LockMechanism:
    """How a lock part engages: turn about an axis, or a coupled turn-and-slide to `unlocked_pose`."""

    kind: str
    holds: tuple[str, ...]
    axis: str | None = None
    angle_deg: float | None = None
    unlocked_offset: Pose | None = None  # coupled: offset from the target pose (position delta, rotation)


@dataclass(frozen=True)
class Part:
    part_id: str
    kind: str
    voxels: frozenset[Voxel]
    lock: LockMechanism | None = None
    removal_dirs: tuple[str, ...] = DIRECTIONS
    supports: tuple[str, ...] = ()

    @property
    def centroid(self) -> tuple[float, float, float]:
        n = len(self.voxels)
        # voxel (i,j,k) is the unit cube [i,i+1]x[j,j+1]x[k,k+1]; its centre is +0.5
        return triple(lambda a: round(sum(v[a] for v in self.voxels) / n + 0.5, 6))


@dataclass(frozen=True)
class SparePart:
    """A wrong part used in substitution faults; it fits the slot of `variant_of`."""

    part_id: str
    kind: str
    variant_of: str
    difference: str


@dataclass(frozen=True)
class Assembly:
    assembly_id: str
    family: str
    parts: tuple[Part, ...]
    spares: tuple[SparePart, ...] = ()
    description: str = ""
    source: str = "built-in"

    def part(self, part_id: str) -> Part:
        for p in self.parts:
            if p.part_id == part_id:
                return p
        raise KeyError(part_id)

    @property
    def part_ids(self) -> tuple[str, ...]:
        return tuple(p.part_id for p in self.parts)

    @property
    def locks(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.lock is not None)


def unlocked_pose(part: Part) -> Pose:
    """Absolute pose of a coupled lock after `rotate_translate_to_unlock`."""
    off = part.lock.unlocked_offset if part.lock is not None else None
    if off is None:
        raise ValueError(f"{part.part_id} has no coupled lock")
    c = part.centroid
    return Pose(triple(lambda i: round(c[i] + off.position[i], 6)), off.rotation)


def validate_assembly(asm: Assembly) -> None:
    """Static checks that need no geometry: ids, references, lock and spare consistency."""
    ids = [p.part_id for p in asm.parts]
    _check_names(asm)
    where = f"assembly {asm.assembly_id}"
    if not ids:
        raise AssemblyError("has no parts", file=where)
    if len(ids) > MAX_PARTS:
        raise AssemblyError(f"has {len(ids)} parts (at most {MAX_PARTS})", file=where)
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise AssemblyError(f"duplicate part ids {dup}", file=where)
    known = set(ids)
    voxels = 0
    for p in asm.parts:
        f = f"part {p.part_id}"
        if not p.voxels:
            raise AssemblyError("has no voxels", file=where, field=f)
        voxels += len(p.voxels)
        if voxels > MAX_VOXELS:
            raise AssemblyError(f"more than {MAX_VOXELS} voxels in all", file=where, field=f)
        bad = [d for d in p.removal_dirs if d not in DIRECTIONS]
        if bad or not p.removal_dirs:
            raise AssemblyError(f"removal_dirs {list(p.removal_dirs)} must be a non-empty subset of {list(DIRECTIONS)}", file=where, field=f)
        for s in p.supports:
            if s not in known or s == p.part_id:
                raise AssemblyError(f"support {s!r} is not another part of the assembly", file=where, field=f)
        if p.lock is not None:
            lk = p.lock
            if lk.kind not in LOCK_KINDS:
                raise AssemblyError(f"lock kind {lk.kind!r} must be one of {list(LOCK_KINDS)}", file=where, field=f)
            for h in lk.holds:
                if h not in known or h == p.part_id:
                    raise AssemblyError(f"lock holds {h!r}, which is not another part", file=where, field=f)
            why = _lock_problem(lk)
            if why:
                raise AssemblyError(why, file=where, field=f)
    lock_ids = {p.part_id for p in asm.parts if p.lock}
    spare_ids = set()
    for w in asm.spares:
        if w.part_id in known or w.part_id in spare_ids:
            raise AssemblyError(f"spare id {w.part_id!r} is not unique", file=where)
        if w.variant_of not in known:
            raise AssemblyError(f"spare {w.part_id} is variant_of unknown part {w.variant_of!r}", file=where)
        if w.variant_of in lock_ids:
            raise AssemblyError(f"spare {w.part_id} replaces a lock part; lock spares are not supported", file=where)
        spare_ids.add(w.part_id)


def _lock_problem(lk: LockMechanism) -> str | None:
    """Why a lock's mechanism is out of its documented ranges (docs/limits.md), or None."""
    if lk.kind == "rotate":
        a = lk.angle_deg
        if lk.axis not in ("x", "y", "z") or a is None or not math.isfinite(a) or not MIN_LOCK_ANGLE <= abs(a) <= MAX_LOCK_ANGLE:
            return (f"a rotate lock needs axis x|y|z and a non-zero angle_deg of at most {MAX_LOCK_ANGLE} degrees either "
                    f"way, got {lk.axis!r}, {a!r}")
        return None
    off = lk.unlocked_offset
    if off is None:
        return "a coupled lock needs unlocked_offset"
    if not all(math.isfinite(x) and abs(x) <= MAX_COORD for x in off.position):
        return f"a coupled lock's unlocked offset must be finite, within {MAX_COORD} scene units, got {list(off.position)}"
    if not all(math.isfinite(x) and abs(x) <= MAX_LOCK_ANGLE for x in off.rotation):
        return f"a coupled lock's unlock rotation is at most {MAX_LOCK_ANGLE} degrees per axis, got {list(off.rotation)}"
    return None


def _check_names(asm: Assembly) -> None:
    """Every id and name of the assembly is printable text (model.names): ids reach programs and terminals."""
    named = [("assembly_id", asm.assembly_id), ("family", asm.family)]
    named += [(f"parts.{k}.{f}", getattr(p, f)) for k, p in enumerate(asm.parts) for f in ("part_id", "kind")]
    named += [(f"spares.{k}.{f}", getattr(w, f)) for k, w in enumerate(asm.spares) for f in ("part_id", "kind", "variant_of")]
    for field, text in named:
        why = name_problem(text)
        if why is not None:
            raise AssemblyError(f"{repr(text)[:80]} {why}", file=f"assembly {repr(asm.assembly_id)[:80]}", field=field)

"""Import real interlocking puzzles as assemblies: data/burr JSON voxel puzzles and BurrTools files.

Both formats give every piece as unit voxels at its assembled pose; the importer turns each piece
into a `Part` with a generated id `<CamelName>_PartNN_<Kind>` (kind `stick`, `piece` or `frame`),
all six removal directions and no supports or locks, and shifts the coordinates so that the
smallest one is 0 on every axis (the convention of data/burr). Symmetries need no import: they
are derived from the voxels (`geometry.symmetry_group`).

BurrTools `.xmpuzzle` (gzip-compressed XML, cube grid only): a shape is `<voxel x y z type="0">`
whose text holds one of `#` (filled), `+` (variable) or `_` (empty) per cell, x fastest, then y,
then z, each optionally followed by a colour number; `hx hy hz` give the shape's hotspot and
`weight` > 1 marks a piece BurrTools keeps fixed (a frame or box). A problem lists its pieces as
`<shape id count>` (or `min`/`max`: `max` copies, unplaced ones written `x`), a `<result id>` and
stored `<solution>`s whose `<assembly>` gives `x y z t` per piece. Orientation `t` is one of the 24
cube rotations (24-47: the same after mirroring x). Following BurrTools' cube grid (voxel_0), a
shape cell `v` lands at `(x, y, z) + M_t (v - hotspot)`, with `M_t = Rz^c Ry^b Rx^a` for BurrTools'
per-orientation quarter-turn counts `(a, b, c)` and `M_{t+24} = M_t · diag(-1, 1, 1)`.

One module (about 430 lines): both formats end in the same piece-to-`Part` step and share its id,
kind and coordinate conventions.
"""

from __future__ import annotations

import gzip
import io
import re
import xml.etree.ElementTree as ET
import zlib

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from pydantic import Field

from ..model.assembly import DIRECTIONS, Assembly, Part, validate_assembly
from ..model.errors import AssemblyError, InputError
from ..model.limits import MAX_COORD, MAX_GRID_CELLS, MAX_PARTS, MAX_VOXELS
from .guarded import LIMITS, decode, loads, read_bytes
from .quoting import one_line
from .schema import IntVec3, Open, parse_model

Voxel = tuple[int, int, int]
IntMatrix = tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]
KIND_NAMES = {"stick": "Stick", "piece": "Piece", "frame": "Frame"}
MAX_FILE_BYTES = LIMITS["puzzle file"]


@dataclass(frozen=True)
class SourcePiece:
    """One piece as the source file names it, at its assembled pose."""

    name: str
    voxels: frozenset[Voxel]
    weight: int = 1


@dataclass(frozen=True)
class ImportedPuzzle:
    """An imported assembly and the source name of each of its parts (part id -> name)."""

    assembly: Assembly
    piece_names: dict[str, str]

    def part_for(self, name: str) -> str:
        for pid, n in self.piece_names.items():
            if n == name:
                return pid
        raise KeyError(name)


# ----------------------------------------------------------------------------- common

def import_puzzle(path: str | Path, *, solution: int | None = None, problem: int = 0) -> Assembly:
    """Read a data/burr JSON puzzle or a BurrTools `.xmpuzzle` file as an `Assembly`."""
    return read_puzzle(path, solution=solution, problem=problem).assembly


def read_puzzle(path: str | Path, *, solution: int | None = None, problem: int = 0) -> ImportedPuzzle:
    path = Path(path)
    data = read_bytes(path, "puzzle file")
    if data[:2] == b"\x1f\x8b" or path.suffix.lower() == ".xmpuzzle":
        return read_xmpuzzle(path, solution=solution or 0, problem=problem, data=data)
    if path.suffix.lower() == ".json":
        if solution not in (None, 0):
            raise InputError("a JSON puzzle holds one assembled solution; --solution must be 0", file=str(path),
                             field="--solution")
        if problem != 0:
            raise InputError("a JSON puzzle holds one problem; --problem must be 0", file=str(path), field="--problem")
        return read_burr_json(path, data=data)
    raise InputError("unknown puzzle format: expected a data/burr .json file or a BurrTools .xmpuzzle file",
                     file=str(path))


def snake_name(text: str) -> str:
    """`bt_AlPackino.json` stem -> `bt_alpackino`: the assembly id."""
    s = re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").lower()
    return s or "puzzle"


def camel_name(text: str) -> str:
    """`solid6burr_a_asm386` -> `Solid6burrAAsm386`: the prefix of generated part ids."""
    words = [w for w in re.split(r"[^0-9A-Za-z]+", text) if w]
    s = "".join(w[0].upper() + w[1:] for w in words)
    if not s or not s[0].isalpha():
        s = "P" + s
    return s


def part_kind(voxels: frozenset[Voxel], weight: int = 1) -> str:
    """`frame` for pieces BurrTools keeps fixed (weight > 1), `stick` for long bars (the longest
    bounding-box side at least twice the middle one, like a burr's 2x2x6 stick), else `piece`."""
    if weight > 1:
        return "frame"
    sides = sorted(max(v[a] for v in voxels) - min(v[a] for v in voxels) + 1 for a in range(3))
    return "stick" if sides[2] >= 2 * sides[1] else "piece"


def build_assembly(assembly_id: str, pieces: list[SourcePiece], *, prefix: str | None = None,
                   family: str | None = None, description: str = "", source: str = "imported",
                   file: str = "") -> ImportedPuzzle:
    """Parts with generated ids from source pieces; rejects empty or overlapping pieces."""
    if not pieces:
        raise InputError("the puzzle has no pieces", file=file)
    owner: dict[Voxel, str] = {}
    for p in pieces:
        if not p.voxels:
            raise InputError(f"piece {p.name!r} has no voxels", file=file)
        for v in p.voxels:
            if v in owner:
                raise AssemblyError(f"pieces {owner[v]!r} and {p.name!r} overlap at voxel {list(v)}", file=file)
            owner[v] = p.name
    low = tuple(min(v[a] for v in owner) for a in range(3))
    prefix = prefix or camel_name(assembly_id)
    width = max(2, len(str(len(pieces) - 1)))
    parts, names = [], {}
    for k, p in enumerate(pieces):
        vox = frozenset((x - low[0], y - low[1], z - low[2]) for x, y, z in p.voxels)
        kind = part_kind(vox, p.weight)
        pid = f"{prefix}_Part{k:0{width}d}_{KIND_NAMES[kind]}"
        parts.append(Part(pid, kind, vox, None, DIRECTIONS, ()))
        names[pid] = p.name
    if family is None:  # six sticks: the built-in library's burr6 family, so a benchmark split sees kin
        sticks = all(p.kind in ("stick", "frame") for p in parts)
        family = ("burr6" if len(parts) == 6 else "burr") if sticks else "interlocking"
    mapping = ", ".join(f"{pid.rsplit('_', 2)[1]}={n}" for pid, n in names.items())
    text = f"{description.rstrip('.')}. Parts: {mapping}." if description else f"Parts: {mapping}."
    asm = Assembly(assembly_id, family, tuple(parts), (), text, source)
    validate_assembly(asm)
    return ImportedPuzzle(asm, names)


# ----------------------------------------------------------------------------- data/burr JSON

class _JsonPiece(Open):
    id: str = Field(min_length=1)
    voxels: list[IntVec3] = Field(min_length=1)
    count: Optional[int] = None
    weight: Optional[int] = Field(default=None, ge=1)


class _JsonPuzzle(Open):
    name: str = ""
    source: str = ""
    designer: str = ""
    license: str = ""
    pieces: list[_JsonPiece] = Field(min_length=1, max_length=MAX_PARTS)


def read_burr_json(path: str | Path, *, data: bytes | None = None) -> ImportedPuzzle:
    """A data/burr puzzle: pieces already split (`S2#1`...); `count` is each piece's voxel count."""
    path = Path(path)
    raw = read_bytes(path, "puzzle file") if data is None else data
    m = parse_model(_JsonPuzzle, loads(decode(raw, str(path), "puzzle file"), str(path), kind="puzzle file"), str(path))
    pieces, seen = [], set()
    for k, p in enumerate(m.pieces):
        where = f"pieces.{k}"
        if p.id in seen:
            raise InputError(f"duplicate piece id {p.id!r}", file=str(path), field=f"{where}.id")
        seen.add(p.id)
        vox = frozenset(tuple(v) for v in p.voxels)
        if len(vox) != len(p.voxels):
            raise InputError("a voxel is listed twice", file=str(path), field=f"{where}.voxels")
        if p.count is not None and p.count != len(vox):
            raise InputError(f"count {p.count} must equal the number of voxels ({len(vox)}); copies of a shape "
                             "are separate pieces in this format", file=str(path), field=f"{where}.count")
        pieces.append(SourcePiece(p.id, vox, p.weight or 1))
    credit = "; ".join(x for x in (m.name, f"designer: {m.designer}" if m.designer else "",
                                    f"licence: {m.license}" if m.license else "") if x)
    return build_assembly(snake_name(path.stem), pieces, prefix=camel_name(path.stem), description=credit,
                          source=m.source or f"imported from {path.name}", file=str(path))


# ----------------------------------------------------------------------------- BurrTools

def _quarter_turns() -> tuple[IntMatrix, IntMatrix, IntMatrix]:
    rx = ((1, 0, 0), (0, 0, -1), (0, 1, 0))     # +90 deg about x: +y -> +z
    ry = ((0, 0, -1), (0, 1, 0), (1, 0, 0))     # BurrTools' y turn: +x -> +z
    rz = ((0, -1, 0), (1, 0, 0), (0, 0, 1))     # +90 deg about z: +x -> +y
    return rx, ry, rz


def _matmul(a, b) -> IntMatrix:
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)) for i in range(3))  # type: ignore[return-value]  # a tuple over range(3) of tuples over range(3) is a 3x3 matrix


def _burrtools_matrices() -> tuple[IntMatrix, ...]:
    # quarter turns about x, then y, then z per orientation (BurrTools tabs_0 rotx/roty/rotz)
    turns = [(t % 4, (t // 4) % 4 if t < 16 else 0, 0 if t < 16 else (1 if t < 20 else 3)) for t in range(24)]
    rx, ry, rz = _quarter_turns()
    ident: IntMatrix = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
    mats = []
    for a, b, c in turns:
        m = ident
        for turn, n in ((rx, a), (ry, b), (rz, c)):
            for _ in range(n):
                m = _matmul(turn, m)
        mats.append(m)
    mirror = ((-1, 0, 0), (0, 1, 0), (0, 0, 1))
    return tuple(mats) + tuple(_matmul(m, mirror) for m in mats)


BURRTOOLS_MATRICES = _burrtools_matrices()


def burrtools_matrix(t: int) -> IntMatrix:
    """The integer matrix of BurrTools orientation `t` (0-23 rotations, 24-47 mirrored)."""
    return BURRTOOLS_MATRICES[t]


def place_shape(cells: frozenset[Voxel], hotspot: Voxel, position: Voxel, t: int) -> frozenset[Voxel]:
    """World voxels of a BurrTools shape placed at `position` in orientation `t`."""
    m = BURRTOOLS_MATRICES[t]
    out = set()
    for v in cells:
        d = (v[0] - hotspot[0], v[1] - hotspot[1], v[2] - hotspot[2])
        out.add(tuple(position[i] + m[i][0] * d[0] + m[i][1] * d[1] + m[i][2] * d[2] for i in range(3)))
    return frozenset(out)  # type: ignore[arg-type]  # a tuple over range(3) is a Voxel


@dataclass(frozen=True)
class _Shape:
    name: str
    filled: frozenset[Voxel]       # '#'
    variable: frozenset[Voxel]     # '+'
    hotspot: Voxel
    weight: int


def _int_attr(el: ET.Element, name: str, file: str, field: str, default: int | None = None) -> int:
    raw = el.get(name)
    if raw is None or raw.strip() == "":
        if default is None:
            raise InputError(f"missing attribute {name!r}", file=file, field=field)
        return default
    value = _bounded_int(raw)
    if value is None:
        raise InputError(f"attribute {name}={one_line(raw, 40)!r} is not an integer in "
                         f"[-{MAX_COORD}, {MAX_COORD}]", file=file, field=field)
    return value


def _bounded_int(text: str) -> int | None:
    """An integer with |value| <= MAX_COORD, or None (no 5,000-digit numbers reach the geometry)."""
    text = text.strip()
    if len(text) > 12:
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if abs(value) <= MAX_COORD else None


def _parse_shape(el: ET.Element, k: int, file: str) -> _Shape:
    field = f"shapes.voxel[{k}]"
    sx, sy, sz = (_int_attr(el, a, file, field) for a in ("x", "y", "z"))
    if min(sx, sy, sz) < 0:
        raise InputError(f"negative size {sx}x{sy}x{sz}", file=file, field=field)
    if sx * sy * sz > MAX_GRID_CELLS:
        raise InputError(f"a {sx}x{sy}x{sz} grid is over the {MAX_GRID_CELLS}-cell limit", file=file, field=field)
    if _int_attr(el, "type", file, field, 0) != 0:
        raise InputError("only voxel type 0 is defined", file=file, field=field)
    text = el.text or ""
    states = [ch for ch in text if ch in "#+_"]
    bad = {ch for ch in text if ch not in "#+_0123456789" and not ch.isspace()}
    if bad:
        raise InputError(f"unexpected characters {sorted(bad)} (cells are '#', '+' or '_' plus colour digits)",
                         file=file, field=field)
    if len(states) != sx * sy * sz:
        raise InputError(f"{len(states)} cells for a {sx}x{sy}x{sz} shape (expected {sx * sy * sz})",
                         file=file, field=field)
    used = len(states) - states.count("_")
    if used > MAX_VOXELS:
        raise InputError(f"{used} filled cells, over the {MAX_VOXELS}-voxel limit", file=file, field=field)
    filled, variable = set(), set()
    for idx, ch in enumerate(states):
        v = (idx % sx, (idx // sx) % sy, idx // (sx * sy)) if sx and sy else (0, 0, 0)
        if ch == "#":
            filled.add(v)
        elif ch == "+":
            variable.add(v)
    hot = tuple(_int_attr(el, a, file, field, 0) for a in ("hx", "hy", "hz"))
    weight = _int_attr(el, "weight", file, field, 1)
    return _Shape(el.get("name") or f"S{k + 1}", frozenset(filled), frozenset(variable), hot, max(1, weight))  # type: ignore[arg-type]  # a tuple of the three hotspot attributes is a Voxel


def _parse_placements(text: str, file: str, field: str) -> list[tuple[int, int, int, int] | None]:
    tokens = text.split()
    out: list = []
    i = 0
    while i < len(tokens):
        if tokens[i] == "x":
            out.append(None)
            i += 1
            continue
        chunk = tokens[i:i + 4]
        nums = [_bounded_int(t) for t in chunk]
        if None in nums:
            raise InputError(f"placement {len(out)}: expected 'x y z t' integers, got {one_line(' '.join(chunk), 80)!r}",
                             file=file, field=field)
        if len(nums) != 4:
            raise InputError(f"placement {len(out)} is truncated: {' '.join(chunk)!r}", file=file, field=field)
        if not 0 <= nums[3] < len(BURRTOOLS_MATRICES):
            raise InputError(f"placement {len(out)}: orientation {nums[3]} is not in 0..47", file=file, field=field)
        out.append(tuple(nums))
        i += 4
    return out


def read_xmpuzzle(path: str | Path, *, solution: int = 0, problem: int = 0, data: bytes | None = None) -> ImportedPuzzle:
    """One stored solution of one problem of a BurrTools puzzle file (gzip XML or plain XML)."""
    path = Path(path)
    file = str(path)
    root = _xml_root(read_bytes(path, "puzzle file") if data is None else data, file)
    shapes_el = root.find("shapes")
    shapes = [_parse_shape(el, k, file) for k, el in enumerate(shapes_el.findall("voxel") if shapes_el is not None else [])]
    problems = root.find("problems")
    plist = problems.findall("problem") if problems is not None else []
    if not 0 <= problem < len(plist):
        raise InputError(f"problem {problem} does not exist; the file has {len(plist)} problem(s)", file=file,
                         field="--problem")
    prob, pfield = plist[problem], f"problems.problem[{problem}]"
    slots = _piece_slots(prob, shapes, file, pfield)
    result_el = prob.find("result")
    if result_el is None:
        raise InputError("the problem has no <result>", file=file, field=pfield)
    rid = _int_attr(result_el, "id", file, f"{pfield}.result")
    if not 0 <= rid < len(shapes):
        raise InputError(f"result shape {rid} does not exist", file=file, field=f"{pfield}.result")
    sols_el = prob.find("solutions")
    sols = sols_el.findall("solution") if sols_el is not None else []
    if not 0 <= solution < len(sols):
        raise InputError(f"solution {solution} does not exist; problem {problem} stores {len(sols)} solution(s)"
                         + ("" if sols else " (solve it in BurrTools and save the solutions first)"),
                         file=file, field="--solution")
    sol, sfield = sols[solution], f"{pfield}.solutions.solution[{solution}].assembly"
    asm_el = sol.find("assembly")
    if asm_el is None:
        raise InputError("the solution has no <assembly>", file=file, field=sfield)
    placements = _parse_placements(asm_el.text or "", file, sfield)
    if len(placements) != len(slots):
        raise InputError(f"{len(placements)} placements for {len(slots)} pieces", file=file, field=sfield)
    pieces = [SourcePiece(name, place_shape(sh.filled | sh.variable, sh.hotspot, pl[:3], pl[3]), sh.weight)
              for (sh, name), pl in zip(slots, placements) if pl is not None]
    _check_result(shapes[rid], pieces, file, sfield)
    pname = prob.get("name") or ""
    tag = f"asmNum={sol.get('asmNum')}" if sol.get("asmNum") else f"solution {solution}"
    desc = f"BurrTools puzzle {path.name}, problem {problem}{' (' + pname + ')' if pname else ''}, {tag}"
    suffix = f"_p{problem}_s{solution}"   # one id per (file, problem, solution), whichever is the default
    return build_assembly(snake_name(path.stem) + suffix, pieces, prefix=camel_name(path.stem + suffix),
                          description=desc, source=f"imported from {path.name}", file=file)


MAX_XML_ELEMENTS = 200_000   # a puzzle of 200 shapes and tens of thousands of stored solutions


def _xml_root(raw: bytes, file: str) -> ET.Element:
    """The <puzzle> element of a gzip or plain XML file, cube grid only; DTDs are refused, and the
    elements are counted while the parser streams, so 20 MB of `<a/>` stops at MAX_XML_ELEMENTS."""
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                raw = gz.read(MAX_FILE_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"not a readable gzip file: {one_line(exc, 200)}", file=file) from None
        if len(raw) > MAX_FILE_BYTES:
            raise InputError(f"uncompressed puzzle is larger than {MAX_FILE_BYTES} bytes", file=file)
    root = _stream_xml(raw, file)
    if root.tag != "puzzle":
        raise InputError(f"root element is <{one_line(root.tag, 80)}>, expected <puzzle>", file=file)
    grid = root.find("gridType")
    if grid is not None and _int_attr(grid, "type", file, "gridType", 0) != 0:
        raise InputError(f"grid type {one_line(grid.get('type'), 40)} is not supported; forgeplan imports cube "
                         "grids (type 0) only", file=file, field="gridType")
    return root


def _stream_xml(raw: bytes, file: str) -> ET.Element:
    events = SafeET.iterparse(io.BytesIO(raw), events=("start",), forbid_dtd=True, forbid_entities=True,
                              forbid_external=True)
    count, root = 0, None
    try:
        for _, el in events:
            if root is None:
                root = el
            count += 1
            if count > MAX_XML_ELEMENTS:
                raise InputError(f"more than {MAX_XML_ELEMENTS:,} XML elements", file=file)
    except DefusedXmlException as exc:
        raise InputError(f"DTDs and entities are not accepted in puzzle files, nor external references ({type(exc).__name__})",
                         file=file) from None
    except (ET.ParseError, ValueError, LookupError, SyntaxError) as exc:
        raise InputError(f"not a BurrTools XML file: {one_line(exc, 200)}", file=file) from None
    if root is None:
        raise InputError("not a BurrTools XML file: no element", file=file)
    return root


def _piece_slots(prob: ET.Element, shapes: list[_Shape], file: str, pfield: str) -> list[tuple[_Shape, str]]:
    """The placement order: each problem shape repeated `count` (or `max`) times, copies named `S#k`."""
    slots: list[tuple[_Shape, str]] = []
    pshapes = prob.find("shapes")
    for k, el in enumerate(pshapes.findall("shape") if pshapes is not None else []):
        f = f"{pfield}.shapes.shape[{k}]"
        sid = _int_attr(el, "id", file, f)
        if not 0 <= sid < len(shapes):
            raise InputError(f"shape id {sid} does not exist ({len(shapes)} shapes)", file=file, field=f)
        count = _int_attr(el, "count", file, f, -1)
        if count < 0:
            count = _int_attr(el, "max", file, f, 1)
        if len(slots) + count > MAX_PARTS:
            raise InputError(f"more than {MAX_PARTS} pieces", file=file, field=f)
        sh = shapes[sid]
        slots += [(sh, sh.name if count == 1 else f"{sh.name}#{j + 1}") for j in range(count)]
    return slots


def _check_result(result: _Shape, pieces: list[SourcePiece], file: str, field: str) -> None:
    """The solution must lie inside the result shape and cover its fixed cells (as BurrTools requires)."""
    allowed = result.filled | result.variable
    covered: set[Voxel] = set()
    for p in pieces:
        outside = sorted(p.voxels - allowed)
        if outside:
            raise InputError(f"piece {p.name!r} leaves the result shape at {list(outside[0])}", file=file, field=field)
        covered |= p.voxels
    missing = sorted(result.filled - covered)
    if missing:
        raise InputError(f"the solution leaves fixed result cell {list(missing[0])} empty", file=file, field=field)

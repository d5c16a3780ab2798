"""Importers: every data/burr JSON puzzle, and BurrTools .xmpuzzle files hand-encoded from that data.

The .xmpuzzle fixtures are written here by emulating BurrTools' own code path (voxel_0_c::transform
turns the shape grid and its hotspot and shifts both into the positive octant; print.cpp places cell
`l` of the turned grid at `position - hotspot' + l`), independently of the importer's closed form.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from burrdata import FOLDER, needs_shared
from forgeplan.cli import main
from forgeplan.geometry.relations import symmetry_group
from forgeplan.io.catalog import assembly_from_json
from forgeplan.io.importers import burrtools_matrix, camel_name, part_kind, read_puzzle
from forgeplan.model.assembly import DIRECTIONS
from forgeplan.model.errors import AssemblyError, InputError

DATA = FOLDER
FILES = sorted(DATA.glob("*.json"))
PART_ID = re.compile(r"^[A-Z][A-Za-z0-9]*_Part\d{2}_(Stick|Piece|Frame)$")


@needs_shared
def test_data_folder_is_there():
    assert len(FILES) == 14, f"expected the 14 puzzles of {DATA}"


def source(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def voxels_by_name(imported) -> dict[str, frozenset]:
    return {imported.piece_names[p.part_id]: p.voxels for p in imported.assembly.parts}


# ----------------------------------------------------------------------------- JSON puzzles

@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_json_puzzle_imports_voxel_for_voxel(path):
    doc = source(path)
    imp = read_puzzle(path)
    asm = imp.assembly
    assert asm.assembly_id == re.sub(r"[^0-9a-z]+", "_", path.stem.lower())
    assert [imp.piece_names[p] for p in asm.part_ids] == [p["id"] for p in doc["pieces"]]
    assert voxels_by_name(imp) == {p["id"]: frozenset(map(tuple, p["voxels"])) for p in doc["pieces"]}
    prefix = camel_name(path.stem)
    for k, p in enumerate(asm.parts):
        assert PART_ID.match(p.part_id) and p.part_id.startswith(f"{prefix}_Part{k:02d}_")
        assert p.part_id.endswith("_" + p.kind.capitalize())
        assert p.removal_dirs == DIRECTIONS and p.supports == () and p.lock is None
        assert symmetry_group(p)                      # symmetries come from the voxels
    weights = {p["id"]: p.get("weight") or 1 for p in doc["pieces"]}
    assert {n for n, w in weights.items() if w > 1} == {imp.piece_names[p.part_id] for p in asm.parts if p.kind == "frame"}


@needs_shared
def test_kinds_of_real_pieces():
    burr = read_puzzle(DATA / "solid6burr_a_asm386.json").assembly
    assert {p.kind for p in burr.parts} == {"stick"} and burr.family == "burr6"  # kin of the built-in burr6
    box = read_puzzle(DATA / "bt_AlPackino.json")
    assert box.assembly.part(box.part_for("Box")).kind == "frame"
    cage = read_puzzle(DATA / "bt_CubeInCage.json").assembly
    assert cage.family == "interlocking" and "piece" in {p.kind for p in cage.parts}
    assert part_kind(frozenset({(0, 0, 0), (1, 0, 0)})) == "stick"
    assert part_kind(frozenset({(0, 0, 0), (1, 0, 0), (0, 1, 0)})) == "piece"
    assert part_kind(frozenset({(0, 0, 0)}), weight=2) == "frame"


def overlap(doc):
    doc["pieces"][1]["voxels"].append(doc["pieces"][0]["voxels"][0])
    doc["pieces"][1]["count"] += 1


@pytest.mark.parametrize("mutate,error,match", [
    (lambda d: d["pieces"][0].update(count=3), InputError, "pieces.0.count: count 3 must equal"),
    (overlap, AssemblyError, "'P1' and 'P2' overlap at voxel"),
    (lambda d: d["pieces"][1].update(id=d["pieces"][0]["id"]), InputError, "pieces.1.id: duplicate piece id"),
    (lambda d: d["pieces"][0].update(voxels=[[0, 0]]), InputError, "pieces.0.voxels"),
    (lambda d: d["pieces"][0]["voxels"].append(d["pieces"][0]["voxels"][0]), InputError, "listed twice"),
    (lambda d: d.update(pieces=[]), InputError, "pieces"),
])
def test_json_rejections(tmp_path, mutate, error, match):
    doc = source(DATA / "mj_burr6_puzzle0.json")
    mutate(doc)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(error, match=match) as err:
        read_puzzle(f)
    assert str(f) in str(err.value)


def test_unknown_format_and_json_solution(tmp_path):
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(InputError, match="unknown puzzle format"):
        read_puzzle(tmp_path / "x.txt")
    with pytest.raises(InputError, match="--solution must be 0"):
        read_puzzle(DATA / "mj_burr6_puzzle0.json", solution=1)
    with pytest.raises(InputError, match="cannot read puzzle file"):
        read_puzzle(tmp_path / "missing.json")


# ----------------------------------------------------------------------------- BurrTools orientations

# facts read from BurrTools src/lib/tabs_0/rotmatrix.inc (row-major, new = M * old)
ROTMATRIX_FACTS = {
    1: ((1, 0, 0), (0, 0, -1), (0, 1, 0)),
    4: ((0, 0, -1), (0, 1, 0), (1, 0, 0)),
    5: ((0, -1, 0), (0, 0, -1), (1, 0, 0)),
    16: ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
    21: ((0, 0, -1), (-1, 0, 0), (0, 1, 0)),
    24: ((-1, 0, 0), (0, 1, 0), (0, 0, 1)),
    29: ((0, -1, 0), (0, 0, -1), (-1, 0, 0)),
    47: ((0, 0, 1), (1, 0, 0), (0, -1, 0)),
}
# quarter turns about x, y, z per orientation (tabs_0/rotx.inc, roty.inc, rotz.inc)
ROTX = [0, 1, 2, 3] * 6
ROTY = [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4 + [0] * 8
ROTZ = [0] * 16 + [1] * 4 + [3] * 4


def mat_mul(a, b):
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)) for i in range(3))


def apply(m, v):
    return tuple(sum(m[i][k] * v[k] for k in range(3)) for i in range(3))


def test_matrices_build_from_turn_counts():
    """This file's own table: turns about x, then y, then z; mirrored = mirror x first."""
    mats = []
    for t in range(24):
        m = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
        for base, n in ((ROTMATRIX_FACTS[1], ROTX[t]), (ROTMATRIX_FACTS[4], ROTY[t]), (ROTMATRIX_FACTS[16], ROTZ[t])):
            for _ in range(n):
                m = mat_mul(base, m)
        mats.append(m)
    mats += [mat_mul(m, ROTMATRIX_FACTS[24]) for m in mats]
    for t, m in ROTMATRIX_FACTS.items():
        assert mats[t] == m, t
    TEST_MATS[:] = mats


TEST_MATS: list = []


def matrices():
    if not TEST_MATS:
        test_matrices_build_from_turn_counts()
    return TEST_MATS


def det(m):
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def test_importer_orientations_are_burrtools_orientations():
    for t, m in ROTMATRIX_FACTS.items():
        assert burrtools_matrix(t) == m
    assert [burrtools_matrix(t) for t in range(48)] == matrices()
    assert len(set(matrices())) == 48
    assert [det(m) for m in matrices()] == [1] * 24 + [-1] * 24


# ----------------------------------------------------------------------------- hand-encoded .xmpuzzle

def bt_transform(cells, size, hotspot, t):
    """voxel_0_c::transform: turn the grid, shift it into the positive octant, hotspot alike."""
    m = matrices()[t]
    corner = apply(m, tuple(s - 1 for s in size))
    shift = tuple(-c if c < 0 else 0 for c in corner)
    turned = {tuple(a + b for a, b in zip(apply(m, c), shift)) for c in cells}
    hot = tuple(a + b for a, b in zip(apply(m, hotspot), shift))
    return turned, hot


def bt_place(cells, size, hotspot, t, position):
    """print.cpp: cell l of the turned grid is at position - hotspot' + l."""
    turned, hot = bt_transform(cells, size, hotspot, t)
    return {tuple(p - h + c for p, h, c in zip(position, hot, cell)) for cell in turned}


def encode_shape(world, t, pad, hotspot):
    """A shape grid that, placed with orientation t, lands on `world`; returns (cells, size, position)."""
    inv = tuple(zip(*matrices()[t]))              # signed permutation: inverse = transpose
    raw = [apply(inv, w) for w in world]
    low = [min(r[a] for r in raw) for a in range(3)]
    cells = {tuple(r[a] - low[a] + pad[a] for a in range(3)) for r in raw}
    size = tuple(max(c[a] for c in cells) + 1 + pad[a] for a in range(3))
    return cells, size, locate(cells, size, hotspot, t, world)


def locate(cells, size, hotspot, t, world):
    """The position placing the shape exactly on `world` in orientation t, or None."""
    turned, hot = bt_transform(cells, size, hotspot, t)
    a, b = min(turned), min(world)
    pos = tuple(w - c + h for w, c, h in zip(b, a, hot))
    return pos if bt_place(cells, size, hotspot, t, pos) == set(world) else None


def grid_text(cells, size, colour_every=0):
    out = []
    for z in range(size[2]):
        for y in range(size[1]):
            for x in range(size[0]):
                if (x, y, z) in cells:
                    k = len(out)
                    out.append("#" + (str(1 + k % 3) if colour_every and k % colour_every == 0 else ""))
                else:
                    out.append("_")
    return "".join(out)


def write_xmpuzzle(path: Path, pieces: list[dict], solutions: list[dict[str, frozenset]], *, gz: bool = True) -> None:
    """pieces: [{id, weight}] in file order (copies `S#k` adjacent); solutions: id -> world voxels."""
    base = lambda pid: pid.split("#")[0]                                     # noqa: E731
    groups: list[tuple[str, list[str]]] = []
    for p in pieces:
        if groups and groups[-1][0] == base(p["id"]):
            groups[-1][1].append(p["id"])
        else:
            groups.append((base(p["id"]), [p["id"]]))
    weight = {base(p["id"]): p.get("weight") or 1 for p in pieces}
    shapes, placements = [], [[] for _ in solutions]
    for g, (name, members) in enumerate(groups):
        first = solutions[-1][members[0]]
        t0, pad, hot = (7 * g + 5) % 24, (g % 2, 0, 1), (g % 3, 1, 0)
        cells, size, _ = encode_shape(first, t0, pad, hot)
        shapes.append((name, cells, size, hot, weight[name]))
        for s, sol in enumerate(solutions):
            order = list(range(24, 48)) + list(range(24)) if s == 0 and len(solutions) > 1 else list(range(48))
            for pid in members:
                for t in order:
                    pos = locate(cells, size, hot, t, sol[pid])
                    if pos is not None:
                        placements[s].append(f"{pos[0]} {pos[1]} {pos[2]} {t}")
                        break
                else:
                    raise AssertionError(f"no orientation places {pid}")
    union = [frozenset().union(*sol.values()) for sol in solutions]
    fixed, optional = frozenset.intersection(*union), frozenset.union(*union)
    rsize = tuple(max(v[a] for v in optional) + 2 for a in range(3))
    rtext = "".join("#" if (x, y, z) in fixed else "+" if (x, y, z) in optional else "_"
                    for z in range(rsize[2]) for y in range(rsize[1]) for x in range(rsize[0]))
    xml = ['<?xml version="1.0"?>', '<puzzle version="2">', '<gridType type="0"/>', "<colors/>", "<shapes>"]
    for k, (name, cells, size, hot, w) in enumerate(shapes):
        attrs = f'x="{size[0]}" y="{size[1]}" z="{size[2]}"'
        attrs += "".join(f' h{a}="{v}"' for a, v in zip("xyz", hot) if v)
        attrs += f' weight="{w}"' if w != 1 else ""
        xml.append(f'<voxel {attrs} name="{name}" type="0">{grid_text(cells, size, colour_every=k + 2)}</voxel>')
    xml.append(f'<voxel x="{rsize[0]}" y="{rsize[1]}" z="{rsize[2]}" type="0">{rtext}</voxel>')
    xml += ["</shapes>", "<problems>", '<problem name="fixture" state="2" assemblies="2" solutions="2" time="0">',
            "<shapes>"]
    xml += [f'<shape id="{k}" count="{len(m)}"/>' for k, (_, m) in enumerate(groups)]
    xml += ["</shapes>", f'<result id="{len(shapes)}"/>', "<bitmap/>", "<solutions>"]
    xml += [f'<solution asmNum="{s + 1}"><assembly>{" ".join(pl)}</assembly></solution>'
            for s, pl in enumerate(placements)]
    xml += ["</solutions>", "</problem>", "</problems>", "<comment/>", "</puzzle>"]
    data = "\n".join(xml).encode()
    path.write_bytes(gzip.compress(data) if gz else data)


def offset(vox: dict[str, frozenset], d=(1, 0, 2)) -> dict[str, frozenset]:
    return {k: frozenset((x + d[0], y + d[1], z + d[2]) for x, y, z in v) for k, v in vox.items()}


def mirrored(vox: dict[str, frozenset]) -> dict[str, frozenset]:
    top = max(x for v in vox.values() for x, _, _ in v)
    return {k: frozenset((top - x, y, z) for x, y, z in v) for k, v in vox.items()}


def normalised(vox: dict[str, frozenset]) -> dict[str, frozenset]:
    low = [min(v[a] for s in vox.values() for v in s) for a in range(3)]
    return {k: frozenset(tuple(c - l for c, l in zip(v, low)) for v in s) for k, s in vox.items()}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_xmpuzzle_round_trip_reproduces_the_json_voxels(path, tmp_path):
    doc = source(path)
    vox = {p["id"]: frozenset(map(tuple, p["voxels"])) for p in doc["pieces"]}
    assert min(v[a] for s in vox.values() for v in s for a in range(3)) == 0
    placed = offset(vox)
    f = tmp_path / "fixture.xmpuzzle"
    write_xmpuzzle(f, doc["pieces"], [placed])
    imp = read_puzzle(f)
    assert voxels_by_name(imp) == vox
    assert [imp.piece_names[p] for p in imp.assembly.part_ids] == [p["id"] for p in doc["pieces"]]
    assert imp.assembly.assembly_id == "fixture_p0_s0"
    frames = {p["id"] for p in doc["pieces"] if (p.get("weight") or 1) > 1}
    assert {imp.piece_names[p.part_id] for p in imp.assembly.parts if p.kind == "frame"} == frames


@needs_shared
@pytest.mark.parametrize("name", ["solid6burr_e_asm901", "bt_AlPackino"])
def test_xmpuzzle_copies_mirrors_and_solution_choice(name, tmp_path):
    """Shape counts > 1 become separate parts; solution 0 here is the mirror image (orientations 24-47)."""
    doc = source(DATA / f"{name}.json")
    vox = {p["id"]: frozenset(map(tuple, p["voxels"])) for p in doc["pieces"]}
    placed = offset(vox)
    f = tmp_path / "two.xmpuzzle"
    write_xmpuzzle(f, doc["pieces"], [mirrored(placed), placed])
    text = gzip.decompress(f.read_bytes()).decode()
    counts = [int(c) for c in re.findall(r'<shape id="\d+" count="(\d+)"/>', text)]
    assert max(counts) > 1 and sum(counts) == len(vox)
    first = re.findall(r"<assembly>([^<]*)</assembly>", text)[0].split()
    assert any(int(t) >= 24 for t in first[3::4])
    assert voxels_by_name(read_puzzle(f, solution=1)) == vox
    assert voxels_by_name(read_puzzle(f, solution=0)) == normalised(mirrored(vox))
    plain = tmp_path / "plain.xmpuzzle"
    plain.write_bytes(text.encode())
    assert voxels_by_name(read_puzzle(plain, solution=1)) == vox
    with pytest.raises(InputError, match="solution 2 does not exist; problem 0 stores 2"):
        read_puzzle(f, solution=2)
    with pytest.raises(InputError, match="problem 1 does not exist"):
        read_puzzle(f, problem=1)


def fixture_text(tmp_path) -> str:
    doc = source(DATA / "mj_burr6_puzzle0.json")
    vox = {p["id"]: frozenset(map(tuple, p["voxels"])) for p in doc["pieces"]}
    f = tmp_path / "base.xmpuzzle"
    write_xmpuzzle(f, doc["pieces"], [offset(vox)], gz=False)
    return f.read_text()


def test_xmpuzzle_rejections_name_the_field(tmp_path):
    good = fixture_text(tmp_path)
    placements = re.search(r"<assembly>([^<]*)</assembly>", good).group(1).split()
    shifted = placements.copy()
    shifted[0] = str(int(shifted[0]) + 1)
    cases = [
        (good.replace('<gridType type="0"/>', '<gridType type="3"/>'), "grid type 3 is not supported"),
        (good.replace('type="0">', 'type="0">#?', 1), r"unexpected characters \['\?'\]"),
        (good.replace('type="0">', 'type="0">#', 1), "cells for a"),
        (good.replace(" ".join(placements), " ".join(placements[:-4])), "placements for 6 pieces"),
        (good.replace(" ".join(placements), " ".join(placements[:-1] + ["48"])), "orientation 48 is not in 0..47"),
        (good.replace(" ".join(placements), " ".join(shifted)), "leaves the result shape|result cell"),
        (good.replace("<solutions>", "<solutions></solutions><x>").replace("</solutions>\n</problem>", "</x>\n</problem>"),
         "stores 0 solution"),
        ("<puzzle", "not a BurrTools XML file"),
        ('<!DOCTYPE x [<!ENTITY a "b">]><puzzle version="2"/>', "DTDs and entities"),
    ]
    for text, match in cases:
        f = tmp_path / "bad.xmpuzzle"
        f.write_text(text)
        with pytest.raises(InputError, match=match) as err:
            read_puzzle(f)
        assert str(f) in str(err.value)


def test_xmpuzzle_unplaced_optional_pieces_are_skipped(tmp_path):
    """A `min`/`max` shape has `max` placement slots; BurrTools writes unplaced ones as `x`."""
    good = fixture_text(tmp_path)
    placements = re.search(r"<assembly>([^<]*)</assembly>", good).group(1).split()
    text = good.replace('<shape id="0" count="1"/>', '<shape id="0" min="1" max="2"/>')
    text = text.replace(" ".join(placements), " ".join(placements[:4] + ["x"] + placements[4:]))
    f = tmp_path / "optional.xmpuzzle"
    f.write_text(text)
    imp = read_puzzle(f)
    doc = source(DATA / "mj_burr6_puzzle0.json")
    assert [imp.piece_names[p] for p in imp.assembly.part_ids] == [doc["pieces"][0]["id"] + "#1"] + [p["id"] for p in doc["pieces"][1:]]
    assert sorted(p.voxels for p in imp.assembly.parts) == sorted(frozenset(map(tuple, p["voxels"])) for p in doc["pieces"])


@needs_shared
def test_cli_import_writes_a_loadable_assembly(tmp_path, capsys):
    doc = source(DATA / "solid6burr_e_asm901.json")
    vox = {p["id"]: frozenset(map(tuple, p["voxels"])) for p in doc["pieces"]}
    src = tmp_path / "Solid.xmpuzzle"
    write_xmpuzzle(src, doc["pieces"], [mirrored(offset(vox)), offset(vox)])
    out = tmp_path / "asm.json"
    assert main(["import", str(src), "--out", str(out), "--solution", "1"]) == 0   # partial moves take it apart
    printed = capsys.readouterr().out
    assert printed.startswith(f"wrote {out} (solid_p0_s1, 6 parts)") and "partial moves" in printed
    asm = assembly_from_json(json.loads(out.read_text()), str(out))
    assert sorted(p.voxels for p in asm.parts) == sorted(vox.values())
    assert asm.part_ids[4] == "SolidP0S1_Part04_Stick"
    assert main(["import", str(DATA / "solid6burr_a_asm386.json"), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mode"] == "group_moves" and [p["source_name"] for p in summary["parts"]][:2] == ["S4", "S12"]
    assert main(["import", str(src), "--out", str(out), "--solution", "9"]) == 2
    assert "solution 9 does not exist" in capsys.readouterr().err


def test_cli_imports_the_shipped_examples(tmp_path, capsys):
    """`--list-examples` names the puzzles shipped in the package; `--example NAME` imports one; an
    interlocked one that partial moves take apart is written and exits 0; `assemblies --check` agrees."""
    from forgeplan.io.resources import example_names, examples_dir

    assert main(["import", "--list-examples", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == example_names() == [f"mj_burr6_puzzle{k}" for k in range(5)]
    assert all(r["license"].startswith("MIT") for r in rows)
    assert (examples_dir() / "LICENSE").read_text().startswith("The puzzle data")
    out = tmp_path / "burr.json"
    assert main(["import", "--example", "mj_burr6_puzzle4", "--out", str(out)]) == 0
    assert "moving groups" in capsys.readouterr().out
    assert assembly_from_json(json.loads(out.read_text()), str(out)).assembly_id == "mj_burr6_puzzle4"
    assert main(["import", "--example", "mj_burr6_puzzle3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not disassemblable with straight moves" in printed and out.is_file()
    assert "tasks and benchmarks take the assemblies they take apart" in printed and "cannot use" not in printed
    assert "disassemblable with partial moves: level 6 (6 moves to the first separation" in printed
    assert main(["assemblies", "--check", str(out)]) == 0     # partial moves take it apart: level 6
    assert "level 6" in capsys.readouterr().out
    assert main(["import", "--example", "nope", "--out", str(out)]) == 2
    assert "--example: no such example; expected one of mj_burr6_puzzle0" in capsys.readouterr().err
    assert main(["import", "--example", "mj_burr6_puzzle0"]) == 2
    assert "--out: missing" in capsys.readouterr().err


def test_cli_import_of_an_inseparable_puzzle_writes_it_and_exits_1(tmp_path, capsys):
    """A cube sealed inside a hollow shell: no sequence of moves separates them, so forgeplan cannot use it."""
    cells = [(x, y, z) for x in range(3) for y in range(3) for z in range(3)]
    doc = {"name": "sealed cube", "grid": [3, 3, 3],
           "pieces": [{"id": "Shell", "voxels": [list(c) for c in cells if c != (1, 1, 1)]},
                      {"id": "Cube", "voxels": [[1, 1, 1]]}]}
    src, out = tmp_path / "sealed.json", tmp_path / "sealed_asm.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["import", str(src), "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "cannot be separated by any sequence of moves" in printed and out.is_file()
    assert "forgeplan cannot use this assembly" in printed

"""Pictures: colours of touching parts, labels, the exploded view of interlocked burrs, `show TASK` and
`show TASK PLAN --steps` (strip and animation) with the failing step marked."""

import json

import numpy as np
import pytest
from PIL import Image

from forgeplan.cli import main
from forgeplan.geometry.relations import contact_relation
from forgeplan.io.catalog import load_assembly
from forgeplan.library import BUILTIN
from forgeplan.pictures.colours import FAULT, PALETTE, neighbour_graph, part_colours, short_labels
from forgeplan.pictures.steps import Panel, keep

PIN, LOCK = "BayonetStructure_Part02_Pin", "BayonetStructure_Part01_Lock"


@pytest.mark.parametrize("aid", sorted(BUILTIN))
def test_touching_parts_never_share_a_colour(aid):
    asm = load_assembly(aid)
    colours = part_colours(asm)
    touching = neighbour_graph(asm)
    assert set(contact_relation(asm)) <= {tuple(e) for e in touching.edges} | {tuple(reversed(e)) for e in touching.edges}
    assert all(colours[a] != colours[b] for a, b in touching.edges), aid
    assert FAULT not in colours.values()
    if len(asm.parts) <= len(PALETTE):
        assert len(set(colours.values())) == len(asm.parts), "a small assembly shows each part in its own colour"


def test_touching_parts_are_those_with_26_neighbouring_voxels():
    """The vectorised neighbour search against the definition, voxel by voxel, on every built-in."""
    steps = [(dx, dy, dz) for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1) if (dx, dy, dz) != (0, 0, 0)]
    for aid in sorted(BUILTIN):
        asm = load_assembly(aid)
        owner = {v: p.part_id for p in asm.parts for v in p.voxels}
        pairs = {frozenset((a, owner[(x + dx, y + dy, z + dz)])) for (x, y, z), a in owner.items()
                 for dx, dy, dz in steps if owner.get((x + dx, y + dy, z + dz), a) != a}
        pairs |= {frozenset(e) for e in contact_relation(asm)}
        assert {frozenset(e) for e in neighbour_graph(asm).edges} == pairs, aid


@pytest.mark.slow
def test_show_draws_an_assembly_at_the_size_limits(tmp_path, capsys):
    """200 parts of 500 voxels (docs/limits.md): drawn whole, hidden parts exploded into view."""
    parts = [{"part_id": f"B{k:03d}", "kind": "block", "removal_dirs": ["+x"], "supports": [], "lock": None,
              "voxels": [[gx * 5 + x, gy * 10 + y, gz * 10 + z] for x in range(5) for y in range(10) for z in range(10)]}
             for k, (gx, gy, gz) in enumerate((gx, gy, gz) for gx in range(8) for gy in range(5) for gz in range(5))]
    file = tmp_path / "grid.json"
    file.write_text(json.dumps({"schema_version": "1.0", "assembly_id": "grid", "family": "grid", "description": "",
                                "source": "generated", "parts": parts, "spares": []}))
    assert main(["show", str(file), "--out", str(tmp_path / "grid.png")]) == 0
    assert "exploded" in capsys.readouterr().out and Image.open(tmp_path / "grid.png").size[0] > 0


def test_colours_stay_proper_past_the_palette():
    """A chain of 40 touching cubes: more parts than the palette has colours, neighbours still differ."""
    from forgeplan.model.assembly import Assembly, Part

    parts = tuple(Part(f"C{k:02d}", "cube", frozenset({(k, 0, 0)})) for k in range(40))
    asm = Assembly("chain", "chain", parts)
    colours = part_colours(asm)
    assert all(colours[f"C{k:02d}"] != colours[f"C{k + 1:02d}"] for k in range(39))
    assert len(set(colours.values())) == len(PALETTE)


def test_short_labels_are_short_and_distinct():
    for aid in BUILTIN:
        labels = short_labels(load_assembly(aid).part_ids)
        assert len(set(labels.values())) == len(labels) and all(0 < len(x) <= 6 for x in labels.values()), aid
    assert short_labels(["Fx_Part01_Base", "Fx_Part02_Pin"]) == {"Fx_Part01_Base": "01", "Fx_Part02_Pin": "02"}
    assert short_labels(["a", "b"]) == {"a": "a", "b": "b"}
    assert short_labels(["same_long_word", "same_long_ward"]) == {"same_long_word": "word", "same_long_ward": "ward"}
    assert short_labels(["abcdefghij", "abcdefghij2"]) == {"abcdefghij": "1", "abcdefghij2": "2"}


def test_an_interlocked_burr_explodes():
    """burr_6_level5 needs partial moves: its exploded view is not its assembled one, only translates each
    part, and leaves no two parts overlapping or touching face to face."""
    from forgeplan.render import exploded_voxels

    asm = load_assembly("burr_6_level5")
    moved = exploded_voxels(asm)
    assert any(moved[p.part_id] != p.voxels for p in asm.parts)
    for p in asm.parts:
        shift = tuple(a - b for a, b in zip(min(moved[p.part_id]), min(p.voxels)))
        assert moved[p.part_id] == {tuple(v[k] + shift[k] for k in range(3)) for v in p.voxels}
    every = [v for vox in moved.values() for v in vox]
    assert len(every) == len(set(every))
    from forgeplan.model.assembly import Part

    apart = type(asm)(asm.assembly_id, asm.family, tuple(Part(p.part_id, p.kind, moved[p.part_id]) for p in asm.parts))
    assert contact_relation(apart) == {}


@pytest.mark.slow
def test_show_exploded_draws_another_picture_than_assembled(tmp_path, capsys):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert main(["show", "burr_6_level5", "--assembled", "--out", str(a)]) == 0
    assert main(["show", "burr_6_level5", "--exploded", "--out", str(b)]) == 0
    said = capsys.readouterr().out
    assert "assembled" in said and "exploded" in said
    assert Image.open(a).tobytes() != Image.open(b).tobytes()


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("pictures")
    assert main(["task", "make", "bayonet_structure", "--out", str(d / "t"), "--fault", f"missing_part:{PIN}"]) == 0
    ref = json.loads((d / "t" / "reference.json").read_text())
    bad = json.loads(json.dumps({"annotation": ref["annotation"], "rework_plan": ref["rework_plan"]}))
    acts = bad["rework_plan"]["actions"]
    acts[1], acts[2] = acts[2], acts[1]
    (d / "bad.json").write_text(json.dumps(bad))
    (d / "good.json").write_text(json.dumps({"annotation": ref["annotation"], "rework_plan": ref["rework_plan"]}))
    return d


def test_show_task_marks_the_faulty_part(task, tmp_path, capsys):
    out = tmp_path / "task.png"
    assert main(["show", str(task / "t"), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"faults marked: {PIN}: missing_part (hidden)" in said and "exploded" in said
    img = Image.open(out)
    assert img.format == "PNG" and img.size[0] > 1000
    red = int((np.asarray(img.convert("RGB")) == (0xd6, 0x27, 0x28)).all(axis=2).sum())
    assert red > 50, "the missing part is drawn in red"


def test_show_steps_strip_marks_the_failing_step(task, tmp_path, capsys):
    out = tmp_path / "steps.png"
    assert main(["show", str(task / "t"), str(task / "bad.json"), "--steps", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "3 pictures of 7 steps; invalid [dependency_omission], failing step 2: " in said
    assert "unlock it first" in said
    assert Image.open(out).format == "PNG"


@pytest.mark.slow
def test_show_steps_of_a_valid_plan(task, tmp_path, capsys):
    assert main(["show", str(task / "t"), str(task / "good.json"), "--steps", "--out", str(tmp_path / "ok.png")]) == 0
    assert "8 pictures of 7 steps; valid)" in capsys.readouterr().out


@pytest.mark.parametrize("suffix,flag", [(".gif", []), (".webp", []), (".gif", ["--gif"])])
def test_show_steps_animation(task, tmp_path, capsys, suffix, flag):
    out = tmp_path / f"steps{suffix}"
    assert main(["show", str(task / "t"), str(task / "bad.json"), "--steps", *flag, "--out", str(out)]) == 0
    img = Image.open(out)
    assert img.format == suffix[1:].upper() and img.n_frames == 3
    assert "failing step 2" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["{t}", "--steps", "--out", "{o}.png"],                       # --steps without a plan
    ["{t}", "{bad}", "--out", "{o}.png"],                         # a plan without --steps
    ["bayonet_structure", "{bad}", "--steps", "--out", "{o}.png"],   # steps of an assembly
    ["{t}", "--out", "{o}.gif"],                                  # an animation of no plan
    ["{t}", "{bad}", "--steps", "--gif", "--out", "{o}.png"],     # --gif into a PNG
])
def test_show_usage_errors_are_one_line(task, tmp_path, capsys, argv):
    args = [a.format(t=task / "t", bad=task / "bad.json", o=tmp_path / "x") for a in argv]
    assert main(["show", *args]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_a_long_plan_keeps_its_start_and_its_failing_step():
    panels = [Panel(k, [], str(k), failing=k == 40) for k in range(50)]
    kept, left_out = keep(panels, 24)
    assert len(kept) == 24 and left_out == 26
    assert [p.index for p in kept[:12]] == list(range(12)) and kept[-1].index == 40
    assert keep(panels[:10], 24) == (panels[:10], 0)

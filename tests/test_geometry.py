"""Geometry on hand-made voxel fixtures with known blocking edges, symmetry groups and rejections."""

import pytest

from forgeplan.geometry.checks import check_geometry
from forgeplan.geometry.graphs import assembly_sequence, blocking_depth, disassembly_layers
from forgeplan.geometry.relations import blocking_relation, contact_relation, symmetry_group
from forgeplan.library.voxels import box, part
from forgeplan.model.assembly import Assembly, validate_assembly
from forgeplan.model.errors import AssemblyError


def asm(*parts):
    return Assembly("fixture", "fixture", tuple(parts))


def test_two_bars_block_each_other_along_their_common_line_only():
    a = part("A", "bar", box(0, 0, 0, 1, 1, 1))
    b = part("B", "bar", box(2, 0, 0, 3, 1, 1))
    rel = blocking_relation(asm(a, b))
    assert rel["+x"] == {("B", "A")}
    assert rel["-x"] == {("A", "B")}
    for d in ("+y", "-y", "+z", "-z"):
        assert rel[d] == frozenset()


def test_peg_in_slot_blocking_edges():
    # a U-shaped holder (open at +y) with a peg in its notch
    holder = part("H", "holder", box(0, 0, 0, 3, 2, 1) - box(1, 1, 0, 2, 2, 1))
    peg = part("P", "peg", box(1, 1, 0, 2, 3, 1))
    rel = blocking_relation(asm(holder, peg))
    assert ("H", "P") in rel["+x"] and ("H", "P") in rel["-x"] and ("H", "P") in rel["-y"]
    assert ("H", "P") not in rel["+y"]          # the peg lifts out
    assert ("H", "P") not in rel["+z"] and ("H", "P") not in rel["-z"]
    assert ("P", "H") in rel["+y"]             # the holder cannot lift through the peg
    assert contact_relation(asm(holder, peg)) == {("H", "P"): 3}


def test_symmetry_group_sizes():
    assert len(symmetry_group(part("c", "cube", box(0, 0, 0, 2, 2, 2)))) == 24
    assert len(symmetry_group(part("b", "bar", box(0, 0, 0, 1, 3, 1)))) == 8
    assert len(symmetry_group(part("p", "plate", box(0, 0, 0, 3, 1, 2)))) == 4
    el = frozenset({(0, 0, 0), (1, 0, 0), (0, 1, 0)})
    assert len(symmetry_group(part("l", "ell", el))) == 2
    twisted = frozenset({(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1)})   # one 2-fold axis
    assert len(symmetry_group(part("t", "twisted", twisted))) == 2
    asymmetric = frozenset({(0, 0, 0), (1, 0, 0), (2, 0, 0), (2, 1, 0), (1, 0, 1)})
    assert len(symmetry_group(part("k", "asymmetric", asymmetric))) == 1


def test_overlap_is_rejected_naming_both_parts():
    with pytest.raises(AssemblyError, match="A and B overlap at voxel"):
        check_geometry(asm(part("A", "x", box(0, 0, 0, 2, 1, 1)), part("B", "x", box(1, 0, 0, 3, 1, 1))))


def test_enclosed_part_is_rejected_naming_the_interlocked_parts():
    shell = part("Shell", "box", box(0, 0, 0, 3, 3, 3) - box(1, 1, 1, 2, 2, 2))
    core = part("Core", "cube", box(1, 1, 1, 2, 2, 2))
    with pytest.raises(AssemblyError, match=r"parts \['Shell', 'Core'\] interlock"):
        check_geometry(asm(shell, core))


def test_support_without_contact_is_rejected():
    a = part("A", "x", box(0, 0, 0, 1, 1, 1))
    b = part("B", "x", box(3, 0, 0, 4, 1, 1), supports=("A",))
    with pytest.raises(AssemblyError, match="not in face contact"):
        check_geometry(asm(a, b))


def test_bad_references_are_rejected():
    with pytest.raises(AssemblyError, match="support 'Z'"):
        validate_assembly(asm(part("A", "x", box(0, 0, 0, 1, 1, 1), supports=("Z",))))


def test_layers_and_sequence_respect_blocking_and_supports():
    base = part("Base", "base", box(0, 0, 0, 3, 1, 1), dirs=("+y",))
    mid = part("Mid", "block", box(0, 1, 0, 3, 2, 1), dirs=("+y",), supports=("Base",))
    top = part("Top", "block", box(1, 2, 0, 2, 3, 1), dirs=("+y",), supports=("Mid",))
    a = asm(base, mid, top)
    assert disassembly_layers(a) == (("Top",), ("Mid",), ("Base",))
    assert assembly_sequence(a) == ("Base", "Mid", "Top")
    assert blocking_depth(a) == 3


def test_supports_in_a_cycle_are_refused_with_the_cycle():
    from dataclasses import replace

    from forgeplan.library import build

    asm = build("bayonet_structure")
    parts = tuple(replace(p, supports=("BayonetStructure_Part02_Pin",)) if p.part_id.endswith("Base") else p
                  for p in asm.parts)
    with pytest.raises(AssemblyError, match=r"supports form a cycle: \['BayonetStructure_Part00_Base', "
                                            r"'BayonetStructure_Part02_Pin'\]"):
        check_geometry(replace(asm, parts=parts))

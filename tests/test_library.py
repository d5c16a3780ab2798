"""The built-in library: 28 valid identities with the variety the benchmark needs (six-piece burrs
that need group moves or partial moves among them), and `forgeplan show`."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from forgeplan.cli import main
from forgeplan.geometry.graphs import assembly_sequence, blocking_depth
from forgeplan.geometry.relations import symmetry_group
from forgeplan.geometry.separation import disassembly_verdict, needs_group_moves
from forgeplan.io.catalog import load_assembly
from forgeplan.library import BUILTIN
from forgeplan.library.voxels import box, part
from forgeplan.model.assembly import DIRECTIONS
from forgeplan.model.state import Tolerances
from forgeplan.planners.asp.solve import solve_task
from forgeplan.planners.reference import reference_output
from forgeplan.planners.crosscheck import compare_task
from forgeplan.planners.registry import feasible_plan
from forgeplan.planners.repair import repair_plan
from forgeplan.render import exploded_voxels
from forgeplan.semantics.diagnosis import MISTAKE_TYPES
from forgeplan.semantics.faults import FaultSpec, candidates, make_task
from forgeplan.semantics.legal import legal_actions
from forgeplan.semantics.engine import World
from forgeplan.verify import verify
from cases import PARTIAL_MOVES, grounding

IDS = list(BUILTIN)
PART_ID = re.compile(r"^[A-Z][A-Za-z0-9]*_Part\d{2}_[A-Z][A-Za-z]*$")
ASSEMBLY_ID = re.compile(r"^[a-z][a-z0-9_]*$")


@pytest.fixture(scope="module")
def library():
    return {aid: load_assembly(aid) for aid in IDS}


def test_every_identity_loads_with_its_own_id(library):
    for aid, asm in library.items():
        assert asm.assembly_id == aid and ASSEMBLY_ID.match(aid)
        assert 2 <= len(asm.parts) <= 30
        assert all(PART_ID.match(p.part_id) for p in asm.parts), aid


def test_composition_28_identities_from_at_least_8_families(library):
    families = Counter(asm.family for asm in library.values())
    assert len(library) == 28
    assert len(families) >= 8
    small = [f for f, n in families.items() if n <= 3]
    assert len(small) >= 2, "the benchmark needs at least two small families to hold out"


def test_identities_differ(library):
    shapes = {tuple(sorted((p.kind, tuple(sorted(p.voxels))) for p in asm.parts)) for asm in library.values()}
    assert len(shapes) == len(library)


def test_blocking_depth_spans_1_to_at_least_6(library):
    depths = [blocking_depth(asm) for asm in library.values()]
    assert min(depths) == 1
    assert max(depths) >= 6
    assert len(set(depths)) >= 6


def test_both_lock_kinds_and_unlocked_assemblies(library):
    kinds = {p.lock.kind for asm in library.values() for p in asm.locks}
    assert kinds == {"rotate", "coupled"}
    assert any(not asm.locks for asm in library.values())


def test_spares_in_most_assemblies_and_never_for_locks(library):
    with_spares = [asm for asm in library.values() if asm.spares]
    assert len(with_spares) >= 20
    for asm in with_spares:
        locks = {p.part_id for p in asm.locks}
        assert all(w.variant_of not in locks for w in asm.spares)


def test_symmetric_and_asymmetric_parts(library):
    sizes = Counter(len(symmetry_group(p)) for asm in library.values() for p in asm.parts if p.lock is None)
    assert sizes[1] > 0, "asymmetric parts (one way round only)"
    assert any(n in sizes for n in (2, 4, 8)), "parts with non-trivial symmetry"
    for aid, asm in library.items():  # every assembly can carry an orientation fault
        assert candidates(World(asm, Tolerances()), "wrong_orientation"), aid


def test_pins_and_pegs_leave_along_their_axis_only(library):
    pins = [p for asm in library.values() for p in asm.parts if p.kind in ("pin", "peg")]
    assert pins
    for p in pins:
        assert len({d[1] for d in p.removal_dirs}) == 1, p.part_id
        assert set(p.removal_dirs) < set(DIRECTIONS)


def test_supports_are_acyclic_contacts_checked_on_load(library):
    assert any(p.supports for asm in library.values() for p in asm.parts)
    for asm in library.values():  # the assembly order respects supports: a part goes in after its supports
        order = {pid: k for k, pid in enumerate(assembly_sequence(asm))}
        for p in asm.parts:
            assert all(order[s] < order[p.part_id] for s in p.supports), (asm.assembly_id, p.part_id)


def _deepest(world, asm, ftype: str) -> str:
    """The applicable part buried deepest (inserted first): the hardest fault of this type for the repair pipeline."""
    order = {pid: k for k, pid in enumerate(assembly_sequence(asm))}
    return min((world.ids[i] for i in candidates(world, ftype)), key=lambda pid: (order[pid], pid))


@pytest.mark.parametrize("aid", IDS)
def test_repair_plan_valid_for_every_fault_type(aid):
    asm = load_assembly(aid)
    world = World(asm, Tolerances())
    types = [t for t in MISTAKE_TYPES if candidates(world, t)]
    assert {"missing_part", "wrong_orientation", "misplacement", "under_insertion"} <= set(types)
    for ftype in types:
        task = make_task(asm, [FaultSpec(ftype, _deepest(world, asm, ftype))], seed=3)
        plan = feasible_plan(task)   # the registry's feasible planner for the task's kind of moves
        assert plan is not None, (aid, ftype)
        replay = world.restoration(task.actual, plan, task.target)
        assert replay.restored, (aid, ftype, str(replay.failure))


def test_exploded_view_only_translates_parts(library):
    asm = library["nested_boxes_3"]
    moved = exploded_voxels(asm)
    for p in asm.parts:
        shifts = {tuple(a - b for a, b in zip(v, min(p.voxels))) for v in p.voxels}
        assert shifts == {tuple(a - b for a, b in zip(v, min(moved[p.part_id]))) for v in moved[p.part_id]}
    lids = [min(v[1] for v in moved[p.part_id]) for p in asm.parts if p.kind == "lid"]
    assert lids == sorted(lids, reverse=True), "outer lids come off first, so they fly highest"


def test_show_writes_a_png(tmp_path, capsys):
    out = tmp_path / "luban.png"
    assert main(["show", "luban_lock_3", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    assert "luban_lock_3" in capsys.readouterr().out


@pytest.mark.slow
def test_show_wheel_hub_puts_every_part_in_view(tmp_path, capsys):
    """The assembled hub hides its bearings from every standard camera, so the default picture is exploded."""
    from forgeplan.render import _plot_voxels, best_camera, choose_view

    asm = load_assembly("wheel_hub")
    assembled, _ = _plot_voxels({p.part_id: p.voxels for p in asm.parts})
    assert best_camera(assembled)[1] < len(asm.parts)
    shapes, exploded, camera, seen = choose_view(asm, None, None)
    assert exploded and seen == len(asm.parts) == 13
    assert main(["show", "wheel_hub", "--out", str(tmp_path / "hub.png")]) == 0
    said = capsys.readouterr().out
    assert "wheel_hub, exploded" in said and "13 of 13 parts in view" in said


def test_visibility_sees_an_enclosed_core_only_when_exploded():
    from forgeplan.render import _plot_voxels, visible_parts

    shell = part("Shell", "box", box(0, 0, 0, 3, 3, 3) - box(1, 1, 1, 2, 2, 2))
    core = part("Core", "cube", box(1, 1, 1, 2, 2, 2))
    plot, _ = _plot_voxels({"Shell": shell.voxels, "Core": core.voxels})
    assert visible_parts(plot, 25.0, 45.0) == {"Shell"}
    apart, _ = _plot_voxels({"Shell": shell.voxels, "Core": frozenset((x + 4, y, z) for x, y, z in core.voxels)})
    assert visible_parts(apart, 25.0, 45.0) == {"Shell", "Core"}


@pytest.mark.slow
def test_show_draws_an_interlocked_puzzle(tmp_path, capsys):
    burr = tmp_path / "level6.json"
    assert main(["import", "--example", "mj_burr6_puzzle3", "--out", str(burr)]) == 0   # partial moves take it apart
    assert main(["show", str(burr), "--out", str(tmp_path / "b.png"), "--exploded"]) == 0
    assert "exploded" in capsys.readouterr().out and (tmp_path / "b.png").stat().st_size > 10_000


def test_show_unknown_assembly_exits_2_with_one_line(tmp_path, capsys):
    assert main(["show", "no_such_assembly", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no_such_assembly" in err
    assert not (tmp_path / "x.png").exists()


def test_show_into_missing_folder_exits_2(tmp_path, capsys):
    assert main(["show", "luban_lock_3", "--out", str(tmp_path / "nope" / "x.png")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


GROUP_BURRS = ["burr_6_split", "burr_6_pairs"]


def test_exactly_the_group_burrs_need_group_moves(library):
    modes = {aid: disassembly_verdict(asm)["mode"] for aid, asm in library.items()}
    assert sorted(a for a, m in modes.items() if m == "group_moves") == sorted(GROUP_BURRS)
    assert sorted(a for a, m in modes.items() if m == "interlocked") == sorted(PARTIAL_MOVES)  # straight moves fail
    assert set(modes.values()) == {"single_part", "group_moves", "interlocked"}
    assert all(needs_group_moves(asm) == (modes[aid] == "group_moves") for aid, asm in library.items())


@pytest.mark.parametrize("aid", GROUP_BURRS)
def test_group_burrs_have_no_free_piece_but_a_legal_group_move(aid):
    world = World(load_assembly(aid), Tolerances())
    start = world.target_state()
    legal = legal_actions(grounding(world), start)
    assert not [a for a in legal if a.name == "remove"]
    moves = [a for a in legal if a.name == "separate" and len(a.part_ids) < len(world.ids)]
    assert len(moves) == 2, "the first group and its complement, in opposite directions (or all parts at once)"
    a, b = moves
    assert set(a.part_ids) | set(b.part_ids) == set(world.ids) and not set(a.part_ids) & set(b.part_ids)


@pytest.mark.slow
@pytest.mark.parametrize("aid", GROUP_BURRS)
@pytest.mark.parametrize("fault", ["missing_part", "wrong_orientation"])
def test_group_burr_faults_get_proven_minimal_group_plans_fast_downward_agrees(aid, fault):
    """A fault inside a built-in group burr: clingo's proven optimum separates and joins a group, the
    reference verifies, and Fast Downward finds the same optimum."""
    asm = load_assembly(aid)
    world = World(asm, Tolerances())
    task = make_task(asm, [FaultSpec(fault, _deepest(world, asm, fault))], seed=5)
    comparison = compare_task(task, time_limit=120)
    assert comparison.verdict == "agree", comparison.reason
    result = solve_task(task)
    assert result.optimal
    names = [a.name for a in result.plan]
    assert "separate" in names or fault == "missing_part"
    assert "join" in names
    ref = reference_output(task, result)
    assert verify(task, json.dumps({k: ref[k] for k in ("annotation", "rework_plan")})).valid

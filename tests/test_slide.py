"""The engine's slide, removal from displaced positions and insertion at an offset (SEMANTICS.md §9),
against brute-force voxel stepping and the level search's disassembly plans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeplan.geometry.partial import disassemble_partial
from forgeplan.io.importers import read_puzzle
from forgeplan.library.voxels import box, part
from forgeplan.model.actions import Insert, Remove, Separate, Slide
from forgeplan.planners.registry import feasible_plan
from forgeplan.model.assembly import DIRECTION_VECTORS, DIRECTIONS, Assembly
from forgeplan.semantics.engine import World
from forgeplan.semantics.grounded import MoveKind
from forgeplan.verify import illegal_step_category
from cases import grounding

from burrdata import FOLDER, burr, param

ZIGZAG = [(2, 2, 2), (2, 3, 2), (3, 3, 2), (3, 3, 3), (3, 3, 4)]   # the core's way out: +y 1, +x 1, then +z


def tunnel_box() -> Assembly:
    return Assembly("tunnel", "fixture", (part("Shell", "box", box(0, 0, 0, 5, 5, 5) - frozenset(ZIGZAG)),
                                          part("Core", "cube", box(2, 2, 2, 3, 3, 3))))


def test_slide_then_remove_from_the_displaced_position_then_insert_at_an_offset_and_slide_home():
    w = World(tunnel_box())
    target = w.target_state()
    assert w.moves.kind is MoveKind.PARTIAL and w.check(target, Remove("Core")).code == "blocked"
    assert w.check(target, Slide(("Core",), "+y", 2)).code == "blocked"       # the second step collides
    s = w.apply(target, Slide(("Core",), "+y", 1))
    assert not w.equivalent(s, target) and "displaced by [0, 1, 0]" in w.differences(s, target)[0]
    s = w.apply(s, Slide(("Core",), "+x", 1))
    assert w.check(s, Remove("Core")) is None                                 # clear ray along +z from there
    empty = w.apply(s, Remove("Core"))
    assert w.check(empty, Insert("Core")).code == "blocked"                   # no straight way to the centre
    back = [Insert("Core", (1, 1, 0)), Slide(("Core",), "-x", 1), Slide(("Core",), "-y", 1)]
    assert w.restoration(empty, back, target).restored


def test_whole_shell_slides_are_relative_moves_too():
    w = World(tunnel_box())
    plan = [Slide(("Shell",), "-y", 1), Slide(("Shell",), "-x", 1), Remove("Core"),
            Slide(("Shell",), "+x", 1), Slide(("Shell",), "+y", 1)]
    r = w.replay(w.target_state(), plan)
    assert r.failure is None and not r.final.slots[1].present and w.restored(r.final, 0)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_bad_distance_is_a_parameter_error(bad):
    w = World(tunnel_box())
    reason = w.check(w.target_state(), Slide(("Core",), "+y", bad))
    assert reason.code == "bad_distance" and illegal_step_category(reason.code) == "parameter_error"


def test_level1_assemblies_keep_their_actions_and_contract():
    w = World(Assembly("pair", "fixture", (part("A", "a", box(0, 0, 0, 2, 1, 1)), part("B", "b", box(0, 1, 0, 2, 2, 1)))))
    assert w.moves.kind is not MoveKind.PARTIAL
    assert w.check(w.target_state(), Slide(("A",), "+x", 1)).code == "not_applicable"
    empty = w.apply(w.target_state(), Remove("B"))
    assert w.check(empty, Insert("B", (0, 1, 0))).code == "not_applicable"
    assert Insert("B").to_json() == {"action": "insert", "part_id": "B"}
    assert Insert("B", (0, 1, 0)).to_json() == {"action": "insert", "part_id": "B", "offset": [0, 1, 0]}


# ----------------------------------------------------------------------------- against brute force

def _voxels(w: World, state, i: int) -> set:
    o = state.slots[i].offset
    return {(x + o[0], y + o[1], z + o[2]) for x, y, z in w.parts[i].voxels}


def brute_slide_ok(w: World, state, members: list[int], d: str, k: int) -> bool:
    """Step the members one voxel at a time and look for a shared cell with a present non-member."""
    others = set().union(*(_voxels(w, state, j) for j in range(len(w.ids))
                           if state.slots[j].present and j not in members))
    v = DIRECTION_VECTORS[d]
    moving = set().union(*(_voxels(w, state, i) for i in members))
    return not any((x + v[0] * s, y + v[1] * s, z + v[2] * s) in others for s in range(1, k + 1) for x, y, z in moving)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sets(st.integers(0, 5), min_size=1, max_size=3), st.sampled_from(DIRECTIONS),
                          st.integers(1, 3)), min_size=1, max_size=8))
def test_slide_legality_is_collision_free_stepping(moves):
    """Random slides on a real level-6 burr: the engine accepts exactly the collision-free ones."""
    w = World(read_puzzle(burr("mj_burr6_puzzle3")).assembly)
    state = w.target_state()
    for members, d, k in moves:
        a = Slide(tuple(w.ids[i] for i in sorted(members)), d, k)
        ok = w.check(state, a) is None
        assert ok == brute_slide_ok(w, state, sorted(members), d, k)
        if ok:
            state = w.apply(state, a)


def _main_body_actions(tree) -> list:
    """The level search's chain of separations from the whole puzzle as engine actions: its slides, then
    the removal of what comes out (remove for one part, separate for a group), then the remaining half."""
    out = []
    node = tree
    while node is not None and node.moves:
        *slides, last = node.moves
        out += [Slide(m.parts, m.direction, m.distance) for m in slides]
        out.append(Remove(last.parts[0]) if len(last.parts) == 1 else Separate(last.parts, last.direction))
        node = node.left
    return out


@pytest.mark.parametrize("name", [param(p.name) for p in sorted(FOLDER.glob("*.json"))])
def test_the_level_search_plan_replays_in_the_engine(name):
    asm = read_puzzle(burr(name)).assembly
    w = World(asm)
    tree = disassemble_partial(asm)
    plan = _main_body_actions(tree)
    r = w.replay(w.target_state(), plan)
    assert r.failure is None, r.failure
    node = tree
    while node.left is not None and node.moves:
        node = node.left
    assert {p for p, s in zip(w.ids, r.final.slots) if s.present} == set(node.parts)


# ----------------------------------------------------------------------------- offered actions and the grammar

@settings(max_examples=40, deadline=None)
@given(st.lists(st.frozensets(st.tuples(*[st.integers(0, 3)] * 3), min_size=1, max_size=5), min_size=2, max_size=3),
       st.lists(st.tuples(*[st.integers(-2, 2)] * 3), min_size=2, max_size=2),
       st.sets(st.sampled_from(DIRECTIONS), min_size=1))
def test_arrival_offsets_are_exactly_the_clear_rays(pieces, offsets, dirs):
    from forgeplan.geometry.displacement import FREE, arrival_offsets, shapes

    sh = shapes(Assembly("a", "a", tuple(part(f"P{k}", "p", v) for k, v in enumerate(pieces))))
    others = list(range(1, len(pieces)))
    at = dict(zip(others, offsets))
    dirs = sorted(dirs)
    got = set(arrival_offsets(sh, 0, others, [at[j] for j in others], dirs, 3))
    span = range(-3, 4)
    want = {(x, y, z) for x in span for y in span for z in span
            if any(all(sh.gaps(0, j, tuple(at[j][a] - (x, y, z)[a] for a in range(3)))[DIRECTIONS.index(d)] >= FREE
                       for j in others) for d in dirs)}
    assert got == want


def test_legal_actions_offer_every_step_of_a_partial_repair_and_the_grammar_parses_it():
    import json

    from forgeplan.llm.grammar import lark_parser, specialise
    from forgeplan.planners.reference import simple_reference
    from forgeplan.semantics.faults import FaultSpec, make_task
    from forgeplan.semantics.legal import legal_actions

    asm = read_puzzle(burr("mj_burr6_puzzle3")).assembly
    task = make_task(asm, [FaultSpec("missing_part", asm.part_ids[2])])
    ref = simple_reference(task)
    state = task.actual
    for a in feasible_plan(task):
        assert a in legal_actions(grounding(task.world), state), a
        state = task.world.apply(state, a)
    text = json.dumps({k: ref[k] for k in ("annotation", "rework_plan")}, separators=(",", ":"))
    lark_parser(specialise(task)).parse(text)
    level1 = specialise(make_task(read_puzzle(burr("mj_burr6_puzzle0")).assembly, [FaultSpec("missing_part", None)]))
    assert "slide_group:" not in level1 and "coordinate:" not in level1

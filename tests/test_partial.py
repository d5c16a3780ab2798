"""Partial moves (SEMANTICS.md §9): gaps between displaced parts, plan replay, the BurrTools-style
disassembler and its dotted level against every real burr's recorded level."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeplan.cli import main
from forgeplan.geometry.displacement import FREE, max_slide, overlaps, replay_moves, shapes
from forgeplan.geometry.partial import disassemble_partial, partial_verdict
from forgeplan.io.importers import read_puzzle
from forgeplan.library.voxels import box, part
from forgeplan.model.assembly import DIRECTION_VECTORS, DIRECTIONS, Assembly

from burrdata import FOLDER, burr, param, shared_files


def asm_of(*parts) -> Assembly:
    return Assembly("fixture", "fixture", tuple(parts))


def tunnel_box(cavity) -> Assembly:
    """A 5x5x5 shell with a one-voxel core at its centre and a tunnel (`cavity`, the core's cell included)."""
    return asm_of(part("Shell", "box", box(0, 0, 0, 5, 5, 5) - frozenset(cavity)),
                  part("Core", "cube", box(2, 2, 2, 3, 3, 3)))


ZIGZAG = [(2, 2, 2), (2, 3, 2), (3, 3, 2), (3, 3, 3), (3, 3, 4)]   # +y 1, +x 1, then out along +z


# ----------------------------------------------------------------------------- gaps

voxel_sets = st.frozensets(st.tuples(*[st.integers(0, 2)] * 3), min_size=1, max_size=6)
offsets = st.tuples(*[st.integers(-4, 4)] * 3)


def brute_gap(a, b, rel, d) -> int:
    """Unit steps `a` moves along `d` before a voxel meets `b` (shifted by `rel`), by stepping."""
    placed = {(x + rel[0], y + rel[1], z + rel[2]) for x, y, z in b}
    v = DIRECTION_VECTORS[d]
    for k in range(0, 20):
        if any((x + v[0] * k, y + v[1] * k, z + v[2] * k) in placed for x, y, z in a):
            return k - 1
    return FREE


@settings(max_examples=150, deadline=None)
@given(voxel_sets, voxel_sets, offsets)
def test_gaps_agree_with_stepping_the_part_through_space(a, b, rel):
    sh = shapes(asm_of(part("A", "a", a), part("B", "b", b)))
    b_vox = sh.voxels[1]
    for i, d in enumerate(DIRECTIONS):
        assert sh.gaps(0, 1, rel)[i] == brute_gap(a, b_vox, rel, d)
        assert sh.gaps(1, 0, tuple(-c for c in rel))[i] == brute_gap(b_vox, a, tuple(-c for c in rel), d)


def test_overlap_and_slide_room_of_displaced_parts():
    a = tunnel_box(ZIGZAG)
    sh = shapes(a)
    home = [(0, 0, 0), (0, 0, 0)]
    assert not overlaps(sh, home, 0, 1) and overlaps(sh, [(0, 0, 0), (1, 0, 0)], 0, 1)
    assert max_slide(sh, home, [1], [0], "+y") == 1 and max_slide(sh, home, [1], [0], "+x") == 0
    assert max_slide(sh, [(0, 0, 0), (1, 1, 0)], [1], [0], "+z") == FREE     # clear ray from the displaced pose
    assert max_slide(sh, home, [1], [0], "+z") == 0                          # the same ray from home is blocked


# ----------------------------------------------------------------------------- replay


def test_replay_checks_every_unit_step_and_the_ray_from_the_displaced_position():
    a = tunnel_box(ZIGZAG)
    plan = [{"move": ["Core"], "dir": "+y", "distance": 1}, {"move": ["Core"], "dir": "+x", "distance": 1},
            {"move": ["Core"], "dir": "+z", "distance": "out"}]
    assert replay_moves(a, plan).valid
    too_far = [{**plan[0], "distance": 2}, *plan[1:]]
    r = replay_moves(a, too_far)
    assert not r.valid and r.executed == 0 and "collides after 1 step" in r.reason
    early = [plan[0], {"move": ["Core"], "dir": "+z", "distance": "out"}]
    assert not replay_moves(a, early).valid
    assert "still together" in replay_moves(a, plan[:2]).reason
    for bad, words in (({"move": ["Core"], "dir": "up", "distance": 1}, "direction"),
                       ({"move": ["Core"], "dir": "+y", "distance": 0}, "distance"),
                       ({"move": ["Nope"], "dir": "+y", "distance": 1}, "unknown part"),
                       ({"move": ["Core", "Shell"], "dir": "+y", "distance": 1}, "proper part")):
        assert words in replay_moves(a, [bad]).reason


@pytest.mark.parametrize("name", [param(p.name) for p in sorted(FOLDER.glob("*.json"))])
def test_every_reference_disassembly_in_the_data_replays(name):
    path = burr(name)
    puzzle = read_puzzle(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    steps = [{**s, "move": [puzzle.part_for(m) for m in s["move"]]} for s in data["reference_disassembly"]["steps"]]
    r = replay_moves(puzzle.assembly, steps)
    inseparable = data.get("inseparable_groups")
    assert r.valid or (inseparable and "still together" in r.reason)


# ----------------------------------------------------------------------------- the disassembler


def test_tunnels_take_exactly_as_many_moves_as_turns():
    straight = disassemble_partial(tunnel_box([(2, 2, 2), (3, 2, 2), (4, 2, 2)]))
    assert straight.level() == "1"
    zigzag = disassemble_partial(tunnel_box(ZIGZAG))
    assert zigzag.level() == "3" and [m.distance for m in zigzag.moves] == [1, 1, None]
    assert replay_moves(tunnel_box(ZIGZAG), [m.to_json() for m in zigzag.steps()]).valid


def test_an_enclosed_core_is_proved_inseparable():
    shell = part("Shell", "box", box(0, 0, 0, 3, 3, 3) - box(1, 1, 1, 2, 2, 2))
    core = part("Core", "cube", box(1, 1, 1, 2, 2, 2))
    v = partial_verdict(asm_of(shell, core))
    assert not v["disassemblable"] and v["mode"] == "inseparable" and v["inseparable"] == [["Shell", "Core"]]
    assert v["level"] is None and "every reachable displacement state was searched" in v["verdict"]


def _data_level(name: str) -> str:
    return json.loads(burr(name).read_text(encoding="utf-8"))["level"]


@pytest.mark.parametrize("name", [param(p.name) for p in sorted(FOLDER.glob("*.json"))])
def test_level_matches_the_recorded_first_separation_and_the_plan_replays(name):
    puzzle = read_puzzle(burr(name))
    tree = disassemble_partial(puzzle.assembly)
    assert tree.level().split(".")[0] == _data_level(name).split(".")[0]
    r = replay_moves(puzzle.assembly, [m.to_json() for m in tree.steps()])
    expected = json.loads(burr(name).read_text(encoding="utf-8")).get("inseparable_groups", [])
    stuck = [sorted(puzzle.piece_names[p] for p in s) for s in tree.stuck_sets()]
    assert stuck == [sorted(g) for g in expected]
    assert r.valid == (not expected)


def test_check_reports_level_and_plan_of_a_partial_move_burr(capsys):
    assert main(["assemblies", "--check", str(burr("mj_burr6_puzzle3")), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["mode"] == "partial_moves" and row["level"] == "6" and row["first_separation_moves"] == 6
    assert replay_moves(read_puzzle(burr("mj_burr6_puzzle3")).assembly, row["steps"]).valid
    assert "interlocked" not in row


def test_check_of_level1_burr_says_level_1(capsys):
    assert main(["assemblies", "--check", str(burr("mj_burr6_puzzle0")), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["level"] == "1" and row["mode"] in ("single_part", "group_moves")


@pytest.mark.parametrize("path", shared_files(), ids=lambda p: p.stem)
def test_check_never_says_interlocked_for_a_real_burr(path, capsys):
    code = main(["assemblies", "--check", str(path)])
    out = capsys.readouterr().out
    assert "interlock" not in out
    level = _data_level(path.name)
    assert f"level {level.split('.')[0]}" in out if level != "1" else "straight moves" in out
    assert code == (1 if "inseparable_groups" in json.loads(path.read_text(encoding="utf-8")) else 0)


# ----------------------------------------------------------------------------- minimality against brute force

def brute_first_separation(asm: Assembly, limit: int = 20_000) -> int | None:
    """Fewest moves to the first separation by a naive breadth-first search: every proper subset of
    the parts (not only the closed ones), every direction, every distance up to the grid size, each
    checked by stepping voxels; states are offsets relative to the first part."""
    from forgeplan.model.assembly import DIRECTION_VECTORS

    vox = [p.voxels for p in asm.parts]
    n, size = len(vox), 1 + max(c for v in vox for x in v for c in x)

    def cells(group, state, shift):
        return {(x + o[0] + shift[0], y + o[1] + shift[1], z + o[2] + shift[2])
                for i in group for o in (state[i],) for x, y, z in vox[i]}

    def clear(group, rest, state, v, steps):
        fixed = cells(rest, state, (0, 0, 0))
        return all(not cells(group, state, (v[0] * s, v[1] * s, v[2] * s)) & fixed for s in range(1, steps + 1))

    start = ((0, 0, 0),) * n
    seen, frontier, depth = {start}, [start], 0
    while frontier and len(seen) < limit:
        depth += 1
        nxt = []
        for state in frontier:
            for mask in range(1, (1 << n) - 1):
                group = [i for i in range(n) if mask >> i & 1]
                rest = [i for i in range(n) if not mask >> i & 1]
                for v in DIRECTION_VECTORS.values():
                    if clear(group, rest, state, v, 3 * size):
                        return depth
                    k = 1
                    while k <= 2 * size and clear(group, rest, state, v, k):
                        moved = [tuple(o[a] + v[a] * k * (i in group) for a in range(3)) for i, o in enumerate(state)]
                        child = tuple(tuple(o[a] - moved[0][a] for a in range(3)) for o in moved)
                        if child not in seen:
                            seen.add(child)
                            nxt.append(child)
                        k += 1
        frontier = nxt
    return None


def tunnel_puzzle(steps, core_cells: int, cut_x: int | None, cut_y: int | None = None) -> Assembly:
    """A 5x5x5 shell with a tunnel dug by `steps` (unit directions, revisits skipped) from the centre to
    the outside; the core is the tunnel's first `core_cells` cells; the shell is split at x = cut_x and
    at y = cut_y (when given) into up to four pieces."""
    from forgeplan.model.assembly import DIRECTION_VECTORS

    walk, at = [(2, 2, 2)], (2, 2, 2)
    for d in steps:
        v = DIRECTION_VECTORS[d]
        nxt = (at[0] + v[0], at[1] + v[1], at[2] + v[2])
        if nxt in walk:
            continue
        if not all(0 <= c < 5 for c in nxt):
            break
        walk.append(nxt)
        at = nxt
    shell = box(0, 0, 0, 5, 5, 5) - frozenset(walk)
    quarter = {}
    for v in shell:
        quarter.setdefault((cut_x is not None and v[0] >= cut_x, cut_y is not None and v[1] >= cut_y), set()).add(v)
    shells = [part(f"Shell{k}", "shell", frozenset(q)) for k, (_, q) in enumerate(sorted(quarter.items()))]
    return asm_of(part("Core", "core", frozenset(walk[:core_cells])), *shells)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(DIRECTIONS), min_size=1, max_size=12), st.integers(1, 2),
       st.none() | st.integers(1, 4), st.none() | st.integers(1, 4))
def test_first_separation_is_as_short_as_a_naive_search_over_every_subset(steps, core_cells, cut_x, cut_y):
    """Random tunnels out of a (possibly split) shell: the level search's first separation takes exactly
    as many moves as a naive search over every subset, or neither finds one."""
    asm = tunnel_puzzle(steps, core_cells, cut_x, cut_y)
    tree = disassemble_partial(asm)
    ours = len(tree.moves) if tree.moves else None
    assert ours == brute_first_separation(asm)

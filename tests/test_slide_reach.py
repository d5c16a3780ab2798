"""The exact arguments of the moved-set search (SEMANTICS.md §9) against the plain search they stand in
for: which moved sets have a plan (`moved_set.reach`), the mirror optimum of one faulty part
(`moved_set.mirror`), lower bounds (`moved_set.bounds`) and the pruned searches that use them."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from burrdata import burr, param
from forgeplan.io.catalog import load_checkable
from forgeplan.io.importers import import_puzzle
from forgeplan.library import build
from forgeplan.model.actions import moved_parts
from forgeplan.planners.moved_set import search as slide_search
from forgeplan.planners.moved_set.bounds import LowerBound
from forgeplan.planners.moved_set.mirror import mirror_optimum
from forgeplan.planners.moved_set.reach import Undecided, escape_set, has_plan
from forgeplan.planners.moved_set.search import NO_LIMIT, minimal_rework, start_node
from forgeplan.model.state import NO_OFFSET, Tolerances
from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.engine import World
from forgeplan.semantics.faults import FaultSpec, candidates, make_task
from forgeplan.semantics.grounded import canonical_key, part_ranks

DATA = Path(__file__).resolve().parent / "data" / "partial_fd"
KINDS = ("missing_part", "wrong_orientation", "misplacement", "under_insertion")
POSE_KINDS = KINDS[1:]       # one present part off its pose or turned, every slot at its target place
BURR_E = "solid6burr_e_asm901"


@lru_cache(maxsize=None)
def puzzle(name: str):
    """A test puzzle, a built-in assembly or a real burr (kept: worlds and their tables are shared)."""
    if name.startswith("zigzag"):
        return import_puzzle(DATA / f"{name}.json")
    if name.startswith("burr_6"):
        return build(name)
    return load_checkable(burr(name))


@lru_cache(maxsize=None)
def grounding(asm) -> AssemblyGrounding:
    """One assembly grounding per test puzzle, shared by its tasks (as a benchmark batch shares one)."""
    return AssemblyGrounding(World(asm, Tolerances()))


@lru_cache(maxsize=None)
def single_faults(name: str, kinds: tuple[str, ...] = KINDS) -> tuple:
    """(kind, slot, task, start node) for every single fault of every slot that can carry it."""
    asm, out = puzzle(name), []
    world = grounding(asm).world
    for kind in kinds:
        for i in candidates(world, kind):
            task = make_task(asm, [FaultSpec(kind, world.ids[i])], seed=0, world=world)
            out.append((kind, i, task, start_node(task.world, task.actual)))
    return tuple(out)


def forced(start) -> int:
    """The slots every plan moves: faulty, missing or displaced (as `minimal_rework` counts them)."""
    config, bad = start
    return bad | sum(1 << i for i, o in enumerate(config) if o is None or o != NO_OFFSET)


def moved_sets(world, start, size: int | None = None) -> list[int]:
    """Every moved set holding the forced slots (of `size` slots when given)."""
    must, n = forced(start), len(world.ids)
    return [m for m in range(1 << n) if m & must == must and (size is None or bin(m).count("1") == size)]


def first_sets_with_plans(ag, start) -> list[int]:
    """The moved sets of the smallest size for which `has_plan` finds a plan."""
    for size in range(bin(forced(start)).count("1"), len(ag.world.ids) + 1):
        found = [m for m in moved_sets(ag.world, start, size) if has_plan(ag, start, m)[0]]
        if found:
            return found
    raise AssertionError("no moved set has a plan")


# ----------------------------------------------------------------------------- has_plan vs the plain search

def _compare_verdicts(name: str, largest: int, cap: int = 4_000) -> tuple[int, int, int]:
    """(exact comparisons, one-sided ones, undecided) of has_plan against the unbounded plain search, on
    the moved sets of at most `largest` slots."""
    exact = one_sided = undecided = 0
    for kind, i, task, start in single_faults(name):
        for m in moved_sets(task.world, start):
            if bin(m).count("1") > largest:
                continue
            exists = has_plan(grounding(task.assembly), start, m)[0]
            _, c, complete = slide_search._bfs(grounding(task.assembly), start, m, NO_LIMIT, cap)
            if complete:
                assert exists == (c is not None), (name, kind, i, bin(m), exists, c)
                exact += 1
            elif c is not None:      # a cut search's plan is still a plan
                assert exists, (name, kind, i, bin(m), c)
                one_sided += 1
            else:
                undecided += 1
    return exact, one_sided, undecided


@pytest.mark.parametrize("name, largest", [("zigzag3", 3), ("burr_6_level4", 4),
                                           pytest.param("zigzag4", 4, marks=pytest.mark.slow),
                                           pytest.param("burr_6_level4", 6, marks=pytest.mark.slow),
                                           pytest.param("burr_6_level5", 6, marks=pytest.mark.slow),
                                           pytest.param(BURR_E, 6, marks=param(BURR_E).marks + (pytest.mark.slow,))])
def test_has_plan_agrees_with_the_exhausted_plain_search_on_every_moved_set(name, largest):
    """has_plan says a moved set has a plan exactly when the unbounded plain search finds one."""
    exact, one_sided, undecided = _compare_verdicts(name, largest)
    total = exact + one_sided + undecided
    assert exact >= 0.4 * total and exact + one_sided >= 0.85 * total, (exact, one_sided, undecided)


# ----------------------------------------------------------------------------- the mirror optimum

@pytest.mark.parametrize("name", ["zigzag3", "zigzag4", "burr_6_level4", param(BURR_E)])
def test_the_mirror_optimum_is_the_optimum_the_plain_search_proves(name):
    """For one faulty part in place, min over the first plan-holding sets of 2e+1/2e+2 is the proven (J, c)."""
    compared = 0
    tasks = single_faults(name, POSE_KINDS)
    for kind, p, task, start in tasks:
        w = grounding(task.assembly)
        sets = first_sets_with_plans(w, start)
        mirrored = [mirror_optimum(w, p, m) for m in sets]
        assert None not in mirrored, (kind, p)
        c, j = min(got[0] for got in mirrored), bin(sets[0]).count("1")
        plain = minimal_rework(w, task.actual, proof_cap=1)
        if plain.optimal:
            assert (plain.moved, plain.actions) == (j, c), (kind, p)
            compared += 1
        found = minimal_rework(w, task.actual)
        assert found.optimal and (found.moved, found.actions) == (j, c), (kind, p)
        assert len(moved_parts(found.plan)) == j and len(found.plan) == c
        assert w.world.restoration(task.actual, found.plan, task.target).restored
    assert compared >= 0.75 * len(tasks) and compared > 0


# ----------------------------------------------------------------------------- lower bounds

def _met_nodes(name: str, every: int = 1, per_search: int | None = None, cap: int = 4_000) -> list:
    """(task, moved set, node, true distance to the goal) for the nodes of every `every`-th exhausted plain
    search from a single fault's start (at most `per_search` of each, spread out), where the search from
    that node is exhausted and finds the goal."""
    searches = []
    for _, _, task, start in single_faults(name):
        for m in moved_sets(task.world, start):
            dist, _, complete = slide_search._bfs(grounding(task.assembly), start, m, NO_LIMIT, cap)
            if complete:
                searches.append((task, m, sorted(dist, key=repr)))
    out = []
    for task, m, nodes in searches[::every]:
        step = 1 if per_search is None else max(1, len(nodes) // per_search)
        for node in nodes[::step]:
            _, c, done = slide_search._bfs(grounding(task.assembly), node, m, NO_LIMIT, cap)
            if done and c is not None:
                out.append((task, m, node, c))
    return out


@pytest.mark.parametrize("name", ["zigzag3", "zigzag4"])
def test_the_lower_bound_never_exceeds_the_true_distance(name):
    """LowerBound is admissible on every node the exhausted plain searches meet, and not trivially zero."""
    bounds, positive, met = {}, 0, _met_nodes(name, cap=500)
    for task, m, node, c in met:
        key = (id(task.assembly), m)
        if key not in bounds:
            bounds[key] = LowerBound(grounding(task.assembly), m, 200_000)
        b = bounds[key](node)
        assert 0 <= b <= c, (task.faults, bin(m), node, b, c)
        positive += b > 0
    assert len(met) > 100 and positive > len(met) // 2


@pytest.mark.slow
@pytest.mark.parametrize("name", [param(BURR_E)])
def test_the_lower_bound_is_admissible_on_a_real_burr(name):
    """LowerBound is admissible on sampled nodes of the burr's exhausted plain searches."""
    met = _met_nodes(name, every=10, per_search=3)
    positive = 0
    for task, m, node, c in met:
        b = LowerBound(grounding(task.assembly), m, 200_000)(node)
        assert 0 <= b <= c, (task.faults, bin(m), node, b, c)
        positive += b > 0
    assert len(met) > 50 and positive > len(met) // 2


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(0, 10 ** 6), st.integers(0, 10 ** 6))
def test_no_bounded_search_meets_the_goal_closer_than_the_lower_bound(pick_task, pick_set, pick_node):
    """From a node a search meets, a search bounded one short of LowerBound finds no plan (_bounded's pruning)."""
    tasks = single_faults("burr_6_level4")
    _, _, task, start = tasks[pick_task % len(tasks)]
    sets = moved_sets(task.world, start)
    m = sets[pick_set % len(sets)]
    dist, _, _ = slide_search._bfs(grounding(task.assembly), start, m, NO_LIMIT, 2_000)
    node = sorted(dist, key=repr)[pick_node % len(dist)]
    b = LowerBound(grounding(task.assembly), m, 200_000)(node)
    if b > 0:
        _, c, _ = slide_search._bfs(grounding(task.assembly), node, m, b - 1, 20_000)   # a plan it meets, cut or not, is a plan
        assert c is None, (task.faults, bin(m), node, b, c)


# ----------------------------------------------------------------------------- pruned searches

@pytest.mark.parametrize("name", ["zigzag3", "zigzag4", param(BURR_E),
                                  pytest.param("burr_6_level4", marks=pytest.mark.slow),
                                  pytest.param("burr_6_level5", marks=pytest.mark.slow)])
def test_the_exact_arguments_prove_what_the_plain_search_proves(name):
    """With the plain search cut at once, the exact arguments prove the same (J, c); without a mirror, the same plan."""
    compared = 0
    for kind, i, task, _ in single_faults(name):
        w = grounding(task.assembly)
        plain = minimal_rework(w, task.actual, proof_cap=1)
        pruned = minimal_rework(w, task.actual, cap=1)
        assert pruned.optimal and w.world.restoration(task.actual, pruned.plan, task.target).restored, (kind, i)
        assert len(moved_parts(pruned.plan)) == pruned.moved and len(pruned.plan) == pruned.actions
        if pruned.proved_by == "engine-search":   # an engine plan below the grounded optimum (SEARCH.md §3.3)
            assert pruned.moved == plain.moved and pruned.actions < plain.actions, (kind, i)
        elif plain.optimal:
            assert (pruned.moved, pruned.actions) == (plain.moved, plain.actions), (kind, i)
            if kind == "missing_part":
                assert pruned.plan == plain.plan, (kind, i)
            compared += 1
        else:     # the plain search's best plan is a plan: a proved optimum is never worse
            assert (pruned.moved, pruned.actions) <= (plain.moved, plain.actions), (kind, i)
    assert compared >= len(single_faults(name)) // 2


def _offsets_along(world, actual, plan) -> list:
    """The offsets (None when absent) after each prefix of `plan`, from `actual`."""
    return [tuple(x.offset if x.present else None for x in world.replay(actual, plan[:t]).final.slots)
            for t in range(len(plan) + 1)]


@pytest.mark.parametrize("kind, slot", [("wrong_orientation", 4), ("misplacement", 0)])
def test_a_mirror_proved_plan_is_its_way_out_the_mend_and_the_way_out_undone(kind, slot):
    """Where only the mirror argument proves the optimum, the plan is the mirror plan (SEMANTICS §9, 3.), never
    canonically smaller than the plain search's tie-break plan."""
    _, _, task, _ = next(f for f in single_faults("burr_6_level5", POSE_KINDS) if f[:2] == (kind, slot))
    w = grounding(task.assembly)
    plain = minimal_rework(w, task.actual)          # proved by the plain search: the §4 tie-break plan
    mirrored = minimal_rework(w, task.actual, cap=1)
    assert plain.optimal and mirrored.optimal and w.world.restoration(task.actual, mirrored.plan, task.target).restored
    assert (mirrored.moved, mirrored.actions) == (plain.moved, plain.actions)
    c = mirrored.actions
    e = (c - 1) // 2           # c = 2e + 1 (the mend in the middle) or 2e + 2 (out and back in the middle)
    middle = [str(x).split("(")[0] for x in mirrored.plan[e:c - e]]
    assert middle in (["rotate"], ["reset_pose"], ["remove", "insert"], ["separate", "join"]), middle
    offsets = _offsets_along(w.world, task.actual, mirrored.plan)
    assert all(offsets[t] == offsets[c - t] for t in range(e + 1))
    ranks = part_ranks(w.world)
    assert [canonical_key(x, ranks) for x in plain.plan] <= [canonical_key(x, ranks) for x in mirrored.plan]


# ----------------------------------------------------------------------------- escape sets

@pytest.mark.parametrize("name", ["burr_6_level4", "burr_6_level5", param(BURR_E)])
def test_with_every_slot_movable_every_slot_escapes(name):
    """The whole assembly comes apart when every slot may move, so every slot escapes."""
    ag = grounding(puzzle(name))
    world = ag.world
    everything = (1 << len(world.ids)) - 1
    assert escape_set(ag, everything)[0] == everything


@pytest.mark.parametrize("name", ["burr_6_level4", "burr_6_level5", "zigzag3", "zigzag4"])
def test_a_single_movable_slot_escapes_exactly_when_it_slides_to_a_clear_ray(name):
    """escape_set of one slot agrees with slide_search.escapes (the slot alone sliding past the fixed rest)."""
    ag = grounding(puzzle(name))
    world = ag.world
    home = tuple(NO_OFFSET for _ in world.ids)
    verdicts = [escape_set(ag, 1 << f)[0] == 1 << f for f in range(len(world.ids))]
    assert verdicts == [slide_search.escapes(ag, home, 1 << f, f) for f in range(len(world.ids))]


def test_no_stick_or_pair_of_sticks_of_an_interlocked_burr_escapes_alone():
    """In burr_6_level4 (level 4: no straight move frees anything) no stick, nor pair of sticks, can leave alone."""
    ag = grounding(puzzle("burr_6_level4"))
    world = ag.world
    for size in (1, 2):
        for group in combinations(range(len(world.ids)), size):
            assert escape_set(ag, sum(1 << i for i in group))[0] == 0, group


def test_the_zigzag_core_escapes_alone_through_its_tunnel_once_the_cap_is_gone():
    """zigzag3: the cap leaves alone, the core only when the cap may move too; the shell is held by what it holds."""
    ag = grounding(puzzle("zigzag3"))
    shell, core, cap = 1, 2, 4     # catalog order: the shell, the core, the cap
    assert escape_set(ag, cap)[0] == cap
    assert escape_set(ag, core)[0] == 0
    assert escape_set(ag, core | cap)[0] == core | cap
    assert escape_set(ag, shell)[0] == 0
    assert escape_set(ag, shell | core)[0] == shell | core     # the shell carries the core away from the cap


# ----------------------------------------------------------------------------- caps

def test_a_capped_verdict_is_not_a_proof():
    """has_plan past its cap raises Undecided; minimal_rework with every search capped does not claim optimality."""
    _, _, task, start = next(f for f in single_faults("burr_6_level4", POSE_KINDS) if f[:2] == ("wrong_orientation", 0))
    w = grounding(task.assembly)
    sets = first_sets_with_plans(w, start)
    exists, states = has_plan(w, start, sets[0])
    assert exists and states > 1
    with pytest.raises(Undecided):
        has_plan(w, start, sets[0], cap=1)
    assert minimal_rework(w, task.actual).optimal
    capped = minimal_rework(w, task.actual, cap=1, proof_cap=1)
    assert not capped.optimal      # and what it returns is no plan (nothing met) or one that restores
    assert capped.plan is None or w.world.restoration(task.actual, capped.plan, task.target).restored

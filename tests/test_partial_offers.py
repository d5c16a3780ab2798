"""The compiled offers of the moved-set search (semantics/partial_offers.py) against their definition, and
the search's shortcuts against the search without them: the dead-set skip changes no result, kept landing
indexes equal fresh ones, and an unproved search never reports a plan worse than the repair search's."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeplan.geometry.displacement import FREE, shapes
from forgeplan.library import build
from forgeplan.model.actions import moved_parts
from forgeplan.model.assembly import DIRECTIONS
from forgeplan.model.state import Tolerances
from forgeplan.planners.moved_set import search as slide_search, solve as partial_solve
from forgeplan.planners.result import Status
from forgeplan.planners.registry import solve as solve_task
from forgeplan.planners.partial_repair import partial_repair_plan
from forgeplan.semantics import partial_offers, partial_universe
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.partial_universe import (apply_move, in_domain, landing_index, offered_steps, position_bound,
                                                  room, separable_at)
from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.engine import World

from test_slide_search import burr_e, tunnel


def defined_offer(world, config, movable):
    """§9's slides and departures from their definition: every set G of present movable slots with room
    along d (no other slot touches it ahead), leaving when the room is a clear ray (one part, or a
    separable group), else sliding by every k up to the room that keeps every member in the domain;
    in the order per direction, per group mask, per distance."""
    sh, bound = shapes(world.assembly), position_bound(world.assembly)
    here = [i for i, o in enumerate(config) if o is not None and movable >> i & 1]
    groups = sorted(sum(1 << i for i in g) for n in range(1, len(here) + 1) for g in combinations(here, n))
    out = []
    for d, name in enumerate(DIRECTIONS):
        for g in groups:
            r = room(sh, config, g, d)
            if r < 1:
                continue
            if r >= FREE:
                members = [config[i] for i in range(len(config)) if g >> i & 1]
                if g & (g - 1) == 0 or separable_at(world, g, members):
                    out.append(("out", g, name))
                continue
            for k in range(1, r + 1):
                moved = apply_move(config, ("slide", g, name, k))
                if all(in_domain(bound, moved[i]) for i in range(len(config)) if g >> i & 1):
                    out.append(("slide", g, name, k))
    return [(m, apply_move(config, m)) for m in out]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=10), st.sampled_from(["tunnel", "burr"]),
       st.integers(1, 63))
def test_the_compiled_offer_is_the_defined_one_on_random_walks(picks, which, movable):
    asm = tunnel() if which == "tunnel" else burr_e()
    w = World(asm, Tolerances())
    shared = AssemblyGrounding(w)
    movable &= (1 << len(asm.parts)) - 1
    everything = (1 << len(asm.parts)) - 1
    config = tuple((0, 0, 0) for _ in asm.parts)
    for pick in picks:
        assert list(partial_offers.OfferTable(w).steps(config, movable)) == defined_offer(w, config, movable)
        steps = list(offered_steps(shared, config, everything))
        if not steps:
            break
        move, nxt = steps[pick % len(steps)]
        assert nxt == apply_move(config, move)
        config = nxt


def _results(task):
    found = slide_search.minimal_rework(AssemblyGrounding(task.world), task.actual)
    return found.plan, found.moved, found.actions, found.optimal


@pytest.mark.parametrize("make", [
    lambda: make_task(tunnel(), [FaultSpec.parse("missing_part:Core")], seed=3),
    lambda: make_task(tunnel(), [FaultSpec.parse("missing_part:Shell")], seed=3),
    lambda: make_task(burr_e(), [FaultSpec.parse("missing_part:Solid6burrEAsm901_Part03_Stick")], seed=1),
    lambda: make_task(burr_e(), [FaultSpec.parse("wrong_orientation:Solid6burrEAsm901_Part02_Stick")], seed=2),
])
def test_the_shortcuts_change_no_proved_result(make, monkeypatch):
    """The dead-set skip and the shallow-plan probe are exact: with them and without them the proved
    optimum and its plan are the same."""
    task = make()
    with_shortcuts = _results(task)
    monkeypatch.setattr(slide_search, "_can_arrive", lambda *a: True)
    monkeypatch.setattr(slide_search, "_probe", lambda *a: (None, 0))
    without = _results(task)   # on an assembly grounding of its own: nothing kept from the first
    assert with_shortcuts[3] and without[3]
    assert with_shortcuts == without


def test_the_probe_proves_a_shallow_whole_group_plan():
    """Missing Part01 of solid6burr_e: no set of four parts can take it back in, and of the five-part sets
    one has the two-action separate-and-join plan. Searched one after another, the sets before it run
    into their caps; bounded by the probe's length 2, every one finishes, which proves (5, 2)."""
    task = make_task(burr_e(), [FaultSpec.parse("missing_part:Solid6burrEAsm901_Part01_Stick")], seed=0)
    found = slide_search.minimal_rework(AssemblyGrounding(task.world), task.actual)
    assert found.optimal and (found.moved, found.actions) == (5, 2)
    assert [a.name for a in found.plan] == ["separate", "join"]
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(slide_search, "_probe", lambda *a: (None, 0))
    try:
        assert not slide_search.minimal_rework(AssemblyGrounding(task.world), task.actual, proof_cap=1).optimal
        again = slide_search.minimal_rework(AssemblyGrounding(task.world), task.actual)     # the exact arguments prove it too
        assert again.optimal and again.plan == found.plan
    finally:
        monkeypatch.undo()


def test_a_set_whose_landings_never_bring_the_missing_slot_in_is_skipped():
    task = make_task(build("burr_6_level5"), [FaultSpec.parse("missing_part:Burr6Level5_Part02_Stick")], seed=0)
    w = AssemblyGrounding(task.world)
    start = slide_search.start_node(task.world, task.actual)
    movable = 0b10110    # the missing slot and two sticks that cannot take it out
    assert landing_index(w, movable, tuple((0, 0, 0) for _ in start[0]), cap=10 ** 6) == {}
    dist, found, complete = slide_search._bfs(w, start, movable, slide_search.NO_LIMIT, slide_search.CAP)
    assert (len(dist), found, complete) == (1, None, True)


def test_a_kept_landing_index_equals_a_fresh_one():
    world = make_task(burr_e(), [], seed=0).world
    w = AssemblyGrounding(world)
    home = tuple((0, 0, 0) for _ in world.ids)
    first = landing_index(w, 0b111000, home, cap=3000)
    assert landing_index(w, 0b111000, home, cap=3000) is first      # kept
    assert landing_index(AssemblyGrounding(world), 0b111000, home, cap=3000) == first   # and the same as a fresh one
    with pytest.raises(OverflowError):
        landing_index(w, 0b111111, home, cap=10, deadline=0.0)
    assert not any(k[0] == 0b111111 for k in w.memo(partial_universe.LANDINGS))   # a clock-cut index is not kept


def test_an_unproved_search_gives_way_to_a_better_repair_plan(monkeypatch):
    """Cut by its state budget, and with the exact arguments held to one configuration, the search meets
    only the whole-set separate and join (J = 6); the repair search moves five parts in 14 actions, which
    wins the lexicographic order. Not held, the exact arguments prove a shorter plan of five parts (10).
    The solver takes its search from `SEARCHES` by objective, so the held search is put there."""
    task = make_task(build("burr_6_level5"), [FaultSpec("wrong_orientation", "Burr6Level5_Part02_Stick"),
                                              FaultSpec("misplacement", "Burr6Level5_Part03_Stick")], seed=1)
    found = slide_search.minimal_rework(AssemblyGrounding(task.world), task.actual, proof_cap=1)
    repair = partial_repair_plan(task.world, task.actual, task.target)
    assert not found.optimal and found.plan is not None and repair is not None
    held = slide_search.minimal_rework
    monkeypatch.setitem(partial_solve.SEARCHES, "moved-parts,actions",
                        lambda w, a, limit=None: held(w, a, limit, proof_cap=1))
    result = solve_task(task)   # grounded alone: no search kept from elsewhere
    best = min((len(moved_parts(p)), len(p)) for p in (found.plan, repair))
    assert (result.moved_parts, result.actions) == best == (5, 14)
    assert result.proof == "repair-search" and result.status is not Status.OPTIMAL
    monkeypatch.undo()
    proved = solve_task(task)
    assert proved.status is Status.OPTIMAL and (proved.moved_parts, proved.actions) == (5, 10)
    assert task.world.restoration(task.actual, list(proved.plan), task.target).restored
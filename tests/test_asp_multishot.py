"""One grounding per assembly: solving many tasks on a shared grounding gives, task for task, exactly
the result of a grounding made for that task alone (plan, optimum, proof, horizon, bound)."""

from __future__ import annotations

import gc
import weakref

import pytest

from forgeplan.io.catalog import load_assembly
from forgeplan.model.state import Tolerances
from forgeplan.planners.asp import solve as asp
from forgeplan.planners.asp.facts import task_universe
from forgeplan.planners.asp import grounding
from forgeplan.planners.asp.grounding import grounding_for, groundings, prepare
from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.grounded import ground
from forgeplan.semantics.diagnosis import MISTAKE_TYPES
from forgeplan.semantics.faults import FaultSpec, candidates, make_task
from forgeplan.semantics.engine import World


def fault_tasks(assembly: str, seeds: int) -> list:
    """Every applicable fault type x seeds on a built-in assembly, plus a two-fault task per seed, grounded
    on one assembly grounding (as a benchmark batch's are), which keeps their clingo groundings."""
    asm = load_assembly(assembly)
    shared = AssemblyGrounding(World(asm, Tolerances()))
    world = shared.world
    types = [t for t in MISTAKE_TYPES if candidates(world, t)]
    out = [make_task(asm, [FaultSpec(t)], seed=seed, world=world) for seed in range(seeds) for t in types]
    out += [make_task(asm, [FaultSpec(types[s % len(types)]), FaultSpec(types[(s + 1) % len(types)])], seed=100 + s,
                      world=world) for s in range(seeds) if len(types) > 1]
    return [ground(t, shared) for t in out]


def two_tasks(assembly: str, faults: tuple[str, ...], seeds: tuple[int, ...]) -> list:
    """One task per (fault type, seed), grounded on one assembly grounding."""
    asm = load_assembly(assembly)
    shared = AssemblyGrounding(World(asm, Tolerances()))
    return [ground(make_task(asm, [FaultSpec(f)], seed=s, world=shared.world), shared) for f, s in zip(faults, seeds)]


def _result(task, **kw) -> dict:
    out = asp.solve_task(task, time_limit=120, **kw).to_json()
    out.pop("seconds")
    return out


def _alone(task, **kw) -> dict:
    return _result(ground(task.task), **kw)   # alone on its assembly grounding: solved on a grounding of its own


# the fast lane runs one assembly (mortise_trestle: 14 tasks over six fault types, two locks); the others,
# wheel_hub_dual with the deepest tasks among them, run in the slow lane
@pytest.mark.parametrize("assembly", [pytest.param(a, marks=pytest.mark.slow) for a in
                                      ("wheel_hub_dual", "bayonet_twist_6pin", "luban_lock_3")] + ["mortise_trestle"])
def test_shared_grounding_gives_the_one_task_results(assembly):
    tasks = fault_tasks(assembly, 2)
    expected = [_alone(t) for t in tasks]
    prepare(tasks)
    # the deepest task first, so that later ones run with steps grounded beyond their horizon
    order = sorted(range(len(tasks)), key=lambda i: -expected[i]["horizon"])
    for i in order + order[:2]:
        assert _result(tasks[i]) == expected[i], tasks[i].task.sample_id
    assert len(groundings(tasks[0].shared).cache) == 1


@pytest.mark.parametrize("assembly", ["mortise_trestle", pytest.param("wheel_hub_dual", marks=pytest.mark.slow)])
def test_a_task_outside_the_universe_widens_the_grounding(assembly):
    a, b = two_tasks(assembly, ("wrong_orientation", "wrong_part"), (1, 2))
    assert not task_universe(a).covers(task_universe(b))
    expected = [_alone(a), _alone(b)]
    prepare([a])
    first = grounding_for(a, reduce=True)
    assert first.alone is None and not first.universe.covers(task_universe(b))
    assert _result(a) == expected[0] and _result(b) == expected[1] and _result(a) == expected[0]
    widened = grounding_for(a, reduce=True)
    assert widened is not first and widened.universe.covers(task_universe(a) | task_universe(b))


def _union(tasks):
    out = task_universe(tasks[0])
    for t in tasks[1:]:
        out = out | task_universe(t)
    return out


def test_a_batch_grounding_keeps_nothing_of_the_batches_before():
    tasks = fault_tasks("mortise_trestle", 2)
    first, second = tasks[:len(tasks) // 2], tasks[len(tasks) // 2:]
    assert not _union(first).covers(_union(second)) and not _union(second).covers(_union(first))
    prepare(first)
    prepare(second)
    assert grounding_for(second[0], reduce=True).universe == _union(second)


def test_a_grounding_is_widened_a_bounded_number_of_times_in_a_row(monkeypatch):
    monkeypatch.setattr(grounding, "WIDENINGS", 1)
    a, b, c = two_tasks("mortise_trestle", ("wrong_orientation",) * 3, (1, 2, 3))
    assert not (task_universe(a) | task_universe(b)).covers(task_universe(c))
    prepare([a])
    assert grounding_for(b, reduce=True).universe == task_universe(a) | task_universe(b)   # widened once
    assert grounding_for(c, reduce=True).universe == task_universe(c)                      # then made anew
    assert _result(c) == _alone(c)


def test_a_dropped_grounding_is_freed_at_once_not_by_a_later_garbage_collection():
    task = fault_tasks("mortise_trestle", 1)[0]
    prepare([task])
    for kw in ({}, {"objective": "actions"}, {"all_optimal": True, "max_plans": 5}) * 2:   # every on_model callback,
        asp.solve_task(task, **kw)                                                          # on kept groundings
    held = [weakref.ref(g) for g in groundings(task.shared).cache.values()]
    assert len(held) == 2
    gc.disable()
    try:
        del task   # the grounded task held the one assembly grounding that keeps them
        assert all(ref() is None for ref in held)
    finally:
        gc.enable()


def test_an_assemblys_first_task_is_grounded_alone_and_the_next_ones_shared():
    a, b = two_tasks("mortise_trestle", ("missing_part", "misplacement"), (3, 4))
    assert grounding_for(a, reduce=True).alone is a.task
    assert grounding_for(b, reduce=True).alone is None and len(groundings(a.shared).cache) == 1


def test_objectives_and_enumeration_share_groundings_without_mixing():
    tasks = fault_tasks("shaft_stack_5", 1)
    kinds = [{}, {"objective": "actions"}, {"all_optimal": True, "max_plans": 5}]
    expected = [[_alone(t, **kw) for kw in kinds] for t in tasks]
    for t, want in zip(tasks, expected):
        assert [_result(t, **kw) for kw in kinds] == want, t.task.sample_id
    assert len(groundings(tasks[0].shared).cache) == 2  # with and without the reductions of --all-optimal


@pytest.mark.parametrize("assembly", ["bayonet_mount_3pin", "bayonet_twist_6pin"])
def test_a_window_of_horizons_reports_what_searching_them_one_by_one_does(assembly, monkeypatch):
    tasks = fault_tasks(assembly, 2)
    kinds = [{}, {"objective": "actions"}]
    windows: list[list[int]] = []
    take = asp._window
    monkeypatch.setattr(asp, "_window", lambda schedule: windows.append(take(schedule)) or windows[-1])
    together = [[_result(t, **kw) for kw in kinds] for t in tasks]
    assert any(len(w) > 1 for w in windows)   # some calls did search two scheduled horizons at once
    monkeypatch.setattr(asp, "JUMP", 0)
    groundings(tasks[0].shared).clear()
    assert [[_result(t, **kw) for kw in kinds] for t in tasks] == together


def test_the_optimum_is_the_tie_break_plan_of_its_length():
    for task in fault_tasks("wheel_hub_dual", 1):
        r = asp.solve_task(task)
        planner = asp._Planner(grounding_for(task, reduce=True), task.task, True, asp._Clock(None))
        planner.extend(r.horizon)
        assert r.canonical and planner.canonical(r.actions) == (r.plan, True), task.task.sample_id


@pytest.mark.parametrize("assembly", ["wheel_hub_dual", "bayonet_twist_6pin", "mortise_door", "burr_6_split"])
def test_a_restored_state_gets_the_searched_result_without_a_search(assembly, monkeypatch):
    asm = load_assembly(assembly)
    tasks = [make_task(asm, [], seed=s, boundary=b) for s in range(3) for b in (False, True)]
    kinds = [{}, {"objective": "actions"}, {"objective": "moved-parts"}]
    assert all(asp.restored(t, []) for t in tasks)
    quick = [[_result(t, **kw) for kw in kinds] for t in tasks]
    monkeypatch.setattr(asp, "restored", lambda task, closure: False)
    assert [[_result(t, **kw) for kw in kinds] for t in tasks] == quick
    assert not asp.restored(fault_tasks(assembly, 1)[0].task, [])

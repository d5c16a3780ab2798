"""The grounded task is computed once: the engine's legal actions, the ASP facts, the grounded PDDL and the
task grammar take their parameters and their group universe from forgeplan.semantics.grounded."""

from __future__ import annotations

import re

import pytest

from cases import PARTIAL_MOVES, all_cases, grounding
from forgeplan.io.catalog import load_assembly
from forgeplan.geometry.partial import needs_partial_moves
from forgeplan.geometry.separation import needs_group_moves
from forgeplan.library import BUILTIN
from forgeplan.llm.grammar import vocabulary
from forgeplan.model.actions import GroupMove, lock_action
from forgeplan.model.state import State, Tolerances
from forgeplan.planners.asp.facts import task_facts
from forgeplan.planners.pddl.abstraction import abstraction
from forgeplan.planners.pddl.groups import candidate_groups
from forgeplan.planners.pddl.problem import build_problem
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.grounded import (MoveKind, action_universe, assemblies_by_kind, ground, group_names,
                                         separable_groups)
from forgeplan.semantics.legal import OFFERS, offered_actions, slot_actions
from forgeplan.semantics.moves import Offer
from forgeplan.semantics.engine import World

GROUP_BURRS = ("burr_6_split", "burr_6_pairs")


def brute_separable(world) -> set[int]:
    n = len(world.ids)
    return {m for m in range(1, 1 << n) if bin(m).count("1") >= 2 and world.separable(m)}


@pytest.mark.parametrize("aid", GROUP_BURRS)
def test_the_group_universe_is_every_separable_set_of_two_or_more(aid):
    world = World(load_assembly(aid), Tolerances())
    groups = separable_groups(grounding(world))
    assert len(groups) == len(set(groups)) and set(groups) == brute_separable(world)
    sizes = [bin(g).count("1") for g in groups]
    assert sizes == sorted(sizes)


def test_assemblies_that_come_apart_part_by_part_have_no_groups():
    world = World(load_assembly("jigsaw_panel"), Tolerances())
    assert separable_groups(grounding(world)) == ()


def test_the_kinds_a_benchmark_composes_from_are_the_levels_geometry_gives():
    """`assemblies_by_kind` (the benchmark's expert tier and its group-move assemblies) agrees with the
    geometry's level verdicts on every built-in, and the kinds are disjoint."""
    asms = {a: load_assembly(a) for a in BUILTIN}
    kinds = assemblies_by_kind(asms)
    assert kinds.partial == PARTIAL_MOVES == {a for a, x in asms.items() if needs_partial_moves(x)}
    assert kinds.groups == {a for a, x in asms.items() if needs_group_moves(x)} and kinds.groups
    assert not kinds.groups & kinds.partial


def test_every_offer_a_move_model_names_has_its_actions():
    assert set(OFFERS) == set(Offer)
    world = World(load_assembly("jigsaw_panel"), Tolerances())
    assert world.moves.kind is MoveKind.STRAIGHT and world.moves.offers == ()
    assert World(load_assembly(GROUP_BURRS[0]), Tolerances()).moves.offers == (Offer.SEPARABLE_GROUPS,)
    partial = World(load_assembly(sorted(PARTIAL_MOVES)[0]), Tolerances()).moves
    assert partial.kind is MoveKind.PARTIAL and partial.offers == (Offer.LEAVING_GROUPS, Offer.DISPLACEMENTS)


@pytest.mark.parametrize("aid", GROUP_BURRS)
def test_engine_asp_and_pddl_offer_the_same_groups(aid):
    """One rule for every planner and every assembly size (no engine-only rule above some part count)."""
    asm = load_assembly(aid)
    task = make_task(asm, [FaultSpec("missing_part")], seed=0)
    world, g = task.world, ground(task)
    universe = {group_names(world, m) for m in g.separable_groups}
    empty = State(world.empty_slot(i) for i in range(len(world.ids)))
    joins = {a.part_ids for a in offered_actions(g.shared, empty)}
    full = world.target_state()
    separates = {a.part_ids for a in offered_actions(g.shared, full)}
    assert joins == separates == universe
    facts = task_facts(task).text
    asp = {tuple(re.findall(r'"([^"]+)"', m)) for m in re.findall(r"gmember\(\(([^)]*)\)", facts)}
    assert asp == universe
    pddl = candidate_groups(g.shared)
    assert {g for found in pddl.groups.values() for g in found} == universe
    assert build_problem(task, grounded=True).groups == pddl


@pytest.mark.parametrize("aid", [a for a in BUILTIN if any(p.lock for p in load_assembly(a).parts)][:6])
def test_lock_parameters_are_the_same_for_engine_asp_pddl_and_grammar(aid):
    asm = load_assembly(aid)
    task = make_task(asm, [], seed=0)
    world, target = task.world, task.world.target_state()
    facts = task_facts(task).terms
    steps = build_problem(task, grounded=True).steps.values()
    vocab = vocabulary(task)
    for p in asm.locks:
        unlock, relock = lock_action(p, locking=False), lock_action(p, locking=True)
        assert world.check(target, unlock) is None
        assert world.check(world.apply(target, unlock), relock) is None
        assert unlock in facts and relock in facts
        assert unlock in steps and relock in steps
        kind = "rotate" if p.lock.kind == "rotate" else "coupled"
        assert sum(f'"part_id":"{p.part_id}"' in v for v in vocab[f"{kind}_unlock"] + vocab[f"{kind}_lock"]) == 2


SAMPLE = [c for k, c in enumerate(all_cases()) if k % 6 == 0 or c[0].startswith(GROUP_BURRS)]


@pytest.mark.parametrize("name, task", SAMPLE, ids=[n for n, _ in SAMPLE])
def test_asp_and_pddl_ground_exactly_the_action_universe(name, task):
    """The facts render the universe; the grounded PDDL, which builds its steps with their literals, must
    arrive at the same actions (with every group direction kept), and each state offers a subset."""
    universe = action_universe(ground(task))
    assert len(universe) == len(set(universe))
    assert list(task_facts(task).terms) == universe
    assert {s.action for s in abstraction(task, every_direction=True).steps} == set(universe)
    offered = {a for i in range(len(task.world.ids)) for a in slot_actions(task.world, task.actual, i)}
    offered |= set(offered_actions(grounding(task.world), task.actual))
    assert {a for a in offered if not isinstance(a, GroupMove)} <= set(universe)
    assert {a for a in offered if isinstance(a, GroupMove) and task.world.check(task.actual, a) is None} <= set(universe)

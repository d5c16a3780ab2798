"""The grounded task (`semantics.grounded.ground`), its capabilities, and the planner registry that chooses
by them and by the objective."""

from __future__ import annotations

import dataclasses

import pytest

from cases import zigzag_puzzle
from forgeplan.io.catalog import load_assembly
from forgeplan.model.errors import InputError
from forgeplan.planners import registry
from forgeplan.planners.registry import Guarantee, choose, planner_for
from forgeplan.planners.result import Options, SolveResult, Status
from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.grounded import Capability, MoveKind, ground, kind_of, positions, slide_groups

CAPABILITIES = {MoveKind.STRAIGHT: set(), MoveKind.GROUPS: {Capability.GROUPS},
                MoveKind.PARTIAL: {Capability.GROUPS, Capability.SLIDES, Capability.OFFSETS}}


@pytest.fixture(scope="module")
def tasks():
    return {MoveKind.STRAIGHT: make_task(load_assembly("shaft_stack_3"), [FaultSpec("missing_part")], seed=0),
            MoveKind.GROUPS: make_task(load_assembly("burr_6_split"), [FaultSpec("missing_part")], seed=0),
            MoveKind.PARTIAL: make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Core")])}


def test_the_kind_and_the_capabilities_are_properties_of_the_grounded_task(tasks):
    for kind, task in tasks.items():
        g = ground(task)
        assert g.kind is kind is kind_of(task) and g.capabilities == CAPABILITIES[kind]
        assert (g.has_groups, g.has_slides, g.has_offsets) == tuple(
            c in CAPABILITIES[kind] for c in (Capability.GROUPS, Capability.SLIDES, Capability.OFFSETS))


def test_grounded_tasks_share_the_answers_of_their_assembly_only_when_given_one_grounding(tasks):
    """`ground` keeps a task's answers in its own assembly grounding unless the caller passes one; a
    grounding of another assembly is refused (a bug, not an input)."""
    task = tasks[MoveKind.GROUPS]
    twin = make_task(task.assembly, [FaultSpec("missing_part")], seed=1, world=task.world)
    shared = AssemblyGrounding(task.world)
    a, b = ground(task, shared), ground(twin, shared)
    assert a.shared is b.shared and a.separable_groups is b.separable_groups
    assert ground(task).shared is not ground(task).shared
    assert ground(task).separable_groups == a.separable_groups
    with pytest.raises(ValueError, match="another assembly"):
        ground(tasks[MoveKind.STRAIGHT], shared)


def test_a_state_solved_on_an_assembly_grounding_takes_the_kept_answer(tasks):
    """A second task in the same state (another sample id) on one assembly grounding takes the first's proved
    answer; another state, another grounding or other options are solved; a feasible answer is not kept."""
    task = tasks[MoveKind.GROUPS]
    shared = AssemblyGrounding(task.world)
    twin = dataclasses.replace(task, sample_id="twin")
    other = make_task(task.assembly, [FaultSpec("missing_part")], seed=3, world=task.world)
    assert other.actual != task.actual
    clingo, feasible = registry.REGISTRY["clingo"], registry.REGISTRY["repair-search"]
    first = clingo(ground(task, shared))
    assert first.optimal and clingo(ground(twin, shared)) is first
    assert clingo(ground(other, shared)) is not first
    assert clingo(ground(twin)) is not first and clingo(ground(twin, shared), Options("actions")) is not first
    assert feasible(ground(task, shared)) is not feasible(ground(twin, shared))


@pytest.mark.parametrize("kind, guarantee, name", [
    (MoveKind.STRAIGHT, Guarantee.PROVED_MINIMAL, "clingo"), (MoveKind.GROUPS, Guarantee.PROVED_MINIMAL, "clingo"),
    (MoveKind.PARTIAL, Guarantee.PROVED_MINIMAL, "moved-set-search"),
    (MoveKind.STRAIGHT, Guarantee.CROSS_CHECK, "fast-downward"), (MoveKind.GROUPS, Guarantee.CROSS_CHECK, "fast-downward"),
    (MoveKind.PARTIAL, Guarantee.CROSS_CHECK, "clingo-partial"), (MoveKind.GROUPS, Guarantee.FEASIBLE, "repair-search"),
    (MoveKind.STRAIGHT, Guarantee.FEASIBLE, "repair-search"), (MoveKind.PARTIAL, Guarantee.FEASIBLE, "chain-repair"),
])
def test_each_kind_and_guarantee_has_its_planner(tasks, kind, guarantee, name):
    assert choose(ground(tasks[kind]), guarantee).name == name


def test_the_registry_chooses_by_objective_too(tasks):
    partial, straight = ground(tasks[MoveKind.PARTIAL]), ground(tasks[MoveKind.STRAIGHT])
    assert choose(straight, Guarantee.PROVED_MINIMAL, "actions").name == "clingo"
    assert choose(partial, Guarantee.FEASIBLE, "actions").name == "chain-repair"
    for objective in sorted(set(registry.ALL_OBJECTIVES) - registry.REGISTRY["moved-set-search"].objectives):
        with pytest.raises(InputError, match=f"objective {objective} on tasks with group moves, offsets, slides"):
            choose(partial, Guarantee.PROVED_MINIMAL, objective)


def test_a_task_no_planner_accepts_is_a_one_line_input_error(tasks, monkeypatch):
    monkeypatch.setattr(registry, "PLANNERS", tuple(p for p in registry.PLANNERS if p.name != "moved-set-search"))
    with pytest.raises(InputError, match="no planner gives proved-minimal plans for the objective "
                                         "moved-parts,actions on tasks with group moves, offsets, slides$"):
        choose(ground(tasks[MoveKind.PARTIAL]), Guarantee.PROVED_MINIMAL)


def test_every_planner_that_runs_takes_a_grounded_task_and_options_and_returns_one_result(tasks):
    for p in registry.PLANNERS:
        for task in tasks.values():
            g = ground(task)
            if p.run is None or not p.accepts(g):
                continue
            r = p(g, Options())
            assert isinstance(r, SolveResult) and r.status in (Status.OPTIMAL, Status.FEASIBLE), (p.name, task)
            assert task.world.restoration(task.actual, r.plan, task.target).restored, (p.name, task)


def test_solve_goes_through_the_registry_and_clingo_is_no_front_door(tasks):
    from forgeplan.planners.asp.solve import solve_task

    partial = tasks[MoveKind.PARTIAL]
    r = registry.solve(partial)
    assert r.optimal and r.proof == "moved-set-search"
    assert partial.world.restoration(partial.actual, r.plan, partial.target).restored
    with pytest.raises(InputError, match="moved-set search"):
        solve_task(partial)
    straight = registry.solve(tasks[MoveKind.STRAIGHT])
    assert straight.optimal and straight.proof != "moved-set-search"
    assert planner_for(partial).deterministic and not planner_for(tasks[MoveKind.STRAIGHT]).deterministic


def test_feasible_plans_come_from_the_planner_of_the_kind(tasks):
    for task in tasks.values():
        plan = registry.feasible_plan(task)
        assert plan is not None and task.world.restoration(task.actual, plan, task.target).restored
    assert registry.accepted("clingo", list(tasks.values())) == [tasks[MoveKind.STRAIGHT], tasks[MoveKind.GROUPS]]
    assert planner_for(tasks[MoveKind.PARTIAL], Guarantee.FEASIBLE).name == "chain-repair"


def test_the_position_domain_and_its_radius_cut_are_computed_once(tasks):
    asm = tasks[MoveKind.PARTIAL].assembly
    whole, cut = positions(asm), positions(asm, 1)
    assert whole.full and not cut.full and cut.bound == tuple(min(b, 1) for b in whole.bound)
    assert cut.longest == 2 and len(cut.offsets) == 27 and cut.offsets[0] == (0, 0, 0)
    assert set(cut.offsets) <= set(whole.offsets) and whole.longest == 2 * max(whole.bound)
    with pytest.raises(InputError, match="radius must be a whole number >= 1"):
        positions(asm, 0)


def test_the_asp_and_pddl_renderings_take_their_groups_and_positions_from_the_grounded_task(tasks):
    from lab.asp.partial_facts import partial_facts
    from forgeplan.planners.pddl.positions import position_tables

    task = tasks[MoveKind.PARTIAL]
    world = task.world
    facts = partial_facts(task, 1).splitlines()
    assert {int(f[4:-2]) for f in facts if f.startswith("sep(")} == set(ground(task).separable_groups)
    assert {int(f[4:-2]) for f in facts if f.startswith("grp(")} == set(slide_groups(world))
    assert sum(f.startswith("dom(") for f in facts) == len(positions(task.assembly, 1).offsets)
    tables = position_tables(task, 1)
    assert tables.positions[0] == positions(task.assembly, 1).offsets and tables.distances == (1, 2)
    with pytest.raises(InputError, match="needs no partial moves"):
        position_tables(tasks[MoveKind.STRAIGHT], 1)

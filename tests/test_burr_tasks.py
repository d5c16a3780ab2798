"""Real level-1 Luban locks (the shipped examples, plus ../shared/data/burr when present): faults get valid
plans with group moves."""

import pytest

from burrdata import EXAMPLES, HAVE_SHARED, SHARED, burr, level1, needs_shared

from forgeplan.io.importers import import_puzzle
from forgeplan.model.state import Tolerances
from forgeplan.planners.repair import repair_plan
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.engine import World
from cases import grounding

LEVEL1 = level1(SHARED) if HAVE_SHARED else level1(EXAMPLES)


@needs_shared
def test_the_data_folder_is_there():
    assert len(LEVEL1) == 7, "expected the 7 level-1 puzzles of ../shared/data/burr"


@pytest.mark.parametrize("name", LEVEL1)
@pytest.mark.parametrize("fault", ["missing_part", "wrong_orientation"])
def test_faults_in_level1_burrs_get_valid_plans(name, fault):
    asm = import_puzzle(burr(name))
    world = World(asm, Tolerances())
    task = make_task(asm, [FaultSpec(fault)], seed=3)
    plan = repair_plan(world, task.actual, task.target)
    assert plan is not None
    assert world.restoration(task.actual, plan, task.target).restored
    if world.moves.groups and fault == "missing_part" and not any(a.name == "insert" for a in plan):
        assert any(a.name == "join" for a in plan)


@pytest.mark.parametrize("name", [pytest.param("solid6burr_d_asm919.json", marks=needs_shared), "mj_burr6_puzzle4.json"])
def test_grounded_group_moves_are_exactly_the_engines_legal_ones(name):
    import itertools
    import random

    from forgeplan.model.actions import KIND, GroupMove
    from forgeplan.model.assembly import DIRECTIONS
    from forgeplan.semantics.legal import legal_actions

    asm = import_puzzle(burr(name))
    world = World(asm, Tolerances())
    rng = random.Random(0)
    state = make_task(asm, [FaultSpec("missing_part")], seed=1).actual
    for _ in range(12):
        grounded = {(a.name, frozenset(a.part_ids), a.direction) for a in legal_actions(grounding(world), state) if isinstance(a, GroupMove)}
        engine = set()
        for k in range(2, len(world.ids) + 1):
            for combo in itertools.combinations(range(len(world.ids)), k):
                for name_, d in itertools.product(("separate", "join"), DIRECTIONS):
                    ids = [state.slots[j].occupant if name_ == "separate" else world.ids[j] for j in combo]
                    if None in ids:
                        continue
                    if world.check(state, KIND[name_](ids, d)) is None:
                        engine.add((name_, frozenset(ids), d))
        assert grounded == engine
        state = world.apply(state, rng.choice(legal_actions(grounding(world), state)))

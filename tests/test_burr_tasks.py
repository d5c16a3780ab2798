"""Real level-1 Luban locks (../shared/data/burr): faults get valid plans with group moves."""

import json
from pathlib import Path

import pytest

from forgeplan.faults import FaultSpec, make_task
from forgeplan.importers import import_puzzle
from forgeplan.repair import repair_plan
from forgeplan.task import world_for
from forgeplan.state import Tolerances

BURR = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "burr"
LEVEL1 = sorted(p.name for p in BURR.glob("*.json") if json.loads(p.read_text()).get("level1_disassembly"))


def test_the_data_folder_is_there():
    assert len(LEVEL1) == 7, "expected the 7 level-1 puzzles of ../shared/data/burr"


@pytest.mark.parametrize("name", LEVEL1)
@pytest.mark.parametrize("fault", ["missing_part", "wrong_orientation"])
def test_faults_in_level1_burrs_get_valid_plans(name, fault):
    asm = import_puzzle(BURR / name)
    world = world_for(asm, Tolerances())
    task = make_task(asm, [FaultSpec(fault)], seed=3)
    plan = repair_plan(world, task.actual, task.target)
    assert plan is not None
    r = world.replay(task.actual, plan)
    assert r.failure is None and world.equivalent(r.final, task.target)
    if world.needs_groups and fault == "missing_part" and not any(a.name == "insert" for a in plan):
        assert any(a.name == "join" for a in plan)

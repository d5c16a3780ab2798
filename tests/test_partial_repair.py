"""Rework on assemblies that need partial moves: the repair search's plans replay in the engine and
restore the target, for every part and fault type of the real partial-move burrs."""

from __future__ import annotations

import pytest

from forgeplan.io.importers import read_puzzle
from forgeplan.model.actions import moved_parts
from forgeplan.planners.repair import repair_plan
from forgeplan.semantics.faults import FaultSpec, candidates, make_task

from burrdata import burr, param

PARTIAL = ["mj_burr6_puzzle1", "mj_burr6_puzzle3", param("solid6burr_e_asm901"), param("bt_DraculasDentalDesaster"),
           param("bt_PelikanBurr"), param("bt_AlPackino")]
FAULTS = ("missing_part", "wrong_orientation", "misplacement", "under_insertion")


@pytest.mark.parametrize("name", PARTIAL)
def test_every_single_fault_gets_a_valid_plan_with_slides(name):
    asm = read_puzzle(burr(name)).assembly
    slid = 0
    for ftype in FAULTS:
        world = make_task(asm, []).world
        for i in candidates(world, ftype):
            task = make_task(asm, [FaultSpec(ftype, world.ids[i])])
            plan = repair_plan(task.world, task.actual, task.target)
            assert plan is not None, (ftype, world.ids[i])
            r = task.world.replay(task.actual, plan)
            assert r.failure is None and task.world.equivalent(r.final, task.target), (ftype, world.ids[i], r.failure)
            assert world.ids[i] in moved_parts(plan)
            slid += any(a.name == "slide" for a in plan)
    assert slid > 0


def test_two_faults_at_once():
    asm = read_puzzle(burr("mj_burr6_puzzle3")).assembly
    task = make_task(asm, [FaultSpec("missing_part", asm.part_ids[2]), FaultSpec("wrong_orientation", asm.part_ids[4])])
    plan = repair_plan(task.world, task.actual, task.target)
    r = task.world.replay(task.actual, plan)
    assert r.failure is None and task.world.equivalent(r.final, task.target)

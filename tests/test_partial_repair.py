"""Rework on assemblies that need partial moves: the repair search's plans replay in the engine and
restore the target, for every part and fault type of the real partial-move burrs."""

from __future__ import annotations

import pytest

from forgeplan.io.importers import read_puzzle
from forgeplan.model.actions import moved_parts
from forgeplan.planners.registry import feasible_plan
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
            plan = feasible_plan(task)
            assert plan is not None, (ftype, world.ids[i])
            r = task.world.restoration(task.actual, plan, task.target)
            assert r.restored, (ftype, world.ids[i], r.failure)
            assert world.ids[i] in moved_parts(plan)
            slid += any(a.name == "slide" for a in plan)
    assert slid > 0


def test_two_faults_at_once():
    asm = read_puzzle(burr("mj_burr6_puzzle3")).assembly
    task = make_task(asm, [FaultSpec("missing_part", asm.part_ids[2]), FaultSpec("wrong_orientation", asm.part_ids[4])])
    plan = feasible_plan(task)
    assert task.world.restoration(task.actual, plan, task.target).restored


# ----------------------------------------------------------------------------- the task files and the verifier

def _contract(task, actions: list[dict]) -> str:
    import json

    from forgeplan.io.contract import output_json
    from forgeplan.semantics.diagnosis import diagnose

    out = output_json(task.sample_id, task.assembly.assembly_id, diagnose(task.world, task.actual, task.target), [])
    out["rework_plan"]["actions"] = actions
    return json.dumps(out)


def test_the_verifier_reads_slides_offsets_and_judges_them():
    from forgeplan.verify import verify

    asm = read_puzzle(burr("mj_burr6_puzzle3")).assembly
    task = make_task(asm, [FaultSpec("missing_part", asm.part_ids[2])])
    plan = [a.to_json() for a in feasible_plan(task)]
    assert any(a["action"] == "slide" for a in plan) and any("offset" in a for a in plan)
    assert verify(task, _contract(task, plan)).valid
    first = plan[0]
    too_far = {**first, "distance": 5}
    v = verify(task, _contract(task, [too_far, *plan[1:]]))
    assert not v.valid and v.category == "parameter_error"   # the plan's own distance is legal there
    v = verify(task, _contract(task, [{**first, "distance": 0}, *plan[1:]]))
    assert not v.valid and v.category == "parameter_error"
    v = verify(task, _contract(task, [{**first, "distance": 1.5}, *plan[1:]]))
    assert not v.valid and v.category == "schema_failure"
    v = verify(task, _contract(task, [{"action": "separate", "part_ids": [asm.part_ids[0]], "direction": "+x"}]))
    assert not v.valid and v.category == "schema_failure" and "two or more" in v.reason


def test_level1_outputs_never_need_the_new_fields():
    """A slide or an offset on a level-1 burr is not applicable: the nine actions keep their meaning."""
    from forgeplan.verify import verify

    asm = read_puzzle(burr("mj_burr6_puzzle0")).assembly
    task = make_task(asm, [FaultSpec("missing_part", asm.part_ids[0])])
    v = verify(task, _contract(task, [{"action": "slide", "part_ids": [asm.part_ids[1]], "direction": "+x", "distance": 1}]))
    assert not v.valid and v.category == "illegal_grounding"
    v = verify(task, _contract(task, [{"action": "insert", "part_id": asm.part_ids[0], "offset": [0, 1, 0]}]))
    assert not v.valid and v.category == "illegal_grounding"


def test_cli_task_make_verify_and_solve_with_an_honest_proof_status(tmp_path, capsys):
    import json

    from forgeplan.cli import main

    pid = read_puzzle(burr("mj_burr6_puzzle3")).assembly.part_ids[3]
    asm_file = tmp_path / "p3.json"
    assert main(["import", "--example", "mj_burr6_puzzle3", "--out", str(asm_file)]) == 0   # partial moves take it apart
    folder = tmp_path / "t"
    assert main(["task", "make", str(asm_file), "--out", str(folder), "--fault", f"missing_part:{pid}", "--no-proof"]) == 0
    ref = json.loads((folder / "reference.json").read_text())
    assert ref["proof"]["optimal"] is False and any(a["action"] == "slide" for a in ref["rework_plan"]["actions"])
    out = tmp_path / "out.json"
    out.write_text(json.dumps({k: v for k, v in ref.items() if k not in ("proof", "sample_id")}))
    capsys.readouterr()
    assert main(["verify", str(folder), str(out)]) == 0
    capsys.readouterr()
    assert main(["solve", str(folder), "--time-limit", "3"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head == "optimal (moved-parts,actions; proof: moved-set-search)" or head.startswith("feasible")


def test_scoring_a_prediction_with_slides():
    """The per-sample scores read slides and offsets (identity sequence, optimal identity) without error."""
    from forgeplan.evaluation.samples import identity, is_optimal_identity
    from forgeplan.model.actions import moved_parts as moved

    asm = read_puzzle(burr("mj_burr6_puzzle3")).assembly
    task = make_task(asm, [FaultSpec("missing_part", asm.part_ids[2])])
    plan = feasible_plan(task)
    ids = identity(plan)
    assert ("slide", "+".join(plan[0].part_ids)) == ids[0]
    cost = (len(moved(plan)), len(plan))
    assert is_optimal_identity(task, plan, cost, "moved-parts,actions")
    assert not is_optimal_identity(task, plan[:-1], (len(moved(plan[:-1])), len(plan) - 1), "moved-parts,actions")

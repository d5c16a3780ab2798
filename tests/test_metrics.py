"""Metrics on small hand-computed cases (the arithmetic is in the comments)."""

import pytest

from forgeplan.evaluation.metrics import core_metrics, macro_assembly, macro_assembly_type
from forgeplan.evaluation.samples import SampleScore, action_fidelity, edit_distance, state_fidelity
from forgeplan.io.contract import parse_output


def s(asm, stratum, **kw):
    base = dict(sample_id=f"{asm}-{stratum}-{kw.get('n', 0)}", assembly_id=asm, family="f", stratum=stratum,
                difficulty=kw.pop("difficulty", "easy"), is_fault=stratum != "no_fault", category=None)
    kw.pop("n", None)
    return SampleScore(**base, **kw)


def test_macro_average_is_stratum_then_type_then_assembly():
    samples = [s("A", "missing_part", g=True, n=1), s("A", "missing_part", g=True, n=2), s("A", "missing_part", g=False, n=3),
               s("A", "wrong_part", g=False), s("B", "missing_part", g=True)]
    # A: missing_part 2/3, wrong_part 0 -> A = 1/3; B = 1 -> DGTR = (1/3 + 1) / 2 = 2/3
    assert macro_assembly_type(samples, lambda x: x.g) == pytest.approx(100 * 2 / 3)
    # SSE-style (assembly only): A = 2/4, B = 1 -> 0.75; a flat mean would be 3/5
    assert macro_assembly(samples, lambda x: x.g) == pytest.approx(75.0)


def test_core_metrics_and_overall():
    samples = [
        s("A", "missing_part", g=True, sse=True, sse_any=True, p=1.0, vmre=1.0, mve=True, mve_any=True, mpa=True, rca=1.0),
        s("A", "wrong_orientation", g=True, p=0.5, vmre=0.0, difficulty="hard", hrq=0.75, rca=0.5),
        s("A", "no_fault", nofault_ok=True),
        s("A", "no_fault", nofault_ok=False, n=1),
    ]
    m = core_metrics(samples)
    # SSE over A's two fault samples: 1/2; SAPF: (1 + 0.5)/2; VMRE (1 + 0)/2; DGTR 1; MVE 1/2; HRQ 0.75
    assert m["SSE"] == pytest.approx(50) and m["SAPF"] == pytest.approx(75) and m["VMRE"] == pytest.approx(50)
    assert m["DGTR"] == pytest.approx(100) and m["MVE"] == pytest.approx(50) and m["HRQ"] == pytest.approx(75)
    assert m["Overall-Core"] == pytest.approx((50 + 75 + 50 + 100 + 50 + 75) / 6)
    assert m["NoFault-Compliance"] == pytest.approx(50)
    assert m["MPA"] == pytest.approx(50) and m["RCA"] == pytest.approx(75)


def test_sapf_samples_without_fields_are_left_out():
    samples = [s("A", "missing_part", p=None, n=1), s("A", "missing_part", p=0.0, n=2)]
    assert core_metrics(samples)["SAPF"] == 0.0
    only = core_metrics([s("A", "missing_part", p=None, g=True)])
    assert only["SAPF"] is None and only["HRQ"] is None               # undefined, shown as "–"
    assert only["Overall-Core"] == pytest.approx(100 / 6)             # FORGE eq. 18: the two "–" count as 0


def test_edit_distance():
    a = [("remove", "P1"), ("insert", "P2"), ("insert", "P1")]
    b = [("remove", "P1"), ("insert", "P1")]
    assert edit_distance(a, b) == 1 and edit_distance([], b) == 2 and edit_distance(a, a) == 0
    # HRQ's q = max(0, 1 - 1 / max(3, 2, 1)) = 2/3


def out(mistakes, actions):
    import json
    return parse_output(json.dumps({"annotation": {"sample_id": "x", "assembly_id": "a", "pass": False, "mistakes": mistakes},
                                    "rework_plan": {"objective": "restore_to_target_state", "actions": actions}}))


def test_state_and_action_fidelity_fields():
    expected = [{"type": "wrong_orientation", "part_id": "P", "visible": True, "axis": "y", "angle_deg": 90.0},
                {"type": "misplacement", "part_id": "Q", "visible": False, "offset": [0.5, 0, 0]}]
    got = out([{"type": "wrong_orientation", "part_id": "P", "visible": True, "axis": "y", "angle_deg": 91.0},
               {"type": "misplacement", "part_id": "Q", "visible": False, "offset": [0.2, 0, 0]}], [])
    # axis right, angle within 2 deg, offset 0.3 off (> 0.05) -> [1, 1, 0]
    assert state_fidelity(expected, got, 0.05, 2.0) == [1.0, 1.0, 0.0]
    assert state_fidelity(expected, None, 0.05, 2.0) == [0.0, 0.0, 0.0]
    ref = [{"action": "rotate", "part_id": "P", "axis": "y", "angle_deg": -90.0}, {"action": "insert", "part_id": "Q"}]
    pred = out([{"type": "missing_part", "part_id": "Q", "visible": True}],
               [{"action": "insert", "part_id": "Q"}, {"action": "rotate", "part_id": "P", "axis": "x", "angle_deg": 270.0}])
    # matched by identity despite the order: axis wrong (0), angle -90 == 270 mod 360 (1)
    assert action_fidelity(ref, pred, 0.05, 2.0) == [0.0, 1.0]



def test_group_move_tasks_score_like_any_other(tmp_path):
    """A benchmark task on a burr that needs group moves: the reference scores as exact (SSE, MVE, MPA,
    RCA, P); the same plan with the group moved along a blocked direction fails the replay, keeps the
    (action, group) identity and moved set, and loses parameter fidelity and MAGAR's action ids (the
    direction is part of a group move's action id)."""
    import json

    from forgeplan.bench.composition import Slot
    from forgeplan.bench.generate import generate
    from forgeplan.evaluation.samples import score_sample
    from forgeplan.library import build
    from forgeplan.model.state import Tolerances
    from forgeplan.io.task_files import load_task, write_json

    gen = generate(Slot(0, "test", "burr_6_pairs", "single"), build("burr_6_pairs"), 7, Tolerances())
    for name, obj in gen.files.items():
        write_json(tmp_path / name, obj)
    task = load_task(tmp_path)
    ref, meta, rework = gen.files["reference.json"], gen.files["meta.json"], gen.files["minimal_rework.json"]
    plan = ref["rework_plan"]["actions"]
    k = next(k for k, a in enumerate(plan) if "part_ids" in a)
    assert rework["action_ids"][k] == f"{plan[k]['action']}:{'+'.join(plan[k]['part_ids'])}:{plan[k]['direction']}"

    def score(actions):
        return score_sample(task, json.dumps({"annotation": ref["annotation"], "rework_plan": {
            "objective": ref["rework_plan"]["objective"], "actions": actions}}), ref, meta, rework)

    exact = score(plan)
    assert exact.g and exact.sse and exact.mve and exact.mpa and exact.rca == 1.0 and exact.p == 1.0
    flipped = {"+": "-", "-": "+"}[plan[k]["direction"][0]] + plan[k]["direction"][1]
    wrong = score([dict(a, direction=flipped) if i == k else a for i, a in enumerate(plan)])
    assert not wrong.g and wrong.category == "dependency_omission"  # blocked along the flipped direction
    assert wrong.sse and wrong.mpa and wrong.p < 1.0 and wrong.rca == 2 / 3  # set and count match, ids not (FORGE-shaped: RCA over 3 fields)

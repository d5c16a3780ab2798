"""The metrics and failure categories as FORGE (App. D, Table 9) and MAGAR (C.3.3) define them.

Every expected number is worked out by hand in the comment beside it; none is computed by the code under
test. The tasks are small built-in ones whose references are written out literally below.
"""

import json
from functools import lru_cache

import pytest

from forgeplan.evaluation.evaluate import paper_reference
from forgeplan.evaluation.metrics import core_metrics, failure_breakdown, overall_core
from forgeplan.evaluation.samples import (SampleScore, hrq_i, mpa_rca, mve_i, plan_cost, sapf_i, score_sample, sse_i,
                                          vmre_i)
from forgeplan.io.catalog import load_assembly
from forgeplan.io.contract import parse_output
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.verify import FAILURE_CATEGORIES, verify

CAP = "BayonetStructure_Part07_Cap"          # turned 180° about z; the reference turns it back about y
PEG = "MortiseFrame_Part07_Peg"              # turned -90° about y; dependency closure {PEG} alone
CAP_DIAGNOSIS = [{"type": "wrong_orientation", "part_id": CAP, "visible": True, "axis": "z", "angle_deg": 180.0}]
PEG_DIAGNOSIS = [{"type": "wrong_orientation", "part_id": PEG, "visible": True, "axis": "y", "angle_deg": -90.0}]
CAP_PLAN = [{"action": "rotate", "part_id": CAP, "axis": "y", "angle_deg": -180.0}]
PEG_PLAN = [{"action": "rotate", "part_id": PEG, "axis": "y", "angle_deg": -90.0}]


@lru_cache(maxsize=None)
def task(name):
    asm_id, fault = {"cap": ("bayonet_structure", "wrong_orientation"), "peg": ("mortise_frame", "wrong_orientation"),
                     "nofault": ("bayonet_structure", None), "missing": ("bayonet_structure", "missing_part")}[name]
    faults = [] if fault is None else [FaultSpec(fault, CAP if name == "missing" else None)]
    return make_task(load_assembly(asm_id), faults, seed=0)


def raw(t, mistakes, actions, sample_id=None, minimal_rework=None):
    out = {"annotation": {"sample_id": sample_id or t.sample_id, "assembly_id": t.assembly.assembly_id,
                          "pass": not mistakes, "mistakes": mistakes},
           "rework_plan": {"objective": "restore_to_target_state", "actions": actions}}
    if minimal_rework is not None:
        out["minimal_rework"] = minimal_rework
    return json.dumps(out)


def score(t, prediction, diagnosis, plan, *, difficulty="hard", condition="single", cost="forgeplan"):
    """score_sample with a literal reference, meta and MAGAR minimal_rework for `t`."""
    reference = {"annotation": {"sample_id": t.sample_id, "assembly_id": t.assembly.assembly_id,
                                "pass": not diagnosis, "mistakes": diagnosis},
                 "rework_plan": {"objective": "restore_to_target_state", "actions": plan}}
    meta = {"sample_id": t.sample_id, "assembly_id": t.assembly.assembly_id, "family": t.assembly.family,
            "condition": condition if diagnosis else "nofault", "difficulty": difficulty,
            "fault_types": sorted({m["type"] for m in diagnosis})}
    moved = sorted({p for a in plan for p in a.get("part_ids", [a.get("part_id")])})
    rework = {"moved_parts": moved, "moved_part_count": len(moved), "route_id": "R-ref",
              "action_ids": [f"{a['action']}:{a.get('part_id')}" for a in plan]}
    return score_sample(t, prediction, reference, meta, rework, cost)


def sample(asm, stratum, **kw):
    return SampleScore(sample_id=f"{asm}-{stratum}-{kw.pop('n', 0)}", assembly_id=asm, family="f", stratum=stratum,
                       difficulty="easy", is_fault=stratum != "no_fault", category=None, **kw)


def test_the_literal_references_are_the_planners():
    from forgeplan.planners.asp.solve import solve_task
    from forgeplan.semantics.diagnosis import diagnose

    for name, diagnosis, plan in (("cap", CAP_DIAGNOSIS, CAP_PLAN), ("peg", PEG_DIAGNOSIS, PEG_PLAN)):
        t = task(name)
        assert diagnose(t.world, t.actual, t.target) == diagnosis
        assert [a.to_json() for a in solve_task(t).plan] == plan


# ----------------------------------------------------------------------------- the six core metrics

def test_sse_eq_11_is_the_action_part_sequence_macro_averaged_over_assemblies():
    assert sse_i([("rotate", CAP)], [("rotate", CAP)]) is True
    assert sse_i([("rotate", CAP), ("rotate", CAP)], [("rotate", CAP)]) is False
    samples = [sample("A", "x", sse=True, n=1), sample("A", "x", sse=False, n=2), sample("A", "y", sse=False),
               sample("B", "x", sse=True)]
    # A = 1/3, B = 1 -> (1/3 + 1) / 2 = 66.667 (a flat mean over samples would be 50)
    assert core_metrics(samples)["SSE"] == pytest.approx(66.6666667)


def test_sapf_eq_12_half_state_half_action_and_unsupported_samples():
    assert sapf_i([1.0, 0.0], [1.0, 1.0, 0.0]) == pytest.approx(0.5833333)   # (1/2 + 2/3) / 2
    assert sapf_i([], [0.0, 1.0]) == 0.5                                      # only the supported family
    assert sapf_i([], []) is None                                             # p_i unsupported (eq. 17)
    # a wrong diagnosis angle: state fields axis z (1), angle 90 vs 180 (0) -> 1/2; action y/-180 right -> 1
    wrong = {**CAP_DIAGNOSIS[0], "angle_deg": 90.0}
    s = score(task("cap"), raw(task("cap"), [wrong], CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.p == 0.75 and s.g                                                # (0.5 + 1) / 2


def test_sapf_leaves_out_samples_without_fields_even_for_garbage():
    t = task("missing")
    diagnosis = [{"type": "missing_part", "part_id": CAP, "visible": True}]
    plan = [{"action": "insert", "part_id": CAP}]
    assert score(t, "{", diagnosis, plan).p is None          # no applicable field in the reference
    assert score(t, raw(t, diagnosis, plan), diagnosis, plan).p is None
    samples = [sample("A", "missing_part", p=None), sample("A", "wrong_orientation", p=0.5)]
    assert core_metrics(samples)["SAPF"] == 50.0             # the None stratum drops out, not counted as 0


def test_dgtr_eq_13_needs_contract_diagnosis_replay_and_target():
    t = task("cap")
    assert score(t, raw(t, CAP_DIAGNOSIS, CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN).g is True
    assert score(t, raw(t, [], CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN).g is False          # diagnosis missing
    samples = [sample("A", "x", g=True, n=1), sample("A", "x", g=False, n=2), sample("A", "y", g=True),
               sample("B", "x", g=False)]
    # A: x 1/2, y 1 -> 3/4; B 0 -> 3/8
    assert core_metrics(samples)["DGTR"] == 37.5


def test_vmre_eq_14():
    assert vmre_i(True, True, 4, 3) == 0.75      # min(1, 3/4)
    assert vmre_i(True, True, 2, 3) == 1.0       # better than the reference: full credit
    assert vmre_i(True, False, 1, 1) == 0.0      # v_i = 0
    assert vmre_i(False, True, 1, 1) == 0.0      # g_i = 0
    assert vmre_i(True, True, 0, 0) == 0.0       # ĉ_i = 0 is never credited


def test_mve_eq_15():
    assert mve_i(True, True, True, 3, 3) is True
    assert mve_i(True, True, True, 4, 3) is False
    assert mve_i(True, True, False, 3, 3) is False
    assert mve_i(True, False, True, 3, 3) is False


def test_hrq_eq_16_17():
    pred = [("remove", "P1"), ("insert", "P2"), ("insert", "P1")]
    ref = [("remove", "P1"), ("insert", "P1")]
    # d = 1, max(3, 2, 1) = 3 -> q = 2/3; with p = 0.5: (2/3 + 1/2) / 2 = 7/12
    assert hrq_i(True, pred, ref, None) == pytest.approx(0.6666667)
    assert hrq_i(True, pred, ref, 0.5) == pytest.approx(0.5833333)
    assert hrq_i(False, pred, ref, 1.0) == 0.0
    assert hrq_i(True, [], [], None) == 1.0      # max(..., 1) guards the empty case


def test_overall_core_counts_a_dash_as_zero():
    """Discrepancy 1: FORGE D.5 averages all six with "–" = 0 (the small test split without hard tasks)."""
    assert overall_core({"SSE": 100.0, "SAPF": 100.0, "VMRE": 100.0, "DGTR": 100.0, "MVE": 100.0, "HRQ": None}) \
        == pytest.approx(83.3333333)             # 500 / 6
    assert overall_core({"SSE": 70.0, "SAPF": 80.0, "VMRE": 70.0, "DGTR": 70.0, "MVE": 70.0, "HRQ": None}) \
        == pytest.approx(60.0)                   # 360 / 6
    m = core_metrics([sample("A", "x", g=True, sse=True, p=None, vmre=1.0, mve=True)])
    assert m["SAPF"] is None and m["HRQ"] is None
    assert m["Overall-Core"] == pytest.approx(66.6666667)                      # (100 + 0 + 100 + 100 + 100 + 0) / 6


# ----------------------------------------------------------------------------- validity, ties, cost

def test_a_parameter_tie_is_valid_minimal_and_credited():
    """Discrepancy 3: rotate(CAP, z, 180) repairs like the reference's rotate(CAP, y, -180)."""
    t = task("cap")
    tie = [{"action": "rotate", "part_id": CAP, "axis": "z", "angle_deg": 180.0}]
    s = score(t, raw(t, CAP_DIAGNOSIS, tie), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.g and s.v and s.category is None
    assert s.sse and s.sse_any and s.mve and s.mve_any and s.vmre == 1.0
    assert s.p == 0.75                           # state 2/2 = 1; action: axis z≠y (0), 180 ≡ -180 (1) -> 1/2
    assert s.hrq == 0.875                        # q = 1 -> (1 + 0.75) / 2


def test_v_i_needs_the_diagnosis_state_fields():
    t = task("cap")
    wrong = {**CAP_DIAGNOSIS[0], "axis": "x"}    # right type and part, wrong observed axis
    s = score(t, raw(t, [wrong], CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.g and not s.v and s.vmre == 0.0 and not s.mve and s.sse


def test_a_duplicated_action_costs_efficiency_but_is_not_over_disassembly():
    """Discrepancy 6: two turns of the one faulty peg move nothing extra."""
    t = task("peg")
    twice = [{"action": "rotate", "part_id": PEG, "axis": "y", "angle_deg": 180.0},
             {"action": "rotate", "part_id": PEG, "axis": "y", "angle_deg": 90.0}]
    s = score(t, raw(t, PEG_DIAGNOSIS, twice), PEG_DIAGNOSIS, PEG_PLAN)
    assert s.g and s.category is None and s.vmre == 0.5                      # c* / ĉ = 1 / 2
    assert not s.sse and not s.mve and not s.mve_any and not s.sse_any
    # p: state 1; action: the first rotate(PEG) matches, axis y (1), 180 vs -90 (0) -> 1/2; p = (1 + 1/2) / 2
    assert s.p == 0.75
    assert s.hrq == 0.625                        # d = 1, max 2 -> q = 1/2; (1/2 + 3/4) / 2
    assert (s.mpa, s.rca) == (True, pytest.approx(0.6666667))                 # set, count right; action ids not: 2/3


def test_reference_cost_paper_is_the_fewest_actions():
    """Discrepancy 8: forgeplan's c* is lexicographic (J_move, c); FORGE's is c alone."""
    assert plan_cost(2, 3, "forgeplan") == (2, 3) and plan_cost(2, 3, "paper") == (3,)
    assert plan_cost(1, 4, "forgeplan") < plan_cost(2, 3, "forgeplan")      # fewer parts wins
    assert plan_cost(1, 4, "paper") > plan_cost(2, 3, "paper")              # fewer actions wins
    t = task("peg")
    reference = {"annotation": {}, "rework_plan": {"actions": PEG_PLAN}}
    assert paper_reference(t, reference) is reference                        # already action-optimal: kept
    padded = [{"action": "rotate", "part_id": PEG, "axis": "y", "angle_deg": 180.0},
              {"action": "rotate", "part_id": PEG, "axis": "y", "angle_deg": 90.0}]
    shorter = paper_reference(t, {"annotation": {}, "rework_plan": {"actions": padded}})
    assert shorter["rework_plan"]["actions"] == PEG_PLAN                     # clingo's 1-action optimum
    # against the padded 2-action reference a 1-action repair is "-any" optimal under either cost
    s = score(t, raw(t, PEG_DIAGNOSIS, PEG_PLAN), PEG_DIAGNOSIS, padded, cost="paper")
    assert s.vmre == 1.0 and s.mve is False and s.mve_any is True


# ----------------------------------------------------------------------------- MAGAR MPA / RCA

def test_mpa_rca_with_magar_profile_fields():
    """Discrepancy 4: with n̂ and R predicted separately, every field of eq. 12 can fail on its own."""
    rework = {"moved_parts": ["A", "B"], "moved_part_count": 2, "route_id": "R-1", "action_ids": ["remove:A", "remove:B"]}
    t = task("cap")

    def magar(parts, count, route, actions=(("remove", "A"), ("remove", "B"))):
        out = parse_output(raw(t, [], [{"action": a, "part_id": p} for a, p in actions],
                               minimal_rework={"moved_parts": parts, "moved_part_count": count, "route_id": route}))
        return mpa_rca(out, rework)

    assert magar(["B", "A"], 2, "R-1") == (True, 1.0)               # sets are normalised
    assert magar(["A", "B"], 2, "R-2") == (True, 0.75)              # route only: (1 + 1 + 0 + 1) / 4
    assert magar(["A", "B"], 3, "R-1") == (False, 0.75)             # count wrong
    assert magar(["A"], 2, "R-1") == (False, 0.75)                  # set wrong
    assert magar(["A", "B"], 2, "R-1", (("remove", "B"), ("remove", "A"))) == (True, 0.75)   # action ids wrong
    assert magar(["A", "A", "B"], 3, "R-1") == (False, 0.75)        # |{A, B}| = 2 ≠ n̂ = 3 and n̂ ≠ n*


def test_mpa_rca_fallback_for_forge_shaped_outputs():
    rework = {"moved_parts": ["A", "B"], "moved_part_count": 2, "route_id": "R-1", "action_ids": ["remove:A", "remove:B"]}
    t = task("cap")

    def forge(actions):
        return mpa_rca(parse_output(raw(t, [], [{"action": a, "part_id": p} for a, p in actions])), rework)

    assert forge([("remove", "A"), ("remove", "B")]) == (True, 1.0)                        # (1 + 1 + 1) / 3
    assert forge([("remove", "B"), ("remove", "A")]) == (True, pytest.approx(0.6666667))    # ids out of order
    assert forge([("remove", "A"), ("remove", "C")]) == (False, pytest.approx(0.3333333))   # set wrong, count 2 right
    assert mpa_rca(None, rework) == (False, 0.0)


def test_magar_aggregates_are_plain_means_over_fault_samples():
    samples = [sample("A", "x", mpa=True, rca=1.0), sample("B", "x", mpa=False, rca=0.5, n=1),
               sample("B", "x", mpa=False, rca=0.0, n=2), sample("B", "no_fault", mpa=True, rca=1.0, nofault_ok=True)]
    m = core_metrics(samples)
    assert m["MPA"] == pytest.approx(33.3333333) and m["RCA"] == 50.0         # 1/3; (1 + 0.5 + 0) / 3


# ----------------------------------------------------------------------------- failure categories (Table 9)

def test_schema_failure_scores_zero_everywhere():
    """Discrepancy 5: answering another sample is C_i = 0 like an unparseable output."""
    t = task("cap")
    for prediction in ("{", None, raw(t, CAP_DIAGNOSIS, CAP_PLAN, sample_id="someone_else")):
        s = score(t, prediction, CAP_DIAGNOSIS, CAP_PLAN)
        assert s.category == "schema_failure"
        assert (s.g, s.sse, s.sse_any, s.p, s.vmre, s.mve, s.mpa, s.rca, s.hrq) == \
            (False, False, False, 0.0, 0.0, False, False, 0.0, 0.0)
    assert verify(t, raw(t, CAP_DIAGNOSIS, CAP_PLAN, sample_id="someone_else")).contract_valid is False


def test_no_fault_intervention_and_compliance():
    t = task("nofault")
    assert score(t, raw(t, [], []), [], []).nofault_ok is True
    busy = score(t, raw(t, [], [{"action": "remove", "part_id": CAP}]), [], [])
    assert busy.category == "no_fault_intervention" and busy.nofault_ok is False
    # compliance is FORGE's empty-program requirement: a reported fault with an empty plan is a
    # misdiagnosis but complies
    noisy = score(t, raw(t, CAP_DIAGNOSIS, []), [], [])
    assert noisy.category == "misdiagnosis" and noisy.nofault_ok is True
    m = core_metrics([busy, noisy, score(t, "{", [], [])])
    assert m["NoFault-Compliance"] == pytest.approx(33.3333333)             # 1 of 3
    assert m["SSE"] is None                                                  # no fault sample


def test_misdiagnosis_is_type_or_part_not_visibility():
    t = task("cap")
    wrong_type = [{**CAP_DIAGNOSIS[0], "type": "misplacement"}]
    assert score(t, raw(t, wrong_type, CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN).category == "misdiagnosis"
    wrong_part = [{**CAP_DIAGNOSIS[0], "part_id": "BayonetStructure_Part06_Barrel"}]
    assert score(t, raw(t, wrong_part, CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN).category == "misdiagnosis"
    hidden = [{**CAP_DIAGNOSIS[0], "visible": False}]
    s = score(t, raw(t, hidden, CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.category is None and s.g and s.mve


def test_a_mistake_listed_twice_is_named_as_such():
    t = task("cap")
    v = verify(t, raw(t, CAP_DIAGNOSIS * 2, CAP_PLAN))
    assert v.category == "misdiagnosis" and not v.diagnosis_exact
    assert v.reason == f"diagnosis differs: lists [('wrong_orientation', '{CAP}')] more than once"


def test_illegal_grounding_and_dependency_omission():
    t = task("peg")
    ghost = score(t, raw(t, PEG_DIAGNOSIS, [{"action": "remove", "part_id": "NoSuchPart"}]), PEG_DIAGNOSIS, PEG_PLAN)
    assert ghost.category == "illegal_grounding" and not ghost.g
    blocked = [{"action": "remove", "part_id": "MortiseFrame_Part01_Stile"}, *PEG_PLAN]
    s = score(t, raw(t, PEG_DIAGNOSIS, blocked), PEG_DIAGNOSIS, PEG_PLAN)
    assert s.category == "dependency_omission" and not s.g and s.vmre == 0.0


def test_a_wrong_rotation_is_a_parameter_error():
    """Discrepancy 2: Table 9 files an out-of-tolerance rotation under parameter error."""
    t = task("cap")
    quarter = [{"action": "rotate", "part_id": CAP, "axis": "y", "angle_deg": -90.0}]
    s = score(t, raw(t, CAP_DIAGNOSIS, quarter), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.category == "parameter_error" and not s.g
    assert s.sse and not s.mve and s.p == 0.75   # identity right; action: axis y (1), -90 vs -180 (0)


def test_incomplete_restoration_when_the_faulty_part_is_not_acted_on():
    t = task("cap")
    s = score(t, raw(t, CAP_DIAGNOSIS, []), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.category == "incomplete_restoration" and not s.g and s.vmre == 0.0


def test_over_disassembly_is_moving_a_part_outside_the_closure_in_verify_and_evaluate():
    """Discrepancy 6: one definition; the other peg is outside PEG's dependency closure {PEG} and no optimal
    plan moves it."""
    t = task("peg")
    detour = [{"action": "remove", "part_id": "MortiseFrame_Part05_Peg"},
              {"action": "insert", "part_id": "MortiseFrame_Part05_Peg"}, *PEG_PLAN]
    v = verify(t, raw(t, PEG_DIAGNOSIS, detour))
    assert v.valid and v.over_disassembly and v.category == "over_disassembly"
    s = score(t, raw(t, PEG_DIAGNOSIS, detour), PEG_DIAGNOSIS, PEG_PLAN)
    assert s.category == "over_disassembly" and s.g
    assert s.vmre == pytest.approx(0.3333333)    # c* / ĉ = 1 / 3
    assert s.rca == 0.0                          # set {2 pegs}, count 2 ≠ 1, ids: all wrong


BARREL = "BayonetStructure_Part06_Barrel"


def test_over_disassembly_follows_the_route_not_the_closure():
    """Table 9: "moves additional components that are not required by the recovery route". On the CAP task
    the dependency closure is all 8 parts, the only optimal plan (rotate the cap back) moves CAP alone.
    Taking the cap and the barrel out and back in moves BARREL, which lies inside the closure and which no
    optimal plan moves: over-disassembly, like the peg detour outside the closure above. Taking out and
    back only the cap moves nothing the route does not: an inefficiency VMRE prices, no category."""
    from forgeplan.semantics.closure import dependency_closure

    t = task("cap")
    assert len(dependency_closure(t.world, t.actual, [t.world.index[CAP]])) == 8
    detour = [{"action": "remove", "part_id": CAP}, {"action": "remove", "part_id": BARREL},
              {"action": "insert", "part_id": BARREL}, {"action": "insert", "part_id": CAP}]
    v = verify(t, raw(t, CAP_DIAGNOSIS, detour))
    assert v.valid and v.over_disassembly and v.reason == f"valid (moves parts no optimal plan moves: ['{BARREL}'])"
    s = score(t, raw(t, CAP_DIAGNOSIS, detour), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.category == "over_disassembly" and s.g and s.vmre == 0.25          # c* / ĉ = 1 / 4
    assert (s.mpa, s.rca) == (False, 0.0)        # set {CAP, BARREL} ≠ {CAP}, count 2 ≠ 1, ids all wrong
    s = score(t, raw(t, CAP_DIAGNOSIS, detour), CAP_DIAGNOSIS, CAP_PLAN, cost="paper")
    assert s.category == "over_disassembly"      # the fewest actions: rotate(CAP) alone, too
    out_and_back = [{"action": "remove", "part_id": CAP}, {"action": "insert", "part_id": CAP}]
    s = score(t, raw(t, CAP_DIAGNOSIS, out_and_back), CAP_DIAGNOSIS, CAP_PLAN)
    assert s.category is None and s.g and s.vmre == 0.5                         # 1 / 2
    assert (s.mpa, s.rca) == (True, pytest.approx(0.6666667))                  # set, count right; ids not


def test_over_disassembly_fires_on_drawer_cabinet_3_whose_closure_is_every_part():
    """#33.1: the drawer's closure is all 11 parts; the route (unlock, lift the lock, turn the drawer back,
    relock) moves DRAWER and LOCK. Lifting the top off and back on first is over-disassembly."""
    drawer, lock, top = (f"DrawerCabinet3_Part{n}" for n in ("07_Drawer", "10_Lock", "11_Top"))
    t = make_task(load_assembly("drawer_cabinet_3"), [FaultSpec("wrong_orientation", None)], seed=0)
    diagnosis = [{"type": "wrong_orientation", "part_id": drawer, "visible": False, "axis": "z", "angle_deg": 180.0}]
    plan = [{"action": "rotate_to_unlock", "part_id": lock, "axis": "z", "angle_deg": 90.0},
            {"action": "remove", "part_id": lock},
            {"action": "rotate", "part_id": drawer, "axis": "z", "angle_deg": -180.0},
            {"action": "insert", "part_id": lock},
            {"action": "rotate_to_lock", "part_id": lock, "axis": "z", "angle_deg": -90.0}]
    detour = [{"action": "remove", "part_id": top}, {"action": "insert", "part_id": top}, *plan]
    s = score(t, raw(t, diagnosis, detour), diagnosis, plan)
    assert s.category == "over_disassembly" and s.g and s.vmre == pytest.approx(5 / 7)   # c* / ĉ
    assert score(t, raw(t, diagnosis, plan), diagnosis, plan).category is None


def test_the_route_is_the_union_of_the_optimal_plans_moved_parts():
    """route_parts against the optimal plans clingo enumerates (solve --all-optimal)."""
    from forgeplan.model.actions import moved_parts
    from forgeplan.planners.asp.first_steps import route_parts
    from forgeplan.planners.asp.solve import solve_task

    rail = make_task(load_assembly("mortise_frame"), [FaultSpec("misplacement", "MortiseFrame_Part03_Rail")], seed=0)
    counts = {}
    for name, t in (("cap", task("cap")), ("rail", rail)):
        for cost, objective in (("forgeplan", "moved-parts,actions"), ("paper", "actions")):
            plans = solve_task(t, objective, all_optimal=True, max_plans=500).optimal_plans
            assert route_parts(t, cost) == frozenset().union(*map(moved_parts, plans))
            counts[name, cost] = (len(plans), {len(moved_parts(p)) for p in plans})
    assert route_parts(task("cap")) == {CAP} and route_parts(task("peg")) == {PEG}
    # the rail: 128 optimal plans of 5 moved parts each, which together move 7 of the 8 parts
    assert counts["rail", "forgeplan"] == (128, {5}) and len(route_parts(rail)) == 7


def test_failure_breakdown_counts_each_category_once():
    t = task("peg")
    plans = {"ok": PEG_PLAN, "ghost": [{"action": "remove", "part_id": "NoSuchPart"}],
             "blocked": [{"action": "remove", "part_id": "MortiseFrame_Part01_Stile"}],
             "twice": [{"action": "rotate", "part_id": PEG, "axis": "y", "angle_deg": 180.0}] * 2}
    samples = [score(t, raw(t, PEG_DIAGNOSIS, p), PEG_DIAGNOSIS, PEG_PLAN) for p in plans.values()]
    samples.append(score(t, "[]", PEG_DIAGNOSIS, PEG_PLAN))
    counts = {c: f["count"] for c, f in failure_breakdown(samples).items()}
    assert list(counts) == list(FAILURE_CATEGORIES)
    assert counts == {"schema_failure": 1, "no_fault_intervention": 0, "misdiagnosis": 0, "illegal_grounding": 1,
                      "dependency_omission": 1, "parameter_error": 1, "incomplete_restoration": 0,
                      "over_disassembly": 0}


# ----------------------------------------------------------------------------- stratification

def test_multi_fault_samples_form_one_stratum():
    t = task("cap")
    s = score(t, raw(t, CAP_DIAGNOSIS, CAP_PLAN), CAP_DIAGNOSIS, CAP_PLAN, condition="multi")
    assert s.stratum == "multi_fault"
    samples = [sample("A", "missing_part", g=True), sample("A", "multi_fault", g=False, n=1),
               sample("A", "multi_fault", g=True, n=2)]
    # strata: missing_part 1, multi_fault 1/2 -> (1 + 1/2) / 2
    assert core_metrics(samples)["DGTR"] == 75.0


# ----------------------------------------------------------------------------- partial moves (SEMANTICS §9)

TUNNEL = [(1, 1, 1), (2, 1, 1), (2, 2, 1)]
CORE_DIAGNOSIS = [{"type": "missing_part", "part_id": "Core", "visible": False}]
# the core arrives one voxel along +x (where the tunnel turns up to +y) and slides back home
CORE_PLAN = [{"action": "insert", "part_id": "Core", "offset": [1, 0, 0]},
             {"action": "slide", "part_ids": ["Core"], "direction": "-x", "distance": 1}]


@lru_cache(maxsize=None)
def tunnel_task():
    """A 4x3x3 shell around a one-voxel core in an L-shaped tunnel: +x by one, then out along +y."""
    from forgeplan.library.voxels import box, part
    from forgeplan.model.assembly import Assembly

    asm = Assembly("tiny_tunnel", "fixture", (part("Shell", "shell", box(0, 0, 0, 4, 3, 3) - frozenset(TUNNEL)),
                                              part("Core", "core", box(1, 1, 1, 2, 2, 2))))
    return make_task(asm, [FaultSpec("missing_part", "Core")], seed=3)


def test_the_partial_move_reference_is_the_planners():
    from forgeplan.planners.registry import solve
    from forgeplan.semantics.diagnosis import diagnose
    from forgeplan.semantics.grounded import MoveKind

    t = tunnel_task()
    assert t.world.moves.kind is MoveKind.PARTIAL and diagnose(t.world, t.actual, t.target) == CORE_DIAGNOSIS
    assert [a.to_json() for a in solve(t).plan] == CORE_PLAN


@pytest.mark.parametrize("plan, failing, p", [
    # slide 2 along -x: the core runs into the shell after 1 (a 1-step slide is legal); fidelity: offset 1,
    # direction 1, distance 0 -> 2/3 (no state field: p is the action family alone)
    ([CORE_PLAN[0], {**CORE_PLAN[1], "distance": 2}], 2, 2 / 3),
    # slide +x: the tunnel ends there (-x is legal); direction 0, distance 1 -> 2/3
    ([CORE_PLAN[0], {**CORE_PLAN[1], "direction": "+x"}], 2, 2 / 3),
    # arrive at +2x, inside the shell's wall (the offset [1, 0, 0] is legal); offset 0, direction 1, distance 0
    ([{**CORE_PLAN[0], "offset": [2, 0, 0]}, {**CORE_PLAN[1], "distance": 2}], 1, 1 / 3),
    # a legal slide up the tunnel leaves the core at [1, 1, 0], one slide from home; direction 0 -> 2/3
    ([CORE_PLAN[0], {**CORE_PLAN[1], "direction": "+y"}], None, 2 / 3),
])
def test_a_wrong_slide_distance_direction_or_offset_is_a_parameter_error(plan, failing, p):
    """Table 9: "the action type is appropriate, but its pose, rotation, or other parameters fall outside
    the evaluator tolerance": a slide or an insertion that the same parts could make now with other
    parameters; SAPF scores a slide's direction and distance and an insertion's offset."""
    t = tunnel_task()
    v = verify(t, raw(t, CORE_DIAGNOSIS, plan))
    assert v.category == "parameter_error" and v.failing_step == failing
    s = score(t, raw(t, CORE_DIAGNOSIS, plan), CORE_DIAGNOSIS, CORE_PLAN)
    assert s.category == "parameter_error" and s.sse and not s.g and s.p == pytest.approx(p)


def test_a_missing_slide_is_not_a_parameter_error():
    t = tunnel_task()
    s = score(t, raw(t, CORE_DIAGNOSIS, CORE_PLAN[:1]), CORE_DIAGNOSIS, CORE_PLAN)
    assert s.category == "incomplete_restoration"
    assert s.p == pytest.approx(1 / 3)           # offset 1; the slide unmatched: direction 0, distance 0
    s = score(t, raw(t, CORE_DIAGNOSIS, CORE_PLAN), CORE_DIAGNOSIS, CORE_PLAN)
    assert s.category is None and s.g and s.p == 1.0 and s.mve


def stick(n: int) -> str:
    return f"Burr6Level4_Part0{n}_Stick"


def slide(parts, direction):
    return {"action": "slide", "part_ids": [stick(n) for n in parts], "direction": direction, "distance": 1}


# burr_6_level4 (library PARTIAL_MOVES) without stick 1: the other five shift, three of them leave as a group,
# stick 1 goes in, the group comes back at its displaced arrangement and everything slides home
LEVEL4_OFFSETS = [[-1, -1, 1], [-1, 0, 1], [-1, -1, 1]]
LEVEL4_PLAN = [slide([2, 3, 4, 5, 6], "-x"), slide([2, 4, 5], "-y"), slide([2, 3, 5], "+z"),
               {"action": "separate", "part_ids": [stick(n) for n in (2, 3, 5)], "direction": "-x"},
               {"action": "insert", "part_id": stick(1)},
               {"action": "join", "part_ids": [stick(n) for n in (2, 3, 5)], "direction": "-x", "offsets": LEVEL4_OFFSETS},
               slide([2, 3, 5], "-z"), slide([2, 4, 5], "+y"), slide([2, 3, 4, 5, 6], "+x")]


def test_a_wrong_join_offset_on_a_level_4_burr_is_a_parameter_error():
    from forgeplan.library import build

    t = make_task(build("burr_6_level4"), [FaultSpec("missing_part", stick(1))], seed=0)
    diagnosis = [{"type": "missing_part", "part_id": stick(1), "visible": False}]
    assert verify(t, raw(t, diagnosis, LEVEL4_PLAN)).valid
    higher = {**LEVEL4_PLAN[5], "offsets": [[x, y, z + 1] for x, y, z in LEVEL4_OFFSETS]}
    plan = [*LEVEL4_PLAN[:5], higher, *LEVEL4_PLAN[6:]]
    s = score(t, raw(t, diagnosis, plan), diagnosis, LEVEL4_PLAN)
    assert s.category == "parameter_error" and "step 6 join" in s.reason
    # fidelity: 6 slides x (direction, distance) + separate's direction + join's direction and offsets = 15
    # parameters (the insertion has none); only the offsets are wrong -> 14/15 (no state field)
    assert s.p == pytest.approx(14 / 15)
    # without the three slides that make room, the separation is blocked whatever its parameters
    s = score(t, raw(t, diagnosis, LEVEL4_PLAN[3:]), diagnosis, LEVEL4_PLAN)
    assert s.category == "dependency_omission"

"""`intervene`: the cost rule of the scores, the oracle and the deployed gate, the search budget.

Every expected number is worked out by hand in the comment beside it. The task: burr_6_pairs with sticks 1
and 2 misplaced. forgeplan's reference (fewest moved parts, then actions) takes out and puts back the two
pairs {1, 4} and {2, 5}: 4 parts, 4 actions. FORGE's (fewest actions) takes the whole burr apart and back:
6 parts, 2 actions.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from forgeplan.evaluation.evaluate import paper_reference
from forgeplan.evaluation.intervene import InterventionReport, Sample, intervene_sample, plan_candidate
from forgeplan.io.catalog import load_assembly
from forgeplan.semantics.faults import FaultSpec, make_task


def stick(n: int) -> str:
    return f"Burr6Pairs_Part0{n}_Stick"


def group(name: str, parts, direction: str) -> dict:
    return {"action": name, "part_ids": [stick(n) for n in parts], "direction": direction}


DIAGNOSIS = [{"type": "misplacement", "part_id": stick(1), "visible": False, "offset": [0.0, -0.83, 0.0]},
             {"type": "misplacement", "part_id": stick(2), "visible": False, "offset": [-0.48, 0.0, 0.0]}]
PAIRS = [group("separate", (1, 4), "+x"), group("separate", (2, 5), "+z"), group("join", (2, 5), "+z"),
         group("join", (1, 4), "+x")]
WHOLE = [group("separate", range(1, 7), "+x"), group("join", range(1, 7), "+x")]


@lru_cache(maxsize=None)
def task():
    return make_task(load_assembly("burr_6_pairs"), [FaultSpec("misplacement", stick(1)),
                                                     FaultSpec("misplacement", stick(2))], seed=0)


def sample(cost: str) -> Sample:
    """The sample as a benchmark stores it (forgeplan's reference), read under the cost rule `cost`."""
    t = task()
    reference = {"annotation": {"sample_id": t.sample_id, "assembly_id": t.assembly.assembly_id, "pass": False,
                                "mistakes": DIAGNOSIS},
                 "rework_plan": {"objective": "restore_to_target_state", "actions": PAIRS}}
    if cost == "paper":
        reference = paper_reference(t, reference)
    meta = {"sample_id": t.sample_id, "assembly_id": t.assembly.assembly_id, "family": t.assembly.family,
            "condition": "multi", "difficulty": "medium", "fault_types": ["misplacement"]}
    rework = {"moved_parts": [stick(n) for n in (1, 2, 4, 5)], "moved_part_count": 4, "route_id": "R-ref",
              "action_ids": [f"{a['action']}:{':'.join(a['part_ids'])}" for a in PAIRS]}
    return Sample(t.sample_id, meta, t, reference, rework, reference_cost=cost)


def raw(mistakes, actions) -> str:
    t = task()
    return json.dumps({"annotation": {"sample_id": t.sample_id, "assembly_id": t.assembly.assembly_id, "pass": False,
                                      "mistakes": mistakes},
                       "rework_plan": {"objective": "restore_to_target_state", "actions": actions}})


@pytest.mark.slow
def test_the_two_references_are_the_planners():
    from forgeplan.planners.asp.solve import solve_task

    assert [a.to_json() for a in solve_task(task()).plan] == PAIRS
    assert sample("paper").reference["rework_plan"]["actions"] == WHOLE


def test_under_the_papers_cost_the_fewest_actions_plan_is_kept():
    """#33.2: the 2-action anchor is FORGE-optimal. The moved-parts-first plan (4 actions) would score
    SSE 1 -> 0, MVE 1 -> 0, VMRE 1 -> 2/4, SAPF 1 -> 1/2 (state 1; the reference's two group moves are
    unmatched: action 0): the oracle gate rejects it, the deployed gate too (4 actions > 2), and the
    search under the paper's rule proposes no other plan."""
    s = sample("paper")
    anchor = raw(DIAGNOSIS, WHOLE)
    before, pairs = s.score(anchor), s.score(raw(DIAGNOSIS, PAIRS))
    assert (before.sse, before.mve, before.vmre, before.p) == (True, True, 1.0, 1.0)
    assert (pairs.sse, pairs.mve, pairs.vmre, pairs.p) == (False, False, 0.5, 0.5)
    assert plan_candidate(task(), anchor, "plan-from-diagnosis", "paper").raw is None
    for mode in ("plan-from-diagnosis", "minimal-edit"):
        report = InterventionReport(mode, reference_cost="paper")
        assert intervene_sample(s, anchor, mode, report) == anchor
        for gate in ("oracle", "deployed"):
            assert report.gates[gate].interventions == 0 and report.gates[gate].introduced_errors == 0


@pytest.mark.slow
def test_under_forgeplans_cost_the_moved_parts_first_plan_replaces_it():
    """The same anchor under forgeplan's rule moves 6 parts where 4 suffice: not optimal (MVE-any 0). The
    candidate is the reference: SSE 0 -> 1, MPA 0 -> 1; VMRE stays min(1, 4/2) = 1. A correction for both
    gates (the deployed one: both plans replay to the target, and (4, 4) < (6, 2))."""
    s = sample("forgeplan")
    anchor = raw(DIAGNOSIS, WHOLE)
    before = s.score(anchor)
    assert (before.sse, before.vmre, before.mve_any, before.mpa) == (False, 1.0, False, False)
    report = InterventionReport("plan-from-diagnosis")
    final = intervene_sample(s, anchor, "plan-from-diagnosis", report)
    assert json.loads(final)["rework_plan"]["actions"] == PAIRS
    after = s.score(final)
    assert (after.sse, after.vmre, after.mve_any, after.mpa) == (True, 1.0, True, True)
    for gate in ("oracle", "deployed"):
        assert (report.gates[gate].interventions, report.gates[gate].corrections) == (1, 1)


def test_the_oracle_and_the_deployed_gate_side_by_side():
    """Two answers, plan-from-diagnosis, forgeplan's rule (both gates are counted on every sample):

    1. the right diagnosis, an empty plan: the candidate is the reference; both gates take it (a correction);
    2. stick 1 alone diagnosed, an empty plan: the candidate (pair {1, 4} out and back) leaves stick 2
       misplaced. The verifier rejects its replay, so the deployed gate keeps the anchor; the oracle takes it,
       since SAPF rises: state 1/2 (stick 1's offset right, stick 2's missing); action 0 -> 2/4 (the
       reference's separate and join of {1, 4} are matched, direction right), p 1/4 -> 1/2, and nothing falls
       (SSE 0, MPA 0, RCA 0 both: 2 moved parts, not 4). It corrects nothing: the diagnosis is still wrong.
    """
    s = sample("forgeplan")
    answers = [raw(DIAGNOSIS, []), raw(DIAGNOSIS[:1], [])]
    assert s.score(answers[1]).p == 0.25
    assert s.score(raw(DIAGNOSIS[:1], PAIRS[:1] + PAIRS[3:])).p == 0.5
    report = InterventionReport("plan-from-diagnosis", "oracle")
    finals = [intervene_sample(s, a, "plan-from-diagnosis", report) for a in answers]
    assert json.loads(finals[0])["rework_plan"]["actions"] == PAIRS
    assert json.loads(finals[1])["rework_plan"]["actions"] == PAIRS[:1] + PAIRS[3:]
    counts = report.to_json()["gates"]
    assert {g: (c["interventions"], c["corrections"], c["introduced_errors"], c["rejected_by_gate"])
            for g, c in counts.items()} == {"oracle": (2, 1, 0, 0), "deployed": (1, 1, 0, 1)}
    assert counts["oracle"]["failures_after"] == counts["deployed"]["failures_after"] == {"correct": 1, "diagnosis": 1}
    assert report.to_json()["failures_before"] == {"diagnosis": 1, "planning": 1}
    deployed = InterventionReport("plan-from-diagnosis", "deployed")
    assert intervene_sample(s, answers[1], "plan-from-diagnosis", deployed) == answers[1]


def test_the_report_shows_both_gates(tmp_path):
    from forgeplan.evaluation.report import write_intervention_report

    report = InterventionReport("plan-from-diagnosis")
    for answer in (raw(DIAGNOSIS, []), raw(DIAGNOSIS[:1], [])):
        intervene_sample(sample("forgeplan"), answer, "plan-from-diagnosis", report)
    text = write_intervention_report(report.to_json(), tmp_path)[1].read_text()
    assert "| oracle gate | 2 | 1 | 0 | 0 | 1 | 1 |" in text          # correct 1, diagnosis 1 after
    assert "| deployed gate | 1 | 1 | 0 | 1 | 1 | 1 |" in text
    assert "not comparable with MAGAR's learned gate" in text


def test_minimal_edit_on_a_long_plan_is_undecided_and_keeps_the_answer():
    """#30: a 9,999-action plan exceeds the edit horizon's budget (200 steps): undecided at once, before any
    grounding; the answer stays and the report counts it."""
    from forgeplan.planners.asp.min_edit import MAX_HORIZON, closest_valid_plan

    s = sample("forgeplan")
    long_plan = [{"action": "remove", "part_id": stick(3)}, {"action": "insert", "part_id": stick(3)}] * 4999 + PAIRS[:1]
    anchor = raw(DIAGNOSIS, long_plan)
    report = InterventionReport("minimal-edit")
    assert intervene_sample(s, anchor, "minimal-edit", report) == anchor
    assert (report.undecided, report.no_candidate, report.gates["oracle"].interventions) == (1, 1, 0)
    from forgeplan.io.contract import parse_output

    given = parse_output(anchor).actions
    closest = closest_valid_plan(task(), given)
    assert not closest.decided and closest.plan == tuple(given) and closest.distance is None
    assert len(given) > MAX_HORIZON


def test_minimal_edit_past_its_time_limit_is_undecided():
    """Ten stray turns after the reference on drawer_cabinet_3: proving the closest plan takes minutes; with
    half a second the search stops between ground calls and says so."""
    from forgeplan.model.actions import Rotate
    from forgeplan.planners.asp.min_edit import closest_valid_plan
    from forgeplan.planners.asp.solve import solve_task

    asm = load_assembly("drawer_cabinet_3")
    t = make_task(asm, [FaultSpec("misplacement", asm.part_ids[1])], seed=0)
    reference = solve_task(t).plan
    given = list(reference) + [Rotate(asm.part_ids[0], "z", 90.0)] * 10
    closest = closest_valid_plan(t, given, reference, time_limit=0.5)
    assert not closest.decided and closest.plan == tuple(given)

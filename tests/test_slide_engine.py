"""The search over every engine move (SEMANTICS.md §9 "One universe" 4.) and what it lifts: it finds a plan
exactly when a brute-force search over the engine's own actions does, its one-move test is the goal
test of every successor, and references say which levels of the objective hold over every plan."""

from __future__ import annotations

import json
import random

import pytest

from forgeplan.cli.solve_cmd import _summary
from forgeplan.library import build
from forgeplan.planners.crosscheck import prover_side
from forgeplan.planners.reference import describe_proof, proven_reference
from forgeplan.planners.registry import solve
from forgeplan.planners.moved_set.bounds import LowerBound
from forgeplan.planners.moved_set.engine_search import _engine_moves, _goal, _one_move_home, shorter_plan_exists
from forgeplan.planners.moved_set.reach import Undecided
from forgeplan.planners.moved_set.search import PROOF_CAP, candidate_sets, minimal_rework, start_node
from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.faults import FaultSpec, make_task
from test_slide_search import brute_force, burr_e, tunnel

TUNNEL_FAULTS = ["missing_part:Core", "misplacement:Core", "misplacement:Shell", "missing_part:Shell",
                 "under_insertion:Core"]


def _sets_of_size(ag, start, size: int) -> list[int]:
    for n, sets in candidate_sets(ag, start):
        if n == size:
            return sets
    return []


@pytest.mark.parametrize("fault", TUNNEL_FAULTS)
def test_a_shorter_plan_exists_exactly_when_the_brute_force_search_has_one(fault):
    """At the brute-force optimum c* no moved set of size J* has a plan shorter than c*; one has a plan
    shorter than c* + 1 (its own)."""
    task = make_task(tunnel(), [FaultSpec.parse(fault)], seed=3)
    w = AssemblyGrounding(task.world)
    j, c = brute_force(task.world, task.actual, task.target)
    start = start_node(task.world, task.actual, spares=True)
    sets = _sets_of_size(w, start, j)
    assert sets
    answers = {}
    for m in sets:
        bound = LowerBound(w, m, PROOF_CAP)
        answers[m] = (shorter_plan_exists(w, start, m, c, bound, PROOF_CAP)[0],
                      shorter_plan_exists(w, start, m, c + 1, bound, PROOF_CAP)[0])
    assert not any(shorter for shorter, _ in answers.values()), answers
    assert any(longer for _, longer in answers.values()), answers


def test_the_engine_search_lifts_what_the_lower_bound_cannot():
    """solid6burr_e with a missing stick: the lower bound at the start is below the optimum, the engine
    search meets no shorter plan, so both levels hold over every plan the engine accepts."""
    task = make_task(burr_e(), [FaultSpec.parse("missing_part:Solid6burrEAsm901_Part03_Stick")], seed=1)
    w = AssemblyGrounding(task.world)
    start = start_node(task.world, task.actual, spares=True)
    found = minimal_rework(w, task.actual)
    assert found.optimal and found.proved == ("moved-parts", "actions")
    assert (found.moved, found.actions) == (2, 4)
    sets = _sets_of_size(w, start, found.moved)
    assert min(LowerBound(w, m, PROOF_CAP)(start) for m in sets) < found.actions


def _nodes_near_home(ag, movable: int, rng: random.Random, walks: int, depth: int) -> list:
    """Nodes on random walks of engine moves from the target (with one slot made faulty), at most one slot absent."""
    home = (tuple((0, 0, 0) for _ in ag.world.ids), 0)
    out = []
    for _ in range(walks):
        bad = rng.choice([0, 1 << rng.randrange(len(ag.world.ids))]) & movable
        node = (home[0], bad)
        for _ in range(depth):
            try:
                nxt = list(_engine_moves(ag, node, movable))
            except Undecided:
                break
            if not nxt:
                break
            node = rng.choice(nxt)
            out.append(node)
    return out


@pytest.mark.parametrize("which", ["tunnel", "burr_6_level5"])
def test_one_move_home_is_the_goal_test_of_every_successor(which):
    asm = tunnel() if which == "tunnel" else build("burr_6_level5")
    w = AssemblyGrounding(make_task(asm, []).world)
    movable = (1 << len(w.world.ids)) - 1
    nodes = _nodes_near_home(w, movable, random.Random(5), walks=60 if which == "tunnel" else 25, depth=3)
    checked = hits = 0
    for node in nodes:
        try:
            expected = any(_goal(n) for n in _engine_moves(w, node, movable))
        except Undecided:
            continue
        assert _one_move_home(w, node, movable) == expected, node
        checked += 1
        hits += expected
    assert checked >= 40 and hits >= 5, (checked, hits)


def test_references_say_which_levels_hold_over_every_engine_plan():
    """A mirrored fault on burr_6_level5 is proved over every plan; a missing stick, whose shorter plans the
    engine search cannot rule out (a join of two sticks out at once), is the grounded optimum only:
    fewest moved parts proved, reported feasible, and the cross-check still judges its grounded claim."""
    mirrored = make_task(build("burr_6_level5"), [FaultSpec("wrong_part", "Burr6Level5_Part01_Stick")])
    r = solve(mirrored).to_json()
    assert r["status"] == "optimal" and r["proved"] == ["moved-parts", "actions"] and r["grounded_optimal"] is True

    missing = make_task(build("burr_6_level5"), [FaultSpec("missing_part", "Burr6Level5_Part05_Stick")])
    result = solve(missing)
    r = result.to_json()
    assert r["status"] == "feasible" and not r["optimal"]
    assert r["proved"] == ["moved-parts"] and r["grounded_optimal"] is True
    assert r["lower_bound_moved_parts"] == result.moved_parts == 4
    ref = proven_reference(missing)
    assert ref["proof"]["grounded_optimal"] and "NOT proved minimal over every plan" in describe_proof(ref)
    assert prover_side(missing, "moved-parts,actions", None).optimal
    assert json.loads(json.dumps(ref))["proof"]["proved"] == ["moved-parts"]
    assert _summary(result).startswith("feasible: fewest moved parts proved over every plan; fewest actions proved "
                                       "over the grounded partial-move universe only")


def test_straight_move_proofs_keep_their_shape():
    """The partial-move fields stay out of clingo's proof object (straight-move references are unchanged)."""
    task = make_task(build("luban_lock_3"), [FaultSpec("missing_part", build("luban_lock_3").part_ids[0])])
    proof = solve(task).to_json()
    assert "grounded_optimal" not in proof and proof["proved"] == ["moved-parts", "actions"]

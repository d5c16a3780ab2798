"""The decision over every engine move (SEMANTICS.md §9 "One universe" 4., SEARCH.md §3.1): it finds a plan
exactly when a brute-force search over the engine's own actions does, never says "no plan" where the
reverse of a random walk of engine moves is one (joins in any arrangement included: the reverse of a
departure from a shifted arrangement), every plan it returns replays in the engine, and references say
which levels of the objective hold over every plan."""

from __future__ import annotations

import json
import random

import pytest

from forgeplan.cli.solve_cmd import _summary
from forgeplan.library import build
from forgeplan.model.actions import moved_parts
from forgeplan.planners.crosscheck import prover_side
from forgeplan.planners.reference import describe_proof, proven_reference
from forgeplan.planners.registry import solve
from forgeplan.planners.moved_set.bounds import LowerBound
from forgeplan.planners.moved_set.engine_search import _engine_moves, _goal, _one_move_home, shorter_plan
from forgeplan.planners.moved_set.reach import Undecided
from forgeplan.planners.moved_set.search import PROOF_CAP, _mends, candidate_sets, minimal_rework, start_node
from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.partial_offers import Universe
from forgeplan.semantics.partial_universe import to_action
from test_slide_search import _engine_state, brute_force, burr_e, tunnel

TUNNEL_FAULTS = ["missing_part:Core", "misplacement:Core", "misplacement:Shell", "missing_part:Shell",
                 "under_insertion:Core"]


def _sets_of_size(ag, start, size: int) -> list[int]:
    for n, sets in candidate_sets(ag, start):
        if n == size:
            return sets
    return []


def _actions(world, actual, steps) -> list:
    """The engine's actions of a plan the decision returns (a mend: the one that repairs its slot)."""
    return [_mends(world, actual, move[1])[0] if move[0] == "mend" else to_action(world, node[0], move)
            for node, move in steps]


def _replays_home(task_world, actual, target, plan) -> bool:
    replay = task_world.replay(actual, plan)
    return replay.failure is None and task_world.equivalent(replay.final, target)


@pytest.mark.parametrize("fault", TUNNEL_FAULTS)
def test_a_shorter_plan_exists_exactly_when_the_brute_force_search_has_one(fault):
    """At the brute-force optimum c* no moved set of size J* has a plan of c* - 1 actions; one has a plan of
    c* (which replays in the engine)."""
    task = make_task(tunnel(), [FaultSpec.parse(fault)], seed=3)
    w = AssemblyGrounding(task.world)
    j, c = brute_force(task.world, task.actual, task.target)
    start = start_node(task.world, task.actual, spares=True)
    sets = _sets_of_size(w, start, j)
    assert sets
    plans = []
    for m in sets:
        bound = LowerBound(w, m, PROOF_CAP)
        assert shorter_plan(w, start, m, c - 1, bound, PROOF_CAP).plan is None, bin(m)
        found = shorter_plan(w, start, m, c, bound, PROOF_CAP).plan
        if found is not None:
            plans.append(_actions(task.world, task.actual, found))
    assert plans and all(len(p) <= c and _replays_home(task.world, task.actual, task.target, p) for p in plans)


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


def _walk(ag, movable: int, rng: random.Random, length: int) -> tuple:
    """A random walk of `length` slides and departures of `movable` slots from the target (every engine move,
    groups leaving from shifted arrangements too), never back to where it was: its end, whose way home is
    the walk undone."""
    config = tuple((0, 0, 0) for _ in ag.world.ids)
    seen = {config}
    for _ in range(length):
        moves = [after for _, after in ag.offers.moves(config, movable, Universe.ENGINE) if after not in seen]
        if not moves:
            break
        config = rng.choice(moves)
        seen.add(config)
    return config


@pytest.mark.parametrize("which, walks, cap", [("burr_6_level4", 12, 2_000),
                                               pytest.param("burr_6_level4", 40, PROOF_CAP, marks=pytest.mark.slow)])
def test_no_plan_is_never_said_where_an_undone_walk_is_one(which, walks, cap):
    """From the end of a random walk of n engine moves (two or more slots absent in most), the walk undone is
    a plan of n actions: the decision never says none exists at n, and the plan it returns replays in the
    engine within n actions."""
    world = make_task(build(which), []).world
    ag = AssemblyGrounding(world)
    rng = random.Random(7)
    slots = range(len(world.ids))
    decided = joins = 0
    for _ in range(walks):
        movable = sum(1 << i for i in rng.sample(slots, rng.choice([4, 5])))
        n = rng.randint(3, 7)
        config = _walk(ag, movable, rng, n)
        if all(o == (0, 0, 0) for o in config):
            continue
        start = (config, 0)
        try:
            verdict = shorter_plan(ag, start, movable, n, LowerBound(ag, movable, PROOF_CAP), cap)
        except Undecided:
            continue
        assert verdict.plan is not None, (bin(movable), config, n)
        actual = _engine_state(world, config)
        plan = _actions(world, actual, verdict.plan)
        assert len(plan) <= n and _replays_home(world, actual, world.target_state(), plan), plan
        assert moved_parts(plan) <= {world.ids[i] for i in range(len(world.ids)) if movable >> i & 1}
        decided += 1
        joins += config.count(None) >= 2
    assert decided >= walks // 2 and joins >= 1, (decided, joins)


def test_a_shorter_engine_plan_is_found_and_replays():
    """burr_6_level5 with a stick missing: the grounded optimum is 9 actions, and the decision finds an engine
    plan of 8 (a group slides with a clear ray ahead where the grounded universe has it leave and come
    back), which the engine replays: the reference stays the grounded optimum, fewest actions not proved."""
    task = make_task(build("burr_6_level5"), [FaultSpec("missing_part", "Burr6Level5_Part05_Stick")])
    ag = AssemblyGrounding(task.world)
    start = start_node(task.world, task.actual, spares=True)
    found = minimal_rework(ag, task.actual)
    assert (found.moved, found.actions, found.proved) == (4, 9, ("moved-parts",))
    shorter = []
    for m in _sets_of_size(ag, start, 4):
        steps = shorter_plan(ag, start, m, 8, LowerBound(ag, m, PROOF_CAP), PROOF_CAP).plan
        if steps is not None:
            shorter.append(_actions(task.world, task.actual, steps))
    assert shorter and all(len(p) == 8 and len(moved_parts(p)) == 4 and
                           _replays_home(task.world, task.actual, task.target, p) for p in shorter)


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
    """The forward search's last layer, never built, asked directly: one move ends the plan exactly when a
    successor is the goal."""
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
    """A mirrored fault on burr_6_level5 is proved over every plan; a missing stick, for which the engine
    search finds a shorter plan (above), is the grounded optimum only: fewest moved parts proved, reported
    feasible, and the cross-check still judges its grounded claim."""
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

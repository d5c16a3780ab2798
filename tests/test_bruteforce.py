"""clingo's proved optimum against an independent brute-force search over the Python engine.

The search knows nothing of the encodings: it expands `forgeplan.semantics.legal.legal_actions` with
`World.apply` from the actual state, uniform-cost on (J_move, c) (or c alone), over every slot of
the assembly (so it also checks the closure restriction), and then enumerates every plan of the
optimal cost. Hundreds of small tasks: synthetic chains, the mechanism fixture, Luban locks,
small bayonets and shaft stacks, with every fault type, multi-faults and hidden faults.
"""

from __future__ import annotations

import heapq
import itertools

import pytest

from cases import grounding, lane

from fixtures import fixture_assembly
from forgeplan.bench.synthetic import chain_assembly
from forgeplan.io.catalog import load_assembly
from forgeplan.model.actions import ACTION_NAMES
from forgeplan.model.state import Tolerances
from forgeplan.planners.asp.solve import solve_task
from forgeplan.planners.result import Status
from forgeplan.semantics.closure import dependency_closure
from forgeplan.semantics.diagnosis import MISTAKE_TYPES, diagnose, faulty_slots
from forgeplan.semantics.faults import FaultSpec, candidates, make_task
from forgeplan.semantics.legal import legal_actions
from forgeplan.semantics.engine import World

NODE_LIMIT = 60_000


def touched(a) -> tuple[str, ...]:
    return (a.part_id, a.target_part_id) if a.name == "replace" else (a.part_id,)


def successors(task):
    """state -> [(action, next state)] over the engine, memoised (states recur with other moved sets)."""
    world, memo = task.world, {}

    def succ(state):
        out = memo.get(state)
        if out is None:
            out = memo[state] = [(a, world.apply(state, a)) for a in legal_actions(grounding(world), state)]
        return out
    return succ


def brute_optimum(task, objective: str) -> tuple[int, int]:
    """Uniform-cost search: the optimal (J_move, c), or (0, c) for the `actions` objective."""
    world, target, succ = task.world, task.target, successors(task)
    by_moved = objective != "actions"
    tie = itertools.count()
    frontier = [((0, 0), next(tie), task.actual, frozenset())]
    seen = set()
    while frontier:
        cost, _, state, moved = heapq.heappop(frontier)
        key = (state, moved) if by_moved else state
        if key in seen:
            continue
        seen.add(key)
        assert len(seen) < NODE_LIMIT, "task too large for the brute force"
        if world.equivalent(state, target):
            return cost
        for a, nxt in succ(state):
            m = moved | set(touched(a)) if by_moved else moved
            heapq.heappush(frontier, ((len(m) if by_moved else 0, cost[1] + 1), next(tie), nxt, m))
    raise AssertionError("no plan")


def brute_plans(task, moved_cap: int | None, length: int) -> set[tuple]:
    """Every plan of exactly `length` actions reaching the target and touching <= moved_cap parts.

    Breadth-first over (state, moved parts) nodes, keeping every shortest-path predecessor: a plan
    of optimal cost reaches each node it visits on a shortest path (else a shorter prefix with the
    same suffix would beat it), so the optimal plans are the shortest paths to target nodes.
    """
    world, target, succ = task.world, task.target, successors(task)
    start = (task.actual, frozenset())
    dist, preds, frontier = {start: 0}, {start: []}, [start]
    for level in range(1, length + 1):
        nxt = []
        for node in frontier:
            state, moved = node
            for a, after in succ(state):
                m = moved | set(touched(a)) if moved_cap is not None else moved
                if moved_cap is not None and len(m) > moved_cap:
                    continue
                child = (after, frozenset(m))
                if child not in dist:
                    dist[child], preds[child] = level, []
                    nxt.append(child)
                if dist[child] == level:
                    preds[child].append((node, a))
        frontier = nxt
        assert len(dist) < NODE_LIMIT, "task too large for the brute force"

    def paths(node) -> list[tuple]:
        if node == start:
            return [()]
        return [p + (a,) for prev, a in preds[node] for p in paths(prev)]

    return {p for node in frontier if world.equivalent(node[0], target) for p in paths(node)}


def tie_break_key(plan, world) -> tuple:
    """SEMANTICS §4, written out again here: (action rank, part rank, parameters) per step."""
    ranks = {pid: k for k, pid in enumerate(list(world.ids) + [w.part_id for w in world.assembly.spares])}
    return tuple((ACTION_NAMES.index(a.name), ranks[a.part_id], getattr(a, "axis", ""), getattr(a, "angle_deg", 0.0),
                  ranks.get(getattr(a, "target_part_id", ""), -1)) for a in plan)


def _tasks():
    """Small tasks the brute force can enumerate: (name, task)."""
    out = []
    small = [chain_assembly(n, d) for n, d in ((3, 1), (4, 2), (5, 2), (6, 3), (7, 2))]
    small += [fixture_assembly()] + [load_assembly(a) for a in ("luban_lock_3", "luban_lock_3_offset",
                                                                  "bayonet_mount_3pin", "shaft_stack_3")]
    for asm in small:
        world = World(asm, Tolerances())
        types = [t for t in MISTAKE_TYPES if candidates(world, t)]
        seeds = 4 if asm.family in ("synthetic_chain", "luban3") else 2
        for ftype in types:
            for seed in range(seeds):
                out.append((f"{asm.assembly_id}/{ftype}/{seed}", make_task(asm, [FaultSpec(ftype)], seed=seed)))
        for seed in range(seeds):
            pair = [FaultSpec(types[seed % len(types)]), FaultSpec(types[(seed + 1) % len(types)])]
            if len(asm.parts) >= 2:
                out.append((f"{asm.assembly_id}/multi/{seed}", make_task(asm, pair, seed=50 + seed)))
        out.append((f"{asm.assembly_id}/boundary", make_task(asm, [], seed=7, boundary=True)))
    return out


TASKS = _tasks()


def test_enough_tasks():
    assert len(TASKS) >= 200
    hidden = [n for n, t in TASKS if any(not m["visible"] for m in _mistakes(t))]
    assert len(hidden) >= 30, "hidden faults must be well represented"


def _mistakes(task):
    return diagnose(task.world, task.actual, task.target)


ENUMERABLE = 6   # closure size up to which the optimal plan sets are compared (beyond: 10^5 plans)


@pytest.mark.parametrize("name,task", lane(TASKS))
def test_optimum_and_optimal_plans_match_brute_force(name, task):
    world = task.world
    small = len(dependency_closure(world, task.actual, faulty_slots(world, task.actual, task.target))) <= ENUMERABLE
    res = solve_task(task, all_optimal=small, max_plans=10_000)
    assert res.status is Status.OPTIMAL and res.optimal, res.status
    j, c = brute_optimum(task, "moved-parts,actions")
    assert (res.moved_parts, res.actions) == (j, c), f"clingo {res.moved_parts, res.actions} brute {j, c}"
    if not small:
        return
    plans = brute_plans(task, j, c)
    assert res.n_optimal == len(plans)
    assert set(res.optimal_plans) == plans
    assert res.plan == min(plans, key=lambda p: tie_break_key(p, world)), "tie-break"
    slot_of = {w.part_id: w.variant_of for w in task.assembly.spares}
    for p in plans:  # SEMANTICS §6: every part moved by a minimal plan lies in the closure
        assert {slot_of.get(x, x) for a in p for x in touched(a)} <= set(res.closure)


ACTION_TASKS = [t for t in TASKS[::5] if "bayonet" not in t[0]]  # bayonet bases: 10^5 shortest plans


@pytest.mark.parametrize("name,task", lane(ACTION_TASKS, every=4))
def test_actions_objective_matches_brute_force(name, task):
    res = solve_task(task, objective="actions", all_optimal=True, max_plans=10_000)
    assert res.status is Status.OPTIMAL
    _, c = brute_optimum(task, "actions")
    assert res.actions == c
    plans = brute_plans(task, None, c)
    assert res.n_optimal == len(plans) and set(res.optimal_plans) == plans
    assert res.plan == min(plans, key=lambda p: tie_break_key(p, task.world))


@pytest.mark.parametrize("name,task", TASKS[1::10], ids=[n for n, _ in TASKS[1::10]])
def test_moved_parts_objective_matches_brute_force(name, task):
    res = solve_task(task, objective="moved-parts")
    j, c = brute_optimum(task, "moved-parts,actions")
    assert res.optimal and res.moved_parts == j and res.actions == c

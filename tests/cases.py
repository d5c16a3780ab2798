"""The one registry of test cases shared by the engine, ASP, PDDL, grammar and verifier tests.

`all_cases`: (name, task) pairs built deterministically from the built-in library: every assembly x
every applicable fault type x a few seeds, plus multi-fault, boundary no-fault and plain no-fault tasks.
`plan_cases`: small tasks with their proven optimum and plans of known verdict, which
test_plan_cases.py runs through every implementation (engine replay, ASP checker, PDDL validator).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from functools import lru_cache

from forgeplan.io.catalog import load_assembly
from forgeplan.library import BUILTIN
from forgeplan.library.burr import LEVELS
from forgeplan.model.actions import Action, Insert, Join, Remove, Replace, Rotate, Separate, lock_action
from forgeplan.model.state import Tolerances
from forgeplan.semantics.assembly_grounding import AssemblyGrounding
from forgeplan.semantics.diagnosis import MISTAKE_TYPES
from forgeplan.semantics.faults import FaultSpec, candidates, make_task
from forgeplan.semantics.engine import World
from forgeplan.semantics.task import Task


# the built-ins that need partial moves (SEMANTICS §9), as the tests expect them: the burrs of levels 4 and 5
# (test_expert_burrs.py checks that the grounded task finds exactly these)
PARTIAL_MOVES = frozenset(LEVELS)


@lru_cache(maxsize=64)
def grounding(world: World) -> AssemblyGrounding:
    """The tests' assembly grounding of a world, one per world (as a benchmark batch keeps one for its
    tasks): what `legal_actions` and the searches take."""
    return AssemblyGrounding(world)


@lru_cache(maxsize=None)
def all_cases(seeds: int = 2) -> tuple[tuple[str, Task], ...]:
    out = []
    for asm_id in (a for a in BUILTIN if a not in PARTIAL_MOVES):   # §9 burrs: tests/test_expert_burrs.py
        asm = load_assembly(asm_id)
        world = World(asm, Tolerances())
        out.append((f"{asm_id}/nofault", make_task(asm, [], seed=0)))
        out.append((f"{asm_id}/boundary", make_task(asm, [], seed=1, boundary=True)))
        for ftype in MISTAKE_TYPES:
            if not candidates(world, ftype):
                continue
            for seed in range(seeds):
                out.append((f"{asm_id}/{ftype}/{seed}", make_task(asm, [FaultSpec(ftype)], seed=seed)))
        types = [t for t in MISTAKE_TYPES if candidates(world, t)]
        for seed in range(seeds):
            pair = [FaultSpec(types[seed % len(types)]), FaultSpec(types[(seed + 2) % len(types)])]
            out.append((f"{asm_id}/multi/{seed}", make_task(asm, pair, seed=100 + seed)))
    return tuple(out)


def fault_cases(seeds: int = 2) -> tuple[tuple[str, Task], ...]:
    return tuple(c for c in all_cases(seeds) if not c[0].endswith(("/nofault", "/boundary")))


# ----------------------------------------------------------------------------- plans with known verdicts

@dataclass(frozen=True)
class PlanCase:
    """A task with its proven optimum (J_move, c), plans every implementation must accept, and plans each
    must reject with the engine's reason (`final_state` when every step is legal but the goal is missed)."""

    name: str
    task: Task
    optimum: tuple[int, int]
    valid_plans: tuple[tuple[Action, ...], ...]
    invalid_plans: tuple[tuple[tuple[Action, ...], str], ...]


@lru_cache(maxsize=None)
def plan_cases() -> tuple[PlanCase, ...]:
    """Small tasks on the hand-built fixture (every mechanism) and on a burr that needs group moves."""
    from fixtures import BENT, CLIP, COVER, KEY, LATCH, PIN, fixture_assembly

    fx = fixture_assembly()
    unlatch, relatch = lock_action(fx.part(LATCH), False), lock_action(fx.part(LATCH), True)
    unclip, reclip = lock_action(fx.part(CLIP), False), lock_action(fx.part(CLIP), True)
    out_cover, in_cover, in_pin = Remove(COVER), Insert(COVER), Insert(PIN)
    swap = Replace(BENT, target_part_id=PIN)
    turn_key = Rotate(KEY, axis="z", angle_deg=-180.0)
    burr = load_assembly("burr_6_split")
    trio = ("Burr6Split_Part01_Stick", "Burr6Split_Part04_Stick", "Burr6Split_Part06_Stick")
    lift, drop = Separate(trio, "+y"), Join(trio, "+y")

    def task(asm, spec: str) -> Task:
        return make_task(asm, [FaultSpec.parse(spec)], seed=0)

    return (
        PlanCase("fixture/missing_pin", task(fx, f"missing_part:{PIN}"), (4, 7),
                 ((unlatch, out_cover, unclip, in_pin, in_cover, relatch, reclip),
                  (unclip, unlatch, out_cover, in_pin, in_cover, reclip, relatch)),
                 (((), "final_state"),
                  ((in_pin,), "held"),
                  ((out_cover,), "held"),
                  ((unlatch, out_cover, unclip, in_pin, in_cover, relatch), "final_state"),
                  ((unlatch, unclip, in_pin), "blocked"))),
        PlanCase("fixture/wrong_pin", task(fx, f"wrong_part:{PIN}"), (5, 7),
                 ((unlatch, out_cover, unclip, swap, in_cover, relatch, reclip),),
                 (((swap,), "held"),
                  ((unlatch, unclip, swap), "blocked"),
                  ((unlatch, out_cover, unclip, swap, in_cover, relatch), "final_state"))),
        PlanCase("fixture/latch_open", task(fx, f"interference_lock:{LATCH}"), (1, 1),
                 ((relatch,), (out_cover, in_cover, relatch)),
                 (((), "final_state"), ((unlatch,), "already_unlocked"), ((relatch, relatch), "already_locked"))),
        PlanCase("fixture/key_turned", task(fx, f"wrong_orientation:{KEY}"), (1, 1),
                 ((turn_key,),),
                 (((), "final_state"), ((Remove(KEY),), "final_state"))),
        PlanCase("burr_6_split/misplaced", task(burr, "misplacement:Burr6Split_Part04_Stick"), (3, 2),
                 ((lift, drop),),
                 (((lift,), "final_state"), ((drop,), "already_present"),
                  ((Separate(trio, "-y"), drop), "blocked"))),
    )


def lane(cases, every: int = 8) -> list:
    """pytest params over (name, task) cases: every `every`-th runs in the fast lane (plain `pytest`), the
    others carry the slow mark, so the inner loop samples every assembly family and CI still runs them all."""
    import pytest

    return [pytest.param(name, task, id=name, marks=() if k % every == 0 else pytest.mark.slow)
            for k, (name, task) in enumerate(cases)]


def write_case_tasks(root, count: int) -> list[str]:
    """The first `count` cases with a simple reference, written as task folders `root/tasks/sNNN_<case>` with
    their reference.json; returns the sample ids in order (the LLM tests' small benchmarks start here)."""
    from dataclasses import replace

    from forgeplan.io.task_files import write_json, write_task
    from forgeplan.planners.reference import simple_reference

    chosen = [c for c in all_cases() if simple_reference(c[1]) is not None][:count]
    assert len(chosen) == count
    ids = []
    for k, (name, task) in enumerate(chosen):
        sid = f"s{k:03d}_" + name.replace("/", "_")
        task = replace(task, sample_id=sid)
        write_task(task, root / "tasks" / sid)
        write_json(root / "tasks" / sid / "reference.json", simple_reference(task))
        ids.append(sid)
    return ids


ZIGZAG = ((2, 2, 2), (2, 3, 2), (3, 3, 2), (3, 3, 3), (3, 3, 4))   # the core's way out: +y 1, +x 1, then +z


def zigzag_puzzle(base: bool = False):
    """A puzzle that needs partial moves: a cube in a zigzag tunnel through a shell, the tunnel's exit
    plugged by a cap; the core leaves only after sliding +y 1 and +x 1 (level 1.3). With `base`, a plate
    under the shell keeps shell and core from leaving together downwards, so repairing the core takes
    slides rather than a separation of the shell with the core inside."""
    from forgeplan.library.voxels import box, part
    from forgeplan.model.assembly import Assembly

    parts = (part("Shell", "box", box(0, 0, 0, 5, 5, 5) - frozenset(ZIGZAG)), part("Core", "cube", box(2, 2, 2, 3, 3, 3)),
             part("Cap", "cube", box(3, 3, 4, 4, 4, 5)))
    if base:
        parts += (part("Base", "plate", box(0, 0, -1, 5, 5, 0)),)
    return Assembly("zigzag4" if base else "zigzag3", "fixture", parts)


def uniform_cost_optimum(task: Task, successors, weights: tuple[int, int] = (1000, 1)) -> tuple[int, int]:
    """(J_move, c) of an optimal plan by uniform-cost search over `successors(world, state)` -> [(action,
    next state)], costing weights[0] per distinct moved part plus weights[1] per action. Knows nothing of
    any planner; the brute-force side of the differential tests."""
    world, tie = task.world, itertools.count()
    frontier, seen, memo = [(0, next(tie), task.actual, frozenset(), 0)], set(), {}
    while frontier:
        _, _, state, moved, length = heapq.heappop(frontier)
        if (state, moved) in seen:
            continue
        seen.add((state, moved))
        if world.equivalent(state, task.target):
            return len(moved), length
        if state not in memo:
            memo[state] = successors(world, state)
        for a, nxt in memo[state]:
            m = moved | set(a.touched)
            cost = weights[0] * len(m) + weights[1] * (length + 1)
            heapq.heappush(frontier, (cost, next(tie), nxt, frozenset(m), length + 1))
    raise AssertionError("no plan")

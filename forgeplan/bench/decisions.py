"""Assembly Decision samples (MAGAR §3.1): a recorded state of an episode and its next structured intent.

Two kinds of episode: the assembly sequence (the first k parts of the validated sequence placed, each
lock engaged once everything it holds is in) and a recovery (a faulty state and the states its proven
reference plan passes through). The sample's state is solved again on its own: the reference decision is
that of the first step of its canonical optimal plan, and the valid decisions are those of every first
step of every optimal plan (`first_steps`). The closed loop: every valid first step is legal, reaches a
state where its subgoal holds, and the reference decision is among the valid ones. The sample's
`initial_state.json` is the episode's start (the empty assembly, or the faulty state of the recovery).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..geometry.graphs import assembly_sequence
from ..io.task_files import public_files
from ..model.assembly import Assembly
from ..model.errors import ForgeplanError
from ..model.state import State, Tolerances
from ..semantics.faults import FaultSpec, candidates, initial_state, make_task
from ..semantics.diagnosis import MISTAKE_TYPES
from ..semantics.intents import INSPECT, decision_of, subgoal_holds, valid_decisions
from ..semantics.engine import World
from ..semantics.task import Task
from .generate import Generated, _rng
from .labels import difficulty

MAX_ATTEMPTS = 25
SOLVE_TIME_LIMIT = 60.0
EPISODES = ("assembly", "recovery")


@dataclass(frozen=True)
class DecisionSlot:
    """One planned Assembly Decision sample."""

    index: int
    split: str
    assembly_id: str
    episode: str          # assembly | recovery

    @property
    def sample_id(self) -> str:
        return f"{self.assembly_id}_{self.split}_ad{self.index:06d}"


def assembly_state(world, k: int) -> State:
    """The first k parts of the assembly sequence placed (k = all parts: the target state)."""
    seq = [world.index[p] for p in assembly_sequence(world.assembly)]
    return world.target_state() if k >= len(seq) else initial_state(world, [seq[k]])


def _recovery_start(asm: Assembly, tolerances: Tolerances, rng: random.Random) -> tuple[State, tuple]:
    """A faulty state (one to three faults) and its proven reference plan."""
    from ..planners.registry import solve as solve_task

    world = World(asm, tolerances)
    types = [t for t in MISTAKE_TYPES if candidates(world, t)]
    faults = [FaultSpec(t) for t in rng.sample(types, k=min(rng.choice((1, 1, 1, 2, 3)), len(types)))]
    task = make_task(asm, faults, seed=rng.randrange(2**31), tolerances=tolerances, world=world)
    result = solve_task(task, time_limit=SOLVE_TIME_LIMIT)
    if not result.optimal:
        raise ForgeplanError(f"recovery reference not proved optimal ({result.status.name})")
    return task.actual, result.plan


def episode_state(slot: DecisionSlot, asm: Assembly, tolerances: Tolerances, rng: random.Random) -> tuple[State, State, dict]:
    """(start state, recorded state, episode description) of a slot."""
    world = World(asm, tolerances)
    if slot.episode == "assembly":
        n = len(world.ids)
        k = rng.randrange(n + 1)
        return assembly_state(world, 0), assembly_state(world, k), {"kind": "assembly", "step": k, "length": n}
    start, plan = _recovery_start(asm, tolerances, rng)
    k = rng.randrange(len(plan) + 1)
    state = world.replay(start, plan[:k]).final
    return start, state, {"kind": "recovery", "step": k, "length": len(plan),
                          "recorded_actions": [a.to_json() for a in plan]}


def check_closed_loop(task: Task, reference, valid, first) -> None:
    """Every valid first step is legal and establishes its subgoal; the reference is a valid decision."""
    w = task.world
    for a in first:
        if w.check(task.actual, a) is not None:
            raise ForgeplanError(f"{task.sample_id}: first step {a} is illegal")
        after = w.apply(task.actual, a)
        if not subgoal_holds(w, after, task.target, decision_of(a).subgoal):
            raise ForgeplanError(f"{task.sample_id}: subgoal of {a} does not hold after it")
    if reference not in valid:
        raise ForgeplanError(f"{task.sample_id}: the reference decision is not among the valid ones")


def generate_decision(slot: DecisionSlot, asm: Assembly, seed: int, tolerances: Tolerances) -> Generated:
    """One Assembly Decision sample; attempt seeds are tried until the state is solved optimally."""
    from ..planners.asp.first_steps import solve_with_first_steps

    last = "no attempt"
    for attempt in range(MAX_ATTEMPTS):
        rng = _rng(seed, "decision", slot.index, attempt)
        try:
            start, state, episode = episode_state(slot, asm, tolerances, rng)
        except ForgeplanError as exc:
            last = str(exc)
            continue
        world = World(asm, tolerances)
        task = Task(slot.sample_id, asm, tolerances, start, state, world.target_state(), world)
        solved = solve_with_first_steps(task, SOLVE_TIME_LIMIT)
        if solved is None:
            last = "state not solved optimally"
            continue
        result, first = solved
        reference = decision_of(result.plan[0]) if result.plan else INSPECT
        valid = valid_decisions(world, state, task.target, first)
        check_closed_loop(task, reference, valid, first)
        return _files(slot, task, result, first, reference, valid, episode, attempt)
    raise ForgeplanError(f"could not generate decision sample {slot.sample_id}: {last}")


def _files(slot, task, result, first, reference, valid, episode, attempt) -> Generated:
    asm = task.assembly
    meta = {"sample_id": slot.sample_id, "assembly_id": asm.assembly_id, "family": asm.family, "split": slot.split,
            "task_family": "assembly_decision", "condition": slot.episode, "fault_types": [],
            "difficulty": difficulty("single", result.actions, []), "operation": reference.operation,
            "attempt": attempt}
    decision = {"sample_id": slot.sample_id, "reference": reference.to_json(), "valid": [d.to_json() for d in valid],
                "first_steps": [a.to_json() for a in first], "optimum": {"moved_parts": result.moved_parts,
                                                                         "actions": result.actions},
                "reference_plan": [a.to_json() for a in result.plan], "episode": episode}
    files = dict(public_files(task))
    files["decision.json"] = decision
    files["meta.json"] = meta
    return Generated(slot, slot.sample_id, files)

"""Fault injection: turn an assembly's target state into a faulty actual state."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..geometry.graphs import assembly_sequence
from ..model.assembly import Assembly
from ..model.errors import InputError
from ..model.rotations import axis_matrix, matrix_to_euler
from ..model.state import State, Tolerances
from .diagnosis import MISTAKE_TYPES
from .engine import World
from .task import Task


@dataclass(frozen=True)
class FaultSpec:
    type: str
    part_id: str | None = None

    @classmethod
    def parse(cls, text: str) -> "FaultSpec":
        kind, _, pid = text.partition(":")
        if kind not in MISTAKE_TYPES:
            raise InputError(f"fault type {kind!r} must be one of {list(MISTAKE_TYPES)}", field="--fault")
        return cls(kind, pid or None)


def candidates(world: World, ftype: str) -> list[int]:
    """Slots that can carry a fault of this type."""
    n = range(len(world.ids))
    if ftype == "wrong_orientation":
        return [i for i in n if world.lock[i] is None and len(world.symmetry[i]) < 24]
    if ftype == "wrong_part":
        return sorted({world.spare_slot[w] for w in world.spare_slot})
    if ftype == "interference_lock":
        return [i for i in n if world.lock[i] is not None]
    return list(n)


def _wrong_rotation(world: World, i: int, rng: random.Random) -> tuple[float, float, float]:
    options = [(ax, ang) for ax in "xyz" for ang in (90.0, 180.0, -90.0)]
    rng.shuffle(options)
    for ax, ang in options:
        rot = matrix_to_euler(axis_matrix(ax, ang))
        if world.rotation_error(i, rot) > world.tol.rot_tol:
            return rot
    raise InputError(f"{world.ids[i]} looks the same in every quarter turn; it cannot be mis-oriented", field="--fault")


def inject(world: World, state: State, i: int, ftype: str, rng: random.Random) -> State:
    s = state.slots[i]
    if ftype == "missing_part":
        return state.replace(i, world.empty_slot(i))
    if ftype == "wrong_orientation":
        return state.replace(i, s._replace(rotation=_wrong_rotation(world, i, rng)))
    if ftype == "misplacement":
        axis = rng.randrange(3)
        delta = round(rng.uniform(0.3, 1.0), 2) * rng.choice((1, -1))
        pos = (round(s.position[0] + (delta if axis == 0 else 0.0), 6), round(s.position[1] + (delta if axis == 1 else 0.0), 6),
               round(s.position[2] + (delta if axis == 2 else 0.0), 6))
        return state.replace(i, s._replace(position=pos))
    if ftype == "under_insertion":
        return state.replace(i, s._replace(seated=round(rng.uniform(0.2, 0.8), 2)))
    if ftype == "wrong_part":
        spares = sorted(w for w, j in world.spare_slot.items() if j == i)
        return state.replace(i, s._replace(occupant=rng.choice(spares)))
    if ftype == "interference_lock":
        return state.replace(i, s._replace(locked=not s.locked))
    raise ValueError(ftype)


def perturb_within_tolerance(world: World, state: State, rng: random.Random) -> State:
    """A boundary no-fault state: poses moved inside the tolerances, or turned by a symmetry."""
    tol = world.tol
    for i in sorted(rng.sample(range(len(world.ids)), k=min(3, len(world.ids)))):
        s = state.slots[i]
        if rng.random() < 0.5 and len(world.symmetry[i]) > 1:
            g = world.symmetry[i][rng.randrange(1, len(world.symmetry[i]))]
            rot = matrix_to_euler(g)
        else:
            ax = "xyz"[rng.randrange(3)]
            rot = matrix_to_euler(axis_matrix(ax, round(rng.uniform(-0.45, 0.45) * tol.rot_tol, 3)))
        d = 0.45 * tol.pos_tol / 3 ** 0.5
        pos = (round(s.position[0] + rng.uniform(-d, d), 6), round(s.position[1] + rng.uniform(-d, d), 6),
               round(s.position[2] + rng.uniform(-d, d), 6))   # drawn x, y, z in this order
        state = state.replace(i, s._replace(position=pos, rotation=rot, seated=round(rng.uniform(0, 0.45 * tol.pos_tol), 6)))
    return state


def initial_state(world: World, faulty: list[int]) -> State:
    """The last verified state: the assembly sequence up to (not including) the first faulty part."""
    seq = [world.index[p] for p in assembly_sequence(world.assembly)]
    if not faulty:
        return world.target_state()
    cut = min(seq.index(i) for i in faulty)
    placed = set(seq[:cut])
    slots = []
    for i in range(len(world.ids)):
        if i not in placed:
            slots.append(world.empty_slot(i))
            continue
        locked = all(h in placed for h in world.holds[i]) if world.lock[i] else None
        slots.append(world.target_slot(i)._replace(locked=locked))
    return State(slots)


def no_candidate_reason(world: World, ftype: str, others: bool) -> str:
    """Why no part of the assembly can take a fault of type `ftype`, in the words of its cause."""
    name = world.assembly.assembly_id
    if ftype == "interference_lock" and not any(world.lock):
        return f"assembly {name} has no locks; a fault of type interference_lock needs a part with a lock"
    if ftype == "wrong_part" and not world.spare_slot:
        return f"assembly {name} has no spare parts; a fault of type wrong_part needs a spare that fits a slot"
    if others and candidates(world, ftype):
        return f"every part of assembly {name} that can carry a fault of type {ftype} already has a fault"
    return f"no part of assembly {name} can carry a fault of type {ftype}"


def make_task(asm: Assembly, faults: list[FaultSpec], *, seed: int = 0, sample_id: str | None = None,
              tolerances: Tolerances = Tolerances(), boundary: bool = False, boundary_seed: int | None = None,
              world: World | None = None) -> Task:
    """A task on `asm` with the given faults (none = no-fault; `boundary` perturbs inside tolerance).

    The perturbation draws from `boundary_seed` (default `seed`) and the faults from `seed`, so a
    counterfactual pair shares its perturbation and differs only in the faulty parts. `world`: `asm`
    compiled under `tolerances`, when the caller makes many tasks on it (else the task compiles its own).
    """
    world = world if world is not None else World(asm, tolerances)
    rng = random.Random(seed)
    state = world.target_state()
    if boundary:
        state = perturb_within_tolerance(world, state, random.Random(seed if boundary_seed is None else boundary_seed))
    used: list[int] = []
    for f in faults:
        if f.part_id is not None:
            if f.part_id not in world.index:
                raise InputError(f"unknown part {f.part_id!r} in assembly {asm.assembly_id}", field="--fault")
            i = world.index[f.part_id]
            if i not in candidates(world, f.type):
                raise InputError(f"part {f.part_id} cannot carry a fault of type {f.type}", field="--fault")
            if i in used:
                raise InputError(f"part {f.part_id} already has a fault", field="--fault")
        else:
            pool = [i for i in candidates(world, f.type) if i not in used]
            if not pool:
                raise InputError(no_candidate_reason(world, f.type, bool(used)), field="--fault")
            i = rng.choice(pool)
        state = inject(world, state, i, f.type, rng)
        used.append(i)
    sid = sample_id or f"{asm.assembly_id}_{'_'.join(f.type for f in faults) or 'nofault'}_{seed}"
    return Task(sid, asm, tolerances, initial_state(world, sorted(used)), state, world.target_state(), world)

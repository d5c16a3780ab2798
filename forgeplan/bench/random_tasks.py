"""Random small assemblies and fault tasks: the family that keeps the proofs honest.

The built-in library is designed, and on designed assemblies the relaxation bound happens to be
tight. These tasks are not designed: voxel pieces grown at random in a 4x3x3 grid, random removal
directions, random supports among face-contact neighbours, up to two locks (rotate or coupled), a
spare, and one to three random faults. Every task is valid (it passes `validate_assembly` and
`check_geometry` and comes apart one part at a time), and the same seed gives the same task.
`python -m lab proofs` solves a fixed seed family of them; the test suite draws shapes with
hypothesis and checks clingo, a brute-force search and Fast Downward agree.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..geometry.checks import check_geometry
from ..geometry.graphs import disassembly_layers
from ..geometry.relations import contact_relation
from ..library.voxels import coupled_lock, part, rotate_lock
from ..model.assembly import DIRECTIONS, Assembly, LockMechanism, SparePart, validate_assembly
from ..model.errors import AssemblyError, InputError
from ..model.state import Tolerances
from ..semantics.diagnosis import MISTAKE_TYPES
from ..semantics.faults import FaultSpec, candidates, make_task
from ..semantics.engine import World
from ..semantics.task import Task

GRID = (4, 3, 3)
MAX_TRIES = 200     # derived seeds tried until an assembly, or a fault set, passes every check
STEPS = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))


@dataclass(frozen=True)
class Shape:
    """What a random assembly looks like; the voxels and every choice below it come from a seed."""

    parts: int              # 2..8 pieces
    support_rate: float     # chance that a face-contact pair is a support (pointing up a random order)
    dir_rate: float         # chance that each of the six directions is a removal direction
    locks: int              # 0..2 lock parts, each holding 1..3 face-contact neighbours
    spare: bool             # one spare (a wrong variant) of a non-lock part
    faults: int             # 1..3 faults


def shape_of(seed: int) -> Shape:
    """The shape of the family's task `seed`: 3..8 parts and every other knob drawn from the seed."""
    rng = random.Random(f"shape/{seed}")
    return Shape(rng.randint(3, 8), rng.uniform(0.1, 0.9), rng.uniform(0.3, 0.8), rng.choice((0, 0, 1, 1, 2)),
                 rng.random() < 0.35, rng.randint(1, 3))


def _grow_pieces(rng: random.Random, n_parts: int) -> list[set[tuple[int, int, int]]]:
    """`n_parts` connected voxel pieces grown together from random cells of the grid."""
    cells = [(x, y, z) for x in range(GRID[0]) for y in range(GRID[1]) for z in range(GRID[2])]
    total = rng.randint(2 * n_parts, min(len(cells), 3 * n_parts))
    pieces = [{c} for c in rng.sample(cells, n_parts)]
    owner = {next(iter(p)): k for k, p in enumerate(pieces)}
    for _ in range(40 * total):
        if len(owner) >= total:
            break
        k = rng.randrange(n_parts)
        x, y, z = rng.choice(sorted(pieces[k]))
        dx, dy, dz = rng.choice(STEPS)
        cell = (x + dx, y + dy, z + dz)
        if cell not in owner and all(0 <= cell[a] < GRID[a] for a in range(3)):
            owner[cell] = k
            pieces[k].add(cell)
    return pieces


def _neighbours(contacts: list[tuple[str, str]], pid: str) -> list[str]:
    return sorted({b for a, b in contacts if a == pid} | {a for a, b in contacts if b == pid})


def _locks(rng: random.Random, shape: Shape, ids: list[str], contacts) -> dict[str, LockMechanism]:
    out: dict[str, LockMechanism] = {}
    for lock_id in rng.sample(ids, shape.locks):
        neighbours = [q for q in _neighbours(contacts, lock_id) if q not in out]
        if not neighbours:
            continue
        holds = tuple(sorted(rng.sample(neighbours, rng.randint(1, min(3, len(neighbours))))))
        if rng.random() < 0.5:
            out[lock_id] = rotate_lock(holds, rng.choice("xyz"), rng.choice((90.0, -90.0, 180.0)))
        else:
            out[lock_id] = coupled_lock(holds, (0.0, rng.choice((0.5, -0.5)), 0.0), (0.0, 0.0, 0.0))
    return out


def _candidate(rng: random.Random, asm_id: str, shape: Shape) -> Assembly:
    n = shape.parts
    pieces = _grow_pieces(rng, n)
    ids = [f"Rand_Part{k:02d}_Piece" for k in range(n)]
    draft = Assembly(asm_id, "random", tuple(part(ids[k], "piece", frozenset(pieces[k])) for k in range(n)))
    contacts = sorted({tuple(sorted(pair)) for pair in contact_relation(draft)})
    order = {pid: k for k, pid in enumerate(rng.sample(ids, n))}     # supports point up this order: acyclic
    supports: dict[str, list[str]] = {pid: [] for pid in ids}
    for a, b in contacts:
        if rng.random() < shape.support_rate:
            lo, hi = sorted((a, b), key=order.__getitem__)
            supports[hi].append(lo)
    lock_of = _locks(rng, shape, ids, contacts)
    parts = []
    for k, pid in enumerate(ids):
        dirs = tuple(d for d in DIRECTIONS if rng.random() < shape.dir_rate) or (rng.choice(DIRECTIONS),)
        parts.append(part(pid, "piece", frozenset(pieces[k]), dirs=dirs, supports=tuple(sorted(supports[pid])),
                          lock=lock_of.get(pid)))
    plain = [pid for pid in ids if pid not in lock_of]
    spares: tuple[SparePart, ...] = ()
    if shape.spare and plain:
        slot = rng.choice(plain)
        spares = (SparePart(f"{slot}_Warped", "piece", slot, "warped: does not seat"),)
    return Assembly(asm_id, "random", tuple(parts), spares, "random pieces in a 4x3x3 grid", "random")


def random_assembly(seed: int, shape: Shape) -> Assembly:
    """A valid random assembly of this shape; derived seeds are tried until one passes every check."""
    if not 2 <= shape.parts <= 8:
        raise InputError(f"a random assembly has 2 to 8 parts (got {shape.parts})", field="parts")
    for attempt in range(MAX_TRIES):
        asm = _candidate(random.Random(f"{seed}/{shape}/{attempt}"), f"rand{seed}", shape)
        try:
            validate_assembly(asm)
            check_geometry(asm, disassembly=False)
            disassembly_layers(asm)
        except AssemblyError:
            continue
        return asm
    raise InputError(f"no valid random assembly for seed {seed} and {shape}", field="seed")


def random_task(seed: int, shape: Shape | None = None) -> Task:
    """The task `seed` of the random family (its shape from `shape_of(seed)` unless given)."""
    shape = shape or shape_of(seed)
    asm = random_assembly(seed, shape)
    world = World(asm, Tolerances())
    types = [t for t in MISTAKE_TYPES if candidates(world, t)]
    rng = random.Random(f"faults/{seed}")
    for attempt in range(MAX_TRIES):
        specs = [FaultSpec(rng.choice(types)) for _ in range(min(shape.faults, len(asm.parts)))]
        try:
            return make_task(asm, specs, seed=seed * MAX_TRIES + attempt,
                             sample_id=f"{asm.assembly_id}_{'_'.join(s.type for s in specs)}", world=world)
        except InputError:
            continue
    raise InputError(f"no fault set fits assembly {asm.assembly_id}", field="seed")


def random_family(count: int, first_seed: int = 0) -> list[Task]:
    """The fixed seed family `first_seed .. first_seed + count - 1` (the set `perf proofs` solves)."""
    return [random_task(s) for s in range(first_seed, first_seed + count)]

"""A rework task: the eight public JSON files — build, write, load and validate."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from pydantic import BaseModel

from ..geometry.checks import check_geometry
from ..geometry.displacement import out_of_bound, overlaps, shapes
from ..geometry.partial import LOAD_POSITIONS, Budget
from ..geometry.relations import blocking_relation, contact_relation, symmetry_group
from ..model.assembly import DIRECTIONS, Assembly, LockMechanism, Part, Pose, SparePart, unlocked_pose, validate_assembly
from ..model.errors import InputError
from ..model.names import name_problem
from ..model.rotations import triple
from ..model.state import NO_OFFSET, Slot, State, Tolerances
from ..semantics.engine import World
from ..semantics.grounded import Capability, action_space, capabilities
from ..semantics.task import Task
from . import guarded, output
from .catalog import mechanism_json
from .schema import (TASK_SCHEMA_VERSION, ActionSpaceFile, AssemblyGraphFile, BlockingGraphFile, ContactGraphFile,
                     PartCatalog, StateFile, parse_model)

PUBLIC_FILES = ("part_catalog.json", "assembly_graph.json", "blocking_graph.json", "contact_graph.json",
                "action_space.json", "initial_state.json", "actual_state.json", "target_state.json")


# ----------------------------------------------------------------------------- writing

def _header(asm: Assembly) -> dict:
    return {"schema_version": TASK_SCHEMA_VERSION, "assembly_id": asm.assembly_id}


def _lock_json(p: Part) -> dict | None:
    lk = p.lock
    if lk is None:
        return None
    d = mechanism_json(lk)
    if lk.kind == "coupled":
        d["unlocked_pose"] = unlocked_pose(p).to_json()
    return d


def state_json(world: World, state: State, tol: Tolerances | None = None) -> dict:
    out: dict = {**_header(world.assembly), "rotation_convention": "euler_xyz_deg"}
    if tol is not None:
        out["tolerances"] = tol.to_json()
    slots = {}
    for pid, s in zip(world.ids, state.slots):
        d = {"present": s.present, "occupant": s.occupant, "position": list(s.position),
             "rotation": list(s.rotation), "seated": s.seated}
        if s.locked is not None:
            d["locked"] = s.locked
        if s.offset != NO_OFFSET:   # only partial-move assemblies ever displace a part (SEMANTICS §9)
            d["offset"] = list(s.offset)
        slots[pid] = d
    out["slots"] = slots
    return out


def public_files(task: Task) -> dict[str, dict]:
    """The eight public files of a task as JSON-ready dicts (deterministic key order)."""
    return assembly_files(task.assembly) | state_files(task)


def assembly_files(asm: Assembly) -> dict[str, dict]:
    """The five public files that depend on the assembly only (the same for all its tasks)."""
    from ..geometry.graphs import assembly_sequence  # networkx: writing tasks needs it, loading them does not

    h = _header(asm)
    blocking = blocking_relation(asm)
    order = {pid: i for i, pid in enumerate(asm.part_ids)}
    return {
        "part_catalog.json": {**h, "family": asm.family, "description": asm.description, "source": asm.source, "units": "voxel edge = 1 scene unit",
                              "parts": [{"part_id": p.part_id, "kind": p.kind, "voxels": [list(v) for v in sorted(p.voxels)],
                                         "symmetry": [[list(r) for r in g] for g in symmetry_group(p)],
                                         "lock": _lock_json(p)} for p in asm.parts],
                              "spare_parts": [{"part_id": w.part_id, "kind": w.kind, "variant_of": w.variant_of,
                                               "difference": w.difference} for w in asm.spares]},
        "assembly_graph.json": {**h, "supports": [[s, p.part_id] for p in asm.parts for s in p.supports],
                                "sequence": list(assembly_sequence(asm))},
        "blocking_graph.json": {**h, "edges": {d: [list(e) for e in sorted(blocking[d], key=lambda e: (order[e[0]], order[e[1]]))]
                                               for d in DIRECTIONS},
                                "removal_dirs": {p.part_id: list(p.removal_dirs) for p in asm.parts}},
        "contact_graph.json": {**h, "edges": [[a, b, n] for (a, b), n in contact_relation(asm).items()]},
        "action_space.json": {**h, **action_space(asm)},
    }


def state_files(task: Task) -> dict[str, dict]:
    """The three public state files of a task."""
    world = task.world
    return {
        "initial_state.json": state_json(world, task.initial),
        "actual_state.json": {**state_json(world, task.actual), "sample_id": task.sample_id},
        "target_state.json": state_json(world, task.target, task.tolerances),
    }


def write_json(path: Path, data) -> None:
    output.write_json(path, data)


def write_task(task: Task, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, data in public_files(task).items():
        write_json(out / name, data)


# ----------------------------------------------------------------------------- loading

def read_json(path: Path, kind: str = "task file", root: Path | None = None):
    """JSON from an untrusted file (guarded: regular file, size, nesting, numbers, duplicate keys)."""
    return guarded.read_json(path, kind, root=root)


ASSEMBLY_FILES = PUBLIC_FILES[:5]
STATE_FILES = PUBLIC_FILES[5:]
FILE_MODELS: dict[str, type[BaseModel]] = {
    "part_catalog.json": PartCatalog, "assembly_graph.json": AssemblyGraphFile,
    "blocking_graph.json": BlockingGraphFile, "contact_graph.json": ContactGraphFile,
    "action_space.json": ActionSpaceFile, "initial_state.json": StateFile,
    "actual_state.json": StateFile, "target_state.json": StateFile,
}
_ASSEMBLIES: dict[str, Assembly] = {}


def load_task(folder: Path, root: Path | None = None, read: Callable[[Path], bytes] | None = None) -> Task:
    """The task in `folder`; its files (and symlinks) must stay inside `root` (default: the folder).
    `read` reads a file's bytes (default: the guarded reader; a benchmark's loader also checks its digest)."""
    folder = Path(folder)
    root = folder if root is None else root
    if not folder.is_dir():
        raise InputError("not a task folder", file=str(folder))
    missing = [n for n in PUBLIC_FILES if not (folder / n).is_file()]
    if missing:
        raise InputError(f"missing task files {missing}", file=str(folder))
    data = {n: (read or (lambda path: guarded.read_bytes(path, "task file", root=root)))(folder / n) for n in PUBLIC_FILES}
    # the five assembly files are identical across an assembly's tasks: parse and validate them once
    # per content (hashing bytes is far cheaper than parsing the voxel catalog again)
    key = hashlib.sha1(b"".join(data[n] + b"\0" for n in ASSEMBLY_FILES)).hexdigest()
    asm = _ASSEMBLIES.get(key)
    names = STATE_FILES if asm is not None else PUBLIC_FILES
    raw = {n: guarded.loads(guarded.decode(data[n], str(folder / n), "task file"), str(folder / n), kind="task file")
           for n in names}
    m = {n: parse_model(FILE_MODELS[n], raw[n], str(folder / n)) for n in names}
    asm_ids = {n: raw[n].get("assembly_id") for n in names}
    if asm is not None:
        asm_ids["part_catalog.json"] = asm.assembly_id
    if len(set(asm_ids.values())) != 1:
        raise InputError(f"files disagree on assembly_id: {asm_ids}", file=str(folder), field="assembly_id")
    if asm is None:
        asm = _assembly_from_files(folder, m)
        if len(_ASSEMBLIES) > 256:
            _ASSEMBLIES.clear()
        _ASSEMBLIES[key] = asm
    tol_m = m["target_state.json"].tolerances
    tol = Tolerances(tol_m.pos_tol, tol_m.rot_tol_deg) if tol_m else Tolerances()
    world = World(asm, tol)
    states = {n: _state_from_file(world, m[n], str(folder / n)) for n in ("initial_state.json", "actual_state.json", "target_state.json")}
    sid = m["actual_state.json"].sample_id or folder.name
    why = name_problem(sid)
    if why is not None:   # the id reaches programs (ASP comments, grammars) and terminals
        raise InputError(f"{repr(sid)[:80]} {why}", file=str(folder / "actual_state.json"), field="sample_id")
    return Task(sid, asm, tol, states["initial_state.json"], states["actual_state.json"], states["target_state.json"],
                world)


def _assembly_from_files(folder: Path, m: dict) -> Assembly:
    cat, ag, bg = m["part_catalog.json"], m["assembly_graph.json"], m["blocking_graph.json"]
    supports: dict[str, list[str]] = {}
    for s, p in ag.supports:
        supports.setdefault(p, []).append(s)
    parts = []
    for cp in cat.parts:
        lock = None
        if cp.lock is not None:
            lock = _lock_from_json(cp.lock, cp)
        dirs = bg.removal_dirs.get(cp.part_id)
        if dirs is None:
            raise InputError(f"no removal_dirs for part {cp.part_id}", file=str(folder / "blocking_graph.json"), field="removal_dirs")
        parts.append(Part(cp.part_id, cp.kind, frozenset(tuple(v) for v in cp.voxels), lock, tuple(dirs),
                          tuple(supports.get(cp.part_id, ()))))
    spares = tuple(SparePart(w.part_id, w.kind, w.variant_of, w.difference) for w in cat.spare_parts)
    asm = Assembly(cat.assembly_id, cat.family, tuple(parts), spares, getattr(cat, "description", "") or "",
                   getattr(cat, "source", "") or "task")
    validate_assembly(asm)
    _check_names(folder, m, asm)
    check_geometry(asm, partial_moves=True, budget=Budget(LOAD_POSITIONS))
    _check_derived(folder, m, asm)
    return asm


def _check_derived(folder: Path, m: dict, asm: Assembly) -> None:
    """What the files say that the voxels decide agrees with the voxels: blocking edges, face contacts,
    symmetry groups, the assembly sequence and the action space (SEMANTICS §1: never typed by hand)."""
    blocking = blocking_relation(asm)
    for d in DIRECTIONS:
        given = {tuple(e) for e in m["blocking_graph.json"].edges.get(d, [])}
        if given != set(blocking[d]):
            _disagree(folder, "blocking_graph.json", f"edges.{d}", given, set(blocking[d]))
    contacts = {(a, b, n) for (a, b), n in contact_relation(asm).items()}
    given = {tuple(e) for e in m["contact_graph.json"].edges}
    if given != contacts:
        _disagree(folder, "contact_graph.json", "edges", given, contacts)
    for k, (cp, p) in enumerate(zip(m["part_catalog.json"].parts, asm.parts)):
        given = {tuple(tuple(row) for row in r) for r in cp.symmetry}
        if given != set(symmetry_group(p)):
            _disagree(folder, "part_catalog.json", f"parts.{k}.symmetry", given, set(symmetry_group(p)),
                      "the part's symmetry group (the cube rotations that map its voxels onto themselves) disagrees")
    _check_sequence(folder, m["assembly_graph.json"].sequence, asm)
    given, derived = m["action_space.json"].model_dump(include={"actions", "applicable"}), action_space(asm)
    for field in ("actions", "applicable"):
        if given[field] != derived[field]:
            raise InputError("is not the action space of the assembly (the action kinds and their parameters, and "
                             "the actions each part takes)", file=str(folder / "action_space.json"), field=field)


def _disagree(folder: Path, name: str, field: str, given: set, derived: set, what: str = "edges disagree") -> None:
    diff = sorted(given ^ derived, key=repr)[:3]
    raise InputError(f"{what} with the voxel geometry, e.g. {[list(x) for x in diff]}", file=str(folder / name),
                     field=field)


def _check_sequence(folder: Path, sequence: list[str], asm: Assembly) -> None:
    """The assembly sequence names every part once, each after the parts that support it."""
    placed: set[str] = set()
    for k, pid in enumerate(sequence):
        part = next((p for p in asm.parts if p.part_id == pid), None)
        why = ("names a part twice" if pid in placed else None) or next(
            (f"places {pid} before its support {s}" for s in (part.supports if part else ()) if s not in placed), None)
        if why:
            raise InputError(why, file=str(folder / "assembly_graph.json"), field=f"sequence.{k}")
        placed.add(pid)
    if placed != set(asm.part_ids):
        raise InputError(f"misses parts {sorted(set(asm.part_ids) - placed)[:3]}", file=str(folder / "assembly_graph.json"),
                         field="sequence")


def _check_names(folder: Path, m: dict, asm: Assembly) -> None:
    """Every part named by the graph and action-space files is a part (or spare) of the catalog."""
    parts = set(asm.part_ids)
    known = parts | {w.part_id for w in asm.spares}
    named = {
        ("assembly_graph.json", "supports"): {x for pair in m["assembly_graph.json"].supports for x in pair},
        ("assembly_graph.json", "sequence"): set(m["assembly_graph.json"].sequence),
        ("blocking_graph.json", "removal_dirs"): set(m["blocking_graph.json"].removal_dirs),
        ("contact_graph.json", "edges"): {x for e in m["contact_graph.json"].edges for x in e[:2]},
    }
    for (name, field), ids in named.items():
        unknown = ids - parts
        if unknown:
            raise InputError(f"names parts that are not in part_catalog.json: {sorted(map(str, unknown))[:3]}",
                             file=str(folder / name), field=field)
    unknown = set(m["action_space.json"].applicable) - known
    if unknown:
        raise InputError(f"names parts that are not in part_catalog.json: {sorted(unknown)[:3]}",
                         file=str(folder / "action_space.json"), field="applicable")


def _lock_from_json(lock, cp) -> LockMechanism:
    """A lock of part_catalog.json (schema-checked: its kind's fields and their ranges) as the model holds it;
    a coupled lock's absolute pose after unlocking becomes an offset from the part's centroid."""
    holds = tuple(lock.holds)
    if lock.kind == "rotate":
        return LockMechanism("rotate", holds, axis=lock.axis, angle_deg=lock.angle_deg)
    n = len(cp.voxels)
    up = lock.unlocked_pose
    offset = triple(lambda a: round(up.position[a] - round(sum(v[a] for v in cp.voxels) / n + 0.5, 6), 6))
    return LockMechanism("coupled", holds, unlocked_offset=Pose(offset, triple(lambda a: up.rotation[a])))


def _state_from_file(world: World, sm: StateFile, file: str) -> State:
    slots = []
    extra = sorted(set(sm.slots) - set(world.ids))
    if extra:
        raise InputError(f"unknown slots {extra}", file=file, field="slots")
    spares = {w.part_id: w.variant_of for w in world.assembly.spares}
    for i, pid in enumerate(world.ids):
        s = sm.slots.get(pid)
        if s is None:
            raise InputError(f"slot {pid} is missing", file=file, field="slots")
        f = f"slots.{pid}"
        if s.present:
            if s.occupant != pid and spares.get(s.occupant or "") != pid:
                raise InputError(f"occupant {s.occupant!r} is neither {pid} nor a spare variant of it", file=file, field=f"{f}.occupant")
        elif s.occupant is not None:
            raise InputError("an absent slot must have occupant null", file=file, field=f"{f}.occupant")
        is_lock = world.lock[i] is not None
        if is_lock and s.locked is None:
            raise InputError("a lock slot needs 'locked'", file=file, field=f"{f}.locked")
        if not is_lock and s.locked is not None:
            raise InputError("'locked' is only for lock parts", file=file, field=f"{f}.locked")
        if not s.present and s.locked:
            raise InputError("an absent lock cannot be engaged", file=file, field=f"{f}.locked")
        offset = tuple(s.offset) if s.offset is not None else NO_OFFSET
        if offset != NO_OFFSET and not s.present:
            raise InputError("an absent slot has no displacement", file=file, field=f"{f}.offset")
        slots.append(Slot(s.present, s.occupant, tuple(s.position), tuple(s.rotation), s.seated, s.locked,  # type: ignore[arg-type]  # schema-checked lists of three numbers
                          offset))  # type: ignore[arg-type]  # schema-checked list of three numbers
    state = State(slots)
    _check_offsets(world, state, file)
    return state


def _check_offsets(world: World, state: State, file: str) -> None:
    """Displaced parts (SEMANTICS §9) only where partial moves are in play, within the position bound, and
    never inside another part: a state whose parts interpenetrate is no state of the assembly."""
    moved = [i for i, s in enumerate(state.slots) if s.present and s.offset != NO_OFFSET]
    if not moved:
        return
    field = f"slots.{world.ids[moved[0]]}.offset"
    straight = Capability.OFFSETS not in capabilities(world.moves)
    why = (f"{world.assembly.assembly_id} comes apart with straight moves: parts are placed at their target "
           "position only") if straight else out_of_bound(world.assembly, [state.slots[i].offset for i in moved])
    if why:
        raise InputError(why, file=file, field=field)
    sh, offsets = shapes(world.assembly), [s.offset for s in state.slots]
    present = [j for j, s in enumerate(state.slots) if s.present]
    for i in moved:
        hit = next((j for j in present if j != i and (j not in moved or j > i) and overlaps(sh, offsets, i, j)), None)
        if hit is not None:
            raise InputError(f"parts {world.ids[i]} and {world.ids[hit]} interpenetrate at their offsets (they share a "
                             "voxel): no state of the assembly", file=file, field=f"slots.{world.ids[i]}.offset")

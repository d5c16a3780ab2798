"""Task -> ASP facts: the static world and the symbolic abstraction of the actual state.

The encodings (encodings/*.lp, predicates in encodings/README.md) never do tolerance or rotation
arithmetic: every number-dependent fact — which rotations are off modulo symmetry, which turn repairs
them and where it lands, whether a coupled lock's unlocked pose is off — is computed here with the
engine's own functions (`World.rotation_error`, `World.pose_off`, `World.apply`,
`grounded.rotation_fix`). The action universe renders `forgeplan.semantics.grounded` (lock parameters,
repairing turns, candidate groups) over every state the abstraction can reach, each action with its
tie-break rank (SEMANTICS §4).

`assembly_facts` writes the facts one grounding of an assembly serves many tasks with: the static
world, the union of the tasks' rotation values and action universes (a `Universe`), and the actual
state as `#external init(F)` atoms that each task assigns (`init_atoms`). Extra rotation values and
actions never fire in a task that cannot reach them: their preconditions read a rotation value or an
occupant the task never has. The tie-break ranks are the canonical order over the union, which orders
any task's own actions as its own ranks do.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...io.quoting import asp_comment, asp_string
from ...model.actions import Action, GroupMove, OnePart, Replace, Turn
from ...model.state import NO_ROTATION, State
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.engine import World
from ...semantics.grounded import (GroundedTask, Rotation, SlotRotations, as_grounded, canonical_key,
                                   check_canonical_target, part_ranks, slot_rotations)
from ...semantics.task import Task

@dataclass(frozen=True)
class Facts:
    """The fact program of a task and the map from action terms back to engine actions."""

    text: str
    actions: dict[str, Action]       # str(ASP term) -> Action
    terms: dict[Action, str]         # Action -> str(ASP term)


def rotation_name(rotation: Rotation) -> str:
    """A rotation value as an ASP string: exact (repr of the Euler angles), readable."""
    return ",".join(repr(float(v)) for v in rotation)


def action_term(action: Action) -> str:
    """The ASP term of a grounded action, as clingo prints it; parameters implied by the part are left out."""
    a = action
    if isinstance(a, GroupMove):  # separate / join: the members as a tuple, then the direction
        members = ",".join(asp_string(x) for x in a.part_ids) + ("," if len(a.part_ids) == 1 else "")
        return f"{a.name}(({members}),{asp_string(a.direction)})"
    assert isinstance(a, OnePart)
    args = [a.part_id]
    if isinstance(a, Turn):
        args += [a.axis, repr(float(a.angle_deg))]
    elif isinstance(a, Replace):
        args.append(a.target_part_id)
    return f"{a.name}({','.join(asp_string(x) for x in args)})"


def task_facts(task: Task | GroundedTask) -> Facts:
    """Compile a task; deterministic (same task, same text)."""
    g = as_grounded(task)
    check_canonical_target(g.task)
    world, actual = g.world, g.task.actual
    ranks = part_ranks(world)
    lines = _header_lines(g.task, ranks) + _static_lines(world) + _rotation_lines(g.shared, actual)
    actions = list(g.actions)
    terms = {a: action_term(a) for a in actions}
    lines += ["", "% --- grounded actions (forgeplan/semantics/grounded.py) with their tie-break rank"]
    lines += [f"action({terms[a]}). rank({terms[a]},{k})." for k, a in enumerate(actions)]
    lines += _group_member_lines(actions, ranks)
    lines += _actual_lines(world, actual)
    return Facts("\n".join(lines) + "\n", {t: a for a, t in terms.items()}, terms)


@dataclass(frozen=True)
class Universe:
    """What an assembly grounding covers beyond the static world: rotation facts and grounded actions."""

    rotation_facts: frozenset[str]
    actions: frozenset[Action]

    def covers(self, other: "Universe") -> bool:
        return self.rotation_facts >= other.rotation_facts and self.actions >= other.actions

    def __or__(self, other: "Universe") -> "Universe":
        return Universe(self.rotation_facts | other.rotation_facts, self.actions | other.actions)


def task_universe(task: Task | GroundedTask) -> Universe:
    """The rotation facts and action universe of one task (what its own fact program holds)."""
    g = as_grounded(task)
    check_canonical_target(g.task)
    actual = g.task.actual
    rotation = [f for i in range(len(g.world.ids)) for f in _slot_facts(g.shared, actual, i)]
    return Universe(frozenset(rotation), frozenset(g.actions))


ROTATION_FACTS = "rotation facts"   # the memo of `AssemblyGrounding` that keeps `_slot_facts`


def _slot_facts(ag: AssemblyGrounding, actual: State, i: int) -> tuple[str, ...]:
    """Slot i's rotation facts, kept per assembly and slot state like `slot_rotations` (same key)."""
    cache = ag.memo(ROTATION_FACTS)
    key = (i, repr(actual.slots[i]))
    hit = cache.get(key)
    if hit is None:
        if len(cache) > 4096:
            cache.clear()
        hit = cache[key] = tuple(_slot_rotation_facts(ag.world, i, *slot_rotations(ag, actual, i)))
    return hit


def init_atoms(world: World, actual: State) -> list[str]:
    """The actual state as `init(F)` atoms (no final period), in slot order."""
    return [atom for slot in _init_by_slot(world, actual) for atom in slot]


def _init_by_slot(world: World, actual: State) -> list[list[str]]:
    """The actual state, abstracted to the fluents the encoding reasons with: init atoms per slot."""
    q, out = asp_string, []
    for i, pid in enumerate(world.ids):
        s = actual.slots[i]
        if not s.present:
            out.append([f"init(rot({q(pid)},{q(rotation_name(NO_ROTATION))}))"])
            continue
        atoms = [f"init(in({q(s.occupant)}))", f"init(rot({q(pid)},{q(rotation_name(s.rotation))}))"]  # type: ignore[arg-type]  # a present slot has an occupant
        if world.pose_off(i, s):
            atoms.append(f"init(pose_off({q(pid)}))")
        if s.locked:
            atoms.append(f"init(locked({q(pid)}))")
        out.append(atoms)
    return out


def init_domain(world: World, universe: Universe) -> list[str]:
    """Every `init(F)` atom some actual state over `universe` can have (sorted)."""
    q = asp_string
    atoms = {f"init(in({q(x)}))" for x in list(world.ids) + [w.part_id for w in world.assembly.spares]}
    atoms |= {f"init(pose_off({q(pid)}))" for pid in world.ids}
    atoms |= {f"init(locked({q(p.part_id)}))" for p in world.assembly.locks}
    atoms |= {"init(rot(" + f[len("rot_value("):-2] + "))" for f in universe.rotation_facts if f.startswith("rot_value(")}
    return sorted(atoms)


def assembly_facts(world: World, universe: Universe) -> tuple[Facts, list[str]]:
    """The fact program of an assembly grounding: the static world, the universe's rotation facts and
    ranked actions, and the actual state as externals. Returns it with the `init_domain` atoms."""
    ranks = part_ranks(world)
    actions = sorted(universe.actions, key=lambda a: canonical_key(a, ranks))
    terms = {a: action_term(a) for a in actions}
    lines = [asp_comment(f"forgeplan facts: assembly {world.assembly.assembly_id}, shared by its tasks")]
    lines += [f"slot({asp_string(pid)}). part_rank({asp_string(pid)},{ranks[pid]})." for pid in world.ids]
    lines += [f"spare({asp_string(w.part_id)},{asp_string(w.variant_of)}). part_rank({asp_string(w.part_id)},{ranks[w.part_id]})."
              for w in world.assembly.spares]
    lines += _static_lines(world) + sorted(universe.rotation_facts)
    lines += [f"action({terms[a]}). rank({terms[a]},{k})." for k, a in enumerate(actions)]
    lines += _group_member_lines(actions, ranks)
    domain = init_domain(world, universe)
    lines += [f"#external {atom}." for atom in domain]
    return Facts("\n".join(lines) + "\n", {t: a for a, t in terms.items()}, terms), domain


def _header_lines(task: Task, ranks: dict[str, int]) -> list[str]:
    world, q = task.world, asp_string
    lines = [asp_comment(f"forgeplan facts: task {task.sample_id}, assembly {world.assembly.assembly_id}"),
             f"% tolerances: pos_tol={task.tolerances.pos_tol!r}, rot_tol_deg={task.tolerances.rot_tol!r}",
             "", "% --- parts (rank = catalog order, spares after target parts)"]
    lines += [f"slot({q(pid)}). part_rank({q(pid)},{ranks[pid]})." for pid in world.ids]
    lines += [f"spare({q(w.part_id)},{q(w.variant_of)}). part_rank({q(w.part_id)},{ranks[w.part_id]})."
              for w in world.assembly.spares]
    return lines


def _static_lines(world: World) -> list[str]:
    """Removal directions, blocking, supports and locks: the assembly's static relations."""
    q, asm = asp_string, world.assembly
    lines = ["", "% --- removal directions; blocks(B,P,D) along them, at target geometry (forgeplan/geometry/relations.py)"]
    for p, dirs in zip(asm.parts, world.dir_masks):
        lines.append(" ".join(f"removal_dir({q(p.part_id)},{q(d)})." for d, _ in dirs))
    for i, dirs in enumerate(world.dir_masks):
        for d, mask in dirs:
            lines += [f"blocks({q(world.ids[j])},{q(world.ids[i])},{q(d)})." for j in range(len(world.ids)) if mask >> j & 1]
    lines += ["", "% --- supports: supports(Q,P) = Q must be present to insert P"]
    lines += [f"supports({q(s)},{q(p.part_id)})." for p in asm.parts for s in p.supports]
    lines += ["", "% --- locks"]
    for p in asm.locks:
        holds = " ".join(f"lock_holds({q(p.part_id)},{q(h)})." for h in p.lock.holds)  # type: ignore[union-attr]  # asm.locks holds the parts that have a lock
        lines.append(f"lock({q(p.part_id)},{p.lock.kind}). {holds}")  # type: ignore[union-attr]  # asm.locks holds the parts that have a lock
    return lines


def _rotation_lines(ag: AssemblyGrounding, actual: State) -> list[str]:
    """Per slot: the rotation values it can take, which are off, and the repairing turns."""
    lines = ["", "% --- rotation values (Euler x-y-z degrees) each slot can take; rot_off, repairing turns",
             "%     rot_fix(S,R,Axis,Angle,R2): the grounded rotate from value R lands on R2"]
    for i in range(len(ag.world.ids)):
        lines += _slot_rotation_lines(ag.world, i, *slot_rotations(ag, actual, i))
    return lines


def _slot_rotation_lines(world: World, i: int, vals: SlotRotations, unlocked) -> list[str]:
    q, pid = asp_string, world.ids[i]
    lines = [" ".join(f"rot_value({q(pid)},{q(rotation_name(r))})." for r in vals.values),
             f"target_rot({q(pid)},{q(rotation_name(NO_ROTATION))})."]
    for r in vals.values:
        if world.rotation_error(i, r) > world.tol.rot_tol:
            lines.append(f"rot_off({q(pid)},{q(rotation_name(r))}).  % {world.rotation_error(i, r):.1f} deg off")
    for r, ax, ang, after in vals.fixes:
        lines.append(f"rot_fix({q(pid)},{q(rotation_name(r))},{q(ax)},{q(repr(float(ang)))},"
                     f"{q(rotation_name(after))}).")
    if unlocked is not None:
        lines.append(f"unlocked_rot({q(pid)},{q(rotation_name(unlocked.rotation))}).")
        if world.pose_off(i, unlocked):
            lines.append(f"unlocked_pose_off({q(pid)}).")
    return lines


def _slot_rotation_facts(world: World, i: int, vals: SlotRotations, unlocked) -> list[str]:
    """`_slot_rotation_lines` as single facts without comments (their union over tasks is a set)."""
    q, pid = asp_string, world.ids[i]
    out = [f"rot_value({q(pid)},{q(rotation_name(r))})." for r in vals.values]
    out.append(f"target_rot({q(pid)},{q(rotation_name(NO_ROTATION))}).")
    out += [f"rot_off({q(pid)},{q(rotation_name(r))})." for r in vals.values
            if world.rotation_error(i, r) > world.tol.rot_tol]
    out += [f"rot_fix({q(pid)},{q(rotation_name(r))},{q(ax)},{q(repr(float(ang)))},{q(rotation_name(after))})."
            for r, ax, ang, after in vals.fixes]
    if unlocked is not None:
        out.append(f"unlocked_rot({q(pid)},{q(rotation_name(unlocked.rotation))}).")
        if world.pose_off(i, unlocked):
            out.append(f"unlocked_pose_off({q(pid)}).")
    return out


def _group_member_lines(actions: list[Action], ranks: dict[str, int]) -> list[str]:
    groups = sorted({a.part_ids for a in actions if isinstance(a, GroupMove)}, key=lambda g: [ranks[x] for x in g])
    if not groups:
        return []
    lines = ["", "% --- group moves (SEMANTICS §5): gmember(G,X), X a member of the group term G; every"
             " G is free-space separable", f"%     ({len(groups)} member tuples, "
             f"{sum(1 for a in actions if isinstance(a, GroupMove))} group actions)"]
    for g in groups:
        term = "(" + ",".join(asp_string(x) for x in g) + ")"
        lines.append(" ".join(f"gmember({term},{asp_string(x)})." for x in g))
    return lines


def _actual_lines(world: World, actual: State) -> list[str]:
    """The actual state as facts, one line per slot."""
    lines = ["", "% --- actual state (actual_state.json), abstracted"]
    for i, atoms in enumerate(_init_by_slot(world, actual)):
        absent = "  % absent" if not actual.slots[i].present else ""
        lines.append(" ".join(f"{a}." for a in atoms) + absent)
    return lines

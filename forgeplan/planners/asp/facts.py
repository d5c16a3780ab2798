"""Task -> ASP facts: the static world and the symbolic abstraction of the actual state.

The encodings (encodings/*.lp, predicates in encodings/README.md) never do tolerance or rotation
arithmetic: every number-dependent fact — which rotations are off modulo symmetry, which turn repairs
them and where it lands, whether a coupled lock's unlocked pose is off — is computed here with the
engine's own functions (`World.rotation_error`, `World.pose_off`, `World.apply`,
`grounded.rotation_fix`). The action universe renders `forgeplan.semantics.grounded` (lock parameters,
repairing turns, candidate groups) over every state the abstraction can reach, each action with its
tie-break rank (SEMANTICS §4).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.actions import ACTION_NAMES, Action
from ...model.assembly import DIRECTIONS
from ...model.errors import InputError
from ...model.state import State
from ...semantics.engine import ZERO3, World
from ...semantics.grounded import (check_canonical_target, group_directions, group_names, lock_action, rotation_fix,
                                   separable_groups)
from ...semantics.task import Task

Rotation = tuple[float, float, float]


@dataclass(frozen=True)
class Facts:
    """The fact program of a task and the map from action terms back to engine actions."""

    text: str
    actions: dict[str, Action]       # str(ASP term) -> Action
    terms: dict[Action, str]         # Action -> str(ASP term)


def rotation_name(rotation: Rotation) -> str:
    """A rotation value as an ASP string: exact (repr of the Euler angles), readable."""
    return ",".join(repr(float(v)) for v in rotation)


def part_ranks(world: World) -> dict[str, int]:
    """Catalog order, spares after target parts (SEMANTICS §4)."""
    order = list(world.ids) + [w.part_id for w in world.assembly.spares]
    return {pid: k for k, pid in enumerate(order)}


def canonical_key(action: Action, ranks: dict[str, int]) -> tuple:
    """(action rank, part rank, parameters): the tie-break order of SEMANTICS §4.

    A group move (SEMANTICS §5) is keyed by its first member, then its direction and all members' ranks.
    """
    pose = action.after_pose
    key = (ACTION_NAMES.index(action.name), ranks[action.part_id], action.axis or "",
           action.angle_deg if action.angle_deg is not None else 0.0,
           (pose.position, pose.rotation) if pose else (), ranks.get(action.target_part_id or "", -1))
    if action.part_ids is not None:
        key += (DIRECTIONS.index(action.direction), tuple(ranks[x] for x in action.part_ids))  # type: ignore[arg-type]
    return key


def quote(text: str) -> str:
    """An ASP string literal, escaped exactly as clingo prints string symbols."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def action_term(action: Action) -> str:
    """The ASP term of a grounded action, as clingo prints it; parameters implied by the part are left out."""
    a = action
    if a.part_ids is not None:  # separate / join: the members as a tuple, then the direction
        members = ",".join(quote(x) for x in a.part_ids) + ("," if len(a.part_ids) == 1 else "")
        return f"{a.name}(({members}),{quote(a.direction)})"  # type: ignore[arg-type]
    if a.name in ("rotate", "rotate_to_unlock", "rotate_to_lock"):
        args = [a.part_id, a.axis, repr(float(a.angle_deg))]  # type: ignore[arg-type]
    elif a.name == "replace":
        args = [a.part_id, a.target_part_id]
    else:
        args = [a.part_id]
    return f"{a.name}({','.join(quote(x) for x in args)})"  # type: ignore[arg-type]


class _SlotValues:
    """The rotation values one slot can take, with their repairing turns (computed by the engine)."""

    def __init__(self, world: World, base: State, i: int, seeds: list[Rotation]):
        self.values: list[Rotation] = []
        self.fixes: list[tuple[Rotation, str, float, Rotation]] = []
        todo = list(seeds)
        while todo:
            r = todo.pop(0)
            if r in self.values:
                continue
            self.values.append(r)
            if world.rotation_error(i, r) <= world.tol.rot_tol:
                continue
            fix = rotation_fix(world, i, r)
            if fix is None:
                continue
            occupant = base.slots[i].occupant or world.ids[i]
            slot = base.slots[i]._replace(present=True, occupant=occupant, rotation=r,
                                          locked=False if world.lock[i] else None)
            start = base.replace(i, slot)
            after = world.apply(start, Action("rotate", occupant, axis=fix[0], angle_deg=fix[1])).slots[i].rotation
            if world.rotation_error(i, after) > world.tol.rot_tol:
                raise InputError(f"the repairing turn of {world.ids[i]} leaves it off target", field="rotation")
            self.fixes.append((r, fix[0], fix[1], after))
            todo.append(after)


def universe_group_actions(world: World, actual: State) -> list[Action]:
    """Every separate/join any reachable state can offer (SEMANTICS §5): each separable set of two or more
    slots along each direction all its members allow; separate once per choice of occupants (a slot
    holding a spare in the actual state is named by the spare or, after a replacement, by its target
    part), join with the target parts. Blocking, presence, locks and supports are checked per state by
    the encoding."""
    out: list[Action] = []
    for mask in separable_groups(world):
        g = group_names(world, mask)
        dirs = group_directions(world, mask)
        choices: list[list[str]] = [[]]
        for p in g:
            s = actual.slots[world.index[p]]
            occ = [p] + ([s.occupant] if s.present and s.occupant != p else [])  # type: ignore[list-item]
            choices = [c + [x] for c in choices for x in occ]
        for d in dirs:
            out += [Action.group("separate", c, d) for c in choices]
            out.append(Action.group("join", g, d))
    return out


def task_facts(task: Task) -> Facts:
    """Compile a task; deterministic (same task, same text)."""
    check_canonical_target(task)
    world, actual = task.world, task.actual
    ranks = part_ranks(world)
    lines = _header_lines(task, ranks) + _static_lines(world)
    slot_lines, actions = _rotation_lines_and_actions(world, actual)
    lines += slot_lines
    if world.needs_groups:
        actions += universe_group_actions(world, actual)
    actions.sort(key=lambda a: canonical_key(a, ranks))
    terms = {a: action_term(a) for a in actions}
    lines += ["", "% --- grounded actions (forgeplan/semantics/grounded.py) with their tie-break rank"]
    lines += [f"action({terms[a]}). rank({terms[a]},{k})." for k, a in enumerate(actions)]
    lines += _group_member_lines(actions, ranks)
    lines += _actual_lines(world, actual)
    return Facts("\n".join(lines) + "\n", {t: a for a, t in terms.items()}, terms)


def _header_lines(task: Task, ranks: dict[str, int]) -> list[str]:
    world, q = task.world, quote
    lines = [f"% forgeplan facts: task {task.sample_id}, assembly {world.assembly.assembly_id}",
             f"% tolerances: pos_tol={task.tolerances.pos_tol!r}, rot_tol_deg={task.tolerances.rot_tol!r}",
             "", "% --- parts (rank = catalog order, spares after target parts)"]
    lines += [f"slot({q(pid)}). part_rank({q(pid)},{ranks[pid]})." for pid in world.ids]
    lines += [f"spare({q(w.part_id)},{q(w.variant_of)}). part_rank({q(w.part_id)},{ranks[w.part_id]})."
              for w in world.assembly.spares]
    return lines


def _static_lines(world: World) -> list[str]:
    """Removal directions, blocking, supports and locks: the assembly's static relations."""
    q, asm = quote, world.assembly
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
        holds = " ".join(f"lock_holds({q(p.part_id)},{q(h)})." for h in p.lock.holds)  # type: ignore[union-attr]
        lines.append(f"lock({q(p.part_id)},{p.lock.kind}). {holds}")  # type: ignore[union-attr]
    return lines


def _rotation_lines_and_actions(world: World, actual: State) -> tuple[list[str], list[Action]]:
    """Per slot: the rotation values it can take, which are off, the repairing turns, and its grounded actions."""
    lines = ["", "% --- rotation values (Euler x-y-z degrees) each slot can take; rot_off, repairing turns",
             "%     rot_fix(S,R,Axis,Angle,R2): the grounded rotate from value R lands on R2"]
    actions: list[Action] = []
    target = world.target_state()
    for i, pid in enumerate(world.ids):
        s = actual.slots[i]
        seeds = [ZERO3] + ([s.rotation] if s.present else [])
        unlocked = None
        if world.lock[i] is not None and world.lock[i].kind == "coupled":  # type: ignore[union-attr]
            unlocked = world.apply(target, lock_action(world, i, locking=False)).slots[i]
            seeds.append(unlocked.rotation)
        vals = _SlotValues(world, actual, i, seeds)
        lines += _slot_rotation_lines(world, i, vals, unlocked)
        fix_params = list(dict.fromkeys((ax, ang) for _, ax, ang, _ in vals.fixes))
        occupants = [pid] + ([s.occupant] if s.present and s.occupant != pid else [])  # type: ignore[list-item]
        actions += _slot_universe(world, i, occupants, fix_params)
    return lines, actions


def _slot_rotation_lines(world: World, i: int, vals: _SlotValues, unlocked) -> list[str]:
    q, pid = quote, world.ids[i]
    lines = [" ".join(f"rot_value({q(pid)},{q(rotation_name(r))})." for r in vals.values),
             f"target_rot({q(pid)},{q(rotation_name(ZERO3))})."]
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


def _slot_universe(world: World, i: int, occupants: list[str], fix_params) -> list[Action]:
    """Every single-part action on slot i any reachable state can offer (its target part or the spare in it)."""
    pid = world.ids[i]
    actions = [Action("insert", pid)]
    for x in occupants:
        actions += [Action("remove", x), Action("reset_pose", x)]
        actions += [Action("rotate", x, axis=ax, angle_deg=ang) for ax, ang in fix_params]
    if world.lock[i] is not None:
        actions += [lock_action(world, i, locking=False), lock_action(world, i, locking=True)]
    if len(occupants) > 1:
        actions.append(Action("replace", occupants[1], target_part_id=pid))
    return actions


def _group_member_lines(actions: list[Action], ranks: dict[str, int]) -> list[str]:
    groups = sorted({a.part_ids for a in actions if a.part_ids is not None}, key=lambda g: [ranks[x] for x in g])
    if not groups:
        return []
    lines = ["", "% --- group moves (SEMANTICS §5): gmember(G,X), X a member of the group term G; every"
             " G is free-space separable", f"%     ({len(groups)} member tuples, "
             f"{sum(1 for a in actions if a.part_ids is not None)} group actions)"]
    for g in groups:
        term = "(" + ",".join(quote(x) for x in g) + ")"
        lines.append(" ".join(f"gmember({term},{quote(x)})." for x in g))
    return lines


def _actual_lines(world: World, actual: State) -> list[str]:
    """The actual state, abstracted to the fluents the encoding reasons with."""
    q = quote
    lines = ["", "% --- actual state (actual_state.json), abstracted"]
    for i, pid in enumerate(world.ids):
        s = actual.slots[i]
        if not s.present:
            lines.append(f"init(rot({q(pid)},{q(rotation_name(ZERO3))})).  % absent")
            continue
        facts = [f"init(in({q(s.occupant)})).", f"init(rot({q(pid)},{q(rotation_name(s.rotation))}))."]  # type: ignore[arg-type]
        if world.pose_off(i, s):
            facts.append(f"init(pose_off({q(pid)})).")
        if s.locked:
            facts.append(f"init(locked({q(pid)})).")
        lines.append(" ".join(facts))
    return lines

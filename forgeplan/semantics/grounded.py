"""The grounded task: every parameter of the finite action universe, computed in this one place.

The engine accepts any parameters; the planners (clingo's facts, the grounded PDDL, the repair search,
the task grammar and the decoding masks) only ground actions whose parameters can occur in a minimal
plan, and they take those parameters from here instead of deriving them again:

* lock actions with their mechanism's values (`model.actions.lock_action`, re-exported per slot here);
* `rotate` only with the single-axis turn that repairs an observed orientation (`rotation_fix`): a
  turn by any other angle leaves or creates a fault a later action on the part must undo;
* the candidate groups of `separate`/`join` (`separable_groups`): every set of two or more slots that
  is separable in free space, one rule and one cap for every planner, and the directions their
  members allow (`group_directions`) with the dominated ones marked (`undominated_directions`);
* a single part's removal paths with dominated directions dropped (`removal_paths`);
* which action kinds apply to which part (`action_space`, the body of action_space.json);
* the action universe: every action any state reachable from the actual state can offer, with the
  rotation values each slot can take (`action_universe`, `slot_rotations`), in the canonical tie-break
  order (`canonical_key`, SEMANTICS.md §4);
* the canonical target every planner restores (`check_canonical_target`);
* the objectives and the action costs that encode them (`OBJECTIVES`, `touch_costs`, `plan_value`);
* the kind of a task's moves (`MoveKind`, `move_kind`, `GroundedTask.kind`, and per assembly
  `assemblies_by_kind`): straight moves (§3), group moves (§5) or partial moves (§9), decided with its
  move model (`semantics.moves`, the rules the engine and the offer of a state take from the kind). It
  is asked here, in the move model and in the planner registry (`planners.registry`), nowhere else:
  everything else asks a grounded task's capabilities (`has_groups`, `has_slides`, `has_offsets`);
* where partial moves are in play (SEMANTICS.md §9), the position domain with its radius cut
  (`positions`), the sets of slots a slide may move (`slide_groups`; `separate`/`join` take
  `separable_groups`, capped like every group enumeration), the slide universe (`slide_universe`) and
  the moves a configuration offers (`offered_moves`, `apply_move`, `to_action`), computed in
  `semantics.partial_universe`.

`ground(task)` makes the one object that holds all of it for a task (`GroundedTask`, pyperplan's
`ground(problem) -> Task`), every answer it keeps included; what the tasks on one assembly share it keeps
in an `AssemblyGrounding` that the caller may pass (`semantics.assembly_grounding`).

encodings/SEMANTICS.md states the rules; the ASP encoding and the lifted PDDL domain implement them
independently, and the differential tests compare the three.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from itertools import product
from typing import Mapping, NamedTuple, Sequence

from ..model.actions import (KINDS, Action, Insert, Join, PoseMove, Remove, Replace, ResetPose, Rotate, Separate, Slide, Turn,
                             lock_action as part_lock_action, moved_parts)
from ..model.assembly import DIRECTIONS, Assembly
from ..model.choices import OBJECTIVES
from ..model.errors import InputError
from ..model.rotations import axis_angle_of, euler_to_matrix, matmul, transpose
from ..model.state import NO_OFFSET, NO_ROTATION, Slot, State
from .assembly_grounding import AssemblyGrounding
from .engine import World
from .moves import MoveKind, MoveModel, assembly_kind, move_model
from .partial_universe import (apply_move, offered_moves, position_bound, position_domain,  # noqa: F401 (§9's universe)
                               slide_universe, to_action)
from .task import Task


# ----------------------------------------------------------------------------- the kind of a task

def move_kind(world: World) -> MoveKind:
    """The kind of every task on `world`'s assembly: its move model's (`World.moves`)."""
    return world.moves.kind


class Capability(Enum):
    """What a grounded task's universe holds beyond single parts moving straight (SEMANTICS §3): the
    planner registry chooses by these (`planners.registry`), and every other module asks them instead of
    a task's kind."""

    GROUPS = "group moves"   # separate/join (§5, §9)
    SLIDES = "slides"        # slide (§9)
    OFFSETS = "offsets"      # insert/join at offsets (§9)


class GroundedTask:
    """A task grounded once: its kind and capabilities, its move model, its action universe and, with
    partial moves, §9's universe (positions, the offer table, the landing indexes), with every answer
    kept about it. Planners (`planners.registry`), the renderings and the masks take one. `shared`: the
    answers the tasks on its assembly share (`AssemblyGrounding`), the caller's when it grounds several
    tasks on one assembly, else its own."""

    def __init__(self, task: Task, shared: AssemblyGrounding | None = None):
        if shared is not None and not shared.serves(task.world):
            raise ValueError(f"task {task.sample_id}: the assembly grounding is another assembly's")
        self.task = task
        self.shared = shared if shared is not None else AssemblyGrounding(task.world)

    @property
    def world(self) -> World:
        """The compiled assembly the answers are about (the shared grounding's: equal to the task's)."""
        return self.shared.world

    @property
    def moves(self) -> MoveModel:
        """The move model of the task's kind (`semantics.moves`)."""
        return self.world.moves

    @property
    def kind(self) -> MoveKind:
        return self.moves.kind

    @property
    def has_groups(self) -> bool:
        """Are `separate`/`join` in play (SEMANTICS §5, §9)?"""
        return self.moves.groups

    @property
    def has_slides(self) -> bool:
        """Does `slide` exist here (SEMANTICS §9)?"""
        return self.moves.slides_refused() is None

    @property
    def has_offsets(self) -> bool:
        """May parts arrive at offsets (`insert`/`join` with offsets, SEMANTICS §9)?"""
        return self.moves.offsets_refused("inserted") is None

    @property
    def capabilities(self) -> frozenset[Capability]:
        return capabilities(self.moves)

    @cached_property
    def actions(self) -> tuple[Action, ...]:
        """The finite action universe of §3-§5 in canonical order (`action_universe`); a partial-move
        task's moves depend on the configuration and are offered by `offered_moves`."""
        return tuple(action_universe(self))

    @property
    def separable_groups(self) -> tuple[int, ...]:
        """The candidate groups of `separate`/`join` (`separable_groups`)."""
        return separable_groups(self.shared)

    def positions(self, radius: int | None = None, field: str = "radius") -> "Positions":
        """§9's position domain, cut to `radius` when given (`task_positions`)."""
        return task_positions(self, radius, field)


def ground(task: Task, shared: AssemblyGrounding | None = None) -> GroundedTask:
    """The grounded task of `task` (on `shared`, the answers the tasks on its assembly share, when given)."""
    return GroundedTask(task, shared)


def capabilities(model: MoveModel) -> frozenset[Capability]:
    """What a move model's universe holds beyond straight single-part moves."""
    return frozenset(c for c, has in ((Capability.GROUPS, model.groups), (Capability.SLIDES, model.slides_refused() is None),
                                      (Capability.OFFSETS, model.offsets_refused("inserted") is None)) if has)


def assembly_capabilities(asm: Assembly) -> frozenset[Capability]:
    """The capabilities of every task on `asm` (for the choices made per assembly: which assemblies a
    benchmark profile takes, before any task exists)."""
    return capabilities(move_model(asm))


def as_grounded(task: Task | GroundedTask) -> GroundedTask:
    """`task` grounded (itself when it already is): for the entry points that take either."""
    return task if isinstance(task, GroundedTask) else GroundedTask(task)


def kind_of(task: Task) -> MoveKind:
    return move_kind(task.world)


class AssemblyKinds(NamedTuple):
    """The ids of a set of assemblies whose tasks need group moves (§5) and partial moves (§9)."""

    groups: frozenset[str]
    partial: frozenset[str]


def assemblies_by_kind(assemblies: Mapping[str, Assembly]) -> AssemblyKinds:
    """Which of `assemblies` (id -> assembly) need group moves and which partial moves: a benchmark
    composes its train/test split and its expert tier from these (`bench.composition`)."""
    kinds = {a: assembly_kind(asm) for a, asm in assemblies.items()}
    return AssemblyKinds(frozenset(a for a, k in kinds.items() if k is MoveKind.GROUPS),
                         frozenset(a for a, k in kinds.items() if k is MoveKind.PARTIAL))


DEFAULT_WEIGHT = 1000
# separable sets enumerated before grounding gives up (their number can grow exponentially with the parts)
MAX_GROUP_SETS = 50_000


# ----------------------------------------------------------------------------- objectives

def objective_value(objective: str, moved: int, actions: int) -> tuple[int, ...]:
    """The optimised value of a plan with `moved` distinct moved parts and `actions` steps."""
    return {"moved-parts,actions": (moved, actions), "actions": (actions,), "moved-parts": (moved,)}[objective]


def touch_costs(objective: str, weight: int = DEFAULT_WEIGHT) -> tuple[int, int, int]:
    """Cost of an action that touches 0, 1 or 2 parts for the first time (W*J_move + c lexicographically)."""
    if objective == "moved-parts,actions":
        return (1, weight + 1, 2 * weight + 1)
    if objective == "actions":
        return (1, 1, 1)
    if objective == "moved-parts":
        return (0, 1, 2)
    raise InputError(f"objective {objective!r} must be one of {list(OBJECTIVES)}", field="--objective")


def plan_value(objective: str, actions: Sequence[Action], weight: int = DEFAULT_WEIGHT) -> int:
    """Total cost of a plan under the objective's action costs (what an optimal planner minimises)."""
    j, c = len(moved_parts(actions)), len(actions)
    return {"moved-parts,actions": weight * j + c, "actions": c, "moved-parts": j}[objective]


# ----------------------------------------------------------------------------- the canonical target

def check_canonical_target(task: Task) -> None:
    """Planners restore the canonical target: every slot present with its own part, seated, every lock engaged.
    They ground the actions of SEMANTICS §1-§7 only: an assembly that needs partial moves (§9) is refused."""
    world = task.world
    if move_kind(world) is MoveKind.PARTIAL:
        raise InputError(f"assembly {task.assembly.assembly_id} needs partial moves (slides, SEMANTICS §9), which "
                         "encodings/plan.lp and domains/rework.pddl do not ground: the planner registry gives such "
                         "tasks to the moved-set search (`forgeplan solve`)", field="assembly")
    diffs = world.differences(task.target, world.target_state())
    if diffs:
        raise InputError("the target state must be the assembly's target configuration (every slot present, "
                         "seated at its target pose, every lock engaged): " + "; ".join(diffs[:3]),
                         file="target_state.json", field="slots")


# ----------------------------------------------------------------------------- the action space

def action_space(asm: Assembly) -> dict:
    """The action kinds with their parameters, and per part which kinds apply (action_space.json's body).
    `slide` and the optional offsets are listed only where partial moves are in play (SEMANTICS §9)."""
    partial = assembly_kind(asm) is MoveKind.PARTIAL   # the kind of every task on `asm`
    applicable = {}
    for p in asm.parts:
        acts = ["remove", "insert", "reset_pose", "rotate"]
        if p.lock is not None:
            acts += (["rotate_to_unlock", "rotate_to_lock"] if p.lock.kind == "rotate"
                     else ["rotate_translate_to_unlock", "translate_rotate_to_lock"])
        applicable[p.part_id] = acts + (["slide"] if partial else [])
    for w in asm.spares:
        applicable[w.part_id] = ["remove", "reset_pose", "rotate", "replace"]
    kinds = [k for k in KINDS if partial or k is not Slide]
    return {"actions": [{"action": k.name, "params": list(k.params) + (list(k.optional) if partial else [])}
                        for k in kinds], "applicable": applicable}


# ----------------------------------------------------------------------------- single-part parameters

def rotation_fix(world: World, i: int, rotation) -> tuple[str, float] | None:
    """The single-axis turn (axis, angle) that brings `rotation` back to the target modulo symmetry.

    Smallest |angle| first, then axis order x, y, z; None when no single principal-axis turn does it.
    """
    r = euler_to_matrix(rotation)
    best = None
    for g in world.symmetry[i]:
        aa = axis_angle_of(matmul(r, transpose(g)))
        if aa is None:
            continue
        axis, theta = aa
        cand = (abs(theta), "xyz".index(axis), axis, -theta)
        if best is None or cand < best:
            best = cand
    if best is None:
        return None
    return best[2], best[3]


def lock_action(world: World, i: int, locking: bool) -> Turn | PoseMove:
    """The one grounded lock (`locking`) or unlock action of lock slot i."""
    return part_lock_action(world.parts[i], locking)


def removal_paths(world: World, i: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Slot i's removal directions with their blockers (catalog order); a direction whose blockers
    include another's is dropped: every state that frees it frees the other too."""
    out: list[tuple[str, frozenset[str]]] = []
    for d in world.parts[i].removal_dirs:
        blockers = frozenset(world.ids[j] for j in _members(world.blockers_along[i][d]))
        if any(prev <= blockers for _, prev in out):
            continue
        out = [(e, prev) for e, prev in out if not blockers <= prev]
        out.append((d, blockers))
    return tuple((d, tuple(sorted(b, key=world.index.__getitem__))) for d, b in out)


# ----------------------------------------------------------------------------- the action universe

Rotation = tuple[float, float, float]


def part_ranks(world: World) -> dict[str, int]:
    """Catalog order, spares after target parts (SEMANTICS §4)."""
    order = list(world.ids) + [w.part_id for w in world.assembly.spares]
    return {pid: k for k, pid in enumerate(order)}


def canonical_key(action: Action, ranks: dict[str, int]) -> tuple:
    """(action rank, part rank, parameters): the tie-break order of SEMANTICS §4.

    A group move (SEMANTICS §5) is keyed by its first member, then its direction and all members' ranks.
    """
    return (action.rank, *action.sort_key(ranks))


class SlotRotations:
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
            after = world.apply(start, Rotate(occupant, *fix)).slots[i].rotation
            if world.rotation_error(i, after) > world.tol.rot_tol:
                raise InputError(f"the repairing turn of {world.ids[i]} leaves it off target", field="rotation")
            self.fixes.append((r, fix[0], fix[1], after))
            todo.append(after)


ROTATIONS = "slot rotations"   # the memo of `AssemblyGrounding` that keeps `slot_rotations`
SEPARABLE = "separable groups"  # and `separable_groups`


def slot_rotations(ag: AssemblyGrounding, actual: State, i: int) -> tuple[SlotRotations, Slot | None]:
    """The rotation values slot i can take from the actual state, and for a coupled lock the slot after
    its unlock (whose rotation is one of those values). They depend on slot i's own state only, so they
    are kept per assembly and slot state (a task's faults change a few slots; the rest repeat)."""
    cache = ag.memo(ROTATIONS)
    key = (i, repr(actual.slots[i]))   # repr: -0.0 and 0.0 name different rotation values
    hit = cache.get(key)
    if hit is None:
        if len(cache) > 4096:
            cache.clear()
        hit = cache[key] = _slot_rotations(ag.world, actual, i)
    return hit


def _slot_rotations(world: World, actual: State, i: int) -> tuple[SlotRotations, Slot | None]:
    s = actual.slots[i]
    seeds = [NO_ROTATION] + ([s.rotation] if s.present else [])
    unlocked = None
    if world.lock[i] is not None and world.lock[i].kind == "coupled":  # type: ignore[union-attr]  # checked on the left of `and`; mypy does not narrow an indexed expression
        unlocked = world.apply(world.target_state(), lock_action(world, i, locking=False)).slots[i]
        seeds.append(unlocked.rotation)
    return SlotRotations(world, actual, i, seeds), unlocked


def slot_universe(ag: AssemblyGrounding, actual: State, i: int) -> list[Action]:
    """Every single-part action on slot i any state reachable from `actual` can offer: on its target part
    and on the spare in it (ending with the spare's replacement), then the lock actions."""
    world = ag.world
    pid = world.ids[i]
    s = actual.slots[i]
    occupants = [pid] + ([s.occupant] if s.present and s.occupant is not None and s.occupant != pid else [])
    turns = dict.fromkeys((ax, ang) for _, ax, ang, _ in slot_rotations(ag, actual, i)[0].fixes)
    actions: list[Action] = [Insert(pid)]
    for x in occupants:
        actions += [Remove(x), ResetPose(x), *(Rotate(x, ax, ang) for ax, ang in turns)]
        if x != pid:
            actions.append(Replace(x, pid))
    if world.lock[i] is not None:
        actions += [lock_action(world, i, locking=False), lock_action(world, i, locking=True)]
    return actions


def group_universe(ag: AssemblyGrounding, actual: State) -> list[Action]:
    """Every separate/join any reachable state can offer (SEMANTICS §5): each separable set of two or more
    slots along each direction all its members allow; separate once per choice of occupants (a slot
    holding a spare in the actual state is named by the spare or, after a replacement, by its target
    part), join with the target parts. Blocking, presence, locks and supports are checked per state by
    the encoding."""
    world, out = ag.world, list[Action]()
    for mask in separable_groups(ag):
        g = group_names(world, mask)
        dirs = group_directions(world, mask)
        choices: list[list[str]] = [[]]
        for p in g:
            s = actual.slots[world.index[p]]
            occ = [p] + ([s.occupant] if s.occupant is not None and s.present and s.occupant != p else [])
            choices = [c + [x] for c in choices for x in occ]
        for d in dirs:
            out += [Separate(tuple(c), d) for c in choices]
            out.append(Join(tuple(g), d))
    return out




def action_universe(g: GroundedTask) -> list[Action]:
    """Every action any state reachable from the actual state can offer, in canonical (tie-break) order.

    This is the finite action set clingo grounds (`planners.asp.facts`) and the grounded PDDL expands
    (`planners.pddl.abstraction`, with every direction); the per-state offer of `legal` is a subset.
    """
    world, actual = g.world, g.task.actual
    actions: list[Action] = []
    for i in range(len(world.ids)):
        actions += slot_universe(g.shared, actual, i)
    if g.has_groups:
        actions += group_universe(g.shared, actual)
    ranks = part_ranks(world)
    actions.sort(key=lambda a: canonical_key(a, ranks))
    return actions


# ----------------------------------------------------------------------------- partial moves (§9)

Vec = tuple[int, int, int]


@dataclass(frozen=True)
class Positions:
    """The position domain of §9 (the same for every slot), whole or cut to `radius` voxels per axis."""

    bound: Vec                 # per axis the largest |offset|
    offsets: tuple[Vec, ...]   # every offset within the bound, the origin (`NO_OFFSET`) first, then sorted
    longest: int               # the longest slide: across the domain, 2 * max(bound)
    full: bool                 # the whole domain (an optimum over it is a proof), or a sub-domain

    def holds(self, o: Vec) -> bool:
        return all(abs(c) <= b for c, b in zip(o, self.bound))


def positions(asm: Assembly, radius: int | None = None, field: str = "radius") -> Positions:
    """The grounded position domain (`position_bound`), cut to `radius` per axis when given: a sub-domain,
    whose optimum is an upper bound on §9's, proved for that sub-domain only."""
    if radius is not None and radius < 1:
        raise InputError(f"radius must be a whole number >= 1, got {radius}", field=field)
    full = position_bound(asm)
    bound = full if radius is None else tuple(min(b, radius) for b in full)
    offsets = sorted(product(*(range(-b, b + 1) for b in bound)), key=lambda o: (o != NO_OFFSET, o))
    return Positions(tuple(bound), tuple(offsets), 2 * max(bound), radius is None)  # type: ignore[arg-type]  # a bound per axis of a Vec


def task_positions(task: Task | GroundedTask, radius: int | None = None, field: str = "radius") -> Positions:
    """`positions` of a task's assembly; refuses a task without partial moves (it has no position domain)."""
    g = as_grounded(task)
    if not g.has_offsets:
        raise InputError(f"{g.world.assembly.assembly_id} needs no partial moves: it has no position domain "
                         "(SEMANTICS §9)", field="assembly")
    return positions(g.world.assembly, radius, field)


def slide_groups(world: World) -> tuple[int, ...]:
    """Bitmasks of the sets of slots a slide may move (§9: every non-empty set), by size then catalog
    order, under the cap of every group enumeration (`MAX_GROUP_SETS`)."""
    n = len(world.ids)
    if (1 << n) - 1 > MAX_GROUP_SETS:
        raise InputError(f"more than {MAX_GROUP_SETS} sets of slots: too many to ground as slides",
                         file=f"assembly {world.assembly.assembly_id}")
    return tuple(sorted(range(1, 1 << n), key=lambda g: (bin(g).count("1"), _members(g))))


# ----------------------------------------------------------------------------- group moves

def separable_groups(ag: AssemblyGrounding) -> tuple[int, ...]:
    """Bitmasks of every set of two or more slots that is separable in free space, by size then catalog order.

    These are the groups `separate`/`join` may name, for every planner and assembly size; none when the
    assembly needs no group moves. Separability is hereditary (forgeplan.geometry.separation), so a
    separable set minus its highest slot is separable: growing separable sets one higher slot at a time
    reaches exactly the separable ones. Kept per assembly.
    """
    kept = ag.memo(SEPARABLE)
    if None not in kept:
        kept[None] = _separable_groups(ag.world)
    return kept[None]


def _separable_groups(world: World) -> tuple[int, ...]:
    n, level, out = len(world.ids), [1 << i for i in range(len(world.ids))], []
    while level and world.moves.groups:
        level = [h for g in level for j in range(g.bit_length(), n) if world.separable(h := g | 1 << j)]
        out += level
        if len(out) > MAX_GROUP_SETS:
            raise InputError(f"more than {MAX_GROUP_SETS} separable groups: too many to ground as group moves",
                             file=f"assembly {world.assembly.assembly_id}")
    return tuple(out)


def group_directions(world: World, group: int) -> list[str]:
    """The directions every member of `group` allows (its candidate moves, separate and join alike)."""
    return [d for d in DIRECTIONS if all(d in world.parts[i].removal_dirs for i in _members(group))]


def group_blockers(world: World, group: int, d: str) -> int:
    """The slots outside `group` that block a member along `d` (they must be absent for it to move)."""
    out = 0
    for i in _members(group):
        out |= world.blockers_along[i][d]
    return out & ~group


def undominated_directions(world: World, group: int, along: list[str]) -> list[str]:
    """The directions of `along` whose move of `group` is kept: no other has fewer blockers (a strict
    subset), and no earlier one has the same. A move of G has the same effect along every direction, so
    dropping a dominated one changes no reachable state and no plan cost."""
    blockers = [group_blockers(world, group, d) for d in along]
    return [d for k, (d, b) in enumerate(zip(along, blockers))
            if not any(c & ~b == 0 and (c != b or j < k) for j, c in enumerate(blockers) if j != k)]


def group_names(world: World, mask: int) -> tuple[str, ...]:
    return tuple(world.ids[i] for i in _members(mask))


def _members(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]

"""Task -> unified-planning Problem: the PDDL side of the one semantics (encodings/SEMANTICS.md).

The PDDL world is the symbolic abstraction of SEMANTICS §2 over the grounded action set of
`forgeplan.semantics.grounding`: per slot the fluents `present`, `wrong` (occupant is a spare), `pose_off`,
`rot_off`, `locked`, plus `unlock_turned` (the rotation is a coupled lock's unlocked rotation, which
selects the repairing turn of `rotate`) and `touched` (the part was named by an action; J_move).
Poses never leave this finite set of facts: every grounded action sets a pose to the target, to a
lock's unlocked pose, or leaves it alone, and whether those poses are off is decided here with the
engine's own functions.

Two renderings of the same task:

* `build_problem(task)`: the rework domain of `domains/rework.pddl` (task-independent, quantified
  preconditions, conditional effects for the coupled unlock) plus a problem of static facts.
* `build_problem(task, grounded=True)`: one parameterless action per grounded action, free direction and touch variant,
  with the static blocking relation expanded into plain negative literals. This is what Fast
  Downward's `astar(lmcut())` accepts without axioms (issue 4, "Known traps").

Objectives are action costs (domains/README.md gives the weight argument): an action that touches k
parts for the first time costs `first_touch_cost(k)`; for the lexicographic objective that is
`W*k + 1`, so total cost = W*J_move + c.

Assemblies that need group moves (SEMANTICS §5) are exported in grounded mode only, with their
candidate groups listed explicitly (`candidate_groups`); a group move costs one step and requires its
members touched, and a separate `touch` action per part pays the first-touch cost (domains/README.md).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ...geometry.relations import blocking_relation
from ...model.actions import Action
from ...model.assembly import DIRECTIONS, Pose
from ...model.errors import InputError
from ...model.state import Slot, State
from ...semantics.engine import World
from ...semantics.grounded import (DEFAULT_WEIGHT, OBJECTIVES as OBJECTIVE_VALUES, check_canonical_target,
                                   group_blockers, group_directions, group_names, lock_action, plan_value,
                                   removal_paths, rotation_fix, separable_groups, touch_costs, undominated_directions)
from ...semantics.task import Task

OBJECTIVES = tuple(OBJECTIVE_VALUES)
DOMAIN_NAME = "rework"
# PDDL object names of the directions (a leading sign is not a legal PDDL name start)
DIRECTION_NAMES = {"+x": "xplus", "-x": "xminus", "+y": "yplus", "-y": "yminus", "+z": "zplus", "-z": "zminus"}
# touch-variant suffixes: which touched parameters are touched for the first time
FIRST = "_first"


# ----------------------------------------------------------------------------- symbolic abstraction

Literal = tuple[str, str, bool]  # (fluent, part id, value)


@dataclass(frozen=True)
class Step:
    """One grounded action in symbolic form: literals over slot fluents, and its clearance paths.

    `paths` are the alternatives of `∃d free(p, d)`: (direction, blockers that must be absent); empty
    when the action needs no clearance.
    """

    action: Action
    pre: tuple[Literal, ...]
    eff: tuple[Literal, ...]
    paths: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass
class Abstraction:
    """The task's symbolic initial state, goal and grounded steps (slot fluents keyed by part id)."""

    world: World
    init: set[Literal] = field(default_factory=set)      # true fluents
    goal: list[Literal] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    fluents: set[tuple[str, str]] = field(default_factory=set)
    spare_in: dict[str, str] = field(default_factory=dict)           # slot -> its actual spare occupant
    turn_fix: dict[str, tuple[str, float]] = field(default_factory=dict)     # slot -> fix of actual rotation
    unlock_fix: dict[str, tuple[str, float]] = field(default_factory=dict)   # coupled slot -> fix of unlocked rotation
    unlock_pose_off: set[str] = field(default_factory=set)
    unlock_rot_off: set[str] = field(default_factory=set)
    groups: GroupCandidates | None = None    # assemblies that need group moves only


def abstraction(task: Task, every_direction: bool = False) -> Abstraction:
    """The symbolic abstraction of a task: SEMANTICS §2 facts, computed with the engine's functions.

    Group moves go along the directions `GroupCandidates.moves` keeps, or along every direction.
    """
    check_canonical_target(task)
    world = task.world
    ab = Abstraction(world)
    ids = world.ids
    for i, pid in enumerate(ids):
        s = task.actual.slots[i]
        ab.fluents.add(("present", pid))
        ab.fluents.update({("pose_off", pid), ("rot_off", pid)})
        if world.lock[i] is not None:
            ab.fluents.add(("locked", pid))
            ab.goal.append(("locked", pid, True))
        if s.present:
            ab.init.add(("present", pid, True))
            if s.occupant != pid:
                ab.spare_in[pid] = s.occupant  # type: ignore[assignment]
                ab.fluents.add(("wrong", pid))
                ab.init.add(("wrong", pid, True))
            if world.pose_off(i, s):
                ab.init.add(("pose_off", pid, True))
            if world.rot_off(i, s):
                ab.init.add(("rot_off", pid, True))
                fix = rotation_fix(world, i, s.rotation)
                if fix is not None:
                    ab.turn_fix[pid] = _checked_fix(world, i, s, fix)
            if s.locked:
                ab.init.add(("locked", pid, True))
        lock = world.lock[i]
        if lock is not None and lock.kind == "coupled":
            up = world.unlocked[i]
            after = Slot(True, pid, up.position, up.rotation, 0.0, False)
            if world.pose_off(i, after):
                ab.unlock_pose_off.add(pid)
            if world.rot_off(i, after):
                ab.unlock_rot_off.add(pid)
                ab.fluents.add(("unlock_turned", pid))
                fix = rotation_fix(world, i, up.rotation)
                if fix is not None:
                    ab.unlock_fix[pid] = _checked_fix(world, i, after, fix)
        ab.goal += [("present", pid, True), ("pose_off", pid, False), ("rot_off", pid, False)]
        if ("wrong", pid) in ab.fluents:
            ab.goal.append(("wrong", pid, False))
    paths = {pid: removal_paths(world, i) for i, pid in enumerate(ids)}
    for i, pid in enumerate(ids):
        ab.steps += _slot_steps(ab, i, paths[pid])
    if world.needs_groups:
        ab.groups = candidate_groups(world)
        ab.steps += _group_steps(ab, ab.groups.groups if every_direction else ab.groups.moves)
    return ab


def _checked_fix(world: World, i: int, slot: Slot, fix: tuple[str, float]) -> tuple[str, float]:
    """The repairing turn, checked with the engine to clear rot_off (the abstraction relies on it)."""
    turned = world.apply(State([slot if j == i else world.target_slot(j) for j in range(len(world.ids))]),
                         Action("rotate", slot.occupant, axis=fix[0], angle_deg=fix[1]))  # type: ignore[arg-type]
    if world.rot_off(i, turned.slots[i]):
        raise AssertionError(f"rotation fix {fix} does not restore {world.ids[i]}")
    return fix


def _slot_steps(ab: Abstraction, i: int, paths) -> list[Step]:
    """The grounded actions on slot i over every state reachable in the abstraction (grounding.slot_actions)."""
    world = ab.world
    pid = world.ids[i]
    lock = world.lock[i]
    has = lambda f: (f, pid) in ab.fluents  # noqa: E731
    holders = [world.ids[j] for j in world.holders[i]]
    not_held = tuple(("locked", h, False) for h in holders)
    reset_all = _reset_all(ab, pid)
    steps = [Step(Action("insert", pid),
                  (("present", pid, False), *(("present", q, True) for q in world.parts[i].supports), *not_held),
                  (("present", pid, True), *reset_all), paths)]
    clear = ((("locked", pid, False),) if lock is not None else ()) + not_held
    occupants = [(pid, (("present", pid, True),) + ((("wrong", pid, False),) if has("wrong") else ()))]
    if pid in ab.spare_in:
        occupants.append((ab.spare_in[pid], (("wrong", pid, True),)))
    for x, here in occupants:
        pre = here + clear
        steps.append(Step(Action("remove", x), pre, (("present", pid, False), *reset_all), paths))
        steps.append(Step(Action("reset_pose", x), pre, (("pose_off", pid, False),), paths))
        actual_is_x = (ab.spare_in.get(pid, pid) == x)
        rot_done = (("rot_off", pid, False),) + ((("unlock_turned", pid, False),) if has("unlock_turned") else ())
        if actual_is_x and pid in ab.turn_fix:
            ax, ang = ab.turn_fix[pid]
            src = (("unlock_turned", pid, False),) if has("unlock_turned") else ()
            steps.append(Step(Action("rotate", x, axis=ax, angle_deg=ang), pre + (("rot_off", pid, True),) + src, rot_done, paths))
        if x == pid and pid in ab.unlock_fix:
            ax, ang = ab.unlock_fix[pid]
            steps.append(Step(Action("rotate", x, axis=ax, angle_deg=ang),
                              pre + (("rot_off", pid, True), ("unlock_turned", pid, True)), rot_done, paths))
        if x != pid:
            steps.append(Step(Action("replace", x, target_part_id=pid), pre,
                              (("wrong", pid, False), ("pose_off", pid, False), ("rot_off", pid, False)), paths))
    if lock is not None:
        here = (("present", pid, True),)
        restored = tuple(lit for j in world.holds[i] for lit in _restored(ab, world.ids[j]))
        if lock.kind == "rotate":
            steps.append(Step(lock_action(world, i, locking=False),
                              here + (("locked", pid, True),), (("locked", pid, False),)))
            steps.append(Step(lock_action(world, i, locking=True),
                              here + (("locked", pid, False), ("pose_off", pid, False), ("rot_off", pid, False)) + restored,
                              (("locked", pid, True),)))
        else:
            eff = (("locked", pid, False), ("pose_off", pid, pid in ab.unlock_pose_off),
                   ("rot_off", pid, pid in ab.unlock_rot_off)) + ((("unlock_turned", pid, True),) if has("unlock_turned") else ())
            steps.append(Step(lock_action(world, i, locking=False),
                              here + (("locked", pid, True),), eff))
            steps.append(Step(lock_action(world, i, locking=True),
                              here + (("locked", pid, False),) + restored,
                              (("locked", pid, True), *rot_done, ("pose_off", pid, False))))
    return steps


def _reset_all(ab: Abstraction, pid: str) -> tuple[Literal, ...]:
    """A slot emptied or filled with its target part: every fault fluent and the lock go false."""
    return tuple((f, pid, False) for f in ("wrong", "pose_off", "rot_off", "unlock_turned", "locked") if (f, pid) in ab.fluents)


def _restored(ab: Abstraction, q: str) -> tuple[Literal, ...]:
    out = [("present", q, True), ("pose_off", q, False), ("rot_off", q, False)]
    if ("wrong", q) in ab.fluents:
        out.append(("wrong", q, False))
    return tuple(out)


# ----------------------------------------------------------------------------- group moves (SEMANTICS §5)

@dataclass(frozen=True)
class GroupCandidates:
    """The groups (two or more slots, catalog order) that separate and join moves name, per direction.

    SEMANTICS §5 asks of G only that it is separable in free space and that `d` is a removal
    direction of every member; everything else (presence, blockers, locks, supports) depends on the
    state and becomes a literal precondition. So `groups[d]`, the candidates along `d`, are exactly
    the separable sets whose members all allow `d`, the same for separate and join.

    `moves[d]` are the groups whose move along `d` the default export keeps. A move of G has the same
    effect along every direction; only the blockers that must be absent differ. Where the blockers of
    G along `d` include those along another direction (or equal those of an earlier one), every state
    that allows `d` allows that one too, so dropping `d` changes no reachable state and no plan cost —
    the argument that already drops such directions from a single-part move's free paths.
    """

    groups: dict[str, tuple[tuple[str, ...], ...]]
    moves: dict[str, tuple[tuple[str, ...], ...]]

    def counts(self) -> dict[str, dict[str, int]]:
        """Candidate groups per direction, and the group moves per direction the default export keeps."""
        return {"candidates": {d: len(g) for d, g in self.groups.items()},
                "exported": {d: len(g) for d, g in self.moves.items()}}

    def to_json(self) -> dict:
        return {"counts": self.counts(), "candidates": {d: [list(g) for g in v] for d, v in self.groups.items()},
                "exported": {d: [list(g) for g in v] for d, v in self.moves.items()}}


def candidate_groups(world: World) -> GroupCandidates:
    """Every group a separate or join can name; none when the assembly needs no group moves.

    Like `grounding.group_actions`, assemblies that come apart one part at a time keep the nine FORGE
    actions only (SEMANTICS §5).
    """
    groups: dict[str, list] = {d: [] for d in DIRECTIONS}
    moves: dict[str, list] = {d: [] for d in DIRECTIONS}
    for g in separable_groups(world):
        along = group_directions(world, g)
        for d in along:
            groups[d].append(group_names(world, g))
        for d in undominated_directions(world, g, along):
            moves[d].append(group_names(world, g))
    return GroupCandidates({d: tuple(v) for d, v in groups.items()}, {d: tuple(v) for d, v in moves.items()})


def candidate_counts(task: Task) -> dict[str, dict[str, int]]:
    """Candidate groups per direction in the grounded export of `task` (all zero without group moves)."""
    return candidate_groups(task.world).counts()


def _group_steps(ab: Abstraction, along: dict[str, tuple[tuple[str, ...], ...]]) -> list[Step]:
    """The separate and join moves of the groups `along` each direction, over every reachable state."""
    steps: list[Step] = []
    for d, found in along.items():
        for g in found:
            steps += _separate_steps(ab, g, d)
            steps.append(_join_step(ab, g, d))
    return steps


def _not_held(world: World, group: Sequence[str]) -> list[Literal]:
    """No engaged lock holds a member (an engaged lock is present: removal resets `locked`)."""
    return [("locked", world.ids[h], False) for p in group for h in world.holders[world.index[p]]]


def _separate_steps(ab: Abstraction, group: tuple[str, ...], d: str) -> list[Step]:
    """separate(G, d), one step per choice of occupants (a slot holding a spare is named by the spare)."""
    world = ab.world
    mask = sum(1 << world.index[p] for p in group)
    outside = group_blockers(world, mask, d)
    common = [("locked", p, False) for p in group if world.lock[world.index[p]] is not None]
    common += _not_held(world, group) + [("present", b, False) for b in group_names(world, outside)]
    eff = tuple(lit for p in group for lit in (("present", p, False), *_reset_all(ab, p)))
    choices = []
    for p in group:
        mine = [(p, (("present", p, True),) + ((("wrong", p, False),) if p in ab.spare_in else ()))]
        choices.append(mine + ([(ab.spare_in[p], (("wrong", p, True),))] if p in ab.spare_in else []))
    return [Step(Action.group("separate", [x for x, _ in combo], d),
                 tuple(dict.fromkeys([lt for _, here in combo for lt in here] + common)), eff)
            for combo in itertools.product(*choices)]


def _join_step(ab: Abstraction, group: tuple[str, ...], d: str) -> Step:
    """join(G, d): members absent, supports present or joining too, not held, nothing present in the way."""
    world = ab.world
    mask = sum(1 << world.index[p] for p in group)
    pre = [("present", p, False) for p in group]
    pre += [("present", q, True) for p in group for q in world.parts[world.index[p]].supports if q not in group]
    pre += _not_held(world, group) + [("present", b, False) for b in group_names(world, group_blockers(world, mask, d))]
    eff = tuple(lit for p in group for lit in (("present", p, True), *_reset_all(ab, p)))
    return Step(Action.group("join", group, d), tuple(dict.fromkeys(pre)), eff)


# ----------------------------------------------------------------------------- unified-planning problems

def _variants(touches: tuple[str, ...]) -> list[tuple[str, tuple[bool, ...]]]:
    """Touch variants: (name suffix, which touched parameters are touched for the first time)."""
    if len(touches) == 1:
        return [(FIRST, (True,)), ("", (False,))]
    return [(FIRST, (True, True)), (FIRST + "_wrong", (True, False)), (FIRST + "_target", (False, True)), ("", (False, False))]


@dataclass
class Encoding:
    """A unified-planning Problem for a task and the tables that map its plans back to forgeplan actions."""

    task: Task
    problem: object                      # unified_planning.model.Problem
    objective: str
    weight: int
    grounded: bool
    steps: dict[str, Action] = field(default_factory=dict)      # expanded: UP action name -> Action
    bases: dict[str, str] = field(default_factory=dict)         # lifted: UP action name -> forgeplan action name
    values: dict[str, object] = field(default_factory=dict)     # lifted: object name -> axis / angle / Pose
    objects: dict = field(default_factory=dict)                 # part id, or (kind, ...) for the others -> UP object
    touches: dict[str, str] = field(default_factory=dict)       # expanded: `touch` action name -> part id
    groups: GroupCandidates | None = None                       # the candidate groups of a group-move export
    every_direction: bool = False                               # expanded: dominated group-move directions kept
    simulator: object = field(default=None, repr=False)         # expanded: UP's simulator, made on first use
    exact: Encoding | None = field(default=None, repr=False)    # expanded: the every-direction twin (validate)

    def decode(self, instances: Iterable) -> tuple[Action, ...]:
        """UP action instances of this problem -> forgeplan actions (`touch` only pays a cost: dropped)."""
        return tuple(a for a in map(self._decode_one, instances) if a is not None)

    def unique_name(self, name: str) -> str:
        """`name`, primed until no other action has it (only part ids with spaces can collide)."""
        while name in self.steps or name in self.touches:
            name += "'"
        return name

    def _decode_one(self, ai) -> Action | None:
        name = ai.action.name
        if name in self.touches:
            return None
        if self.grounded:
            return self.steps[name]
        base = self.bases[name]
        args = [self.values.get(p.object().name, p.object().name) for p in ai.actual_parameters]
        if base in ("rotate",):
            return Action(base, args[0], axis=args[2], angle_deg=args[3])  # type: ignore[arg-type]
        if base in ("rotate_to_unlock", "rotate_to_lock"):
            return Action(base, args[0], axis=args[1], angle_deg=args[2])  # type: ignore[arg-type]
        if base in ("rotate_translate_to_unlock", "translate_rotate_to_lock"):
            return Action(base, args[0], after_pose=args[1])  # type: ignore[arg-type]
        if base == "replace":
            return Action(base, args[0], target_part_id=args[1])  # type: ignore[arg-type]
        return Action(base, args[0])  # type: ignore[arg-type]

    def encode(self, actions: Sequence[Action]):
        """A forgeplan plan as a plan of this problem, or None when an action is not expressible.

        Lifted: touch variants follow from the plan itself (which parts earlier actions named); an
        action whose parameters name no object of the problem is outside the grounded action set.
        Expanded: see `_encode_expanded`.
        """
        from unified_planning.plans import ActionInstance, SequentialPlan

        if self.grounded:
            return self._encode_expanded(actions)
        world, touched, out = self.task.world, set(), []
        for a in actions:
            if a.part_ids is not None:  # the lifted domain has no group moves (build_problem refuses them)
                return None
            slot_of = world.ids[i] if (i := world._slot_of(a.part_id)) is not None else None
            args: list = [a.part_id]
            if a.name in ("remove", "reset_pose", "rotate"):
                args.append(slot_of)
            if a.axis is not None:
                args += [("axis", a.axis), self._angle_key(a.angle_deg)]
            if a.after_pose is not None:
                args.append(self._pose_key(a.after_pose))
            if a.name == "replace":
                args.append(a.target_part_id)
            objs = [self.objects.get(k) for k in args]
            if slot_of is None or any(o is None for o in objs):
                return None
            touches = a.touched
            new = tuple(p not in touched for p in touches)
            suffix = next(s for s, pattern in _variants(touches) if pattern == new)
            touched.update(touches)
            out.append(ActionInstance(self.problem.action(a.name + suffix), objs))  # type: ignore[attr-defined]
        return SequentialPlan(out)

    def _encode_expanded(self, actions: Sequence[Action]):
        """A forgeplan plan as a plan of the expanded problem, or None when some step has no applicable copy.

        An action is expanded into copies that differ in touch variant or free direction;
        UP's own simulator picks the copy whose preconditions hold (so the choice uses the exported
        semantics, not the engine's), and a group move is preceded by the `touch` actions of its
        members that no earlier action named. The validator then re-checks the whole plan and the goal.
        """
        from unified_planning.plans import ActionInstance, SequentialPlan
        from unified_planning.shortcuts import SequentialSimulator

        if self.simulator is None:  # building one costs UP a second on a burr: once per encoding
            self.simulator = SequentialSimulator(self.problem)
        sim = self.simulator
        copies: dict[Action, list] = {}
        for name, a in self.steps.items():
            copies.setdefault(a, []).append(self.problem.action(name))  # type: ignore[attr-defined]
        touch = {p: self.problem.action(name) for name, p in self.touches.items()}  # type: ignore[attr-defined]
        out, state = [], sim.get_initial_state()
        for a in actions:
            for p in a.touched if a.part_ids is not None else ():
                if p in touch and sim.is_applicable(state, touch[p]):
                    state = sim.apply(state, touch[p])
                    out.append(ActionInstance(touch[p]))
            copy = next((c for c in copies.get(a, ()) if sim.is_applicable(state, c)), None)
            if copy is None:
                return None
            state = sim.apply(state, copy)
            out.append(ActionInstance(copy))
        return SequentialPlan(out)

    def validate(self, actions: Sequence[Action]) -> bool:
        """UP's SequentialPlanValidator on this problem (lifted, or expanded via `_encode_expanded`).

        A plan with an action outside the grounded action set (no object of the problem names its
        parameters, no copy of it in the expanded problem) is invalid for PDDL. A group move along a
        direction the default export drops is legal in the engine, so a plan with one is checked on
        the problem with every direction (the same copies for every other action, many more actions).
        """
        from unified_planning.engines import ValidationResultStatus
        from unified_planning.shortcuts import PlanValidator, get_environment

        dropped = any(a.part_ids is not None and a not in self.steps.values() for a in actions)
        if self.grounded and self.groups is not None and not self.every_direction and dropped:
            if self.exact is None:
                self.exact = build_problem(self.task, self.objective, grounded=True, weight=self.weight,
                                           every_direction=True)
            return self.exact.validate(actions)
        get_environment().credits_stream = None
        plan = self.encode(actions)
        if plan is None:
            return False
        with PlanValidator(name="sequential_plan_validator") as validator:
            return validator.validate(self.problem, plan).status == ValidationResultStatus.VALID

    def _angle_key(self, angle: float | None) -> tuple | None:
        """The angle object within rot_tol of `angle` (the engine accepts any angle that close)."""
        from ...semantics.engine import angle_diff

        near = sorted((angle_diff(k[1], angle), k) for k in self.objects
                      if isinstance(k, tuple) and k[0] == "angle" and angle is not None)
        return near[0][1] if near and near[0][0] <= self.task.tolerances.rot_tol else None

    def _pose_key(self, pose: Pose) -> tuple | None:
        return next((k for k in self.objects if isinstance(k, tuple) and k[0] == "pose"
                     and self.task.world.pose_close(pose, self.values[self.objects[k].name])), None)


def build_problem(task: Task, objective: str = "moved-parts,actions", *, grounded: bool = False,
                  weight: int = DEFAULT_WEIGHT, every_direction: bool = False) -> Encoding:
    """The task as a unified-planning Problem: the lifted rework domain, or the expanded STRIPS problem.

    `every_direction` keeps a group move along every direction, dominated ones included (see
    `GroupCandidates`): the problem then has exactly the engine's legal group moves, at the price of
    many more actions (Fast Downward's invariant synthesis takes seconds on a six-piece burr).
    """
    costs = touch_costs(objective, weight)
    ab = abstraction(task, every_direction)
    if ab.groups is not None and not grounded:
        raise InputError("the lifted domain has no group moves (separate/join, SEMANTICS §5), which this assembly "
                         "needs; export it with --grounded", file=f"assembly {task.assembly.assembly_id}")
    if grounded:
        return _expanded(task, ab, objective, weight, costs, every_direction)
    return _lifted(task, ab, objective, weight, costs)


class _Vocabulary:
    """Types and fluents shared by both renderings, so that lifted and expanded problems read alike."""

    def __init__(self):
        from unified_planning.shortcuts import BoolType, Fluent, IntType, UserType

        self.part = UserType("part")
        self.slot = UserType("slot", self.part)
        self.spare = UserType("spare", self.part)
        self.direction, self.axis, self.angle, self.pose = (UserType(n) for n in ("direction", "axis", "angle", "pose"))
        s, b = self.slot, BoolType()
        self.fluent = {n: Fluent(n, b, s=s) for n in ("present", "wrong", "pose_off", "rot_off", "unlock_turned", "locked")}
        self.touched = Fluent("touched", b, x=self.part)
        self.static = {
            "spare_in": Fluent("spare_in", b, x=self.part, s=s),
            "supports": Fluent("supports", b, q=s, p=s),
            "holds": Fluent("holds", b, l=s, p=s),
            "blocks": Fluent("blocks", b, b=s, p=s, d=self.direction),
            "removal_dir": Fluent("removal_dir", b, p=s, d=self.direction),
            "turn_fix": Fluent("turn_fix", b, s=s, a=self.axis, n=self.angle),
            "unlock_fix": Fluent("unlock_fix", b, s=s, a=self.axis, n=self.angle),
            "unlock_turn": Fluent("unlock_turn", b, l=s, a=self.axis, n=self.angle),
            "lock_turn": Fluent("lock_turn", b, l=s, a=self.axis, n=self.angle),
            "unlock_pose": Fluent("unlock_pose", b, l=s, q=self.pose),
            "lock_pose": Fluent("lock_pose", b, l=s, q=self.pose),
            "unlock_pose_off": Fluent("unlock_pose_off", b, l=s),
            "unlock_rot_off": Fluent("unlock_rot_off", b, l=s),
        }
        self.cost = [Fluent(n, IntType()) for n in ("step_cost", "first_touch_cost", "double_first_touch_cost")]


def _expanded(task: Task, ab: Abstraction, objective: str, weight: int, costs, every_direction: bool) -> Encoding:
    """Plain STRIPS with action costs: one action per step x free direction x touch variant.

    Atoms are unary predicates over part constants (`present p`), not one nullary predicate per atom:
    with nullary predicates Fast Downward's invariant synthesis takes seconds on the join moves of a
    six-piece burr (each adds several atoms), with unary ones a hundredth of a second.
    """
    from unified_planning.shortcuts import (BoolType, Fluent, InstantaneousAction, Int, MinimizeActionCosts, Not, Object,
                                            Problem, UserType)

    problem = Problem(DOMAIN_NAME)
    part = UserType("part")
    fluents: dict[str, object] = {}
    objs: dict[str, object] = {}

    def atom(f: str, pid: str):
        if f not in fluents:
            fluents[f] = Fluent(f, BoolType(), x=part)
            problem.add_fluent(fluents[f], default_initial_value=False)
        if pid not in objs:
            objs[pid] = Object(pid, part)
            problem.add_object(objs[pid])
        return fluents[f](objs[pid])

    def lit(f: str, pid: str, value: bool):
        return atom(f, pid) if value else Not(atom(f, pid))

    with_touch = objective != "actions"
    enc = Encoding(task, problem, objective, weight, True, groups=ab.groups, every_direction=every_direction)
    action_costs = {}
    for step in ab.steps:
        a = step.action
        group = a.part_ids is not None
        touches = a.touched
        variants = _variants(touches) if with_touch and not group else [("", ())]
        for (suffix, new), (words, alt) in itertools.product(variants, _alternatives(step)):
            act = InstantaneousAction(enc.unique_name(" ".join([a.name + suffix, *_label(a), *words])))
            for lt in (*step.pre, *alt):
                act.add_precondition(lit(*lt))
            for f, pid, value in step.eff:
                act.add_effect(atom(f, pid), value)
            for p, is_new in zip(touches, new):
                act.add_precondition(lit("touched", p, not is_new))
                if is_new:
                    act.add_effect(atom("touched", p), True)
            if group and with_touch:  # the members' first touches are paid by `touch` actions
                for p in touches:
                    act.add_precondition(lit("touched", p, True))
            problem.add_action(act)
            enc.steps[act.name] = a
            action_costs[act] = Int(costs[sum(new)])
    if with_touch:
        for p in dict.fromkeys(p for step in ab.steps if step.action.part_ids for p in step.action.touched):
            act = InstantaneousAction(enc.unique_name(f"touch {p}"))
            act.add_precondition(lit("touched", p, False))
            act.add_effect(atom("touched", p), True)
            problem.add_action(act)
            enc.touches[act.name] = p
            action_costs[act] = Int(costs[1] - costs[0])
    for f, pid, _ in sorted(ab.init):
        problem.set_initial_value(atom(f, pid), True)
    for lt in ab.goal:
        problem.add_goal(lit(*lt))
    problem.add_quality_metric(MinimizeActionCosts(action_costs))
    return enc


def _label(a: Action) -> list[str]:
    """The words that name a grounded action (its parameters; a group move: members and direction)."""
    if a.part_ids is not None:
        return [*a.part_ids, f"along {DIRECTION_NAMES[a.direction]}"]  # type: ignore[index]
    if a.target_part_id is not None:
        return [a.part_id, a.target_part_id]
    if a.name in ("rotate_translate_to_unlock", "translate_rotate_to_lock"):
        return [a.part_id, "unlocked" if a.name.endswith("unlock") else "target"]
    return [a.part_id, *([a.axis, f"{a.angle_deg:g}"] if a.axis is not None else [])]


def _alternatives(step: Step) -> list[tuple[list[str], tuple[Literal, ...]]]:
    """The free directions of a single-part move as (name words, blockers absent), one expanded action
    each (several may hold at once); one empty alternative for actions that need no clearance."""
    paths = step.paths or ((None, ()),)
    return [([f"along {DIRECTION_NAMES[d]}"] if len(paths) > 1 else [], tuple(("present", b, False) for b in blockers))
            for d, blockers in paths]


def _lifted(task: Task, ab: Abstraction, objective: str, weight: int, costs) -> Encoding:
    from unified_planning.shortcuts import MinimizeActionCosts, Object, Problem

    voc = _Vocabulary()
    problem = Problem(DOMAIN_NAME)
    for f in (*voc.fluent.values(), voc.touched, *voc.static.values()):
        problem.add_fluent(f, default_initial_value=False)
    for f, c in zip(voc.cost, costs):
        problem.add_fluent(f, default_initial_value=0)
        problem.set_initial_value(f(), c)
    world = task.world
    objs = {pid: Object(pid, voc.slot) for pid in world.ids}
    objs.update({w.part_id: Object(w.part_id, voc.spare) for w in task.assembly.spares})
    enc = Encoding(task, problem, objective, weight, False, objects=objs)
    used = set(objs)

    def add(key: tuple, name: str, typ, value=None) -> None:
        while name in used:  # a part id may look like any other object's name
            name += "'"
        used.add(name)
        objs[key] = Object(name, typ)
        if value is not None:
            enc.values[name] = value

    for d in DIRECTIONS:
        add(("dir", d), DIRECTION_NAMES[d], voc.direction)
    for ax in ("x", "y", "z"):
        add(("axis", ax), ax, voc.axis, ax)
    angles = {ang for fix in (*ab.turn_fix.values(), *ab.unlock_fix.values()) for _, ang in [fix]}
    for i, lock in enumerate(world.lock):
        if lock is None:
            continue
        unlock, relock = lock_action(world, i, locking=False), lock_action(world, i, locking=True)
        if lock.kind == "rotate":
            angles |= {unlock.angle_deg, relock.angle_deg}
        else:
            pid = world.ids[i]
            add(("pose", pid, "unlocked"), f"{pid} unlocked", voc.pose, unlock.after_pose)
            add(("pose", pid, "target"), f"{pid} target", voc.pose, relock.after_pose)
    for ang in sorted(angles):
        add(("angle", float(ang)), f"deg{ang:g}", voc.angle, float(ang))
    problem.add_objects(objs.values())
    st = voc.static
    facts = [st["spare_in"](objs[w], objs[s]) for s, w in ab.spare_in.items()]
    blocking = blocking_relation(world.assembly)
    for i, p in enumerate(world.parts):
        pid = p.part_id
        facts += [st["supports"](objs[q], objs[pid]) for q in p.supports]
        facts += [st["removal_dir"](objs[pid], objs[("dir", d)]) for d in p.removal_dirs]
        if p.lock is not None:
            facts += [st["holds"](objs[pid], objs[q]) for q in p.lock.holds]
            if p.lock.kind == "rotate":
                unlock, relock = lock_action(world, i, locking=False), lock_action(world, i, locking=True)
                ax = objs[("axis", unlock.axis)]
                facts.append(st["unlock_turn"](objs[pid], ax, objs[("angle", float(unlock.angle_deg))]))  # type: ignore[arg-type]
                facts.append(st["lock_turn"](objs[pid], ax, objs[("angle", float(relock.angle_deg))]))  # type: ignore[arg-type]
            else:
                facts.append(st["unlock_pose"](objs[pid], objs[("pose", pid, "unlocked")]))
                facts.append(st["lock_pose"](objs[pid], objs[("pose", pid, "target")]))
                facts += [st[n](objs[pid]) for n, on in (("unlock_pose_off", ab.unlock_pose_off), ("unlock_rot_off", ab.unlock_rot_off)) if pid in on]
        for name, table in (("turn_fix", ab.turn_fix), ("unlock_fix", ab.unlock_fix)):
            if pid in table:
                ax, ang = table[pid]
                facts.append(st[name](objs[pid], objs[("axis", ax)], objs[("angle", float(ang))]))
    for d in DIRECTIONS:
        facts += [st["blocks"](objs[b], objs[q], objs[("dir", d)]) for b, q in sorted(blocking[d])]
    for fact in facts:
        problem.set_initial_value(fact, True)
    for f, pid, _ in sorted(ab.init):
        problem.set_initial_value(voc.fluent[f](objs[pid]), True)
    for f, pid, value in ab.goal:
        problem.add_goal(voc.fluent[f](objs[pid]) if value else _not(voc.fluent[f](objs[pid])))
    action_costs = {}
    for base, build in _SCHEMAS.items():
        for suffix, pattern in _variants(_SCHEMA_TOUCHES[base]):
            act, touched_params = build(base + suffix, voc)
            for prm, is_new in zip(touched_params, pattern):
                t = voc.touched(prm)
                act.add_precondition(_not(t) if is_new else t)
                if is_new:
                    act.add_effect(t, True)
            problem.add_action(act)
            enc.bases[act.name] = base
            action_costs[act] = voc.cost[sum(pattern)]()
    problem.add_quality_metric(MinimizeActionCosts(action_costs))
    return enc


def _not(x):
    from unified_planning.shortcuts import Not

    return Not(x)


# Lifted schemas. Each builder returns the action and its touched parameters (SEMANTICS §4: replace
# touches the spare and the target part).
_SCHEMA_TOUCHES = {"insert": ("p",), "remove": ("x",), "reset_pose": ("x",), "rotate": ("x",),
                   "rotate_to_unlock": ("l",), "rotate_translate_to_unlock": ("l",), "rotate_to_lock": ("l",),
                   "translate_rotate_to_lock": ("l",), "replace": ("w", "s")}


def _conds(voc: _Vocabulary):
    """Derived predicates of SEMANTICS §2 as formulas (quantified over slots and directions)."""
    from unified_planning.shortcuts import And, Equals, Exists, Forall, Not, Or, Variable

    f, st = voc.fluent, voc.static
    b, l, q, d = (Variable("blocker", voc.slot), Variable("holder", voc.slot), Variable("other", voc.slot),
                  Variable("dir", voc.direction))

    def free(p):
        return Exists(And(st["removal_dir"](p, d), Forall(Or(Not(st["blocks"](b, p, d)), Not(f["present"](b))), b)), d)

    def not_held(p):
        return Forall(Or(Not(st["holds"](l, p)), Not(f["locked"](l))), l)

    def occupies(x, s):
        return And(f["present"](s), Or(And(Equals(x, s), Not(f["wrong"](s))), And(st["spare_in"](x, s), f["wrong"](s))))

    def clear(s):
        return And(Not(f["locked"](s)), not_held(s), free(s))

    def holds_restored(lk):
        return Forall(Or(Not(st["holds"](lk, q)), And(f["present"](q), Not(f["wrong"](q)), Not(f["pose_off"](q)),
                                                       Not(f["rot_off"](q)))), q)

    def supported(p):
        return Forall(Or(Not(st["supports"](q, p)), f["present"](q)), q)

    return free, not_held, occupies, clear, holds_restored, supported


def _reset(act, voc: _Vocabulary, s, fluents: Iterable[str]) -> None:
    for n in fluents:
        act.add_effect(voc.fluent[n](s), False)


def _insert(name: str, voc: _Vocabulary):
    from unified_planning.shortcuts import InstantaneousAction, Not

    free, not_held, _, _, _, supported = _conds(voc)
    act = InstantaneousAction(name, p=voc.slot)
    p = act.parameter("p")
    act.add_precondition(Not(voc.fluent["present"](p)))
    act.add_precondition(supported(p))
    act.add_precondition(not_held(p))
    act.add_precondition(free(p))
    act.add_effect(voc.fluent["present"](p), True)
    _reset(act, voc, p, ("wrong", "pose_off", "rot_off", "unlock_turned", "locked"))
    return act, (p,)


def _clearing(effects: tuple[str, ...], extra=None):
    """remove / reset_pose / rotate: the occupant x of slot s, with the clearance of taking it out."""
    def build(name: str, voc: _Vocabulary):
        from unified_planning.shortcuts import And, InstantaneousAction, Or

        _, _, occupies, clear, _, _ = _conds(voc)
        params = {"x": voc.part, "s": voc.slot} | ({"a": voc.axis, "n": voc.angle} if extra else {})
        act = InstantaneousAction(name, **params)
        x, s = act.parameter("x"), act.parameter("s")
        act.add_precondition(occupies(x, s))
        act.add_precondition(clear(s))
        if extra:
            f, st = voc.fluent, voc.static
            a, n = act.parameter("a"), act.parameter("n")
            act.add_precondition(f["rot_off"](s))
            act.add_precondition(Or(And(_not(f["unlock_turned"](s)), st["turn_fix"](s, a, n)),
                                    And(f["unlock_turned"](s), st["unlock_fix"](s, a, n))))
        if effects == ("present",):
            act.add_effect(voc.fluent["present"](s), False)
            _reset(act, voc, s, ("wrong", "pose_off", "rot_off", "unlock_turned", "locked"))
        else:
            _reset(act, voc, s, effects)
        return act, (x,)
    return build


def _lock(mechanism: str, locking: bool):
    """The four lock actions (SEMANTICS §3): a rotate lock turns by (axis, angle); a coupled lock moves
    to or from its unlocked pose. Both need the right part present and the held parts restored to lock."""
    def build(name: str, voc: _Vocabulary):
        from unified_planning.shortcuts import InstantaneousAction, Not

        _, _, _, _, holds_restored, _ = _conds(voc)
        f, st = voc.fluent, voc.static
        turn = mechanism == "turn"
        act = (InstantaneousAction(name, l=voc.slot, a=voc.axis, n=voc.angle) if turn
               else InstantaneousAction(name, l=voc.slot, q=voc.pose))
        lk = act.parameter("l")
        params = (act.parameter("a"), act.parameter("n")) if turn else (act.parameter("q"),)
        act.add_precondition(f["present"](lk))
        act.add_precondition(Not(f["wrong"](lk)))
        act.add_precondition(st[f"{'lock' if locking else 'unlock'}_{mechanism}"](lk, *params))
        if locking:
            act.add_precondition(Not(f["locked"](lk)))
            if turn:
                act.add_precondition(Not(f["pose_off"](lk)))
                act.add_precondition(Not(f["rot_off"](lk)))
            act.add_precondition(holds_restored(lk))
        else:
            act.add_precondition(f["locked"](lk))
        act.add_effect(f["locked"](lk), locking)
        if turn:
            return act, (lk,)
        if locking:
            _reset(act, voc, lk, ("pose_off", "rot_off", "unlock_turned"))
        else:
            act.add_effect(f["unlock_turned"](lk), True)
            for flu, cond in (("pose_off", "unlock_pose_off"), ("rot_off", "unlock_rot_off")):
                act.add_effect(f[flu](lk), True, condition=st[cond](lk))
                act.add_effect(f[flu](lk), False, condition=Not(st[cond](lk)))
        return act, (lk,)
    return build


def _replace(name: str, voc: _Vocabulary):
    from unified_planning.shortcuts import InstantaneousAction

    _, _, occupies, clear, _, _ = _conds(voc)
    act = InstantaneousAction(name, w=voc.spare, s=voc.slot)
    w, s = act.parameter("w"), act.parameter("s")
    act.add_precondition(occupies(w, s))
    act.add_precondition(clear(s))
    _reset(act, voc, s, ("wrong", "pose_off", "rot_off"))
    return act, (w, s)


_SCHEMAS = {
    "remove": _clearing(("present",)), "insert": _insert, "reset_pose": _clearing(("pose_off",)),
    "rotate": _clearing(("rot_off", "unlock_turned"), extra=True),
    "rotate_to_unlock": _lock("turn", False), "rotate_translate_to_unlock": _lock("pose", False),
    "rotate_to_lock": _lock("turn", True), "translate_rotate_to_lock": _lock("pose", True), "replace": _replace,
}


# ----------------------------------------------------------------------------- planners and validator

@dataclass
class PlannerResult:
    """What Fast Downward returned for a task, mapped back to forgeplan actions."""

    status: object                   # unified_planning.engines.PlanGenerationResultStatus
    plan: tuple[Action, ...] | None
    cost: int | None                 # the plan's total cost under the objective's action costs
    reported_cost: int | None        # the same as Fast Downward reported it (a consistency check)
    seconds: float                   # wall time of the planner call (write PDDL, translate, search)
    build_seconds: float             # task -> UP problem
    planner_seconds: float | None    # Fast Downward's own "Planner time" (translate + search)

    @property
    def optimal(self) -> bool:
        from unified_planning.engines import PlanGenerationResultStatus as S

        return self.status == S.SOLVED_OPTIMALLY


FD_MAX_TIMEOUT = 1e6  # seconds (11.6 days)


def solve_fd(task: Task, objective: str = "moved-parts,actions", time_limit: float | None = None,
             weight: int = DEFAULT_WEIGHT) -> PlannerResult:
    """Optimal plan by Fast Downward's astar(lmcut()) on the expanded problem, in its own working directory.

    The translator writes output.sas into the current directory, so every call runs in a fresh temporary
    one; the time limit goes to `solve(timeout=...)` so that UP terminates the whole process group.
    """
    import contextlib
    import tempfile
    import time

    from unified_planning.engines import PlanGenerationResultStatus as S
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    get_environment().credits_stream = None
    t0 = time.perf_counter()
    enc = build_problem(task, objective, grounded=True, weight=weight)
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="forgeplan-fd-") as tmp, contextlib.chdir(tmp):
        with OneshotPlanner(name="fast-downward-opt") as planner:
            # a subprocess timeout must fit a C time value: a limit beyond FD_MAX_TIMEOUT means none
            res = planner.solve(enc.problem, timeout=time_limit if time_limit is None or time_limit <= FD_MAX_TIMEOUT else None)
    t2 = time.perf_counter()
    plan = enc.decode(res.plan.actions) if res.plan is not None else None
    cost = plan_value(objective, plan, weight) if plan is not None else None
    status = res.status
    if plan is not None and objective == "moved-parts,actions" and len(plan) >= weight:
        status = S.SOLVED_SATISFICING  # the weight argument (domains/README.md) needs c < W
    log = "".join(m.message for m in res.log_messages or ())
    reported = _last_number(r"Plan cost: (\d+)", log)
    return PlannerResult(status, plan, cost, None if reported is None else int(reported) - 1, t2 - t1, t1 - t0,
                         _last_number(r"Planner time: ([\d.]+)s", log))


def _last_number(pattern: str, log: str) -> float | None:
    """A figure from Fast Downward's log (the plan cost there includes UP's artificial goal action, cost 1)."""
    import re

    found = re.findall(pattern, log)
    return float(found[-1]) if found else None


# ----------------------------------------------------------------------------- files: export and import

def pddl_writer(enc: Encoding):
    """A PDDLWriter that has named every item (its renaming is what `get_item_named` reverses)."""
    from unified_planning.io import PDDLWriter

    writer = PDDLWriter(enc.problem)
    writer.get_domain()
    writer.get_problem()
    return writer


def domain_text() -> str:
    """The lifted rework domain (task-independent; committed as domains/rework.pddl)."""
    from ...semantics.faults import make_task
    from ...library import BUILTIN, build

    return pddl_writer(build_problem(make_task(build(next(iter(BUILTIN))), []))).get_domain()


def write_pddl(enc: Encoding, out) -> tuple:
    """Write domain.pddl and problem.pddl into folder `out`, and groups.json for a group-move export.

    groups.json records the candidate groups per move and direction (their counts first); returns
    the paths written.
    """
    import json
    from pathlib import Path

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    writer = pddl_writer(enc)
    paths = (out / "domain.pddl", out / "problem.pddl")
    paths[0].write_text(writer.get_domain(), encoding="utf-8")
    paths[1].write_text(writer.get_problem(), encoding="utf-8")
    if enc.groups is None:
        return paths
    groups = out / "groups.json"
    groups.write_text(json.dumps(enc.groups.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return (*paths, groups)


def read_plan(enc: Encoding, text: str, file: str = "plan") -> tuple[Action, ...]:
    """An external planner's plan for the export of `enc` -> forgeplan actions.

    Reads the common format (one `(action arg ...)` per line, `;` comments, as Fast Downward's sas_plan);
    names go back through the PDDLWriter's renaming, so sanitised part ids come back as they were.
    """
    import re

    from unified_planning.model import Action as UPAction
    from unified_planning.plans import ActionInstance

    writer = pddl_writer(enc)
    instances = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.split(";", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"\(\s*([^()\s]+)((?:\s+[^()\s]+)*)\s*\)", line)
        if m is None:
            raise InputError(f"expected '(action arg ...)', got {line!r}", file=file, field=f"line {lineno}")
        words = [m.group(1).lower(), *m.group(2).lower().split()]
        try:
            items = [writer.get_item_named(w) for w in words]
        except Exception:  # noqa: BLE001 - UP raises its own UPException for unknown names
            raise InputError(f"{line!r} names something that is not in this export "
                             "(check --grounded and --objective)", file=file, field=f"line {lineno}") from None
        act = items[0]
        if not isinstance(act, UPAction) or len(items) - 1 != len(act.parameters):
            raise InputError(f"{words[0]!r} is not an action of this export with {len(items) - 1} arguments",
                             file=file, field=f"line {lineno}")
        instances.append(ActionInstance(act, items[1:]))
    return enc.decode(instances)

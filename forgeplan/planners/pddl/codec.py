"""Plans in and out of a unified-planning problem: `Encoding` decodes, encodes and validates them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ...model.actions import KIND, Action, GroupMove, OnePart, PartMove, PoseMove, Replace, Rotate, Turn
from ...model.assembly import Pose
from ...semantics.task import Task
from .groups import GroupCandidates

# touch-variant suffixes: which touched parameters are touched for the first time
FIRST = "_first"


def touch_variants(touches: tuple[str, ...]) -> list[tuple[str, tuple[bool, ...]]]:
    """Touch variants: (name suffix, which touched parameters are touched for the first time)."""
    if len(touches) == 1:
        return [(FIRST, (True,)), ("", (False,))]
    return [(FIRST, (True, True)), (FIRST + "_wrong", (True, False)), (FIRST + "_target", (False, True)), ("", (False, False))]


@dataclass
class Encoding:
    """A unified-planning Problem for a task and the tables that map its plans back to forgeplan actions."""

    task: Task
    problem: Any                         # unified_planning.model.Problem (untyped: UP is imported lazily)
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
    simulator: Any = field(default=None, repr=False)         # expanded: UP's simulator, made on first use
    exact: Encoding | None = field(default=None, repr=False)    # expanded: the every-direction twin (validate)
    rebuild: Callable[[], Encoding] | None = field(default=None, repr=False)  # expanded: builds that twin

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
        kind = KIND[base]
        if issubclass(kind, PartMove):
            args = args[:1]                   # remove and reset_pose also name the slot
        elif kind is Rotate:
            args = [args[0], *args[2:]]       # rotate names the slot between the part and the axis
        return kind(*args)

    def encode(self, actions: Sequence[Action]):
        """A forgeplan plan as a plan of this problem, or None when an action is not expressible.

        Lifted: touch variants follow from the plan itself (which parts earlier actions named); an
        action whose parameters name no object of the problem is outside the grounded action set.
        Expanded: see `_encode_expanded`.
        """
        from unified_planning.plans import ActionInstance, SequentialPlan

        if self.grounded:
            return self._encode_expanded(actions)
        world, out = self.task.world, []
        touched: set[str] = set()
        for a in actions:
            if not isinstance(a, OnePart):  # the lifted domain has no group moves (build_problem refuses them)
                return None
            slot_of = world.ids[i] if (i := world._slot_of(a.part_id)) is not None else None
            args: list = [a.part_id]
            if a.name in ("remove", "reset_pose", "rotate"):
                args.append(slot_of)
            if isinstance(a, Turn):
                args += [("axis", a.axis), self._angle_key(a.angle_deg)]
            if isinstance(a, PoseMove):
                args.append(self._pose_key(a.after_pose))
            if isinstance(a, Replace):
                args.append(a.target_part_id)
            objs = [self.objects.get(k) for k in args]
            if slot_of is None or any(o is None for o in objs):
                return None
            touches = a.touched
            new = tuple(p not in touched for p in touches)
            suffix = next(s for s, pattern in touch_variants(touches) if pattern == new)
            touched.update(touches)
            out.append(ActionInstance(self.problem.action(a.name + suffix), objs))
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
            copies.setdefault(a, []).append(self.problem.action(name))
        touch = {p: self.problem.action(name) for name, p in self.touches.items()}
        out, state = [], sim.get_initial_state()
        for a in actions:
            for p in a.touched if isinstance(a, GroupMove) else ():
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

        dropped = any(isinstance(a, GroupMove) and a not in self.steps.values() for a in actions)
        if self.grounded and self.groups is not None and not self.every_direction and dropped:
            if self.exact is None:
                self.exact = self.rebuild()  # type: ignore[misc]  # a dataclass field filled lazily by a method
            return self.exact.validate(actions)
        get_environment().credits_stream = None
        plan = self.encode(actions)
        if plan is None:
            return False
        with PlanValidator(name="sequential_plan_validator") as validator:
            return validator.validate(self.problem, plan).status == ValidationResultStatus.VALID

    def _angle_key(self, angle: float) -> tuple | None:
        """The angle object within rot_tol of `angle` (the engine accepts any angle that close)."""
        from ...model.rotations import angle_diff

        near = sorted((angle_diff(k[1], angle), k) for k in self.objects
                      if isinstance(k, tuple) and k[0] == "angle")
        return near[0][1] if near and near[0][0] <= self.task.tolerances.rot_tol else None

    def _pose_key(self, pose: Pose) -> tuple | None:
        return next((k for k in self.objects if isinstance(k, tuple) and k[0] == "pose"
                     and self.task.world.tol.poses_close(pose, self.values[self.objects[k].name])), None)

"""The lifted partial-move domain (domains/partial.pddl, SEMANTICS.md §9) and a task's problem over it.

The same transactions as the grounded rendering (`slides`), written once as schemas over typed objects:
positions (`pos`) are objects, and the geometry enters as static relations of the problem, computed by
`PositionTables`: `ray_hit ?s ?o ?d ?h ?oh` (slot h at oh blocks the ray of s from o along d),
`sweep_hit ?s ?o ?d ?k ?h ?oh` (s running k steps from o meets h at oh), `overlap ?s ?o ?h ?oh`, and
`shift_to ?s ?o ?d ?k ?o2` (o2 = o + k·d, inside s's domain; the unit-step adjacency is `k1`).
Every blocking test is a universal precondition over (h, oh): nothing `at` a position that hits.
The domain is task-independent; `tests/test_pddl_partial.py` fails when domains/partial.pddl and the
code drift apart.
"""

from __future__ import annotations

from ...model.actions import Action, Replace, ResetPose, Rotate
from ...model.assembly import DIRECTIONS
from ...semantics.task import Task
from .slides import ZERO, SlideProblem, member_order, pos_name
from .vocabulary import DIRECTION_NAMES

DOMAIN_NAME = "rework-partial"


class PartialVocabulary:
    """Types and predicates of the lifted partial-move domain."""

    def __init__(self):
        from unified_planning.shortcuts import BoolType, Fluent, IntType, UserType

        self.part = UserType("part")
        self.slot = UserType("slot", self.part)
        self.spare = UserType("spare", self.part)
        self.pos, self.direction, self.distance = UserType("pos"), UserType("direction"), UserType("distance")
        self.axis, self.angle = UserType("axis"), UserType("angle")
        b, s, o, d, k = BoolType(), self.slot, self.pos, self.direction, self.distance
        self.fluent = {
            **{n: Fluent(n, b, s=s) for n in ("present", "wrong", "pose_off", "rot_off", "pending", "shifted")},
            "touched": Fluent("touched", b, x=self.part),
            "at": Fluent("at", b, s=s, o=o), "carried": Fluent("carried", b, s=s, o=o),
            **{n: Fluent(n, b) for n in ("idle", "picking", "moving", "placing", "settling", "some")},
            "sliding": Fluent("sliding", b, d=d, k=k), "leaving": Fluent("leaving", b, d=d),
            "arriving": Fluent("arriving", b, d=d),
        }
        self.static = {
            "spare_in": Fluent("spare_in", b, x=self.part, s=s),
            "supports": Fluent("supports", b, q=s, p=s),
            "turn_fix": Fluent("turn_fix", b, s=s, a=self.axis, n=self.angle),
            "ray_hit": Fluent("ray_hit", b, s=s, o=o, d=d, h=s, oh=o),
            "sweep_hit": Fluent("sweep_hit", b, s=s, o=o, d=d, k=k, h=s, oh=o),
            "overlap": Fluent("overlap", b, s=s, o=o, h=s, oh=o),
            "shift_to": Fluent("shift_to", b, s=s, o=o, d=d, k=k, to=o),
            "origin": Fluent("origin", b, o=o),
            "precedes": Fluent("precedes", b, s=s, t=s),     # s before t in member order (slides.member_order)
        }
        self.cost = [Fluent(n, IntType()) for n in ("step_cost", "touch_cost")]


def _not(x):
    from unified_planning.shortcuts import Not

    return Not(x)


def _clear(v: PartialVocabulary, s, o, d):
    """Nothing `at` a position the ray of s from o along d meets."""
    from unified_planning.shortcuts import Forall, Or, Variable

    h, oh = Variable("h", v.slot), Variable("oh", v.pos)
    return Forall(Or(_not(v.static["ray_hit"](s, o, d, h, oh)), _not(v.fluent["at"](h, oh))), h, oh)


def _none(v: PartialVocabulary, name: str):
    from unified_planning.shortcuts import Forall, Variable

    q = Variable("q", v.slot)
    return Forall(_not(v.fluent[name](q)), q)


def _schemas(v: PartialVocabulary) -> list[tuple[object, int]]:
    """(action, cost index: 0 step, 1 touch, None free) for every schema, in domain order."""
    from unified_planning.shortcuts import And, Equals, Exists, Forall, InstantaneousAction, Or, Variable

    f, st = v.fluent, v.static
    out = []

    def act(name, cost, **params):
        a = InstantaneousAction(name, **params)
        out.append((a, cost))
        return a

    def occupies(x, s):
        return And(f["present"](s), Or(And(Equals(x, s), _not(f["wrong"](s))), And(st["spare_in"](x, s), f["wrong"](s))))

    a = act("touch", 1, x=v.part)
    a.add_precondition(_not(f["touched"](a.parameter("x"))))
    a.add_effect(f["touched"](a.parameter("x")), True)
    for name, fix in (("reset_pose", "pose_off"), ("rotate", "rot_off"), ("replace", None), ("replace_displaced", None)):
        params = {"x": v.spare if fix is None else v.part, "s": v.slot, "o": v.pos}
        params |= {"a": v.axis, "n": v.angle} if name == "rotate" else {"z": v.pos} if name == "replace_displaced" else {}
        a = act(name, 0, **params)
        x, s, o = a.parameter("x"), a.parameter("s"), a.parameter("o")
        dv = Variable("dir", v.direction)
        for c in (f["idle"](), occupies(x, s), f["at"](s, o), Exists(_clear(v, s, o, dv), dv), f["touched"](x)):
            a.add_precondition(c)
        if name == "rotate":
            a.add_precondition(f["rot_off"](s))
            a.add_precondition(st["turn_fix"](s, a.parameter("a"), a.parameter("n")))
        if fix is not None:
            a.add_effect(f[fix](s), False)
            continue
        # the target part goes in at its target position: offset `origin` (a displaced spare's slot moves there)
        a.add_precondition(f["touched"](s))
        a.add_precondition(st["origin"](o) if name == "replace" else _not(st["origin"](o)))
        for n in ("wrong", "pose_off", "rot_off"):
            a.add_effect(f[n](s), False)
        if name == "replace_displaced":
            a.add_precondition(st["origin"](a.parameter("z")))
            a.add_effect(f["at"](s, o), False)
            a.add_effect(f["at"](s, a.parameter("z")), True)
    _transaction_schemas(v, act, occupies)
    return out


def _transaction_schemas(v: PartialVocabulary, act, occupies) -> None:
    from unified_planning.shortcuts import Forall, Or, Variable

    f, st = v.fluent, v.static
    a = act("begin_slide", 0, d=v.direction, k=v.distance)
    a.add_precondition(f["idle"]())
    for e, val in ((f["idle"](), False), (f["picking"](), True), (f["sliding"](a.parameter("d"), a.parameter("k")), True)):
        a.add_effect(e, val)
    for kind, phase, mode in (("out", "picking", "leaving"), ("in", "placing", "arriving")):
        a = act(f"begin_{kind}", 0, d=v.direction)
        a.add_precondition(f["idle"]())
        for e, val in ((f["idle"](), False), (f[phase](), True), (f[mode](a.parameter("d")), True)):
            a.add_effect(e, val)
    a = act("pick", None, x=v.part, s=v.slot, o=v.pos)
    x, s, o = a.parameter("x"), a.parameter("s"), a.parameter("o")
    for c in (f["picking"](), occupies(x, s), f["at"](s, o), f["touched"](x), _ordered(v, s, "later", "pending")):
        a.add_precondition(c)
    for e, val in ((f["at"](s, o), False), (f["carried"](s, o), True), (f["pending"](s), True), (f["some"](), True)):
        a.add_effect(e, val)
    a = act("go", None)
    a.add_precondition(f["picking"]())
    a.add_precondition(f["some"]())
    for e, val in ((f["picking"](), False), (f["some"](), False), (f["moving"](), True)):
        a.add_effect(e, val)
    a = act("shift", None, s=v.slot, o=v.pos, d=v.direction, k=v.distance, to=v.pos)
    s, o, d, k, to = (a.parameter(n) for n in ("s", "o", "d", "k", "to"))
    h, oh = Variable("h", v.slot), Variable("oh", v.pos)
    for c in (f["moving"](), f["sliding"](d, k), f["pending"](s), f["carried"](s, o), _ordered(v, s, "earlier", "pending"),
              st["shift_to"](s, o, d, k, to),
              Forall(Or(_not(st["sweep_hit"](s, o, d, k, h, oh)), _not(f["at"](h, oh))), h, oh)):
        a.add_precondition(c)
    for e, val in ((f["pending"](s), False), (f["shifted"](s), True), (f["carried"](s, o), False), (f["carried"](s, to), True)):
        a.add_effect(e, val)
    a = act("out", None, s=v.slot, o=v.pos, d=v.direction)
    s, o, d = a.parameter("s"), a.parameter("o"), a.parameter("d")
    for c in (f["moving"](), f["leaving"](d), f["pending"](s), f["carried"](s, o), _ordered(v, s, "earlier", "pending"),
              _clear(v, s, o, d)):
        a.add_precondition(c)
    for e, val in ((f["pending"](s), False), (f["carried"](s, o), False), (f["present"](s), False), (f["wrong"](s), False),
                   (f["pose_off"](s), False), (f["rot_off"](s), False)):
        a.add_effect(e, val)
    _place_schema(v, act)
    _finish_schemas(v, act)


def _place_schema(v: PartialVocabulary, act) -> None:
    from unified_planning.shortcuts import Forall, Or, Variable

    f, st = v.fluent, v.static
    a = act("place", None, p=v.slot, o=v.pos, d=v.direction)
    p, o, d = a.parameter("p"), a.parameter("o"), a.parameter("d")
    q, h, oh = Variable("q", v.slot), Variable("h", v.slot), Variable("oh", v.pos)
    for c in (f["placing"](), f["arriving"](d), _not(f["present"](p)), f["touched"](p), _ordered(v, p, "later", "shifted"),
              Forall(Or(_not(st["supports"](q, p)), f["present"](q)), q), _clear(v, p, o, d),
              Forall(Or(_not(st["overlap"](p, o, h, oh)), _not(f["carried"](h, oh))), h, oh)):
        a.add_precondition(c)
    for e, val in ((f["present"](p), True), (f["carried"](p, o), True), (f["shifted"](p), True), (f["some"](), True)):
        a.add_effect(e, val)


def _finish_schemas(v: PartialVocabulary, act) -> None:
    f = v.fluent
    a = act("finish_slide", None, d=v.direction, k=v.distance)
    mode = f["sliding"](a.parameter("d"), a.parameter("k"))
    for c in (f["moving"](), mode, _none(v, "pending")):
        a.add_precondition(c)
    for e, val in ((f["moving"](), False), (mode, False), (f["settling"](), True)):
        a.add_effect(e, val)
    a = act("finish_out", None, d=v.direction)
    mode = f["leaving"](a.parameter("d"))
    for c in (f["moving"](), mode, _none(v, "pending")):
        a.add_precondition(c)
    for e, val in ((f["moving"](), False), (mode, False), (f["idle"](), True)):
        a.add_effect(e, val)
    a = act("finish_in", None, d=v.direction)
    mode = f["arriving"](a.parameter("d"))
    for c in (f["placing"](), mode, f["some"]()):
        a.add_precondition(c)
    for e, val in ((f["placing"](), False), (mode, False), (f["some"](), False), (f["settling"](), True)):
        a.add_effect(e, val)
    a = act("settle", None, s=v.slot, o=v.pos)
    s, o = a.parameter("s"), a.parameter("o")
    for c in (f["settling"](), f["shifted"](s), f["carried"](s, o), _ordered(v, s, "earlier", "shifted")):
        a.add_precondition(c)
    for e, val in ((f["shifted"](s), False), (f["carried"](s, o), False), (f["at"](s, o), True)):
        a.add_effect(e, val)
    a = act("end_settle", None)
    a.add_precondition(f["settling"]())
    a.add_precondition(_none(v, "shifted"))
    a.add_effect(f["settling"](), False)
    a.add_effect(f["idle"](), True)


def _ordered(v: PartialVocabulary, s, which: str, flag: str):
    """No slot `which` (earlier/later than s in member order) has `flag`."""
    from unified_planning.shortcuts import Forall, Or, Variable

    t = Variable("t", v.slot)
    rel = v.static["precedes"](t, s) if which == "earlier" else v.static["precedes"](s, t)
    return Forall(Or(_not(rel), _not(v.fluent[flag](t))), t)


class LiftedPartial:
    """A task over the lifted partial-move domain: the UP problem and the map from the grounded
    rendering's steps (`SlideProblem`) to instances of its schemas."""

    def __init__(self, sp: SlideProblem):
        from unified_planning.shortcuts import Int, MinimizeActionCosts, Problem

        self.sp, self.v = sp, PartialVocabulary()
        v, task = self.v, sp.task
        self.problem = problem = Problem(DOMAIN_NAME)
        for fl in (*v.fluent.values(), *v.static.values()):
            problem.add_fluent(fl, default_initial_value=False)
        costs = [sp.step_cost, sp.touch_cost]
        for fl, c in zip(v.cost, costs):
            problem.add_fluent(fl, default_initial_value=0)
            problem.set_initial_value(fl(), c)
        self.objects = self._objects(task)
        problem.add_objects(self.objects.values())
        for fact in self._static_facts(task):
            problem.set_initial_value(fact, True)
        for atom in sorted(sp.init):
            problem.set_initial_value(self._atom(atom), True)
        for atom, val in sp.goal:
            problem.add_goal(self._atom(atom) if val else _not(self._atom(atom)))
        action_costs = {}
        for a, cost in _schemas(v):
            problem.add_action(a)
            action_costs[a] = v.cost[cost]() if cost is not None else Int(0)
        problem.add_quality_metric(MinimizeActionCosts(action_costs))

    def _objects(self, task: Task) -> dict:
        from unified_planning.shortcuts import Object

        v, sp, world = self.v, self.sp, task.world
        objs: dict = {pid: Object(name, v.slot) for pid, name in sp.names.items() if pid in world.index}
        objs.update({pid: Object(name, v.spare) for pid, name in sp.names.items() if pid not in world.index})
        positions = sorted({o for ps in sp.tables.positions.values() for o in ps})
        objs.update({("pos", o): Object(pos_name(o), v.pos) for o in positions})
        objs.update({("dir", d): Object(DIRECTION_NAMES[d], v.direction) for d in DIRECTIONS})
        objs.update({("k", k): Object(f"k{k}", v.distance) for k in sp.tables.distances})
        objs.update({("axis", ax): Object(ax, v.axis) for ax in "xyz"})
        for ax, ang in sp.turn_fix.values():
            objs.setdefault(("angle", float(ang)), Object(f"deg{ang:g}".replace("-", "m").replace(".", "p"), v.angle))
        return objs

    def _static_facts(self, task: Task) -> list:
        st, objs, sp, world, tables = self.v.static, self.objects, self.sp, task.world, self.sp.tables
        facts = [st["origin"](objs[("pos", ZERO)])]
        order = [world.ids[i] for i in member_order(world)]
        facts += [st["precedes"](objs[a], objs[b]) for n, a in enumerate(order) for b in order[n + 1:]]
        facts += [st["spare_in"](objs[w], objs[s]) for s, w in sp.spare_in.items()]
        facts += [st["supports"](objs[q], objs[p.part_id]) for p in world.parts for q in p.supports]
        facts += [st["turn_fix"](objs[s], objs[("axis", ax)], objs[("angle", float(ang))]) for s, (ax, ang) in sp.turn_fix.items()]
        for i, pid in enumerate(world.ids):
            s = objs[pid]
            for o in tables.positions[i]:
                so = objs[("pos", o)]
                for d in DIRECTIONS:
                    sd = objs[("dir", d)]
                    facts += [st["ray_hit"](s, so, sd, objs[world.ids[j]], objs[("pos", oj)]) for j, oj in tables.ray(i, o, d)]
                    for k in tables.distances:
                        to = tables.shifted(i, o, d, k)
                        if to is None:
                            continue
                        sk = objs[("k", k)]
                        facts.append(st["shift_to"](s, so, sd, sk, objs[("pos", to)]))
                        facts += [st["sweep_hit"](s, so, sd, sk, objs[world.ids[j]], objs[("pos", oj)])
                                  for j, oj in tables.sweep(i, o, d, k)]
                facts += [st["overlap"](s, so, objs[world.ids[j]], objs[("pos", oj)])
                          for j in range(len(world.ids)) if j != i for oj in tables.overlap(i, o, j)]
        return facts

    def _atom(self, atom: str):
        """A grounded atom's text `(pred a b)` as the lifted fluent over the same objects."""
        pred, *args = atom[1:-1].split()
        by_name = {o.name: o for o in self.objects.values()}
        return self.v.fluent[pred](*(by_name[a] for a in args))

    def instances(self, names) -> list:
        """The grounded steps `names` as instances of the lifted schemas."""
        from unified_planning.plans import ActionInstance

        return [ActionInstance(self.problem.action(schema), [self.objects[k] for k in keys])
                for schema, keys in map(self._call, names)]

    def _call(self, name: str) -> tuple[str, list]:
        step = self.sp.by_name[name]
        role, o, world = step.role, step.at, self.sp.task.world
        kind = role[0]
        if kind == "touch":
            return "touch", [role[1]]
        if kind in ("begin", "finish"):
            what, d, k = role[1], role[2], role[3]
            return f"{kind}_{what}", [("dir", d)] + ([("k", k)] if what == "slide" else [])
        if kind == "settled":
            return "end_settle", []
        if kind == "go":
            return "go", []
        if kind == "pick":
            return "pick", [role[1], world.ids[world.slot_index(role[1])], ("pos", o)]
        if kind == "shift":
            to = self.sp.tables.shifted(world.index[role[1]], o, role[2], role[3])
            return "shift", [role[1], ("pos", o), ("dir", role[2]), ("k", role[3]), ("pos", to)]
        if kind == "out":
            return "out", [role[1], ("pos", o), ("dir", role[2])]
        if kind == "place":
            return "place", [role[1], ("pos", role[2]), ("dir", role[3])]
        if kind == "settle":
            return "settle", [role[1], ("pos", o)]
        return self._single(role[1], o)

    def _single(self, a: Action, o) -> tuple[str, list]:
        slot = self.sp.task.world.ids[self.sp.task.world.slot_index(a.part_id)]  # type: ignore[attr-defined]  # every action of a slide abstraction names one part
        if isinstance(a, Rotate):
            return "rotate", [a.part_id, slot, ("pos", o), ("axis", a.axis), ("angle", float(a.angle_deg))]
        if isinstance(a, Replace):
            extra = [] if o == ZERO else [("pos", ZERO)]
            return ("replace" if o == ZERO else "replace_displaced"), [a.part_id, slot, ("pos", o), *extra]
        assert isinstance(a, ResetPose)
        return "reset_pose", [a.part_id, slot, ("pos", o)]

    def step_names(self) -> dict[tuple[str, tuple[str, ...]], str]:
        """(schema, argument names as the writer prints them, lower case) -> the grounded step it is."""
        from .files import pddl_writer

        writer = pddl_writer(self)
        out = {}
        for step in self.sp.steps:
            schema, keys = self._call(step.name)
            out[(writer.get_pddl_name(self.problem.action(schema)).lower(),
                 tuple(writer.get_pddl_name(self.objects[k]).lower() for k in keys))] = step.name
        return out

    def validate(self, actions) -> bool:
        """unified-planning's SequentialPlanValidator on the lifted problem: each action through the
        grounded rendering's applicable steps, mapped to schema instances and re-checked from scratch."""
        from unified_planning.engines import ValidationResultStatus
        from unified_planning.plans import SequentialPlan
        from unified_planning.shortcuts import PlanValidator, get_environment

        from .slides import encode

        get_environment().credits_stream = None
        names = encode(self.sp, actions)
        if names is None:
            return False
        with PlanValidator(name="sequential_plan_validator") as validator:
            return validator.validate(self.problem, SequentialPlan(self.instances(names))).status == ValidationResultStatus.VALID


def partial_domain_text() -> str:
    """The lifted partial-move domain (task-independent; committed as domains/partial.pddl)."""
    from .files import pddl_writer
    from ...semantics.faults import make_task
    from ...library.voxels import box, part
    from ...model.assembly import Assembly
    from .positions import PositionTables
    from .slides import build_slide_problem

    asm = Assembly("cube-in-cup", "domain", (part("Cup", "cup", box(0, 0, 0, 3, 3, 2) - box(1, 1, 1, 2, 2, 2)),
                                             part("Cube", "cube", box(1, 1, 1, 2, 2, 2))))
    task = make_task(asm, [])
    sp = build_slide_problem(task, PositionTables(task.world, {0: (ZERO,), 1: (ZERO,)}, (1,)))
    return pddl_writer(LiftedPartial(sp)).get_domain()


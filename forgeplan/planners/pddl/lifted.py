"""The lifted rework domain (domains/rework.pddl) and a task's problem over it.

The domain is task-independent: quantified preconditions, conditional effects for the coupled unlock;
the task contributes objects and static facts.
"""

from __future__ import annotations

from typing import Iterable

from ...geometry.relations import blocking_relation
from ...model.assembly import DIRECTIONS
from ...model.actions import lock_move, lock_turn
from ...semantics.task import Task
from .abstraction import Abstraction
from .codec import Encoding, touch_variants
from .vocabulary import DIRECTION_NAMES, DOMAIN_NAME, Vocabulary


def lifted_problem(task: Task, ab: Abstraction, objective: str, weight: int, costs) -> Encoding:
    """The task over the lifted rework domain: objects, static facts, initial state, goal, action schemas."""
    from unified_planning.shortcuts import MinimizeActionCosts, Problem

    voc = Vocabulary()
    problem = Problem(DOMAIN_NAME)
    for f in (*voc.fluent.values(), voc.touched, *voc.static.values()):
        problem.add_fluent(f, default_initial_value=False)
    for f, c in zip(voc.cost, costs):
        problem.add_fluent(f, default_initial_value=0)
        problem.set_initial_value(f(), c)
    enc = Encoding(task, problem, objective, weight, False)
    objs = _objects(enc, ab, voc)
    problem.add_objects(objs.values())
    for fact in _static_facts(task.world, ab, voc, objs):
        problem.set_initial_value(fact, True)
    for f, pid, _ in sorted(ab.init):
        problem.set_initial_value(voc.fluent[f](objs[pid]), True)
    for f, pid, value in ab.goal:
        problem.add_goal(voc.fluent[f](objs[pid]) if value else _not(voc.fluent[f](objs[pid])))
    action_costs = {}
    for base, build in _SCHEMAS.items():
        for suffix, pattern in touch_variants(_SCHEMA_TOUCHES[base]):
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


def _objects(enc: Encoding, ab: Abstraction, voc: Vocabulary) -> dict:
    """The problem's objects (slots, spares, directions, axes, angles, lock poses), named uniquely."""
    from unified_planning.shortcuts import Object

    world = enc.task.world
    objs = enc.objects
    objs.update({pid: Object(pid, voc.slot) for pid in world.ids})
    objs.update({w.part_id: Object(w.part_id, voc.spare) for w in world.assembly.spares})
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
        part = world.parts[i]
        if lock.kind == "rotate":
            angles |= {lock_turn(part, locking=False).angle_deg, lock_turn(part, locking=True).angle_deg}
        else:
            pid = world.ids[i]
            add(("pose", pid, "unlocked"), f"{pid} unlocked", voc.pose, lock_move(part, locking=False).after_pose)
            add(("pose", pid, "target"), f"{pid} target", voc.pose, lock_move(part, locking=True).after_pose)
    for ang in sorted(angles):
        add(("angle", float(ang)), f"deg{ang:g}", voc.angle, float(ang))
    return objs


def _static_facts(world, ab: Abstraction, voc: Vocabulary, objs: dict) -> list:
    """Spares in slots, supports, removal directions, locks and their parameters, repairing turns, blocking."""
    st = voc.static
    facts = [st["spare_in"](objs[w], objs[s]) for s, w in ab.spare_in.items()]
    for i, p in enumerate(world.parts):
        pid = p.part_id
        facts += [st["supports"](objs[q], objs[pid]) for q in p.supports]
        facts += [st["removal_dir"](objs[pid], objs[("dir", d)]) for d in p.removal_dirs]
        if p.lock is not None:
            facts += _lock_facts(world, i, ab, st, objs)
        for name, table in (("turn_fix", ab.turn_fix), ("unlock_fix", ab.unlock_fix)):
            if pid in table:
                ax, ang = table[pid]
                facts.append(st[name](objs[pid], objs[("axis", ax)], objs[("angle", float(ang))]))
    blocking = blocking_relation(world.assembly)
    for d in DIRECTIONS:
        facts += [st["blocks"](objs[b], objs[q], objs[("dir", d)]) for b, q in sorted(blocking[d])]
    return facts


def _lock_facts(world, i: int, ab: Abstraction, st: dict, objs: dict) -> list:
    p = world.parts[i]
    pid = p.part_id
    facts = [st["holds"](objs[pid], objs[q]) for q in p.lock.holds]
    if p.lock.kind == "rotate":
        unlock, relock = lock_turn(p, locking=False), lock_turn(p, locking=True)
        ax = objs[("axis", unlock.axis)]
        facts.append(st["unlock_turn"](objs[pid], ax, objs[("angle", float(unlock.angle_deg))]))
        facts.append(st["lock_turn"](objs[pid], ax, objs[("angle", float(relock.angle_deg))]))
        return facts
    facts.append(st["unlock_pose"](objs[pid], objs[("pose", pid, "unlocked")]))
    facts.append(st["lock_pose"](objs[pid], objs[("pose", pid, "target")]))
    facts += [st[n](objs[pid]) for n, on in (("unlock_pose_off", ab.unlock_pose_off), ("unlock_rot_off", ab.unlock_rot_off))
              if pid in on]
    return facts


def _not(x):
    from unified_planning.shortcuts import Not

    return Not(x)


# Lifted schemas. Each builder returns the action and its touched parameters (SEMANTICS §4: replace
# touches the spare and the target part).
_SCHEMA_TOUCHES = {"insert": ("p",), "remove": ("x",), "reset_pose": ("x",), "rotate": ("x",),
                   "rotate_to_unlock": ("l",), "rotate_translate_to_unlock": ("l",), "rotate_to_lock": ("l",),
                   "translate_rotate_to_lock": ("l",), "replace": ("w", "s")}


def _conds(voc: Vocabulary):
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


def _reset(act, voc: Vocabulary, s, fluents: Iterable[str]) -> None:
    for n in fluents:
        act.add_effect(voc.fluent[n](s), False)


def _insert(name: str, voc: Vocabulary):
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
    def build(name: str, voc: Vocabulary):
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
    def build(name: str, voc: Vocabulary):
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


def _replace(name: str, voc: Vocabulary):
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

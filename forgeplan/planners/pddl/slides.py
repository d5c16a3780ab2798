"""Partial moves (SEMANTICS.md §9) as grounded STRIPS with action costs: positions as objects.

The problem every partial-move rendering for Fast Downward shares (`slide_groups` adds the group moves):
a present slot `s` holds one atom `(at s o)`, its offset `o` from the grounded position domain
(`PositionTables`, from `semantics.grounded.positions`). Single-part actions that need clearance
(reset_pose, rotate, replace) are grounded per position and free direction, with the ray's blockers as
negative `at` literals. Costs: a paid step costs one, a `touch x` action the first touch of each part
(every step requires the parts it names touched; with the objective `actions` a touch costs 0), the
other steps cost 0: a plan costs W·J_move + c as in domains/README.md. A join is a transaction of
zero-cost steps after one paid `begin` (`decode` makes it one action again). `pddl_text` writes the
problem as PDDL, `run_steps` and `validate` replay step names and forgeplan plans in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ...io.quoting import pddl_names
from ...model.actions import Action, Insert, Join, Remove, Replace, Separate, Slide
from ...model.assembly import DIRECTIONS
from ...model.errors import InputError
from ...model.state import NO_OFFSET
from ...semantics.grounded import touch_costs
from ...semantics.task import Task
from .abstraction import Abstraction, slot_abstraction
from .positions import PositionTables

MAX_STEPS = 200_000   # move steps (pick, settle, shift, out, place) beyond which the problem is not built
RESET = ("wrong", "pose_off", "rot_off", "unlock_turned", "locked")
Atom = str
Lit = tuple[Atom, bool]


@dataclass
class Step:
    """One grounded STRIPS action: its literals, its cost and what it stands for in a forgeplan plan."""

    name: str
    pre: tuple[Lit, ...]
    eff: tuple[Lit, ...]
    cost: int
    role: tuple   # ("action", Action) | ("touch", x) | ("begin"/"finish", kind, d, k) | ("pick", x)
                  # | ("shift"/"out", slot, d, k) | ("place", p, o, d) | ("settle", slot) | ("settled",)
    at: tuple | None = None           # the position the step starts from (pick, shift, out, settle, single-part)
    when: tuple = ()                  # conditional effects: (condition literals, effect literals)


@dataclass
class SlideProblem:
    """The grounded §9 problem of a task: objects, initial atoms, goal literals and steps."""

    task: Task
    tables: PositionTables
    objective: str
    weight: int
    names: dict[str, str] = field(default_factory=dict)          # part id -> PDDL object name
    init: set[Atom] = field(default_factory=set)
    goal: list[Lit] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    by_name: dict[str, Step] = field(default_factory=dict)
    step_cost: int = 1                                            # what `begin` and a single-part step cost
    touch_cost: int = 0                                           # what a first touch adds (W, 1 or 0)
    spare_in: dict[str, str] = field(default_factory=dict)        # slot -> its actual spare occupant
    turn_fix: dict[str, tuple[str, float]] = field(default_factory=dict)  # slot -> the turn repairing it
    derived: dict[Atom, list[list[Lit]]] = field(default_factory=dict)   # derived atom -> its rules' bodies
    derived_cache: dict = field(default_factory=dict, repr=False)        # the last state's derived atoms

    def add(self, name: str, pre, eff, cost: int, role: tuple, at: tuple | None = None, when: tuple = ()) -> None:
        name = name.lower()
        while name in self.by_name:
            name += "_"
        step = Step(name, tuple(dict.fromkeys(pre)), tuple(dict.fromkeys(eff)), cost, role, at, when)
        self.steps.append(step)
        self.by_name[name] = step


def pos_name(o) -> str:
    return "o_" + "_".join(f"m{-c}" if c < 0 else str(c) for c in o)


def build_slide_problem(task: Task, tables: PositionTables, objective: str, weight: int, moves) -> SlideProblem:
    """The grounded problem of a partial-move task over the position domains of `tables`; `moves` renders
    the group moves, removals and insertions (`slide_groups`)."""
    world = task.world
    if any(lk is not None for lk in world.lock):
        raise InputError("the partial-move PDDL rendering has no lock mechanisms (SEMANTICS §9 puzzles have none)",
                         file=f"assembly {task.assembly.assembly_id}")
    diffs = world.differences(task.target, world.target_state())
    if diffs:
        raise InputError("the target state must be the assembly's target configuration: " + "; ".join(diffs[:3]),
                         file="target_state.json", field="slots")
    if tables.size() > MAX_STEPS:
        raise InputError(f"the grounded partial-move problem would have about {tables.size()} move steps (more than "
                         f"{MAX_STEPS}): too large to write for Fast Downward", file=f"assembly {task.assembly.assembly_id}")
    for i, s in enumerate(task.actual.slots):
        if s.present and s.offset not in tables.positions[i]:
            raise InputError(f"offset {list(s.offset)} of {world.ids[i]} is outside its position domain",
                             file="actual_state.json", field="slots")
    ab = slot_abstraction(task)
    sp = SlideProblem(task, tables, objective, weight,
                      pddl_names([*world.ids, *(w.part_id for w in task.assembly.spares)]))
    costs = touch_costs(objective, weight)
    sp.step_cost, sp.touch_cost, sp.spare_in, sp.turn_fix = costs[0], costs[1] - costs[0], ab.spare_in, ab.turn_fix
    _initial(sp, ab)
    _single_steps(sp, ab)
    moves(sp, ab)
    return sp


def _at(sp: SlideProblem, pid: str, o) -> Atom:
    return f"(at {sp.names[pid]} {pos_name(o)})"


def _flu(sp: SlideProblem, f: str, pid: str) -> Atom:
    return f"({f} {sp.names[pid]})"


def _initial(sp: SlideProblem, ab: Abstraction) -> None:
    world = sp.task.world
    sp.init.add("(idle)")
    sp.init.update(_flu(sp, f, pid) for f, pid, _ in ab.init)
    for i, s in enumerate(sp.task.actual.slots):
        if s.present:
            sp.init.add(_at(sp, world.ids[i], s.offset))
    sp.goal = [(_flu(sp, f, pid), v) for f, pid, v in ab.goal]
    sp.goal += [(_at(sp, pid, NO_OFFSET), True) for pid in world.ids] + [("(idle)", True)]


def _lits(sp: SlideProblem, lits) -> list[Lit]:
    return [(_flu(sp, f, pid), v) for f, pid, v in lits]


def _clear_from(sp: SlideProblem, i: int, o, d: str) -> list[Lit]:
    """Nothing `at` a position the ray of slot i from `o` along `d` meets."""
    ids = sp.task.world.ids
    return [(_at(sp, ids[j], oj), False) for j, oj in sp.tables.ray(i, o, d)]


def _single_steps(sp: SlideProblem, ab: Abstraction) -> None:
    """reset_pose, rotate, replace from every position of the slot: one step per free direction
    (identical literal sets once). They require their parts touched (the `touch` actions pay the first
    touch). remove and insert are rendered with the group moves (`slide_groups`); a reset_pose of a slot
    that is not off from the start never changes a fluent (without locks nothing sets `pose_off`
    again), so it is not rendered."""
    world = sp.task.world
    for step in ab.steps:
        a = step.action
        i = world.slot_index(a.part_id)  # type: ignore[attr-defined]  # every action of a slide abstraction names one part
        pid = world.ids[i]
        if isinstance(a, (Remove, Insert)) or (a.name == "reset_pose" and ("pose_off", pid, True) not in ab.init):
            continue
        tpre = _touched(sp, a.touched)
        for o in sp.tables.positions[i]:
            extra_eff = []
            if isinstance(a, Replace) and o != NO_OFFSET:   # the target part goes in at its target position
                extra_eff = [(_at(sp, pid, o), False), (_at(sp, pid, NO_OFFSET), True)]
            rays = dict.fromkeys(tuple(_clear_from(sp, i, o, d)) for d in world.parts[i].removal_dirs)
            for ray in rays:
                pre = [("(idle)", True), *_lits(sp, step.pre), (_at(sp, pid, o), True), *ray, *tpre]
                sp.add(f"{a.name}_{sp.names[a.part_id]}_{pos_name(o)}", pre,  # type: ignore[attr-defined]  # every action of a slide abstraction names one part
                       [*_lits(sp, step.eff), *extra_eff], sp.step_cost, ("action", a), o)


def _touched(sp: SlideProblem, parts) -> list[Lit]:
    return [(_flu(sp, "touched", p), True) for p in parts]


def member_order(world) -> list[int]:
    """The order members of one move are handled in: catalog order with every support before the parts
    it supports (so a joining support goes in first). Handling members in one order keeps Fast Downward
    from searching every permutation of a group's zero-cost steps."""
    order: list[int] = []

    def visit(i: int) -> None:
        if i not in order:
            for q in world.parts[i].supports:
                visit(world.index[q])
            order.append(i)

    for i in range(len(world.ids)):
        visit(i)
    return order


def _conj(lits) -> str:
    return " ".join(a if v else f"(not {a})" for a, v in lits)


def pddl_text(sp: SlideProblem) -> tuple[str, str]:
    """(domain, problem) as STRIPS with action costs: parameterless actions over constant atoms (with
    derived atoms and conditional effects when the rendering has them, `slide_groups`)."""
    atoms = sorted({a for st in sp.steps for a, _ in (*st.pre, *st.eff, *(x for c, e in st.when for x in (*c, *e)))}
                   | sp.init | {a for a, _ in sp.goal} | {a for body in sp.derived.values() for b in body for a, _ in b})
    preds = sorted({(m.group(1), len(m.group(0).split()) - 1) for a in atoms for m in [re.match(r"\((\S+)[^)]*\)", a)]})
    objects = sorted({w for a in atoms for w in a[1:-1].split()[1:]})
    extra = " :conditional-effects :derived-predicates" if sp.derived or any(st.when for st in sp.steps) else ""
    lines = ["(define (domain rework-partial)", f" (:requirements :strips :negative-preconditions :action-costs{extra})",
             " (:constants " + " ".join(objects) + ")",
             " (:predicates " + " ".join(f"({p}{''.join(f' ?a{k}' for k in range(n))})" for p, n in preds) + ")",
             " (:functions (total-cost))"]
    for atom, bodies in sorted(sp.derived.items()):
        lines.append(f" (:derived {atom} (or " + " ".join(f"(and {_conj(b)})" for b in bodies) + "))")
    for st in sp.steps:
        eff = " ".join([_conj(st.eff), *(f"(when (and {_conj(c)}) (and {_conj(e)}))" for c, e in st.when)]).strip()
        cost = f" (increase (total-cost) {st.cost})" if st.cost else ""
        lines.append(f" (:action {st.name}\n  :parameters ()\n  :precondition (and {_conj(st.pre)})\n"
                     f"  :effect (and {eff}{cost}))")
    domain = "\n".join(lines) + "\n)\n"
    problem = ("(define (problem rework-partial-task) (:domain rework-partial)\n (:init " + " ".join(sorted(sp.init))
               + " (= (total-cost) 0))\n (:goal (and " + _conj(sp.goal) + "))\n (:metric minimize (total-cost))\n)\n")
    return domain, problem


def decode(sp: SlideProblem, names: Sequence[str]) -> tuple[Action, ...]:
    """Step names of a plan -> forgeplan actions: each transaction becomes one action."""
    world = sp.task.world
    out: list[Action] = []
    current: list = []
    begun = None
    for name in names:
        role = sp.by_name[name.lower()].role
        if role[0] == "action":
            out.append(role[1])
        elif role[0] == "begin":
            begun, current = role, []
        elif role[0] in ("pick", "place"):
            current.append(role[1:3])
        elif role[0] == "finish" and begun is not None and current:
            out.append(_transaction_action(world, begun, current))
            begun, current = None, []
    return tuple(out)


def _transaction_action(world, begun, members) -> Action:
    _, kind, d, k = begun
    members = sorted(members, key=lambda m: world.slot_index(m[0]))
    ids = tuple(m[0] for m in members)
    if kind == "slide":
        return Slide(ids, d, k)
    if kind == "out":
        return Remove(ids[0]) if len(ids) == 1 else Separate(ids, d)
    offsets = [m[1] for m in members]
    if len(ids) == 1:
        return Insert(ids[0], offsets[0])
    return Join(ids, d, offsets if any(o != NO_OFFSET for o in offsets) else None)


def derive(sp: SlideProblem, state: set[Atom]) -> frozenset[Atom]:
    """The derived atoms true in `state`: the least fixpoint of their rules (positive bodies only)."""
    key = frozenset(state)
    cached = sp.derived_cache.get(key)
    if cached is not None:
        return cached
    true: set[Atom] = set()
    grew = True
    while grew:
        grew = False
        for a, bodies in sp.derived.items():
            if a not in true and any(all((b in state or b in true) == v for b, v in body) for body in bodies):
                true.add(a)
                grew = True
    sp.derived_cache = {key: frozenset(true)}
    return sp.derived_cache[key]


def holds(sp: SlideProblem, state: set[Atom], lits) -> bool:
    """Do the literals hold in `state`, derived atoms evaluated from their rules?"""
    derived = derive(sp, state) if sp.derived else frozenset()
    return all((a in state or a in derived) == v for a, v in lits)


def apply(sp: SlideProblem, state: set[Atom], st: Step) -> set[Atom]:
    """The state after step `st` (its precondition holding): deletes, then adds, conditional effects on the old state."""
    eff = list(st.eff) + [lit for c, e in st.when if holds(sp, state, c) for lit in e]
    return (state - {a for a, v in eff if not v}) | {a for a, v in eff if v}


def run_steps(sp: SlideProblem, names: Sequence[str]) -> tuple[bool, int]:
    """Apply step names from the initial state (STRIPS semantics): (goal reached, total cost); a step
    whose precondition fails ends the run unreached."""
    state, cost = set(sp.init), 0
    for name in names:
        st = sp.by_name[name]
        if not holds(sp, state, st.pre):
            return False, cost
        state = apply(sp, state, st)
        cost += st.cost
    return holds(sp, state, sp.goal), cost


def replay(sp: SlideProblem, names: Sequence[str]) -> tuple[int | None, list[Lit]]:
    """Where a run of step names fails: (index of the first step whose precondition fails, its false
    literals), or (None, the goal literals that are false at the end: none when the plan is valid)."""
    state = set(sp.init)
    for k, name in enumerate(names):
        st = sp.by_name[name]
        if not holds(sp, state, st.pre):
            return k, [lit for lit in st.pre if not holds(sp, state, [lit])]
        state = apply(sp, state, st)
    return None, [lit for lit in sp.goal if not holds(sp, state, [lit])]



class _Runner:
    """The problem's own state while a forgeplan plan is encoded (never the engine's)."""

    def __init__(self, sp: SlideProblem):
        self.sp, self.state = sp, set(sp.init)
        self.names: list[str] = []

    def ok(self, st: Step) -> bool:
        return holds(self.sp, self.state, st.pre)

    def first(self, pred) -> Step | None:
        return next((st for st in self.sp.steps if pred(st) and self.ok(st)), None)

    def do(self, pred) -> bool:
        st = self.first(pred)
        if st is None:
            return False
        self.state = apply(self.sp, self.state, st)
        self.names.append(st.name)
        return True


def encode(sp: SlideProblem, actions: Sequence[Action]) -> list[str] | None:
    """A forgeplan plan as step names of the problem (None: some action has no applicable steps).

    Each action takes, among the steps that stand for it, those whose preconditions hold in the
    problem's own state: a step that stands for the whole action (its role), else (in this module's
    rendering remove, insert and every group move; in `slide_groups` a join) as a transaction: members' first touches, begin, one pick/shift/out/place per member, finish, settle.
    """
    run = _Runner(sp)
    for a in actions:
        for x in a.touched:
            run.do(lambda st, x=x: st.role == ("touch", x))
        if run.do(lambda st: st.role == ("action", a)):
            continue
        if not _transaction(run, a):
            return None
    return run.names


def _transaction(run: _Runner, a: Action) -> bool:
    """remove, insert, slide, separate or join as its transaction, members in `member_order`; remove and
    insert along the first direction whose transaction goes through."""
    kind = {"slide": "slide", "remove": "out", "separate": "out", "insert": "in", "join": "in"}.get(a.name)
    if kind is None:
        return False
    world = run.sp.task.world
    ids = list(a.part_ids) if hasattr(a, "part_ids") else [a.part_id]  # type: ignore[attr-defined]  # guarded by hasattr: a group move has part_ids, the others part_id
    offsets = [tuple(o) for o in (getattr(a, "offsets", None) or [getattr(a, "offset", NO_OFFSET)] * len(ids))]
    rank = {i: r for r, i in enumerate(member_order(world))}
    members = sorted(zip(ids, offsets), key=lambda m: rank[world.slot_index(m[0])])
    slots = [world.ids[world.slot_index(x)] for x, _ in members]
    k = getattr(a, "distance", None)
    for d in [a.direction] if hasattr(a, "direction") else DIRECTIONS:
        saved = (set(run.state), list(run.names))
        key = frozenset(slots) if kind == "in" else k   # a join's begin names its members
        good = run.do(lambda st: st.role == ("begin", kind, d, key))
        if kind == "in":
            for p, o in members:
                good = good and run.do(lambda st, p=p, o=o: st.role == ("place", p, o, d))
        else:
            for x, _ in members:
                good = good and run.do(lambda st, x=x: st.role == ("pick", x))
            good = good and run.do(lambda st: st.role == ("go",))
            verb = "shift" if kind == "slide" else "out"
            for s in slots:
                good = good and run.do(lambda st, s=s: st.role == (verb, s, d, k))
        good = good and run.do(lambda st: st.role == ("finish", kind, d, k))
        if kind != "out":
            for s in slots:
                good = good and run.do(lambda st, s=s: st.role == ("settle", s))
            good = good and run.do(lambda st: st.role == ("settled",))
        if good:
            return True
        run.state, run.names = saved
    return False


def validate(sp: SlideProblem, actions: Sequence[Action]) -> bool:
    """Does the plan reach the goal in the problem (each action through its applicable steps)?"""
    names = encode(sp, actions)
    return names is not None and run_steps(sp, names)[0]

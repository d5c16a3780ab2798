"""The plan verifier: output contract, diagnosis, replay in the engine, final state (FORGE App. D.1, Table 9).

Each failure category of FORGE Table 9 is decided here, once; `forgeplan evaluate` takes the verdict's
category as is. The verifier tests them in the order of FAILURE_CATEGORIES and reports the first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from .io.contract import ContractError, Output, parse_output
from .model.actions import Action, Insert, Join, Slide, moved_parts
from .model.assembly import DIRECTION_VECTORS, DIRECTIONS
from .model.state import NO_OFFSET, State
from .semantics.closure import dependency_closure
from .semantics.diagnosis import diagnose
from .semantics.engine import DEPENDENCY_CODES, PARAMETER_CODES, World
from .semantics.partial_offers import position_bound
from .semantics.partial_universe import slide_steps
from .semantics.task import Task

# FORGE Table 9 ("Failure categories used in the qualitative analysis"), in the order the verifier tests them
TABLE_9 = {
    "schema_failure": "The output cannot be parsed under the declared annotation and rework-plan schema.",
    "no_fault_intervention": "The model produces a non-empty program for an already valid assembly.",
    "misdiagnosis": "The predicted fault type or affected part does not match the observed assembly state.",
    "illegal_grounding": "The generated action or parameter is unavailable in the current symbolic state.",
    "dependency_omission": "A required unlock, clearing, restoration, or relocking operation is missing "
                           "from the recovery program.",
    "parameter_error": "The action type is appropriate, but its pose, rotation, or other parameters fall "
                       "outside the evaluator tolerance.",
    "incomplete_restoration": "The program executes partially but the terminal state does not match the "
                              "target configuration.",
    "over_disassembly": "The program moves additional components that are not required by the recovery route.",
}
FAILURE_CATEGORIES = tuple(TABLE_9)
PARAMETERISED = frozenset({"rotate", "rotate_to_unlock", "rotate_to_lock", "rotate_translate_to_unlock",
                           "translate_rotate_to_lock"})


@dataclass
class Verdict:
    valid: bool
    category: str | None = None          # first failure; "over_disassembly" is the only one a valid plan can have
    reason: str = ""
    failing_step: int | None = None      # number of the first illegal action (steps count from 1)
    diagnosis_exact: bool = False
    replay_legal: bool = False
    restored: bool = False
    actions: int = 0
    moved_parts: list[str] = field(default_factory=list)
    over_disassembly: bool = False       # valid, but moves a part no optimal plan moves
    ignored_keys: list[str] = field(default_factory=list)   # top-level keys a non-strict parse dropped
    extracted: bool = False              # the object was taken out of a fence or surrounding text
    output: Output | None = None

    @property
    def contract_valid(self) -> bool:
        """FORGE's C_i (eq. 13): the output parses and names the task it answers."""
        return self.category != "schema_failure"

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("output")
        return d


def diagnosis_key(m) -> tuple[str, str]:
    """One entry of FORGE's diagnosis D_i: Table 9 compares "the predicted fault type or affected part".
    The contract's `visible` flag is not part of it (and no metric scores it)."""
    return (m["type"], m["part_id"]) if isinstance(m, dict) else (m.type, m.part_id)


def verify(task: Task, raw: str | bytes, *, strict: bool = True, route_hint=(), extract: bool = False) -> Verdict:
    """Judge one raw output; `strict=False` ignores top-level keys outside the contract and `extract` takes
    the one JSON object out of a fenced or chatty answer (see parse_output); `route_hint`: the moved parts
    of a known optimal plan (see over_disassembly)."""
    try:
        out = parse_output(raw, strict=strict, extract=extract)
    except ContractError as exc:
        return Verdict(False, "schema_failure", exc.reason)
    return verify_output(task, out, route_hint=route_hint)


def schema_failure(task: Task, out: Output) -> str | None:
    """Table 9 "schema failure" (signal C_i = 0) for an output that parsed: the annotation's
    `sample_id`/`assembly_id` are part of the declared schema, so an answer to another task is not a valid
    contract and scores zero on every metric, like an unparseable one."""
    if out.sample_id != task.sample_id:
        return f"annotation.sample_id is {out.sample_id!r}, expected {task.sample_id!r}"
    if out.assembly_id != task.assembly.assembly_id:
        return f"annotation.assembly_id is {out.assembly_id!r}, expected {task.assembly.assembly_id!r}"
    return None


def verify_output(task: Task, out: Output, reference_cost: str = "forgeplan", route_hint=()) -> Verdict:
    """The verdict on a parsed output; `reference_cost` is the cost rule optimal plans are judged by (for
    over-disassembly), `route_hint` the moved parts of one known optimal plan (see over_disassembly)."""
    world = task.world
    expected = diagnose(world, task.actual, task.target)
    v = Verdict(False, actions=len(out.actions), output=out, ignored_keys=list(out.ignored), extracted=out.extracted)
    bad_contract = schema_failure(task, out)
    if bad_contract:
        v.category, v.reason = "schema_failure", bad_contract
        return v
    v.diagnosis_exact = (sorted(map(diagnosis_key, out.mistakes)) == sorted(map(diagnosis_key, expected))
                         and out.passed == (not expected))
    rp = world.restoration(task.actual, out.actions, task.target)
    v.replay_legal = rp.failure is None
    v.moved_parts = sorted(moved_parts(out.actions))
    v.restored = rp.restored
    if not expected and (out.actions or not out.passed):
        # Table 9 "no-fault intervention", signal π̂_i ≠ ∅; a fault reported on a valid assembly is a misdiagnosis
        v.category = "no_fault_intervention" if out.actions else "misdiagnosis"
        v.reason = (f"the task has no fault but the plan has {len(out.actions)} actions" if out.actions
                    else "the task has no fault but the annotation reports mistakes")
        return v
    if not v.diagnosis_exact:
        v.category, v.reason = "misdiagnosis", _diagnosis_diff(expected, out)
        return v
    if rp.failure is not None:
        before = world.replay(task.actual, out.actions[:rp.failure.step]).final
        v.category = illegal_step_category(rp.failure.reason.code, world, before, rp.failure.action)
        v.failing_step = rp.failure.step + 1
        v.reason = f"step {v.failing_step} {rp.failure.action}: {rp.failure.reason.message}"
        return v
    if not v.restored:
        missed = parameter_misses(task, out.actions, rp.final)
        diffs = world.differences(rp.final, task.target)
        v.category = "parameter_error" if missed else "incomplete_restoration"
        v.reason = ((f"the parameters of {missed[0]} leave {missed[0].touched[0]} off target: " if missed else "")
                    + "final state differs: " + "; ".join(diffs[:5]))
        return v
    v.valid = True
    outside, basis = over_disassembly(task, v.moved_parts, reference_cost, route_hint)
    v.over_disassembly = bool(outside)
    if outside:
        v.category = "over_disassembly"
    v.reason = "valid" + (f" (moves {OUTSIDE[basis]}: {outside})" if outside else "")
    return v


def illegal_step_category(code: str, world: World | None = None, state: State | None = None,
                          action: Action | None = None) -> str:
    """The category of an action the engine refuses (Table 9, signals "Missing dependency", "Invalid
    parameter", "¬Legal"): a blocker, support or lock still in the way is a dependency omission; a legal
    action type with a wrong axis, angle, pose or direction is a parameter error; anything else (unknown
    part, action not applicable in this state) is illegal grounding. A partial move blocked only by its
    parameters (given the `state` it is taken in) is a parameter error too: see `reparameterised`."""
    if code in DEPENDENCY_CODES:
        if code == "blocked" and world is not None and state is not None and action is not None \
                and reparameterised(world, state, action):
            return "parameter_error"
        return "dependency_omission"
    return "parameter_error" if code in PARAMETER_CODES else "illegal_grounding"


def reparameterised(world: World, state: State, a: Action) -> Action | None:
    """A legal action of the same kind on the same parts with other partial-move parameters (SEMANTICS §9),
    or None. Table 9's parameter error: "the action type is appropriate, but its [...] parameters fall
    outside the evaluator tolerance". A slide is appropriate when the same parts may slide now (along its
    direction a shorter distance, or one step along another direction); an insertion when the part may
    come in at its target position or at another axis offset within the assembly's extent; a join when
    the same parts may come in along some direction with the given arrangement shifted along one axis, or
    all at one such offset. When none is legal, something must move first: a dependency omission."""
    if not slide_steps(world):   # no partial moves in this universe: a blocked move has no other parameters
        return None
    options: list[Action]
    if isinstance(a, Slide):
        reach = min(a.distance, max(position_bound(world.assembly)) + 1)
        options = [Slide(a.part_ids, a.direction, k) for k in range(1, reach)]
        options += [Slide(a.part_ids, d, 1) for d in DIRECTIONS if d != a.direction]
    elif isinstance(a, Insert):
        options = [Insert(a.part_id, o) for o in axis_offsets(world) if o != a.offset]
    elif isinstance(a, Join):
        given = a.offsets or (NO_OFFSET,) * len(a.part_ids)
        places: list[tuple[tuple[int, int, int], ...]] = [
            tuple((o[0] + shift[0], o[1] + shift[1], o[2] + shift[2]) for o in given) for shift in axis_offsets(world)]
        places += [(o,) * len(a.part_ids) for o in axis_offsets(world)]
        options = [g for d in DIRECTIONS for at in places if (g := Join(a.part_ids, d, at)) != a]
    else:
        return None
    return next((g for g in options if world.check(state, g) is None), None)


def axis_offsets(world: World) -> list[tuple[int, int, int]]:
    """The target position and every offset along one axis within the assembly's extent."""
    bound = position_bound(world.assembly)
    out = [NO_OFFSET]
    for d in DIRECTIONS:
        v = DIRECTION_VECTORS[d]
        axis = next(k for k in range(3) if v[k])
        out += [(v[0] * n, v[1] * n, v[2] * n) for n in range(1, bound[axis] + 1)]
    return out


def parameter_misses(task: Task, actions, final: State) -> list[Action]:
    """Table 9 "parameter error" after a legal replay: the parameterised actions (rotations, posed
    unlock/lock moves) that were the last to move a part which ends off its target orientation or position,
    and the slides that were the last to move a part which ends displaced from a position one slide away
    from home (SEMANTICS §9: the wrong direction or distance). The action type is appropriate (the engine
    accepted it), its angle, pose, direction or distance is wrong. Empty when no off-target part was last
    moved by such an action (then: incomplete restoration)."""
    world = task.world
    last: dict[str, Action] = {}
    for a in actions:
        for p in a.touched:
            last[p] = a
    out = []
    for i, (s, t) in enumerate(zip(final.slots, task.target.slots)):
        if not (s.present and t.present) or s.occupant not in last:
            continue
        off = world.position_off(i, s) or (world.rotation_error(i, s.rotation)
                                           > world.tol.rot_tol + world.rotation_error(i, t.rotation))
        a = last[s.occupant]
        if ((off and a.name in PARAMETERISED) or slid_astray(a, s.offset, t.offset)) and a not in out:
            out.append(a)
    return out


def slid_astray(a: Action, offset, target) -> bool:
    """Did slide `a` leave a part at `offset`, off `target`, coming from a position one slide from `target`?"""
    if not isinstance(a, Slide) or offset == target:
        return False
    v = DIRECTION_VECTORS[a.direction]
    gap = [offset[k] - v[k] * a.distance - target[k] for k in range(3)]
    return sum(c != 0 for c in gap) == 1


def over_disassembly(task: Task, moved, reference_cost: str = "forgeplan", route_hint=()) -> tuple[list[str], str]:
    """Table 9 "over-disassembly": "The program moves additional components that are not required by the
    recovery route." forgeplan's reading: a valid plan that moves a part no optimal plan moves (under the
    cost rule `reference_cost`, see evaluation.samples.plan_cost). Returns the offending parts, sorted, and
    what they were judged against: "route" (the optimal plans' moved parts, planners.asp.first_steps.route_parts)
    or, where clingo cannot enumerate them (partial moves) or not within its time limit, "closure" (the
    dependency closure D_F of the faults, FORGE eq. 4; a spare counts as the slot it fills).

    Every valid plan moves the faulty parts, and `route_hint` (the moved parts of a known optimal plan,
    such as the reference) lies in the route too, so clingo is asked only about the other parts."""
    from .planners.asp.first_steps import route_parts

    world = task.world
    faulty = [world.index[m["part_id"]] for m in diagnose(world, task.actual, task.target)]
    known = {world.ids[i] for i in faulty} | set(route_hint)
    extra = [p for p in moved if p not in known]
    if not extra:
        return [], "route"
    route = route_parts(task, reference_cost)
    if route is not None:
        return sorted(p for p in extra if p not in route), "route"
    closure = {world.ids[i] for i in dependency_closure(world, task.actual, faulty)}
    slot_of = {w.part_id: w.variant_of for w in task.assembly.spares}
    return sorted(p for p in extra if slot_of.get(p, p) not in closure), "closure"


OUTSIDE = {"route": "parts no optimal plan moves", "closure": "parts outside the dependency closure"}


def _diagnosis_diff(expected: list[dict], out: Output) -> str:
    exp = set(map(diagnosis_key, expected))
    got = set(map(diagnosis_key, out.mistakes))
    parts = []
    if exp - got:
        parts.append(f"missed {sorted(exp - got)}")
    if got - exp:
        parts.append(f"wrongly reported {sorted(got - exp)}")
    twice = sorted(k for k, n in Counter(map(diagnosis_key, out.mistakes)).items() if n > 1)
    if twice:
        parts.append(f"lists {twice} more than once")
    if not parts:
        parts.append(f"pass is {out.passed} but the task has {len(expected)} mistakes")
    return "diagnosis differs: " + "; ".join(parts)

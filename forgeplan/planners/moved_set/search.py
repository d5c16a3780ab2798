"""Exhaustive minimal rework search over the grounded partial-move universe (SEMANTICS.md §9).

The lexicographic optimum (fewest distinct moved parts, then fewest actions) is found by moved sets:
for every set `M` of slots holding the forced ones (the faulty slots), by size, a breadth-first search
over the configurations reachable with moves of `M`'s slots only (every other slot stays where it is).
The universe is finite (`semantics.partial_universe`: bounded positions), so each search ends; the first
size with a plan is `J*`, the shortest plan over the sets of that size is `c*`, and no plan of the
universe does better: that is the proof. Among the optimal plans the canonical tie-break plan
(SEMANTICS §4) is picked by walking forward along the smallest key that still reaches the goal in time.
Exact shortcuts (§9 "Minimal rework with partial moves"): sets that cannot bring a missing slot in are
skipped, and a probe per size bounds every set's search by the shortest plan it meets first. Where a
set's configurations are too many to visit, §9's exact arguments decide: which sets have a plan at all
(`slide_reach`), the optimum of one faulty part by the mirror argument (`slide_mirror`), and searches
pruned by lower bounds (`slide_bounds`). The search's phases (the verdicts, the probe, the plain and the
pruned searches, the tie-break walk) share one node model and one state budget, so they stay in one
module of some 430 lines.

A state is a configuration (offsets, None when absent) and the mask of present slots still faulty
(rotated or off their pose). A faulty slot is mended by its repairing action (`rotate` with the
repairing turn, `reset_pose`), legal when it has a clear ray, or by taking it out: it comes back as
its target part.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Iterator, Optional

from ...model.actions import Action, Remove, Replace, ResetPose, Rotate
from ...model.errors import InputError
from ...model.state import NO_OFFSET, State
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.engine import World
from ...semantics.grounded import canonical_key, part_ranks, rotation_fix
from ...semantics.partial_offers import bits
from ...semantics.partial_universe import Config, Move, landing_index, offered_steps, to_action
from .bounds import LowerBound
from .engine_search import shorter_plan
from .mirror import mirror_optimum, mirror_plan
from .reach import Undecided, has_plan

Node = tuple[Config, int]
CAP = 4_000       # configurations per moved set before its search counts as not exhausted
NO_LIMIT = 10 ** 9
BUDGET = 8_000    # states over all moved sets before the search stops unproved (the probes not counted)
PROBE = 4_000     # states of the shallow-plan probe per moved-set size (not counted in BUDGET)
PROBE_DEPTH = 16  # and its deepest search
PROOF_CAP = 200_000  # configurations per search of the exact arguments (`slide_reach`, `_mirror`, `_bounded`)
PROOF_BUDGET = 400_000  # and over all of them, per task
LONGEST = 40      # the longest plan a bounded search looks for when nothing shorter is known
ENGINE_BUDGET = 40_000  # nodes the searches over every engine move (`slide_engine`) keep, per task


LEVELS = ("moved-parts", "actions")


@dataclass(frozen=True)
class SlideResult:
    """`plan` is None when no plan exists; `optimal`: no plan of the grounded universe is better (every
    smaller moved set was exhausted, or the exact arguments decided it); `proved`: the levels of the
    objective proved over every plan the engine accepts (§9 "One universe": both, only `moved-parts`,
    or none)."""

    plan: Optional[list[Action]]
    moved: int
    actions: int
    optimal: bool
    states: int
    seconds: float
    proved: tuple[str, ...] = ()


def start_node(world: World, actual: State, spares: bool = False) -> Node:
    """The actual state as a search node; refuses what the partial search does not model. With `spares`, a
    slot holding its spare is faulty like a turned one (it blocks as its slot's part does, §1, and is
    mended by `replace`, which needs the same clear ray)."""
    config, bad = [], 0
    for i, s in enumerate(actual.slots):
        wrong = s.present and s.occupant != world.ids[i]
        if wrong and not (spares and world.spare_slot.get(s.occupant) == i):
            raise InputError(f"slot {world.ids[i]} holds a spare: the partial-move search repairs missing, "
                             "rotated and displaced parts only", field="actual_state")
        if world.lock[i] is not None:
            raise InputError(f"{world.ids[i]} is a lock: the partial-move search handles lock-free puzzles only",
                             field="assembly")
        config.append(s.offset if s.present else None)
        if wrong or s.present and (world.pose_off(i, s) or world.rot_off(i, s)):
            if len(_mends(world, actual, i)) != 1:
                raise InputError(f"slot {world.ids[i]} is both rotated and off its pose, or turned so that no single "
                                 "quarter turn repairs it: the partial-move search mends one fault per slot",
                                 field="actual_state")
            bad |= 1 << i
    return tuple(config), bad


def _mends(world: World, actual: State, i: int) -> list[Action]:
    """The actions that repair faulty slot i in place (SEMANTICS §3: each needs a clear ray)."""
    s, pid, out = actual.slots[i], world.ids[i], []
    if s.occupant != pid:
        return [Replace(s.occupant, pid)] if not (world.rot_off(i, s) or world.pose_off(i, s)) else []
    if world.rot_off(i, s):
        fix = rotation_fix(world, i, s.rotation)
        if fix is None:
            return []
        out.append(Rotate(pid, *fix))
    if world.pose_off(i, s):
        out.append(ResetPose(pid))
    return out


def successors(ag: AssemblyGrounding, node: Node, movable: int, landings: dict) -> list[tuple[Move, Node]]:
    """The moves of `movable` slots from a node, each with the node it leads to: mends first, then the
    universe's moves (a departure takes the faults of what leaves with it)."""
    config, bad = node
    out = []
    if bad & movable:
        table = ag.offers
        for i in bits(bad & movable):
            if table.clear(config, i):
                out.append((("mend", 1 << i), (config, bad & ~(1 << i))))
    for m, nxt in offered_steps(ag, config, movable, landings):
        out.append((m, (nxt, bad & ~m[1] if m[0] == "out" else bad)))
    return out


def escapes(ag: AssemblyGrounding, config: Config, movable: int, f: int) -> bool:
    """Can slot `f`, alone among the movable slots, reach a clear ray from its target position by finite
    slides against the slots outside `movable` (where they are)? Every plan moving only `movable` needs
    that for a slot that is missing or faulty (it comes in, is mended or leaves through a clear ray, and
    ends at its target), and the other movable slots can only be in the way, so a `False` is a proof that
    `movable` is too small."""
    alone = tuple(NO_OFFSET if i == f else (o if not movable >> i & 1 else None) for i, o in enumerate(config))
    seen, todo, table = {alone}, [alone], ag.offers
    while todo:
        c = todo.pop()
        if table.clear(c, f):
            return True
        for m, nxt in table.steps(c, 1 << f):
            if m[0] == "slide":
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
    return False


def _home(start: Node) -> Config:
    return tuple(NO_OFFSET for _ in start[0])


def _goal(node: Node) -> bool:
    return node[1] == 0 and all(o == NO_OFFSET for o in node[0])


def _bfs(ag: AssemblyGrounding, start: Node, movable: int, limit: int, cap: int, deadline: float | None = None,
         bound: Optional[LowerBound] = None) -> tuple[dict[Node, int], Optional[int], bool]:
    """Distances from `start` up to the first goal layer (or `limit`); the goal distance or None; and
    whether the search was exhausted (a capped search still reports the plans it met, unproved). With
    `bound`, a node that cannot reach the goal within `limit` by its lower bound is not kept."""
    complete = True
    try:
        landings = landing_index(ag, movable, _home(start), cap, None if limit >= NO_LIMIT else limit, deadline)
    except OverflowError as err:
        landings, complete = err.partial, False   # type: ignore[attr-defined]  # the configurations found so far ride on the exception (partial_universe)
    dist, queue, found, goal = {start: 0}, deque([start]), None, (_home(start), 0)
    if start == goal:
        return dist, 0, complete
    if not _can_arrive(start, movable, landings):
        return dist, None, complete
    table = ag.offers
    while queue:
        if len(dist) > cap or deadline is not None and time.perf_counter() > deadline:
            return dist, found, False
        node = queue.popleft()
        t = dist[node]
        if found is not None and t >= found or t >= limit:
            break
        for nxt in _next_nodes(table, node, movable, landings):
            if nxt not in dist:
                if bound is not None and t + 1 + bound(nxt) > limit:
                    continue
                dist[nxt] = t + 1
                if found is None and nxt == goal:
                    found = t + 1
                queue.append(nxt)
    return dist, found, complete


def _next_nodes(table, node: Node, movable: int, landings: dict) -> Iterator[Node]:
    """`successors` without the moves, in the same order: what the breadth-first search expands."""
    config, bad = node
    if bad & movable:
        for i in bits(bad & movable):
            if table.clear(config, i):
                yield config, bad & ~(1 << i)
    if bad:
        for m, nxt in table.steps(config, movable):
            yield nxt, bad & ~m[1] if m[0] == "out" else bad
    else:
        for _, nxt in table.steps(config, movable):
            yield nxt, 0
    for _, nxt in landings.get(config, ()):
        yield nxt, bad


def _can_arrive(start: Node, movable: int, landings: dict) -> bool:
    """Is every movable slot that is absent at the start brought in by some offered arrival? An absent slot
    enters only by an arrival, and the search offers only the arrivals of `landings`; so when one is never
    brought in, no plan of this moved set exists and the search is skipped (its graph has no goal)."""
    absent = sum(1 << i for i, o in enumerate(start[0]) if o is None) & movable
    for steps in landings.values():
        for move, _ in steps:
            absent &= ~move[1]
        if not absent:
            return True
    return not absent


def minimal_rework(ag: AssemblyGrounding, actual: State, time_limit: float | None = None, cap: int = CAP,
                   budget: int = BUDGET, proof_cap: int = PROOF_CAP) -> SlideResult:
    """The (J_move, c)-minimal plan of the universe from `actual` back to the target, with its proof.

    A moved set whose search passes `cap` states, the total `budget` of states (deterministic: the same
    result on every run) or the time limit leaves the optimum unproved, unless the exact arguments
    prove it within `proof_cap` configurations per search (which sets have plans: `slide_reach`; the
    mirror argument: `slide_mirror`; searches pruned by lower bounds: `slide_bounds`): the result is
    then the best plan found (`optimal` false), or none."""
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    start = start_node(ag.world, actual, spares=True)
    spares = sum(1 for i in bits(start[1]) if actual.slots[i].occupant != ag.world.ids[i])   # each adds its own id to J
    states, probed, unproved, stopped, decided = 0, 0, False, False, True
    exact = [min(proof_cap, PROOF_BUDGET), PROOF_BUDGET]     # per search, and what is left for this task
    for size, candidates in candidate_sets(ag, start):
        smaller = decided     # every smaller set proved planless over the engine's moves (`slide_reach`)
        verdicts = {m: set_verdict(ag, start, m, exact, deadline) for m in candidates}
        sets = [m for m, v in verdicts.items() if v is not False]
        decided = decided and None not in verdicts.values()

        def proved(plan: list[Action], spent: int) -> SlideResult:
            """The grounded optimum, with the levels that hold over every engine plan too (`lift`)."""
            plan, levels = lift(ag, actual, start, sets, plan, smaller, exact, deadline)
            return SlideResult(plan, size + spares, len(plan), True, spent, time.perf_counter() - t0, levels)

        if sets and decided and not _mirrored(start):    # this size is J_move*: the pruned searches find c*
            found = _bounded(ag, actual, start, sets, [], exact, deadline)
            if found is not None:
                return proved(*found)
        shallow, spent = _probe(ag, start, sets, cap, deadline)
        probed += spent
        if stopped:     # out of budget: only the probe looks on, for a shallow plan with more moved parts
            best, cut = [shallow] if shallow is not None else [], True
        else:
            best, states, cut, stopped = _search_sets(ag, start, sets, shallow[0] if shallow else None, cap,
                                                      (states, budget), deadline)
        if sets and (cut or unproved) and decided:
            found = (_mirror(ag, actual, start, sets, best, exact, deadline)
                     or _bounded(ag, actual, start, sets, best, exact, deadline))
            if found is not None:
                return proved(found[0], states + probed + found[1])
        unproved = unproved or cut
        if best:
            c = best[0][0]
            plans = [_canonical_plan(ag, actual, start, m, c) for _, m in best]
            ranks = part_ranks(ag.world)
            plan = min(plans, key=lambda p: [canonical_key(a, ranks) for a in p])
            if not unproved:
                return proved(plan, states + probed)
            return SlideResult(plan, size + spares, len(plan), False, states + probed, time.perf_counter() - t0)
    return SlideResult(None, 0, 0, not unproved, states + probed, time.perf_counter() - t0)


def lift(ag: AssemblyGrounding, actual: State, start: Node, sets: list[int], plan: list[Action], smaller: bool,
         exact: list[int], deadline: float | None) -> tuple[list[Action], tuple[str, ...]]:
    """The grounded optimum `plan` over the moved sets `sets` of its size, and the levels of the objective
    it is proved minimal in over every plan the engine accepts (SEMANTICS §9 "One universe"):

    * `moved-parts` when every smaller moved set was proved planless by `slide_reach` (`smaller`), whose
      verdicts are exact over every engine move;
    * `actions` too when, in addition, an argument exact over every engine move gives the same length:
      the mirror argument (`slide_mirror`, one faulty part, every slot home), or, per moved set of the
      optimum's size, the lower bound (`slide_bounds`) at the start or a search over every engine move
      that finds no shorter plan (`engine_search`). Where the mirror argument finds a shorter plan (one
      that slides a group with a clear ray ahead, which the grounded universe leaves out), that plan is
      returned; where the engine search meets one (an engine plan below the grounded optimum, SEARCH.md
      §3.3), only `moved-parts` holds and the reference stays the grounded optimum.

    The arguments spend the task's exact budget `exact`; one cut by it, or by the deadline, lifts nothing."""
    if not smaller:
        return plan, ()
    c = len(plan)
    if _mirrored(start):
        mirrored = _mirror(ag, actual, start, sets, [], exact, deadline)
        if mirrored is None or len(mirrored[0]) > c:
            return plan, LEVELS[:1]
        exact[1] -= mirrored[1]
        return (mirrored[0] if len(mirrored[0]) < c else plan), LEVELS
    try:
        bounds = [LowerBound(ag, m, min(exact), deadline) for m in sets]
        exact[1] -= sum(b.states for b in bounds)
        if exact[1] < 0:
            return plan, LEVELS[:1]
        engine = [ENGINE_BUDGET]
        for m, bound in zip(sets, bounds):
            if bound(start) < c and _spend(exact, _spend(engine, shorter_plan(
                    ag, start, m, c - 1, bound, min(exact[0], exact[1], engine[0]), deadline))).plan is not None:
                return plan, LEVELS[:1]
        return plan, LEVELS
    except Undecided:
        return plan, LEVELS[:1]


def _spend(exact: list[int], got):
    """A search's result, its configurations taken off what is left of a budget (the list's last entry;
    Undecided past it)."""
    if got is not None:
        exact[-1] -= got[1]
        if exact[-1] < 0:
            raise Undecided("past the task's budget of exact configurations")
    return got


def candidate_sets(ag: AssemblyGrounding, start: Node) -> Iterator[tuple[int, list[int]]]:
    """Per size, smallest first, the moved sets that hold the forced slots (missing, faulty or displaced)
    and let every missing or faulty slot get out (`escapes`; else it is shut in and the set has no plan)."""
    config, bad = start
    forced = bad | sum(1 << i for i, o in enumerate(config) if o is None or o != NO_OFFSET)
    needy = bits(bad | sum(1 << i for i, o in enumerate(config) if o is None))
    others = [i for i in range(len(config)) if not forced >> i & 1]
    for extra in range(len(others) + 1):
        sets = (forced | sum(1 << i for i in add) for add in combinations(others, extra))
        yield bin(forced).count("1") + extra, [m for m in sets if all(escapes(ag, config, m, f) for f in needy)]


def set_verdict(ag: AssemblyGrounding, start: Node, movable: int, exact: list[int], deadline: float | None) -> Optional[bool]:
    """`slide_reach.has_plan`'s verdict (exact, over a superset of this universe's moves: a False is a
    proof that no plan moves only `movable`), or None when it was not decided within its cap, the
    task's budget `exact` (per search, left; what it spends is taken off) or the deadline."""
    cap = min(exact)
    if cap <= 0:
        return None
    try:
        verdict, spent = has_plan(ag, start, movable, cap, deadline)
    except Undecided:
        verdict, spent = None, cap
    exact[1] -= spent
    return verdict


def _mirror(ag: AssemblyGrounding, actual: State, start: Node, sets: list[int], best: list[tuple[int, int]],
            exact: list[int], deadline: float | None) -> Optional[tuple[list[Action], int]]:
    """The proved optimum of one faulty part at its target place (every other slot there too) over the
    moved sets of the first size that has plans, by the mirror argument (`slide_mirror`), with the
    configurations searched; None where it does not apply or a search was cut (by its cap, the task's
    budget `exact` or the deadline). The moved-set search's plan is kept when it is as short."""
    if not _mirrored(start):
        return None
    p, found, spent = start[1].bit_length() - 1, [], 0
    try:
        for m in sets:
            got = mirror_optimum(ag, p, m, min(exact), deadline)
            spent += got[1] if got else 0
            if got is None or spent > exact[1]:
                return None
            found.append((got[0], m, got[2]))
    except Undecided:
        return None
    c = min(f[0] for f in found)
    ranks = part_ranks(ag.world)
    if best and best[0][0] == c:
        plans = [_canonical_plan(ag, actual, start, m, c) for _, m in best]
    else:
        plans = [mirror_plan(ag, p, m, c, layers, _mends(ag.world, actual, p), occupied(ag.world, actual, start[1]))
                 for cm, m, layers in found if cm == c]
    return min(plans, key=lambda plan: [canonical_key(a, ranks) for a in plan]), spent


def _mirrored(start: Node) -> bool:
    """Does the mirror argument apply: one faulty slot, every slot present at its target place?"""
    config, bad = start
    return bad != 0 and bad & (bad - 1) == 0 and all(o == NO_OFFSET for o in config)


def _bounded(ag: AssemblyGrounding, actual: State, start: Node, sets: list[int], best: list[tuple[int, int]],
             exact: list[int], deadline: float | None) -> Optional[tuple[list[Action], int]]:
    """The proved optimum over the moved sets of the first size that has plans, by searches bounded at
    growing lengths from the smallest lower bound, each dropping the nodes whose lower bound
    (`slide_bounds`) does not fit; with the configurations searched. None when a search is cut (by
    its cap, the task's budget `exact` or the deadline)."""
    top, cap = best[0][0] if best else LONGEST, min(exact)
    try:
        bounds = {m: LowerBound(ag, m, cap, deadline) for m in sets}
        spent = sum(b.states for b in bounds.values())
        for limit in range(min(bounds[m](start) for m in sets), top + 1):
            hits = []
            for m in sets:
                dist, c, complete = _bfs(ag, start, m, limit, cap, deadline, bounds[m])
                spent += len(dist)
                if not complete or spent > exact[1]:
                    return None
                if c is not None:
                    hits.append(m)
            if hits:
                ranks = part_ranks(ag.world)
                plans = [_canonical_plan(ag, actual, start, m, limit, bounds[m]) for m in hits]
                return min(plans, key=lambda plan: [canonical_key(a, ranks) for a in plan]), spent
    except Undecided:
        return None
    return None


def _search_sets(ag: AssemblyGrounding, start: Node, sets: list[int], shallow: Optional[int], cap: int,
                 spent: tuple[int, int], deadline: float | None) -> tuple[list[tuple[int, int]], int, bool, bool]:
    """Every moved set of one size, one after another, each searched no deeper than the best plan met so
    far (from the start: the probe's shallow plan, when it met one). Returns the sets with the shortest
    plan, the states spent, whether some search was cut, and whether the budget or the clock ran out."""
    states, budget = spent
    best: list[tuple[int, int]] = []
    cut = False
    for movable in sets:
        limit = best[0][0] if best else shallow if shallow is not None else NO_LIMIT
        dist, c, complete = _bfs(ag, start, movable, limit, cap, deadline)
        cut |= not complete
        states += len(dist)
        if c is not None:
            if not best or c < best[0][0]:
                best = [(c, movable)]
            elif c == best[0][0]:
                best.append((c, movable))
        if states > budget or deadline is not None and time.perf_counter() > deadline:
            return best, states, True, True
    return best, states, cut, False


def _probe(ag: AssemblyGrounding, start: Node, sets: list[int], cap: int,
           deadline: float | None) -> tuple[Optional[tuple[int, int]], int]:
    """A shallow plan's length and the set that has it (or None), by searches of every set to depth 1, 2, 3, ... while
    they stay small (PROBE states, PROBE_DEPTH), or None; and the states it spent. Searching the sets
    one after another unbounded lets a set without a short plan run into its cap before the set that has
    one is reached; bounded by the probe's length every set's search is small enough to finish, which is
    what proves the shortest length. The probe only bounds depths: what it finds is found again there."""
    spent = 0
    for limit in range(1, PROBE_DEPTH + 1):
        for movable in sets:
            dist, c, complete = _bfs(ag, start, movable, limit, cap, deadline)
            spent += len(dist)
            if c is not None:
                return (c, movable), spent
            if not complete or spent > PROBE:
                return None, spent     # deeper searches would be cut too, or cost more than they save
    return None, spent


def _canonical_plan(ag: AssemblyGrounding, actual: State, start: Node, movable: int, c: int,
                    bound: Optional[LowerBound] = None) -> list[Action]:
    """The smallest plan (canonical key, step by step) of length `c` within `movable` (every node of a
    plan of length `c` is within its lower bound `bound`, so what the bound drops changes nothing)."""
    landings = landing_index(ag, movable, _home(start), depth=c)
    layers: list[set[Node]] = [{start}]
    for t in range(c):
        layers.append({nxt for node in layers[-1] for _, nxt in successors(ag, node, movable, landings)
                       if bound is None or t + 1 + bound(nxt) <= c})
    alive = [set() for _ in range(c + 1)]
    alive[c] = {nd for nd in layers[c] if _goal(nd)}
    for t in range(c - 1, -1, -1):
        alive[t] = {nd for nd in layers[t] if any(nxt in alive[t + 1] for _, nxt in successors(ag, nd, movable, landings))}
    ranks, node, plan = part_ranks(ag.world), start, []
    for t in range(c):
        options = []
        for move, nxt in successors(ag, node, movable, landings):
            if nxt in alive[t + 1]:
                acts = _actions(ag, actual, node, move)
                options.append(([canonical_key(a, ranks) for a in acts], acts, nxt))
        key, acts, node = min(options, key=lambda o: o[0])
        plan += acts
    return plan


def _actions(ag: AssemblyGrounding, actual: State, node: Node, move: Move) -> list[Action]:
    if move[0] == "mend":
        return _mends(ag.world, actual, move[1].bit_length() - 1)
    return [occupied(ag.world, actual, node[1])(to_action(ag.world, node[0], move))]


def occupied(world: World, actual: State, bad: int):
    """The action with each slot still holding its spare (faulty in `bad`) named by the spare, the part
    physically moved (§3: an action names the part that is there)."""
    names = {world.ids[i]: actual.slots[i].occupant for i in bits(bad) if actual.slots[i].occupant != world.ids[i]}
    if not names:
        return lambda action: action

    def rename(action: Action) -> Action:
        if isinstance(action, Remove):
            return replace(action, part_id=names.get(action.part_id, action.part_id))
        return replace(action, part_ids=tuple(names.get(p, p) for p in action.part_ids))   # slide, separate
    return rename

"""Exhaustive minimal rework search over the grounded partial-move universe (SEMANTICS.md §9).

The lexicographic optimum (fewest distinct moved parts, then fewest actions) is found by moved sets:
for every set `M` of slots holding the forced ones (the faulty slots), by size, a breadth-first search
over the configurations reachable with moves of `M`'s slots only (every other slot stays where it is).
The universe is finite (`semantics.partial_universe`: bounded positions), so each search ends; the first
size with a plan is `J*`, the shortest plan over the sets of that size is `c*`, and no plan of the
universe does better: that is the proof. Among the optimal plans the canonical tie-break plan
(SEMANTICS §4) is picked by walking forward along the smallest key that still reaches the goal in time.
Exact shortcuts (§9 "Minimal rework with partial moves"): sets that cannot bring a missing slot in are
skipped, and a probe per size bounds every set's search by the shortest plan it meets first.

A state is a configuration (offsets, None when absent) and the mask of present slots still faulty
(rotated or off their pose). A faulty slot is mended by its repairing action (`rotate` with the
repairing turn, `reset_pose`), legal when it has a clear ray, or by taking it out: it comes back as
its target part.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from itertools import combinations
from typing import Iterator, Optional

from ..model.actions import Action, ResetPose, Rotate
from ..model.errors import InputError
from ..model.state import NO_OFFSET, State
from ..semantics.engine import World
from ..semantics.grounded import canonical_key, part_ranks, rotation_fix
from ..semantics.partial_offers import bits, offer_table
from ..semantics.partial_universe import Config, Move, landing_index, offered_steps, to_action

Node = tuple[Config, int]
CAP = 4_000       # configurations per moved set before its search counts as not exhausted
NO_LIMIT = 10 ** 9
BUDGET = 8_000    # states over all moved sets before the search stops unproved (the probes not counted)
PROBE = 4_000     # states of the shallow-plan probe per moved-set size (not counted in BUDGET)
PROBE_DEPTH = 16  # and its deepest search


@dataclass(frozen=True)
class SlideResult:
    """`plan` is None when no plan exists; `optimal` only when every smaller moved set was exhausted."""

    plan: Optional[list[Action]]
    moved: int
    actions: int
    optimal: bool
    states: int
    seconds: float


def start_node(world: World, actual: State) -> Node:
    """The actual state as a search node; refuses what the partial search does not model."""
    config, bad = [], 0
    for i, s in enumerate(actual.slots):
        if s.present and s.occupant != world.ids[i]:
            raise InputError(f"slot {world.ids[i]} holds a spare: the partial-move search repairs missing, "
                             "rotated and displaced parts only", field="actual_state")
        if world.lock[i] is not None:
            raise InputError(f"{world.ids[i]} is a lock: the partial-move search handles lock-free puzzles only",
                             field="assembly")
        config.append(s.offset if s.present else None)
        if s.present and (world.pose_off(i, s) or world.rot_off(i, s)):
            if len(_mends(world, actual, i)) != 1:
                raise InputError(f"slot {world.ids[i]} is both rotated and off its pose, or turned so that no single "
                                 "quarter turn repairs it: the partial-move search mends one fault per slot",
                                 field="actual_state")
            bad |= 1 << i
    return tuple(config), bad


def _mends(world: World, actual: State, i: int) -> list[Action]:
    """The actions that repair faulty slot i in place (SEMANTICS §3: each needs a clear ray)."""
    s, pid, out = actual.slots[i], world.ids[i], []
    if world.rot_off(i, s):
        fix = rotation_fix(world, i, s.rotation)
        if fix is None:
            return []
        out.append(Rotate(pid, *fix))
    if world.pose_off(i, s):
        out.append(ResetPose(pid))
    return out


def successors(world: World, node: Node, movable: int, landings: dict) -> list[tuple[Move, Node]]:
    """The moves of `movable` slots from a node, each with the node it leads to: mends first, then the
    universe's moves (a departure takes the faults of what leaves with it)."""
    config, bad = node
    out = []
    if bad & movable:
        table = offer_table(world)
        for i in bits(bad & movable):
            if table.clear(config, i):
                out.append((("mend", 1 << i), (config, bad & ~(1 << i))))
    for m, nxt in offered_steps(world, config, movable, landings):
        out.append((m, (nxt, bad & ~m[1] if m[0] == "out" else bad)))
    return out


def escapes(world: World, config: Config, movable: int, f: int) -> bool:
    """Can slot `f`, alone among the movable slots, reach a clear ray from its target position by finite
    slides against the slots outside `movable` (where they are)? Every plan moving only `movable` needs
    that for a slot that is missing or faulty (it comes in, is mended or leaves through a clear ray, and
    ends at its target), and the other movable slots can only be in the way, so a `False` is a proof that
    `movable` is too small."""
    alone = tuple((0, 0, 0) if i == f else (o if not movable >> i & 1 else None) for i, o in enumerate(config))
    seen, todo, table = {alone}, [alone], offer_table(world)
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


def _bfs(world: World, start: Node, movable: int, limit: int, cap: int,
         deadline: float | None = None) -> tuple[dict[Node, int], Optional[int], bool]:
    """Distances from `start` up to the first goal layer (or `limit`); the goal distance or None; and
    whether the search was exhausted (a capped search still reports the plans it met, unproved)."""
    complete = True
    try:
        landings = landing_index(world, movable, _home(start), cap, None if limit >= NO_LIMIT else limit, deadline)
    except OverflowError as err:
        landings, complete = err.partial, False   # type: ignore[attr-defined]
    dist, queue, found, goal = {start: 0}, deque([start]), None, (_home(start), 0)
    if start == goal:
        return dist, 0, complete
    if not _can_arrive(start, movable, landings):
        return dist, None, complete
    table = offer_table(world)
    while queue:
        if len(dist) > cap or deadline is not None and time.perf_counter() > deadline:
            return dist, found, False
        node = queue.popleft()
        t = dist[node]
        if found is not None and t >= found or t >= limit:
            break
        for nxt in _next_nodes(table, node, movable, landings):
            if nxt not in dist:
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


def minimal_rework(world: World, actual: State, time_limit: float | None = None, cap: int = CAP,
                   budget: int = BUDGET) -> SlideResult:
    """The (J_move, c)-minimal plan of the universe from `actual` back to the target, with its proof.

    A moved set whose search passes `cap` states, the total `budget` of states (deterministic: the same
    result on every run) or the time limit leaves the optimum unproved: the result is then the best plan
    found (`optimal` false), or none."""
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    start = start_node(world, actual)
    forced = start[1] | sum(1 << i for i, o in enumerate(start[0]) if o is None or o != NO_OFFSET)
    others = [i for i in range(len(world.ids)) if not forced >> i & 1]
    needy = start[1] | sum(1 << i for i, o in enumerate(start[0]) if o is None)
    states, probed, unproved, stopped = 0, 0, False, False
    for extra in range(len(others) + 1):
        sets = [m for m in (forced | sum(1 << i for i in add) for add in combinations(others, extra))
                if all(escapes(world, start[0], m, f) for f in bits(needy))]   # else a faulty slot is shut in
        shallow, spent = _probe(world, start, sets, cap, deadline)
        probed += spent
        if stopped:     # out of budget: only the probe looks on, for a shallow plan with more moved parts
            best = [shallow] if shallow is not None else []
        else:
            best, states, cut, stopped = _search_sets(world, start, sets, shallow[0] if shallow else None, cap,
                                                      (states, budget), deadline)
            unproved = unproved or cut
        if best:
            c = best[0][0]
            plans = [_canonical_plan(world, actual, start, m, c) for _, m in best]
            ranks = part_ranks(world)
            plan = min(plans, key=lambda p: [canonical_key(a, ranks) for a in p])
            return SlideResult(plan, bin(forced).count("1") + extra, len(plan), not unproved, states + probed,
                               time.perf_counter() - t0)
    return SlideResult(None, 0, 0, not unproved, states + probed, time.perf_counter() - t0)


def _search_sets(world: World, start: Node, sets: list[int], shallow: Optional[int], cap: int,
                 spent: tuple[int, int], deadline: float | None) -> tuple[list[tuple[int, int]], int, bool, bool]:
    """Every moved set of one size, one after another, each searched no deeper than the best plan met so
    far (from the start: the probe's shallow plan, when it met one). Returns the sets with the shortest
    plan, the states spent, whether some search was cut, and whether the budget or the clock ran out."""
    states, budget = spent
    best: list[tuple[int, int]] = []
    cut = False
    for movable in sets:
        limit = best[0][0] if best else shallow if shallow is not None else NO_LIMIT
        dist, c, complete = _bfs(world, start, movable, limit, cap, deadline)
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


def _probe(world: World, start: Node, sets: list[int], cap: int,
           deadline: float | None) -> tuple[Optional[tuple[int, int]], int]:
    """A shallow plan's length and the set that has it (or None), by searches of every set to depth 1, 2, 3, ... while
    they stay small (PROBE states, PROBE_DEPTH), or None; and the states it spent. Searching the sets
    one after another unbounded lets a set without a short plan run into its cap before the set that has
    one is reached; bounded by the probe's length every set's search is small enough to finish, which is
    what proves the shortest length. The probe only bounds depths: what it finds is found again there."""
    spent = 0
    for limit in range(1, PROBE_DEPTH + 1):
        for movable in sets:
            dist, c, complete = _bfs(world, start, movable, limit, cap, deadline)
            spent += len(dist)
            if c is not None:
                return (c, movable), spent
            if not complete or spent > PROBE:
                return None, spent     # deeper searches would be cut too, or cost more than they save
    return None, spent


def _canonical_plan(world: World, actual: State, start: Node, movable: int, c: int) -> list[Action]:
    """The smallest plan (canonical key, step by step) of length `c` within `movable`."""
    landings = landing_index(world, movable, _home(start), depth=c)
    layers: list[set[Node]] = [{start}]
    for _ in range(c):
        layers.append({nxt for node in layers[-1] for _, nxt in successors(world, node, movable, landings)})
    alive = [set() for _ in range(c + 1)]
    alive[c] = {nd for nd in layers[c] if _goal(nd)}
    for t in range(c - 1, -1, -1):
        alive[t] = {nd for nd in layers[t] if any(nxt in alive[t + 1] for _, nxt in successors(world, nd, movable, landings))}
    ranks, node, plan = part_ranks(world), start, []
    for t in range(c):
        options = []
        for move, nxt in successors(world, node, movable, landings):
            if nxt in alive[t + 1]:
                acts = _actions(world, actual, node, move)
                options.append(([canonical_key(a, ranks) for a in acts], acts, nxt))
        key, acts, node = min(options, key=lambda o: o[0])
        plan += acts
    return plan


def _actions(world: World, actual: State, node: Node, move: Move) -> list[Action]:
    if move[0] == "mend":
        return _mends(world, actual, move[1].bit_length() - 1)
    return [to_action(world, node[0], move)]

"""Does any plan moving only a given set of slots exist? Exact, over the engine's moves (SEMANTICS.md §9
"Which moved sets have a plan").

The moved-set search (`slide_search`) proves a set empty by visiting every configuration its slots
reach, and on a burr of high level a set of four or five slots reaches hundreds of thousands, almost all
of them with some part free to leave. Two facts of the semantics make that unnecessary: a present part
only ever blocks (no move needs another part to be there), and every move can be undone (a slide by the
reverse slide, a departure by the arrival at the offsets it left). So leaving as soon as one can loses
nothing, and whether a set has a plan is decided over *reduced* configurations, from which nothing
more can leave:

* `escape_set(ag, movable)`: the slots of `movable` that some sequence of their slides and
  departures takes out of the target assembly (every other slot staying in place);
* `has_plan(ag, start, movable)`: a plan from `start` back to the target moving only `movable`
  exists exactly when slides, and departures of escaping slots, lead from `start` to the target minus
  some escaping slots, every faulty slot mended or gone on the way (`SEMANTICS.md` proves both).

The moves searched are every slide of the engine inside the position bound (also those with a clear ray
ahead, which the grounded universe replaces by a departure) and every departure: a superset of the
moved-set search's universe, so a set found empty here is empty there too.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Iterator, Optional

from ...geometry.displacement import FREE
from ...model.assembly import DIRECTIONS
from ...model.state import NO_OFFSET
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.partial_offers import Config, Move, SeparabilityCapped, Universe, bits, closure, separable_at

Node = tuple[Config, int]     # a reduced configuration and the mask of present slots still faulty
CAP = 200_000                 # reduced configurations per search before it gives up (Undecided)


class Undecided(Exception):
    """A search passed its cap or its deadline, or a separability verdict it relied on was itself cut by a
    cap."""


def within(seen: int, cap: int, deadline: float | None) -> None:
    """Raise Undecided once a search has kept more than `cap` configurations or passed `deadline`
    (time.perf_counter; only where a time limit was asked for, so that references never depend on it)."""
    if seen > cap:
        raise Undecided(f"more than {cap} configurations")
    if deadline is not None and time.perf_counter() > deadline:
        raise Undecided("past the time limit")


def escape_set(ag: AssemblyGrounding, movable: int, cap: int = CAP, deadline: float | None = None) -> tuple[int, int]:
    """The mask of `movable` slots that can be taken out of the target assembly by slides and departures
    of `movable` slots only, and the reduced configurations searched (kept per assembly and set: every
    task on the assembly asks the same question). Raises Undecided past `cap` or `deadline`."""
    kept = ag.memo(ESCAPES)
    if (movable, cap) not in kept:
        kept[movable, cap] = _escape_set(ag, movable, cap, deadline)
    return kept[movable, cap]


ESCAPES = "escape sets"   # the memo of `AssemblyGrounding` that keeps them: (movable, cap) -> escape set


def _escape_set(ag: AssemblyGrounding, movable: int, cap: int, deadline: float | None) -> tuple[int, int]:
    home = tuple(NO_OFFSET for _ in ag.world.ids)
    escaped, seen = 0, set()
    start, gone = _reduce(ag, home, movable, movable)
    escaped |= gone
    seen.add(start)
    queue = deque([start])
    while queue and escaped != movable:
        config = queue.popleft()
        for _, nxt in engine_slides(ag, config, movable):
            reduced, gone = _reduce(ag, nxt, movable, movable)
            escaped |= gone
            if reduced not in seen:
                seen.add(reduced)
                within(len(seen), cap, deadline)
                queue.append(reduced)
    return escaped, len(seen)


def has_plan(ag: AssemblyGrounding, start: Node, movable: int, cap: int = CAP,
             deadline: float | None = None) -> tuple[bool, int]:
    """Is there a plan from `start` (offsets, None when absent; faulty mask) to the target that moves only
    `movable` slots? And the reduced configurations searched (the escape set's included the first time).
    Raises Undecided past `cap` or `deadline`."""
    config, bad = start
    absent = sum(1 << i for i, o in enumerate(config) if o is None)
    if absent & ~movable or bad & ~movable:
        return False, 0
    may_leave, spent = escape_set(ag, movable, cap, deadline)
    if absent & ~may_leave:
        return False, spent      # a missing slot comes in only the way it could leave from the target
    first = _settle(ag, (config, bad), movable, may_leave)
    seen, queue = {first}, deque([first])
    while queue:
        node = queue.popleft()
        if _restored(node):
            return True, spent + len(seen)
        for _, nxt in engine_slides(ag, node[0], movable):
            settled = _settle(ag, (nxt, node[1]), movable, may_leave)
            if settled not in seen:
                seen.add(settled)
                within(len(seen), cap, deadline)
                queue.append(settled)
    return False, spent + len(seen)


def _restored(node: Node) -> bool:
    """The target minus some slots that can leave it: every present slot home, nothing faulty."""
    config, bad = node
    return bad == 0 and all(o == NO_OFFSET for o in config if o is not None)


def _settle(ag: AssemblyGrounding, node: Node, movable: int, may_leave: int) -> Node:
    """Every slot of `may_leave` that can leave leaves (with its faults), every faulty slot with a clear
    ray is mended: both lose nothing (module docstring)."""
    config, bad = node
    config, gone = _reduce(ag, config, movable, may_leave)
    bad &= ~gone
    table = ag.offers
    for i in bits(bad):
        if table.clear(config, i):
            bad &= ~(1 << i)
    return config, bad


def _reduce(ag: AssemblyGrounding, config: Config, movable: int, may_leave: int) -> tuple[Config, int]:
    """`config` after every group of `may_leave` slots that can leave has left, and the slots that left."""
    table, gone = ag.offers, 0
    while True:
        found = leaving_group(ag, config, table.pairs_of(config), may_leave & movable)
        if found is None:
            return config, gone
        gone |= found[0]
        config = tuple(None if found[0] >> i & 1 else o for i, o in enumerate(config))


def leaving_group(ag: AssemblyGrounding, config: Config, pairs, candidates: int, must: int | None = None) -> Optional[tuple[int, int]]:
    """A group of present `candidates` (holding slot `must`, when given) that can leave `config`, and the
    index of its direction; None when none can. A group can leave along `d` when nothing outside it is
    anywhere ahead of a member, so the smallest such group holding a slot is its closure under "ahead
    of", and it must be separable where it is; a subset of a separable group is separable, so trying
    these closures finds a group whenever one can leave."""
    candidates &= pairs.present
    seeds = bits(candidates) if must is None else [must] if candidates >> must & 1 else []
    for d in range(len(DIRECTIONS)):
        ahead = [sum(1 << j for j in bits(pairs.present) if row[j] is not None and row[j][d] < FREE)
                 for row in pairs.rows]
        for s in seeds:
            group = closure(ahead, s)
            if group & ~candidates:
                continue
            if group & (group - 1) == 0 or _separable(ag, config, group):
                return group, d
    return None


def _separable(ag: AssemblyGrounding, config: Config, group: int) -> bool:
    """§9's separability of `group` where it is; a negative verdict cut by the level search's cap is not
    a proof, so it stops the decision."""
    try:
        return separable_at(ag.world, group, [config[i] for i in bits(group)], strict=True)  # type: ignore[misc]  # members are present
    except SeparabilityCapped:
        raise Undecided("a separability search was cut by its state cap") from None


def engine_slides(ag: AssemblyGrounding, config: Config, movable: int, leaving: bool = True) -> Iterator[tuple[Move, Config]]:
    """Every engine slide of a group of present `movable` slots inside the position bound, with the
    configuration it leads to (a group with a clear ray ahead slides too, up to the bound); without
    `leaving`, not the slides of a group that could leave along that direction instead. The kernel's
    moves (`partial_offers.OfferTable.moves`) of the engine's universe."""
    universe = Universe.ENGINE if leaving else Universe.LEAVING
    try:
        yield from ag.offers.moves(config, movable, universe, departures=False, strict=True)
    except SeparabilityCapped:
        raise Undecided("a separability search was cut by its state cap") from None

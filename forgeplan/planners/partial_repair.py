"""A valid (not minimal) rework plan for assemblies that need partial moves (SEMANTICS.md §9).

The level search's main chain (`geometry.partial.main_chain`: its slides and removals, always taking
the remaining half further apart) is replayed on the actual state until every faulty slot has come
out, then undone in reverse with the target parts: a removal becomes an insertion at the offset the
part left from (a group's separation a `join`, which needs the group back at offset 0), a slide the
opposite slide of the whole original group. Parts absent in the actual state are skipped on the way
out and inserted where the chain took them out on the way back.

Why every step is legal: faults never change what a slot blocks (§1), so the actual state blocks like
the chain's state minus its absent parts, and fewer parts only opens ways; on the way back every slot
is in its chain position again, where the forward step was legal, and each step is its reverse.
"""

from __future__ import annotations

from ..geometry.displacement import shifted
from ..geometry.partial import Move, main_chain
from ..model.actions import Action, Insert, Join, Remove, Separate, Slide
from ..model.assembly import DIRECTIONS
from ..model.errors import ForgeplanError
from ..model.state import NO_OFFSET, State
from ..semantics.diagnosis import faulty_slots
from ..semantics.engine import World

OPPOSITE = {d: DIRECTIONS[DIRECTIONS.index(d) ^ 1] for d in DIRECTIONS}


def partial_repair_plan(world: World, actual: State, target: State) -> list[Action] | None:
    """Out along the main chain until every faulty slot is out, back in reverse; None when the chain
    cannot reach a faulty slot (it sits in a half the chain takes out whole and displaced)."""
    pending = set(faulty_slots(world, actual, target))
    moves, rest = main_chain(world.assembly)
    state, done = actual, []
    plan: list[Action] = []
    offsets = {p: NO_OFFSET for p in world.ids}
    for move in moves:
        if not pending:
            break
        state = _forward(world, state, move, offsets, plan)
        done.append((move, {p: offsets[p] for p in move.parts}))
        for p in move.parts:
            offsets[p] = shifted(offsets[p], move.direction, move.distance) if move.distance else offsets[p]
        if move.distance is None:
            pending -= {world.index[p] for p in move.parts}
    last = [p for p in rest if world.index[p] in pending]
    try:
        for p in last:   # the part the chain never takes out comes out alone, free of everything
            if state.slots[world.index[p]].present:
                state = _do(world, state, Remove(state.slots[world.index[p]].occupant), plan)
            state = _do(world, state, Insert(p, offsets[p]), plan)
        for move, before in reversed(done):
            state = _back(world, state, move, before, plan)
    except _Stuck:
        return None
    return plan if world.equivalent(state, target) else None


class _Stuck(ForgeplanError):
    """The chain cannot be undone here (a displaced group would have to join back)."""


def _do(world: World, state: State, a: Action, plan: list[Action]) -> State:
    if world.check(state, a) is not None:
        raise _Stuck(str(a))
    plan.append(a)
    return world.apply(state, a)


def _forward(world: World, state: State, move: Move, offsets: dict, plan: list[Action]) -> State:
    """The chain's move on the parts present (by their occupants' ids), skipped when none is."""
    here = [state.slots[world.index[p]].occupant for p in move.parts if state.slots[world.index[p]].present]
    if not here:
        return state
    if move.distance is not None:
        return _do(world, state, Slide(tuple(here), move.direction, move.distance), plan)
    return _do(world, state, Remove(here[0]) if len(here) == 1 else Separate(tuple(here), move.direction), plan)


def _back(world: World, state: State, move: Move, before: dict, plan: list[Action]) -> State:
    """The reverse of a chain move, on the target parts."""
    if move.distance is not None:
        return _do(world, state, Slide(move.parts, OPPOSITE[move.direction], move.distance), plan)
    if len(move.parts) == 1:
        p = move.parts[0]
        return _do(world, state, Insert(p, before[p]), plan)
    offsets = [before[p] for p in move.parts]
    return _do(world, state, Join(move.parts, move.direction, offsets if any(o != NO_OFFSET for o in offsets) else None),
               plan)

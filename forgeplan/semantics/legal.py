"""The grounded actions on offer in one state: the repair search, baselines and masks step with these.

The parameters come from `forgeplan.semantics.grounded` (lock values, the repairing turn, the candidate
groups); this module lists, per state, the actions whose part is in the right place for them, legal or
not: the single-part ones (`slot_actions`) and those of each offer the world's move model names
(`semantics.moves.Offer`, one function per offer in `OFFERS`), and filters them with the engine
(`legal_actions`). Which offers a state has is the move model's answer, not a question of the kind here.
Each function takes the assembly grounding (`semantics.assembly_grounding`), whose answers it reuses.
"""

from __future__ import annotations

from ..model.actions import Action, Insert, Join, Remove, Replace, ResetPose, Rotate, Separate, Slide
from ..model.assembly import DIRECTIONS
from ..model.state import NO_OFFSET, State
from .assembly_grounding import AssemblyGrounding
from .engine import World
from .grounded import lock_action, rotation_fix, separable_groups
from .moves import Offer


def slot_actions(world: World, state: State, i: int) -> list[Action]:
    """Every grounded action on slot i in `state`, legal or not, in canonical order."""
    s = state.slots[i]
    pid = world.ids[i]
    if not s.present:
        return [Insert(pid)]
    out: list[Action] = [Remove(s.occupant), ResetPose(s.occupant)]  # type: ignore[arg-type]  # a present slot has an occupant
    if world.rot_off(i, s):
        fix = rotation_fix(world, i, s.rotation)
        if fix is not None:
            out.append(Rotate(s.occupant, *fix))  # type: ignore[arg-type]  # a present slot has an occupant
    if world.lock[i] is not None and s.occupant == pid:
        out.append(lock_action(world, i, locking=not s.locked))
    if s.occupant != pid:
        out.append(Replace(s.occupant, pid))  # type: ignore[arg-type]  # a present slot has an occupant
    return out


def separable_group_actions(ag: AssemblyGrounding, state: State) -> list[Action]:
    """Grounded separate/join moves (SEMANTICS §5), offered where straight group moves are in play.

    Every separable group of two or more parts (grounded.separable_groups) along every direction:
    separate when all members are in the assembly, join when all are absent. The engine checks
    locks, supports and paths.
    """
    ids = ag.world.ids
    out: list[Action] = []
    for g in sorted(separable_groups(ag), key=lambda m: (bin(m).count("1"), m)):
        members = [j for j in range(len(ids)) if g >> j & 1]
        if g & state.mask == g:
            names = [state.slots[j].occupant for j in members]
            out.extend(Separate(tuple(names), d) for d in DIRECTIONS)
        elif not g & state.mask:
            out.extend(Join(tuple(ids[j] for j in members), d) for d in DIRECTIONS)
    return out


def leaving_group_actions(ag: AssemblyGrounding, state: State) -> list[Action]:
    """Where partial moves are in play (§9): separate for the groups of two or more present parts that can
    leave now (clear rays from where they are), and the joins that undo a separation of the level
    search's main chain (`_chain_joins`). Other joins are judged by the engine when a plan names one,
    not listed (every subset of the absent parts at every offset would be)."""
    from ..geometry.displacement import FREE
    from ..geometry.partial import movable_groups

    world = ag.world
    here = tuple(j for j in range(len(world.ids)) if state.mask >> j & 1)
    out: list[Action] = []
    for g, d, room in movable_groups(world.assembly, here, tuple(state.slots[j].offset for j in here)):
        if room >= FREE and bin(g).count("1") >= 2:
            out.append(Separate(tuple(state.slots[here[a]].occupant for a in range(len(here)) if g >> a & 1), d))
    return sorted(out, key=lambda a: (len(a.part_ids), a.part_ids, DIRECTIONS.index(a.direction))) + _chain_joins(world, state)


def _chain_joins(world: World, state: State) -> list[Action]:
    """join(G, d) at the offsets G left from, for every group separation of the main chain
    (`geometry.partial.main_chain`, the way the repair search takes apart and back) whose members are
    all absent: the joins a partial-move repair needs on its way back."""
    from ..geometry.displacement import shifted
    from ..geometry.partial import main_chain

    offsets = {p: NO_OFFSET for p in world.ids}
    out: list[Action] = []
    for move in main_chain(world.assembly)[0]:
        if move.distance is not None:
            offsets.update((p, shifted(offsets[p], move.direction, move.distance)) for p in move.parts)
        elif len(move.parts) >= 2 and not any(state.mask >> world.index[p] & 1 for p in move.parts):
            at = [offsets[p] for p in move.parts]
            out.append(Join(move.parts, move.direction, at if any(o != NO_OFFSET for o in at) else None))
    return out


def displacement_actions(ag: AssemblyGrounding, state: State) -> list[Action]:
    """Slides and insertions at an offset (SEMANTICS §9), offered where partial moves are in play.

    Every group of present parts that can move along a direction (`geometry.partial.movable_groups`),
    by every distance it has room for up to twice the position bound along the direction's axis (the
    universe's `slide_steps`; the engine keeps every member within the bound), and all present parts
    together (a translation of the whole, which only changes the offsets); every absent target part at
    every non-zero offset within the assembly's extent from which it has a clear ray; and the
    universe's arrivals into this configuration (`landing_arrivals`: inserts and joins at the offsets a
    departure from it left, within LANDING_DEPTH moves of the target), so that every plan of the
    universe within that depth, every proven reference among them, is on offer step by step.
    """
    from ..geometry.displacement import arrival_offsets, position_bound, shapes
    from ..geometry.partial import movable_groups
    from .partial_universe import landing_arrivals

    world = ag.world
    reach, bound = extent(world), position_bound(world.assembly)
    here = tuple(j for j in range(len(world.ids)) if state.mask >> j & 1)
    out: list[Action] = []
    moves = movable_groups(world.assembly, here, tuple(state.slots[j].offset for j in here))
    for g, d, room in sorted(moves, key=lambda m: (bin(m[0]).count("1"), m[0], DIRECTIONS.index(m[1]))):
        names = tuple(state.slots[here[a]].occupant for a in range(len(here)) if g >> a & 1)
        out += [Slide(names, d, k) for k in range(1, min(room, 2 * bound["xyz".index(d[1])]) + 1)]
    if here:
        everything = tuple(state.slots[j].occupant for j in here)
        out += [Slide(everything, d, k) for d in DIRECTIONS for k in range(1, reach + 1)]
    sh, offsets = shapes(world.assembly), [state.slots[j].offset for j in here]
    for i in range(len(world.ids)):
        if not state.mask >> i & 1:
            at = arrival_offsets(sh, i, here, offsets, world.parts[i].removal_dirs, reach)
            out += [Insert(world.ids[i], o) for o in at if o != NO_OFFSET]
    return out + landing_arrivals(ag, tuple(s.offset if s.present else None for s in state.slots))


def extent(world: World) -> int:
    """The assembly's largest extent in voxels: how far slides and offsets are offered (beyond it a
    displaced part is clear of the others)."""
    voxels = [v for p in world.parts for v in p.voxels]
    return max(max(v[a] for v in voxels) - min(v[a] for v in voxels) + 1 for a in range(3))


# what the move model may offer beyond single-part actions -> the grounded actions of that offer in a state
OFFERS = {
    Offer.SEPARABLE_GROUPS: separable_group_actions,
    Offer.LEAVING_GROUPS: leaving_group_actions,
    Offer.DISPLACEMENTS: displacement_actions,
}


def offered_actions(ag: AssemblyGrounding, state: State) -> list[Action]:
    """The grounded actions of every offer of the world's move model (`MoveModel.offers`), legal or not."""
    return [a for offer in ag.world.moves.offers for a in OFFERS[offer](ag, state)]


def legal_actions(ag: AssemblyGrounding, state: State, slots=None) -> list[Action]:
    """The grounded actions legal in `state` (on the slots `slots`, default all; then every offer)."""
    world = ag.world
    idx = range(len(world.ids)) if slots is None else slots
    single = [a for i in idx for a in slot_actions(world, state, i) if world.check(state, a) is None]
    return single + [a for a in offered_actions(ag, state) if world.check(state, a) is None]

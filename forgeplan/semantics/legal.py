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
from .partial_offers import Universe


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
    leave now (the kernel's departures, `partial_offers.OfferTable.moves`), and the joins that undo a
    separation of the level search's main chain (`_chain_joins`). Other joins are judged by the engine
    when a plan names one, not listed (every subset of the absent parts at every offset would be)."""
    out = [a for a in _kernel_actions(ag, state, departures=True) if isinstance(a, Separate)]
    return sorted(out, key=lambda a: (len(a.part_ids), a.part_ids, DIRECTIONS.index(a.direction))) + _chain_joins(ag.world, state)


def _kernel_actions(ag: AssemblyGrounding, state: State, departures: bool) -> list[Action]:
    """The kernel's moves of every present slot in the engine's universe (every slide inside the position
    bound, a clear ray ahead too; departures when asked), as actions naming the parts there."""
    from .partial_universe import to_action

    config = tuple(s.offset if s.present else None for s in state.slots)
    names = {world_id: s.occupant for world_id, s in zip(ag.world.ids, state.slots) if s.present}
    out: list[Action] = []
    for move, _ in ag.offers.moves(config, state.mask, Universe.ENGINE, departures=departures):
        if move[0] == "out" and move[1] & (move[1] - 1) == 0:
            continue   # a single part's departure is `remove`, a single-part action
        a = to_action(ag.world, config, move)
        assert isinstance(a, (Slide, Separate)), a   # the kernel's slides and departures of two or more
        named = tuple(names[p] for p in a.part_ids)
        out.append(Slide(named, a.direction, a.distance) if isinstance(a, Slide) else Separate(named, a.direction))
    return out


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

    Every slide of the kernel's engine universe (`partial_offers.OfferTable.moves`: every group of
    present parts that can move along a direction, by every distance that keeps its members inside the
    position bound, a clear ray ahead too; the whole assembly's translations among them), by group size,
    group, direction and distance; every absent target part at every non-zero offset of the domain from
    which it has a clear ray (`landings_of`); and the universe's arrivals into this configuration
    (`landing_arrivals`: inserts and joins at the offsets a departure from it left, within LANDING_DEPTH
    moves of the target), so that every plan of the universe within that depth, every proven reference
    among them, is on offer step by step.
    """
    from .partial_universe import landing_arrivals

    world, config = ag.world, tuple(s.offset if s.present else None for s in state.slots)
    slides = _kernel_actions(ag, state, departures=False)
    key = {world.ids[i]: i for i in range(len(world.ids))} | {p: world.spare_slot[p] for p in world.spare_slot}
    out: list[Action] = sorted(slides, key=lambda a: (len(a.part_ids), sum(1 << key[p] for p in a.part_ids),
                                                       DIRECTIONS.index(a.direction), a.distance))
    for i in range(len(world.ids)):
        if config[i] is None:
            out += [Insert(world.ids[i], o) for o in ag.offers.landings_of(config, i) if o != NO_OFFSET]
    return out + landing_arrivals(ag, config)


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

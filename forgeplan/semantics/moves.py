"""The move model of a task's kind: the rules that differ between straight, group and partial moves.

The kind of a task (`MoveKind`) is a property of its assembly (`assembly_kind`): straight moves
(SEMANTICS.md §3), where single parts come out along straight rays; group moves (§5), where only
separable groups do; partial moves (§9), where every part moves in all six directions and straight moves
do not take the assembly apart. It is decided here, once per world (`move_model`), and every rule that
differs by kind is a method of the kind's model:

* how blocking is read (`blockers`, `free_direction`): from the target geometry, or from where
  displaced parts are;
* whether a part may arrive at an offset and whether slides exist (`offsets_refused`, `slides_refused`);
* how the separability of a group is decided (`separable`, `where`): by straight moves (§5) or by
  partial moves from the members' offsets (§9);
* which actions beyond the single-part ones a state offers (`offers`, computed by `semantics.legal`).

The engine holds its world's model (`World.moves`) and the offer of a state asks it; neither asks the
kind. The grounded task (`semantics.grounded`) re-exports the kind and reads it from here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import Iterable, Sequence

from ..geometry.displacement import FREE, shapes
from ..geometry.partial import needs_partial_moves, separates_completely
from ..geometry.separation import is_separable, needs_group_moves
from ..model.assembly import DIRECTIONS, Assembly
from ..model.state import NO_OFFSET, Offset, State

Paths = Sequence[tuple[str, int]]   # a slot's removal directions with their target-geometry blocker masks


class MoveKind(Enum):
    """Which moves a task's universe holds: it decides which planners accept the task."""

    STRAIGHT = "straight"   # single parts along straight rays (SEMANTICS §3)
    GROUPS = "groups"       # and separable groups (§5): straight moves do not take every part out alone
    PARTIAL = "partial"     # and slides to offsets (§9): straight moves do not take the assembly apart


class Offer(Enum):
    """The actions beyond the single-part ones that a state may offer (each computed by `semantics.legal`)."""

    SEPARABLE_GROUPS = "separable groups"   # separate/join of every separable set of slots (§5)
    LEAVING_GROUPS = "leaving groups"       # separate of the groups that can leave now, the main chain's joins (§9)
    DISPLACEMENTS = "displacements"         # slides, insertions at offsets and the universe's arrivals (§9)


class MoveModel(ABC):
    """The rules of one kind of moves on one assembly. `groups`: whether separate/join are in play; None
    means exactly when the kind needs them (tests force it to study group moves on small fixtures)."""

    def __init__(self, asm: Assembly, groups: bool | None = None):
        self.assembly, self._groups = asm, groups

    @property
    def groups(self) -> bool:
        if self._groups is None:
            self._groups = self._needs_groups()
        return self._groups

    @property
    @abstractmethod
    def kind(self) -> MoveKind: ...

    @abstractmethod
    def _needs_groups(self) -> bool: ...

    @property
    @abstractmethod
    def offers(self) -> tuple[Offer, ...]: ...

    @abstractmethod
    def blockers(self, state: State, i: int, d: str, along: int, at: Offset | None = None) -> int:
        """Mask of the present slots (other than `i`) that block slot `i` along `d`; `along` is slot
        `i`'s target-geometry blocker mask along `d`, `at` slot `i`'s offset instead of its own."""

    @abstractmethod
    def free_direction(self, state: State, i: int, paths: Paths, at: Offset | None = None) -> str | None:
        """The first of slot `i`'s removal directions (`paths`) with a clear ray, or None."""

    @abstractmethod
    def where(self, offsets: tuple[Offset, ...] | None) -> tuple[Offset, ...] | None:
        """The offsets a group's separability depends on (None: the target arrangement decides)."""

    @abstractmethod
    def separable(self, members: Iterable[str], offsets: tuple[Offset, ...] | None) -> bool:
        """Can these parts (at `offsets`, catalog order; None: the target) be taken apart in free space?"""

    @abstractmethod
    def offsets_refused(self, verb: str) -> str | None:
        """Why a part may not be `verb` (inserted, joined) at an offset; None when it may."""

    @abstractmethod
    def slides_refused(self) -> str | None:
        """Why `slide` does not apply to this assembly; None when it does."""


class StraightMoves(MoveModel):
    """Straight moves (§3), with group moves (§5) where the assembly needs them: nothing is ever
    displaced, so the target geometry's blocker masks answer every blocking question."""

    @property
    def kind(self) -> MoveKind:
        return MoveKind.GROUPS if self.groups else MoveKind.STRAIGHT

    def _needs_groups(self) -> bool:
        return needs_group_moves(self.assembly)

    @property
    def offers(self) -> tuple[Offer, ...]:
        return (Offer.SEPARABLE_GROUPS,) if self.groups else ()

    def blockers(self, state: State, i: int, d: str, along: int, at: Offset | None = None) -> int:
        return along & state.mask & ~(1 << i)

    def free_direction(self, state: State, i: int, paths: Paths, at: Offset | None = None) -> str | None:
        others = state.mask & ~(1 << i)
        for d, m in paths:
            if not m & others:
                return d
        return None

    def where(self, offsets: tuple[Offset, ...] | None) -> None:
        return None   # nothing is displaced

    def separable(self, members: Iterable[str], offsets: tuple[Offset, ...] | None) -> bool:
        return is_separable(self.assembly, members)   # §5: straight moves take it apart

    def offsets_refused(self, verb: str) -> str | None:
        return f"{self.assembly.assembly_id} comes apart with straight moves: parts are {verb} at their target position only"

    def slides_refused(self) -> str | None:
        return (f"{self.assembly.assembly_id} comes apart with straight moves: slide exists only for assemblies "
                "that need partial moves")


class PartialMoves(MoveModel):
    """Partial moves (§9): parts slide to offsets, arrive at offsets, and block from where they are."""

    @property
    def kind(self) -> MoveKind:
        return MoveKind.PARTIAL

    def _needs_groups(self) -> bool:
        return True

    @property
    def offers(self) -> tuple[Offer, ...]:
        return ((Offer.LEAVING_GROUPS,) if self.groups else ()) + (Offer.DISPLACEMENTS,)

    def blockers(self, state: State, i: int, d: str, along: int, at: Offset | None = None) -> int:
        others = state.mask & ~(1 << i)
        mine = state.slots[i].offset if at is None else at
        if mine == NO_OFFSET and not displaced(state):
            return along & others
        gaps, k, m = shapes(self.assembly).gaps, DIRECTIONS.index(d), 0
        j = 0
        while others >> j:
            if others >> j & 1:
                o = state.slots[j].offset
                if gaps(i, j, (o[0] - mine[0], o[1] - mine[1], o[2] - mine[2]))[k] < FREE:
                    m |= 1 << j
            j += 1
        return m

    def free_direction(self, state: State, i: int, paths: Paths, at: Offset | None = None) -> str | None:
        for d, m in paths:
            if not self.blockers(state, i, d, m, at):
                return d
        return None

    def where(self, offsets: tuple[Offset, ...] | None) -> tuple[Offset, ...] | None:
        return offsets

    def separable(self, members: Iterable[str], offsets: tuple[Offset, ...] | None) -> bool:
        return separates_completely(self.assembly, members, offsets)   # §9: partial moves take it apart

    def offsets_refused(self, verb: str) -> str | None:
        return None

    def slides_refused(self) -> str | None:
        return None


def displaced(state: State) -> bool:
    """Does some present part sit away from its target position by a slide (SEMANTICS §9)?"""
    return any(s.offset != NO_OFFSET for s in state.slots)


def move_model(asm: Assembly, groups: bool | None = None) -> MoveModel:
    """The move model of `asm`'s kind: partial moves where every part may move in all six directions and
    straight moves do not take it apart (`geometry.partial.needs_partial_moves`), else straight moves."""
    return PartialMoves(asm, groups) if needs_partial_moves(asm) else StraightMoves(asm, groups)


def assembly_kind(asm: Assembly) -> MoveKind:
    """The kind of every task on `asm`."""
    return move_model(asm).kind

"""The groups a grounded group-move export names, per direction, and the directions it keeps."""

from __future__ import annotations

from dataclasses import dataclass

from ...model.assembly import DIRECTIONS
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.grounded import group_directions, group_names, separable_groups, undominated_directions
from ...semantics.task import Task


@dataclass(frozen=True)
class GroupCandidates:
    """The groups (two or more slots, catalog order) that separate and join moves name, per direction.

    SEMANTICS §5 asks of G only that it is separable in free space and that `d` is a removal
    direction of every member; everything else (presence, blockers, locks, supports) depends on the
    state and becomes a literal precondition. So `groups[d]`, the candidates along `d`, are exactly
    the separable sets whose members all allow `d`, the same for separate and join.

    `moves[d]` are the groups whose move along `d` the default export keeps. A move of G has the same
    effect along every direction; only the blockers that must be absent differ. Where the blockers of
    G along `d` include those along another direction (or equal those of an earlier one), every state
    that allows `d` allows that one too, so dropping `d` changes no reachable state and no plan cost —
    the argument that already drops such directions from a single-part move's free paths.
    """

    groups: dict[str, tuple[tuple[str, ...], ...]]
    moves: dict[str, tuple[tuple[str, ...], ...]]

    def counts(self) -> dict[str, dict[str, int]]:
        """Candidate groups per direction, and the group moves per direction the default export keeps."""
        return {"candidates": {d: len(g) for d, g in self.groups.items()},
                "exported": {d: len(g) for d, g in self.moves.items()}}

    def to_json(self) -> dict:
        return {"counts": self.counts(), "candidates": {d: [list(g) for g in v] for d, v in self.groups.items()},
                "exported": {d: [list(g) for g in v] for d, v in self.moves.items()}}


def candidate_groups(ag: AssemblyGrounding) -> GroupCandidates:
    """Every group a separate or join can name; none when the assembly needs no group moves.

    Like `semantics.legal.separable_group_actions`, assemblies that come apart one part at a time keep
    the nine FORGE actions only (SEMANTICS §5).
    """
    world = ag.world
    groups: dict[str, list] = {d: [] for d in DIRECTIONS}
    moves: dict[str, list] = {d: [] for d in DIRECTIONS}
    for g in separable_groups(ag):
        along = group_directions(world, g)
        for d in along:
            groups[d].append(group_names(world, g))
        for d in undominated_directions(world, g, along):
            moves[d].append(group_names(world, g))
    return GroupCandidates({d: tuple(v) for d, v in groups.items()}, {d: tuple(v) for d, v in moves.items()})


def candidate_counts(task: Task) -> dict[str, dict[str, int]]:
    """Candidate groups per direction in the grounded export of `task` (all zero without group moves)."""
    return candidate_groups(AssemblyGrounding(task.world)).counts()

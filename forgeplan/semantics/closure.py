"""Dependency closure of the faults (FORGE eq. 4, SEMANTICS §6)."""

from __future__ import annotations

from ..model.state import State
from .engine import World


def dependency_closure(world: World, actual: State, faulty: list[int]) -> list[int]:
    """Slot indices reachable from the faulty slots over blocking, support contact and lock edges."""
    members = set(faulty)
    frontier = list(faulty)
    n = len(world.ids)
    while frontier:
        i = frontier.pop()
        new: set[int] = set()
        for _, m in world.dir_masks[i]:                      # N_b: present blockers
            new.update(j for j in range(n) if (m & actual.mask) >> j & 1)
        for j in range(n):                                   # N_c: what it rests on, present
            if (world.supports_mask[i] >> j & 1) and actual.slots[j].present:
                new.add(j)
        for j in world.holders[i]:                           # N_k: engaged locks holding it
            if actual.slots[j].present and actual.slots[j].locked:
                new.add(j)
        for j in new - members:
            members.add(j)
            frontier.append(j)
    return sorted(members)

"""Dependency closure of the faults (FORGE eq. 4, SEMANTICS §6), and its layers.

Eq. 4 grows `D^0 = F` by `D^{k+1} = D^k ∪ N_b(D^k) ∪ N_c(D^k) ∪ N_k(D^k)` to a fixed point. The closure
is the fixed point; its layers are the slots each iteration adds (`D^{k+1} \\ D^k`): layer 0 the faulty
slots, layer 1 what blocks, supports or locks them, layer 2 what does so to layer 1, and so on. The
structured training targets (`llm.targets`) order a reference's actions by these layers.
"""

from __future__ import annotations

from ..model.state import State
from .engine import World


def neighbours(world: World, actual: State, i: int) -> set[int]:
    """N_b, N_c and N_k of one slot: its present blockers, the present parts it rests on, the engaged
    locks that hold it."""
    n = len(world.ids)
    found: set[int] = set()
    for _, m in world.dir_masks[i]:                          # N_b: present blockers
        found.update(j for j in range(n) if (m & actual.mask) >> j & 1)
    for j in range(n):                                       # N_c: what it rests on, present
        if (world.supports_mask[i] >> j & 1) and actual.slots[j].present:
            found.add(j)
    for j in world.holders[i]:                               # N_k: engaged locks holding it
        if actual.slots[j].present and actual.slots[j].locked:
            found.add(j)
    return found


def closure_layers(world: World, actual: State, faulty: list[int]) -> list[list[int]]:
    """The iterations of eq. 4: layer k holds the slots first reached at iteration k, each layer sorted;
    layer 0 is the faulty slots (none: no layer)."""
    members = set(faulty)
    layers = [sorted(members)] if members else []
    while layers:
        new = set().union(*(neighbours(world, actual, i) for i in layers[-1])) - members
        if not new:
            break
        members |= new
        layers.append(sorted(new))
    return layers


def dependency_closure(world: World, actual: State, faulty: list[int]) -> list[int]:
    """Slot indices reachable from the faulty slots over blocking, support contact and lock edges."""
    return sorted(i for layer in closure_layers(world, actual, faulty) for i in layer)

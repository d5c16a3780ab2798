"""A simple, valid (not minimal) rework plan: free the faulty parts, repair them, put everything back.

This is the reference of `forgeplan task make` before any optimisation and the fallback when no solver
is asked for. Strategy: for each fault, unlock the locks holding the part and recursively remove the
present blockers of its least-blocked direction; apply the fault's direct repair; reinsert the removed
parts in reverse order; re-engage every lock. If that fails (supports can make reverse order
infeasible) a greedy best-first search over the grounded actions takes over.
"""

from __future__ import annotations

import heapq
import itertools

from ..geometry.graphs import disassembly_layers
from ..model.actions import Action, Insert, Remove
from ..model.state import State
from ..semantics.assembly_grounding import AssemblyGrounding
from ..semantics.diagnosis import diagnose, repair_action
from ..semantics.engine import World
from ..semantics.grounded import lock_action
from ..semantics.legal import legal_actions


class _RepairSearch:
    def __init__(self, world: World, state: State):
        self.w, self.state = world, state
        self.plan: list[Action] = []
        self.removed: list[int] = []
        self.unlocked: list[int] = []

    def do(self, a: Action) -> None:
        self.state = self.w.step(self.state, a, len(self.plan))
        self.plan.append(a)

    def release(self, i: int) -> None:
        for j in self.w.holders[i]:
            s = self.state.slots[j]
            if s.present and s.locked:
                self.do(lock_action(self.w, j, locking=False))
                self.unlocked.append(j)

    def make_reachable(self, i: int, stack: frozenset[int] = frozenset()) -> None:
        """Unlock and clear slot i so that it can be removed, re-posed or inserted.

        The direction chosen is the one with the fewest present blockers among those whose blockers
        are not already being cleared further up the recursion (which would be a cycle).
        """
        self.release(i)
        if self.w.free_direction(self.state, i) is not None:
            return
        others = self.state.mask & ~(1 << i)
        busy = sum(1 << j for j in stack | {i})
        options = sorted((bin(m & others).count("1"), d, m & others) for d, m in self.w.dir_masks[i] if not m & others & busy)
        if not options:
            self.peel(i)
            return
        _, _, mask = options[0]
        for j in range(len(self.w.ids)):
            if mask >> j & 1 and self.state.slots[j].present:
                self.take_out(j, stack | {i})

    def peel(self, i: int) -> None:
        """Interlocked blockers (burrs): take out free parts, shallowest disassembly layer first,
        until slot i is free. Removability only grows as parts leave, so this terminates."""
        layer = {self.w.index[p]: k for k, ids in enumerate(disassembly_layers(self.w.assembly)) for p in ids}
        while self.w.free_direction(self.state, i) is None:
            free = [j for j in range(len(self.w.ids)) if j != i and self.state.slots[j].present
                    and self.w.check(self.state, Remove(self.state.slots[j].occupant)) is None]  # type: ignore[arg-type]  # a present slot has an occupant
            if not free:
                raise RuntimeError(f"cannot clear {self.w.ids[i]}")
            j = min(free, key=lambda j: (layer.get(j, 0), j))
            self.do(Remove(self.state.slots[j].occupant))  # type: ignore[arg-type]  # a present slot has an occupant
            self.removed.append(j)

    def take_out(self, j: int, stack: frozenset[int]) -> None:
        s = self.state.slots[j]
        if s.locked:
            self.do(lock_action(self.w, j, locking=False))
            self.unlocked.append(j)
        self.make_reachable(j, stack)
        if self.state.slots[j].present:  # peeling may already have taken it out
            self.do(Remove(self.state.slots[j].occupant))  # type: ignore[arg-type]  # a present slot has an occupant
            self.removed.append(j)

    def reinsert(self) -> bool:
        """Put every removed part back, each as soon as it can go in (supports may force the order)."""
        pending = [j for j in reversed(self.removed) if not self.state.slots[j].present]
        while pending:
            j = next((j for j in pending if self.w.check(self.state, Insert(self.w.ids[j])) is None), None)
            if j is None:
                return False
            self.do(Insert(self.w.ids[j]))
            pending.remove(j)
        return True


def repair_plan(world: World, actual: State, target: State, node_limit: int = 20000) -> list[Action] | None:
    """A valid plan from `actual` to a target-equivalent state, or None if none was found (straight and
    group moves; `planners.registry.feasible_plan` gives partial-move tasks to `partial_repair`)."""
    try:
        plan = _structured(world, actual, target)
        if plan is not None:
            return plan
    except Exception:  # noqa: BLE001 - any failure of the heuristic hands over to the search
        pass
    return greedy_search(world, actual, target, node_limit)


def _structured(world: World, actual: State, target: State) -> list[Action] | None:
    p = _RepairSearch(world, actual)
    for m in diagnose(world, actual, target):
        i = world.index[m["part_id"]]
        if m["type"] == "interference_lock":
            continue
        s = p.state.slots[i]
        if i in p.removed or (not s.present and m["type"] != "missing_part"):
            continue  # will come back at its target pose when reinserted
        p.make_reachable(i)
        if i in p.removed:  # taken out while clearing: it comes back at its target pose
            continue
        if p.state.slots[i].locked:  # re-posing or turning a lock part needs it disengaged
            p.do(lock_action(world, i, locking=False))
        act = repair_action(world, p.state, i, m["type"])
        if act is None:  # orientation with no single-axis fix: take it out and put it back
            p.do(Remove(p.state.slots[i].occupant))  # type: ignore[arg-type]  # a present slot has an occupant
            act = Insert(world.ids[i])
        p.do(act)
    if not p.reinsert():
        return None
    for j in range(len(world.ids)):
        s = p.state.slots[j]
        if world.lock[j] is not None and s.present and not s.locked and target.slots[j].locked:
            p.do(lock_action(world, j, locking=True))
    return p.plan if world.equivalent(p.state, target) else None


def _distance(world: World, state: State, target: State) -> int:
    return len(world.differences(state, target))


def greedy_search(world: World, actual: State, target: State, node_limit: int) -> list[Action] | None:
    """Greedy best-first search on the number of differing slot fields (complete up to `node_limit`)."""
    counter = itertools.count()
    frontier = [(_distance(world, actual, target), next(counter), actual)]
    parent: dict[State, tuple[State, Action] | None] = {actual: None}
    offers = AssemblyGrounding(world)   # the grounded offer of each state, its answers kept for this search
    while frontier and len(parent) <= node_limit:
        h, _, state = heapq.heappop(frontier)
        if h == 0:
            plan = []
            while parent[state] is not None:
                prev, a = parent[state]  # type: ignore[misc]  # the loop condition excludes None
                plan.append(a)
                state = prev
            return plan[::-1]
        for a in legal_actions(offers, state):
            nxt = world.apply(state, a)
            if nxt not in parent:
                parent[nxt] = (state, a)
                heapq.heappush(frontier, (_distance(world, nxt, target), next(counter), nxt))
    return None

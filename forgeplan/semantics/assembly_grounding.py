"""What the grounded tasks on one compiled assembly share (`AssemblyGrounding`), and who owns it.

A grounded task (`semantics.grounded.GroundedTask`) answers questions about its task; the answers that
depend on the assembly alone are kept here, so that the tasks on one assembly compute them once: §9's
offer table (`semantics.partial_offers.OfferTable`) and, by name in `memo`, the separable groups, the
rotation values per slot state, the landing indexes, the moved-set search's escape sets and results,
clingo's rotation facts and clingo's groundings (`planners.asp.grounding.groundings`). Nothing else keeps
them, and nothing clears them by name: whoever grounds tasks together owns one and passes it to `ground`
(a benchmark batch, `bench.generate.generate_batch`; a crosscheck batch,
`planners.crosscheck.compare_folders`; a tier run of `perf tier`); a task grounded alone gets its own.
Dropping it drops every answer.
"""

from __future__ import annotations

from .engine import World
from .partial_offers import OfferTable


class AssemblyGrounding:
    """The shared answers of the grounded tasks on `world` (the assembly compiled under its tolerances)."""

    def __init__(self, world: World):
        self.world = world
        self._offers: OfferTable | None = None
        self._memos: dict[str, dict] = {}

    @property
    def offers(self) -> OfferTable:
        """§9's offers per configuration (kept tables; built on first use)."""
        if self._offers is None:
            self._offers = OfferTable(self.world)
        return self._offers

    def memo(self, name: str) -> dict:
        """The answers one concern keeps about this assembly, under its name (its owner bounds its size)."""
        return self._memos.setdefault(name, {})

    def serves(self, world: World) -> bool:
        """Does `world` compile the same assembly under the same tolerances (so that these answers are its)?"""
        return world is self.world or (world.tol == self.world.tol and world.assembly == self.world.assembly)

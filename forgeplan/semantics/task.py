"""A rework task: an assembly, tolerances and three symbolic states; its engine `World` is cached."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.assembly import Assembly
from ..model.state import State, Tolerances
from .engine import World


@dataclass(frozen=True)
class Task:
    sample_id: str
    assembly: Assembly
    tolerances: Tolerances
    initial: State
    actual: State
    target: State

    @property
    def world(self) -> World:
        return world_for(self.assembly, self.tolerances)


_WORLDS: dict = {}


def world_for(asm: Assembly, tol: Tolerances) -> World:
    """Worlds are cached per (assembly, tolerances): compiling one is the costly part of a task."""
    key = (asm, tol)
    w = _WORLDS.get(key)
    if w is None:
        if len(_WORLDS) > 512:
            _WORLDS.clear()
        w = _WORLDS[key] = World(asm, tol)
    return w

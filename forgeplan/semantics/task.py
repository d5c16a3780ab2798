"""A rework task: an assembly, tolerances and three symbolic states, with the engine `World` they compile to."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.assembly import Assembly
from ..model.state import State, Tolerances
from .engine import World


@dataclass(frozen=True)
class Task:
    """`world`: the compiled assembly under the tolerances. Compiling one is the costly part of a task, so
    whoever makes many tasks on one assembly (a benchmark batch, a task generator) compiles it once and
    passes it to each; without one the task compiles its own."""

    sample_id: str
    assembly: Assembly
    tolerances: Tolerances
    initial: State
    actual: State
    target: State
    world: World = field(default=None, compare=False, repr=False)  # type: ignore[assignment]  # compiled in __post_init__ when not given

    def __post_init__(self) -> None:
        if self.world is None:
            object.__setattr__(self, "world", World(self.assembly, self.tolerances))
        elif self.world.assembly is not self.assembly and self.world.assembly != self.assembly \
                or self.world.tol != self.tolerances:
            raise ValueError(f"task {self.sample_id}: its world compiles another assembly or other tolerances")

"""Assembly groundings: the planner encoding grounded once per assembly, shared by its tasks.

A grounding holds two multi-shot controls over `assembly_facts`: encodings/plan.lp with the steps up
to the largest horizon any task asked for, and encodings/bound.lp (the relaxation, kept apart so that
its optimisation carries no step atoms). A task only assigns the `init(F)` externals of its actual
state; its own horizon is enforced by the planner's assumptions (`not active(h+1)`). Every solve call
therefore sees exactly the plans a grounding of that task alone would (encodings/README.md,
"One grounding per assembly"). The groundings are kept on the tasks' assembly grounding
(`semantics.assembly_grounding.AssemblyGrounding`), with its other answers (`groundings`).
"""

from __future__ import annotations

from functools import lru_cache

import clingo
from clingo import Function, Number, ast

from ...io.resources import encodings_dir
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.grounded import GroundedTask, as_grounded
from ...semantics.task import Task
from .facts import Universe, assembly_facts, init_atoms, task_facts, task_universe

# measured on the registry's largest tasks: about 25% faster than clingo's defaults
SOLVER_OPTIONS = ("--configuration=frumpy", "--opt-strategy=usc", "--heuristic=Berkmin",
                  "--forget-on-step=varScores,signs,lemmaScores")
ENCODINGS = encodings_dir()


@lru_cache(maxsize=None)
def _parsed(top: str) -> tuple:
    """The statements of an encoding's top file with its includes, parsed once per process."""
    statements: list = []
    ast.parse_files([str(ENCODINGS / top)], statements.append)
    return tuple(statements)


def load_encoding(ctl: clingo.Control, top: str) -> None:
    """`ctl.load(top)` without parsing the files again (about a tenth of a small task's solve time)."""
    with ast.ProgramBuilder(ctl) as builder:
        for statement in _parsed(top):
            builder.add(statement)


def quiet(code, message) -> None:
    """clingo's informational messages are not forgeplan output; errors still raise."""


class Grounding:
    """The planner and relaxation controls of one assembly over one `Universe`, shared by its tasks."""

    def __init__(self, world, universe: Universe, reduce: bool, alone: GroundedTask | None = None):
        self.world, self.universe, self.reduce = world, universe, reduce
        self.alone = None if alone is None else alone.task
        if alone is None:
            self.facts, domain = assembly_facts(world, universe)
        else:  # one task's own program: its actual state as facts, the closure restricts the grounding
            self.facts, domain = task_facts(alone), []
        self.domain = {atom: clingo.parse_term(atom) for atom in domain}
        self.ctl = self._control("plan.lp", ["--opt-mode=opt", "--models=0", *SOLVER_OPTIONS])
        self.ctl.ground([("base", []), ("state", [Number(0)]), ("check", [Number(0)])])
        self.ctl.assign_external(Function("minimize_actions"), True)
        # the relaxation in a control of its own: no step atoms for its optimisation to carry
        self.bound = self._control("bound.lp", ["--opt-mode=opt", "--models=0", *SOLVER_OPTIONS])
        self.bound.ground([("base", [])])
        self.init: set[str] = set()   # the init atoms assigned true
        self.covered: set = set()     # actual-state keys whose universe `universe` covers
        self.horizon = 0              # steps grounded
        self.simple_grounded = False
        self.widenings = 0            # times in a row a grounding was widened into this one

    def _control(self, top: str, options: list[str]) -> clingo.Control:
        ctl = clingo.Control([*options, "-c", f"prune_directions={int(self.reduce)}", "-c", f"por={int(self.reduce)}"],
                             logger=quiet)
        load_encoding(ctl, top)
        ctl.add("base", [], self.facts.text)
        return ctl

    def start(self, task: Task, minimize_moved: bool) -> None:
        """Assign the task's actual state (and its objective) to the externals (only those that change)."""
        if self.alone is not None and task is not self.alone:
            raise ValueError("a grounding of one task serves that task only")
        init = set(init_atoms(self.world, task.actual)) if self.alone is None else set()
        for atom in init ^ self.init:
            for ctl in (self.ctl, self.bound):
                ctl.assign_external(self.domain[atom], atom in init)
        self.init = init
        self.ctl.assign_external(Function("minimize_moved"), minimize_moved)

    def extend(self, horizon: int) -> None:
        """Ground the steps up to `horizon` in one call (each ground call has a fixed cost)."""
        parts = []
        for t in range(self.horizon + 1, horizon + 1):
            parts += [("step", [Number(t)]), ("state", [Number(t)]), ("check", [Number(t)])]
            if self.simple_grounded:
                parts.append(("simple", [Number(t)]))
        if parts:
            self.ctl.ground(parts)
            self.horizon = horizon

    def ground_simple(self) -> None:
        if not self.simple_grounded:
            self.ctl.ground([("simple", [Number(t)]) for t in range(1, self.horizon + 1)])
            self.simple_grounded = True


def _state_key(task: Task) -> tuple:
    """What a task's universe depends on: each slot's presence, occupant and rotation."""
    return tuple((s.present, s.occupant, s.rotation) for s in task.actual.slots)


WIDENINGS = 8   # uncovered tasks a grounding is widened for before one is made for the next task alone
CLINGO = "clingo groundings"   # the memo of `AssemblyGrounding` that keeps an assembly's `Groundings`


class Groundings:
    """The clingo groundings of the tasks on one assembly grounding (`AssemblyGrounding`), kept on it: at
    most one shared grounding per `reduce`; dropping the assembly grounding drops them.

    A grounding never keeps what earlier batches needed: fault rotations are drawn at random, so nearly
    every task brings rotation values of its own, and a union over every batch an assembly ever had
    would grow with the number of tasks built (and every ground call with it). A `prepare`d batch gets
    a grounding of its own union; a task outside it widens it, at most WIDENINGS times in a row.

    A shared grounding covers every slot, so on a large assembly it costs more to ground than a task's
    own program, which the closure restricts (about 1 s against 0.1 s for a 200-part chain), and less
    per solve afterwards (0.07 s against 0.12 s). So the first task of an assembly is solved on a
    grounding of its own, unless a batch was `prepare`d; the assembly's next task gets a shared one.
    """

    def __init__(self, world):
        self.world = world
        self.cache: dict[bool, Grounding] = {}   # reduce -> the shared grounding
        self.alone_once = False                  # a task was solved on a grounding of its own

    def get(self, g: GroundedTask, reduce: bool, universe: Universe | None = None) -> Grounding:
        """A grounding for the task: the shared one when its universe covers the task's (and `universe`,
        when given), a wider shared one, or, the first time without a `universe`, the task's own."""
        hit = self.cache.get(reduce)
        state = _state_key(g.task)
        if hit is not None and universe is None and state in hit.covered:
            return hit
        if hit is None and universe is None and not self.alone_once:
            self.alone_once = True
            return Grounding(self.world, task_universe(g), reduce, alone=g)
        need = task_universe(g) | universe if universe is not None else task_universe(g)
        if hit is None or not hit.universe.covers(need):
            old = hit if hit is not None and universe is None and hit.widenings < WIDENINGS else None
            hit = Grounding(self.world, need | old.universe if old is not None else need, reduce)
            hit.widenings = old.widenings + 1 if old is not None else 0
            self.cache[reduce] = hit
        hit.covered.add(state)
        return hit

    def prepare(self, tasks: list[GroundedTask], reduce: bool = True) -> None:
        """Ground the batch `tasks` (on this assembly grounding) once, for the union of their universes."""
        union = task_universe(tasks[0])
        for g in tasks[1:]:
            union = union | task_universe(g)
        self.get(tasks[0], reduce, union).covered.update(_state_key(g.task) for g in tasks)

    def clear(self) -> None:
        self.cache.clear()
        self.alone_once = False


def groundings(ag: AssemblyGrounding) -> Groundings:
    """The clingo groundings kept on an assembly grounding."""
    kept = ag.memo(CLINGO)
    if None not in kept:
        kept[None] = Groundings(ag.world)
    return kept[None]


def grounding_for(task: Task | GroundedTask, reduce: bool) -> Grounding:
    """The grounding clingo solves `task` on (`Groundings.get`)."""
    g = as_grounded(task)
    return groundings(g.shared).get(g, reduce)


def prepare(tasks: list[GroundedTask], reduce: bool = True) -> None:
    """Ground the tasks of a batch once per assembly grounding, for the union of their universes; tasks
    with slides are left out (encodings/plan.lp has none)."""
    batches: dict[int, list[GroundedTask]] = {}
    for g in tasks:
        if not g.has_slides:
            batches.setdefault(id(g.shared), []).append(g)
    for batch in batches.values():
        groundings(batch[0].shared).prepare(batch, reduce)

"""Assembly groundings: the planner encoding grounded once per assembly, shared by its tasks.

A grounding holds two multi-shot controls over `assembly_facts`: encodings/plan.lp with the steps up
to the largest horizon any task asked for, and encodings/bound.lp (the relaxation, kept apart so that
its optimisation carries no step atoms). A task only assigns the `init(F)` externals of its actual
state; its own horizon is enforced by the planner's assumptions (`not active(h+1)`). Every solve call
therefore sees exactly the plans a grounding of that task alone would (encodings/README.md,
"One grounding per assembly").
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from functools import lru_cache

import clingo
from clingo import Function, Number, ast

from ...io.resources import encodings_dir
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


class Groundings:
    """The shared groundings of the assemblies solved last in this process (at most `size`: a bench
    worker gets an assembly's batches one after another, so a few suffice).

    A grounding never keeps what earlier batches needed: fault rotations are drawn at random, so nearly
    every task brings rotation values of its own, and a union over every batch an assembly ever had
    would grow with the number of tasks built (and every ground call with it). A `prepare`d batch gets
    a grounding of its own union; a task outside it widens it, at most WIDENINGS times in a row.

    A shared grounding covers every slot, so on a large assembly it costs more to ground than a task's
    own program, which the closure restricts (about 1 s against 0.1 s for a 200-part chain), and less
    per solve afterwards (0.07 s against 0.12 s). So the first task of an assembly is solved on a
    grounding of its own, unless a batch was `prepare`d; the assembly's next task gets a shared one.
    """

    def __init__(self, size: int = 8):
        self.size = size
        self.cache: OrderedDict = OrderedDict()
        self.seen: weakref.WeakSet = weakref.WeakSet()   # worlds with a task solved on its own grounding

    def get(self, task: Task | GroundedTask, reduce: bool, universe: Universe | None = None) -> Grounding:
        """A grounding for the task: a cached shared one whose universe covers the task's (and
        `universe`, when given), a wider shared one, or, the first time an assembly comes without a
        `universe`, a grounding of the task alone. Tasks share groundings when their grounded tasks
        share a world (one `AssemblyGrounding`)."""
        g = as_grounded(task)
        world = g.world
        key = (id(world), reduce)
        hit = self.cache.get(key)
        if hit is not None and hit.world is not world:
            hit = None
        state = _state_key(g.task)
        if hit is not None and universe is None and state in hit.covered:
            self.cache.move_to_end(key)
            return hit
        if hit is None and universe is None and world not in self.seen:
            self.seen.add(world)
            return Grounding(world, task_universe(g), reduce, alone=g)
        need = task_universe(g) | universe if universe is not None else task_universe(g)
        if hit is None or not hit.universe.covers(need):
            old = hit if hit is not None and universe is None and hit.widenings < WIDENINGS else None
            hit = Grounding(world, need | old.universe if old is not None else need, reduce)
            hit.widenings = old.widenings + 1 if old is not None else 0
            self.cache[key] = hit
        hit.covered.add(state)
        self.cache.move_to_end(key)
        while len(self.cache) > self.size:
            self.cache.popitem(last=False)
        return hit

    def prepare(self, tasks, reduce: bool = True) -> None:
        """Ground each assembly of `tasks` (tasks or grounded tasks) once, for the union of its tasks'
        universes (a batch); tasks with slides are left out (encodings/plan.lp has none)."""
        by_world: dict[int, list[GroundedTask]] = {}
        for task in tasks:
            g = as_grounded(task)
            if not g.has_slides:
                by_world.setdefault(id(g.world), []).append(g)
        for group in by_world.values():
            union = task_universe(group[0])
            for g in group[1:]:
                union = union | task_universe(g)
            grounding = self.get(group[0], reduce, union)
            grounding.covered.update(_state_key(g.task) for g in group)

    def clear(self) -> None:
        self.cache.clear()
        self.seen.clear()


GROUNDINGS = Groundings()

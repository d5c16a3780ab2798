"""PDDL files of a partial-move task (SEMANTICS.md §9): export either rendering, read a planner's plan back.

Lifted (the default): domains/partial.pddl and a problem of objects and static facts, written by
unified-planning's PDDLWriter. Grounded (`--grounded`): the STRIPS text Fast Downward's `astar(lmcut())`
solves (`slides.pddl_text`). Only the `full` profile exists here: the grounded text already is STRIPS
with negative preconditions and action costs.
"""

from __future__ import annotations

from pathlib import Path

from ...model.actions import Action
from ...model.errors import InputError
from ...semantics.task import Task
from .positions import position_tables
from .slides import build_slide_problem, decode, pddl_text
from .slides_lifted import LiftedPartial


def _problem(task: Task, objective: str, profile: str, radius: int | None):
    if profile != "full":
        raise InputError(f"a partial-move task is exported with the full profile only (its grounded export already is "
                         f"STRIPS with negative preconditions and action costs), not {profile!r}", field="--profile")
    return build_slide_problem(task, position_tables(task, radius), objective)


def export_partial(task: Task, out: Path, objective: str, grounded: bool, profile: str = "full",
                   radius: int | None = None) -> tuple[Path, Path, str]:
    """Write domain.pddl and problem.pddl into `out`; returns their paths and a one-line summary."""
    from .files import pddl_writer

    sp = _problem(task, objective, profile, radius)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if grounded:
        domain, problem = pddl_text(sp)
        what = f"grounded, {len(sp.steps)} actions"
    else:
        writer = pddl_writer(LiftedPartial(sp))
        domain, problem = writer.get_domain(), writer.get_problem()
        what = "lifted (domains/partial.pddl)"
    paths = (out / "domain.pddl", out / "problem.pddl")
    paths[0].write_text(domain, encoding="utf-8")
    paths[1].write_text(problem, encoding="utf-8")
    counts = {i: len(p) for i, p in sp.tables.positions.items()}
    summary = (f"partial moves, {what}, {sum(counts.values())} positions over {len(counts)} slots"
               f"{'' if radius is None else f' (within {radius} per axis)'}, "
               f"distances {min(sp.tables.distances)}..{max(sp.tables.distances)}, objective {objective}")
    return (*paths, summary)


def read_partial_plan(task: Task, text: str, file: str, objective: str, grounded: bool, profile: str = "full",
                      radius: int | None = None) -> tuple[Action, ...]:
    """A planner's plan for `export_partial`'s problem -> forgeplan actions (one per move transaction)."""
    sp = _problem(task, objective, profile, radius)
    from .files import plan_lines

    lines = plan_lines(text, file)
    if grounded:
        names = []
        for lineno, name, args in lines:
            if name not in sp.by_name or args:
                raise InputError(f"{name!r} is not an action of this export (check --grounded and --objective)",
                                 file=file, field=f"line {lineno}")
            names.append(name)
        return decode(sp, names)
    lifted = LiftedPartial(sp)
    calls = lifted.step_names()
    names = []
    for lineno, name, args in lines:
        step = calls.get((name, args))
        if step is None:
            raise InputError(f"({name} {' '.join(args)}) is not an action of this export (check --grounded and "
                             "--objective)", file=file, field=f"line {lineno}")
        names.append(step)
    return decode(sp, names)

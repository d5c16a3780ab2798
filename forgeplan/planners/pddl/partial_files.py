"""PDDL files of a partial-move task (SEMANTICS.md §9): the grounded problem for external planners, and its plans back.

The grounded problem of `slide_groups` written as PDDL by
`slides.pddl_text`: parameterless actions over constant atoms, with derived atoms and conditional
effects, so planners that read them (Fast Downward with `astar(blind())`) solve it. It is grounded
already: only `--grounded` and the `full` profile apply.
"""

from __future__ import annotations

from pathlib import Path

from ...io.output import staged
from ...model.actions import Action
from ...model.errors import InputError
from ...semantics.task import Task
from .positions import position_tables
from .replay import PddlVerdict, read_partial
from .slide_groups import build_group_problem
from .slides import pddl_text


# the budget of --radius: a six-piece burr at radius 1 relates 21,870 pairs (19 MB of PDDL, 184 MB, seconds);
# at radius 2, 468,750 (228 MB of PDDL, 1.7 GB and most of a minute), refused
MAX_POSITION_PAIRS = 150_000


def _problem(task: Task, objective: str, grounded: bool, profile: str, radius: int | None):
    if profile != "full":
        raise InputError(f"a partial-move task is exported with the full profile only (its export already is "
                         f"grounded STRIPS with negative preconditions and action costs), not {profile!r}", field="--profile")
    if not grounded:
        raise InputError("a partial-move task is exported grounded only (positions are objects of the grounded "
                         "problem): give --grounded", field="--grounded")
    tables = position_tables(task, radius)
    if tables.pairs() > MAX_POSITION_PAIRS:
        raise InputError(f"the grounded problem would relate {tables.pairs():,} pairs of positions of two parts (at most "
                         f"{MAX_POSITION_PAIRS:,}: its size and the time and memory to write it grow with them); "
                         "give a smaller radius", field="--radius")
    return build_group_problem(task, tables, objective)


def export_partial(task: Task, out: Path, objective: str, grounded: bool, profile: str = "full",
                   radius: int | None = None) -> tuple[Path, Path, str]:
    """Write domain.pddl and problem.pddl into `out`; returns their paths and a one-line summary."""
    sp = _problem(task, objective, grounded, profile, radius)
    domain, problem = pddl_text(sp)
    with staged(out) as folder:   # the two files replace an earlier export together
        paths = (folder.write_text("domain.pddl", domain), folder.write_text("problem.pddl", problem))
    counts = {i: len(p) for i, p in sp.tables.positions.items()}
    summary = (f"partial moves, grounded, {len(sp.steps)} actions, {sum(counts.values())} positions over {len(counts)} "
               f"slots{'' if radius is None else f' (within {radius} per axis)'}, "
               f"distances {min(sp.tables.distances)}..{max(sp.tables.distances)}, objective {objective}")
    return (*paths, summary)


def read_partial_plan(task: Task, text: str, file: str, objective: str, grounded: bool, profile: str = "full",
                      radius: int | None = None) -> tuple[PddlVerdict, tuple[Action, ...] | None]:
    """A planner's plan for `export_partial`'s problem, replayed in it (`replay.read_partial`), and its
    forgeplan actions when it is valid there (a join's steps become one action)."""
    return read_partial(_problem(task, objective, grounded, profile, radius), text, file)

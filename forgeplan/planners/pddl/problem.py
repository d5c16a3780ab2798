"""Task -> unified-planning Problem: the PDDL side of the one semantics (encodings/SEMANTICS.md).

The PDDL world is the symbolic abstraction (`abstraction`): per slot the fluents `present`, `wrong`
(occupant is a spare), `pose_off`, `rot_off`, `locked`, plus `unlock_turned` (the rotation is a coupled
lock's unlocked rotation, which selects the repairing turn of `rotate`) and `touched` (the part was
named by an action; J_move). Two renderings of the same task:

* `build_problem(task)`: the rework domain of `domains/rework.pddl` (`lifted`: task-independent,
  quantified preconditions, conditional effects for the coupled unlock) plus a problem of static facts.
* `build_problem(task, grounded=True)`: one parameterless action per grounded action, free direction and
  touch variant, with the static blocking relation expanded into plain negative literals (`expanded`):
  what Fast Downward's `astar(lmcut())` accepts without axioms.

Objectives are action costs (domains/README.md gives the weight argument): an action that touches k
parts for the first time costs `first_touch_cost(k)`; for the lexicographic objective that is
`W*k + 1`, so total cost = W*J_move + c (`semantics.grounded.touch_costs`).

Assemblies that need group moves (SEMANTICS §5) are exported in grounded mode only, with their
candidate groups listed explicitly (`groups`); a group move costs one step and requires its members
touched, and a separate `touch` action per part pays the first-touch cost (domains/README.md).
"""

from __future__ import annotations

from ...model.errors import InputError
from ...semantics.grounded import DEFAULT_WEIGHT, OBJECTIVES as OBJECTIVE_VALUES, touch_costs
from ...semantics.task import Task
from .abstraction import abstraction
from .codec import Encoding
from .expanded import expanded_problem
from .lifted import lifted_problem

OBJECTIVES = tuple(OBJECTIVE_VALUES)


def build_problem(task: Task, objective: str = "moved-parts,actions", *, grounded: bool = False,
                  weight: int = DEFAULT_WEIGHT, every_direction: bool = False) -> Encoding:
    """The task as a unified-planning Problem: the lifted rework domain, or the expanded STRIPS problem.

    `every_direction` keeps a group move along every direction, dominated ones included (see
    `GroupCandidates`): the problem then has exactly the engine's legal group moves, at the price of
    many more actions (Fast Downward's invariant synthesis takes seconds on a six-piece burr).
    """
    costs = touch_costs(objective, weight)
    ab = abstraction(task, every_direction)
    if ab.groups is not None and not grounded:
        raise InputError("the lifted domain has no group moves (separate/join, SEMANTICS §5), which this assembly "
                         "needs; export it with --grounded", file=f"assembly {task.assembly.assembly_id}")
    if grounded:
        enc = expanded_problem(task, ab, objective, weight, costs, every_direction)
        enc.rebuild = lambda: build_problem(task, objective, grounded=True, weight=weight, every_direction=True)
        return enc
    return lifted_problem(task, ab, objective, weight, costs)

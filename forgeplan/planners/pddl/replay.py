"""An imported plan replayed in the PDDL task it was written for, before it is mapped to forgeplan actions.

A planner's plan names actions of an export (touch variants, `touch` actions, `not_` twins); mapped to
forgeplan actions those details are gone, and a plan that PDDL refuses (a repeated `_first` variant, a
group move whose `touch` was dropped) could map to a valid repair. So `import-plan` first replays the
plan step by step as unified-planning's SequentialPlanValidator does, with the same simulator, the same
checks in the same order and the same goal test, on the problem that was written; partial-move exports
(derived atoms, which unified-planning does not read) are replayed by their own simulator
(`slides.replay`). A refusal names the step and the conditions that are false, in the file's names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...model.actions import Action
from ...model.errors import InputError
from .files import pddl_writer, plan_instances, plan_lines

SHOWN = 3   # unsatisfied conditions named in a refusal


@dataclass(frozen=True)
class PddlVerdict:
    """Whether a plan is a valid plan of the PDDL task; if not, where it fails."""

    valid: bool
    steps: int                          # actions in the plan
    step: int | None = None             # 1-based step that is not applicable; None: every step applied
    action: str | None = None           # that step as the plan writes it
    unsatisfied: tuple[str, ...] = ()   # its false preconditions, or the false goals

    def reason(self) -> str:
        """One line: why the plan is not a plan of the PDDL task (empty when it is)."""
        if self.valid:
            return ""
        shown = ", ".join(self.unsatisfied[:SHOWN]) + (f" and {len(self.unsatisfied) - SHOWN} more"
                                                        if len(self.unsatisfied) > SHOWN else "")
        if self.step is not None:
            what = "precondition" if len(self.unsatisfied) == 1 else "preconditions"
            why = f"{what} {shown} false" if self.unsatisfied else "its effects conflict"
            return f"not a valid plan of that PDDL task: step {self.step} {self.action} is not applicable: {why}"
        what = "goal" if len(self.unsatisfied) == 1 else "goals"
        return f"not a valid plan of that PDDL task: after its {self.steps} steps the {what} {shown} false"


class Replay:
    """An export's PDDL task, ready to read plans: the writer's names and unified-planning's simulator."""

    def __init__(self, enc):
        from unified_planning.engines.sequential_simulator import UPSequentialSimulator
        from unified_planning.io.pddl_writer import ConverterToPDDLString

        self.enc = enc
        self.writer = pddl_writer(enc)
        # as the validator builds it: checks off, so that whatever the validator accepts is simulated
        self.simulator = UPSequentialSimulator(enc.problem, error_on_failed_checks=False)
        self.converter = ConverterToPDDLString(enc.problem.environment, self.writer.get_pddl_name)

    def verdict(self, steps: Sequence[tuple[str, Any]]) -> PddlVerdict:
        """The validator's loop: each step's unsatisfied conditions, then its effects, then the goal."""
        from unified_planning.exceptions import UPConflictingEffectsException, UPInvalidActionError, UPUsageError

        sim, state = self.simulator, self.simulator.get_initial_state()
        for i, (line, ai) in enumerate(steps, start=1):
            try:
                unsat, _ = sim.get_unsatisfied_conditions(state, ai)
                if unsat:
                    return PddlVerdict(False, len(steps), i, line, tuple(self.pddl(c) for c in unsat))
                state = sim.apply_unsafe(state, ai)
            except (UPUsageError, UPInvalidActionError, UPConflictingEffectsException):
                return PddlVerdict(False, len(steps), i, line)
        goals = sim.get_unsatisfied_goals(state)
        return PddlVerdict(not goals, len(steps), unsatisfied=tuple(self.pddl(g) for g in goals))

    def read(self, text: str, file: str = "plan") -> tuple[PddlVerdict, tuple[Action, ...] | None]:
        """The plan's verdict in the PDDL task and, only when it is valid there, its forgeplan actions."""
        steps = plan_instances(self.writer, text, file)
        verdict = self.verdict(steps)
        return verdict, (self.enc.decode([ai for _, ai in steps]) if verdict.valid else None)

    def steps_of(self, actions: Sequence[Action]) -> list[str] | None:
        """A forgeplan plan as the steps a planner would write for this export (`Encoding.encode` picks
        touch variants and directions), or None when it has none."""
        plan = self.enc.encode(actions)
        if plan is None:
            return None
        problem, name = self.enc.problem, self.writer.get_pddl_name
        return [f"({' '.join([name(problem.action(ai.action.name)), *(name(problem.object(p.object().name)) for p in ai.actual_parameters)])})"
                for ai in plan.actions]

    def pddl(self, condition) -> str:
        """A condition in PDDL syntax with the file's names, on one line."""
        return " ".join(self.converter.convert(condition).split())


def read_partial(sp, text: str, file: str = "plan") -> tuple[PddlVerdict, tuple[Action, ...] | None]:
    """The same for a partial-move export (`slides.SlideProblem`): its own simulator, derived atoms included."""
    from .slides import decode, replay

    names = []
    for lineno, name, args in plan_lines(text, file):
        if name not in sp.by_name or args:
            raise InputError(f"{name!r} is not an action of this export (check --grounded and --objective)",
                             file=file, field=f"line {lineno}")
        names.append(name)
    failed, unsat = replay(sp, names)
    if failed is not None:
        verdict = PddlVerdict(False, len(names), failed + 1, f"({names[failed]})", tuple(_lit(x) for x in unsat))
    else:
        verdict = PddlVerdict(not unsat, len(names), unsatisfied=tuple(_lit(x) for x in unsat))
    return verdict, (decode(sp, names) if verdict.valid else None)


def _lit(lit: tuple[str, bool]) -> str:
    atom, value = lit
    return atom if value else f"(not {atom})"


def damaged_copies(steps: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Every copy of a plan with one step dropped, two adjacent steps swapped or one step repeated, in
    that order (a name such as `swap 3` says which): the slips a strict import must catch."""
    out = [(f"drop {i + 1}", [*steps[:i], *steps[i + 1:]]) for i in range(len(steps))]
    out += [(f"swap {i + 1}", [*steps[:i], steps[i + 1], steps[i], *steps[i + 2:]]) for i in range(len(steps) - 1)]
    out += [(f"repeat {i + 1}", [*steps[:i + 1], *steps[i:]]) for i in range(len(steps))]
    return out

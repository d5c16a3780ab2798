"""The prompt of an Assembly Decision sample: the decision contract as the system line, the task as the user turn.

The user turn is the rework prompt's of the same style (`prompt.user_turn`: with `forge` the public task
representation, the action space included; its actual state is the recorded state of the episode); the
answer is the reference decision as compact JSON, the one spelling grammars/assembly_decision.lark accepts.
"""

from __future__ import annotations

from ..model.choices import DEFAULT_PROMPT
from ..semantics.task import Task
from .grammar import compact
from .prompt import user_turn

DECISION_SYSTEM = (
    "You plan interlocking assemblies. Give the next step from the actual state towards the target state as "
    "exactly one JSON object {\"operation\",\"involved_parts\",\"next_subgoal\"} (compact JSON, no prose). "
    "operation: Place, Align, Lock, Recover, Inspect or Execute Subtask. involved_parts: the ids of the parts the "
    "step moves. next_subgoal, one of: \"P seated\", \"P removed\", \"P at target position\", \"P at target "
    "orientation\", \"lock L engaged\", \"lock L released\", \"S replaces W\", \"subassembly {A, B} seated\", "
    "\"subassembly {A, B} removed\", or \"assembly matches target\" (Inspect, no parts) when nothing is left to do.")


def decision_prompt(task: Task, style: str = DEFAULT_PROMPT) -> list[dict]:
    return [{"role": "system", "content": DECISION_SYSTEM}, {"role": "user", "content": user_turn(task, style)}]


def decision_completion(reference: dict) -> list[dict]:
    return [{"role": "assistant", "content": compact(reference)}]

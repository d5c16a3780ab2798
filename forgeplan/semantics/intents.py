"""Structured intents (o, P, g) of Assembly Decision (SEMANTICS §8): operation class, involved parts, subgoal.

A decision is a function of the next action: its operation class, the parts it moves, and the state
condition it establishes, written in a small canonical vocabulary that `subgoal_holds` checks on a
state. A state that already equals the target has one decision, Inspect with no parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.actions import Action, GroupMove, Replace, Slide
from ..model.state import State
from .engine import World

# MAGAR's operation classes, in its order; Execute Subtask has no forgeplan action (SEMANTICS §8)
OPERATIONS = ("Place", "Align", "Lock", "Recover", "Inspect", "Execute Subtask")
OPERATION_OF = {
    "insert": "Place", "join": "Place",
    "reset_pose": "Align", "rotate": "Align", "slide": "Align",
    "rotate_to_lock": "Lock", "translate_rotate_to_lock": "Lock",
    "rotate_to_unlock": "Lock", "rotate_translate_to_unlock": "Lock",
    "remove": "Recover", "separate": "Recover", "replace": "Recover",
}
INSPECT_SUBGOAL = "assembly matches target"

# subgoal kind -> the text pattern; {x} one part id, {g} a group "{A, B}" in catalog order
_PATTERNS = {  # group kinds first: "{x} seated" would also match "subassembly {A, B} seated"
    "group_seated": "subassembly {g} seated", "group_removed": "subassembly {g} removed",
    "group_slid": "subassembly {g} slid",
    "seated": "{x} seated", "removed": "{x} removed",
    "replaces": "{x} replaces {y}", "positioned": "{x} at target position",
    "oriented": "{x} at target orientation", "released": "lock {x} released", "engaged": "lock {x} engaged",
}
SUBGOAL_OF = {
    "insert": "seated", "remove": "removed", "join": "group_seated", "separate": "group_removed",
    "replace": "replaces", "reset_pose": "positioned", "rotate": "oriented", "slide": "group_slid",
    "rotate_to_unlock": "released", "rotate_translate_to_unlock": "released",
    "rotate_to_lock": "engaged", "translate_rotate_to_lock": "engaged",
}


@dataclass(frozen=True, order=True)
class Decision:
    operation: str
    parts: tuple[str, ...]     # sorted part ids
    subgoal: str

    def to_json(self) -> dict:
        return {"operation": self.operation, "involved_parts": list(self.parts), "next_subgoal": self.subgoal}


INSPECT = Decision("Inspect", (), INSPECT_SUBGOAL)


def subgoal_text(kind: str, parts: tuple[str, ...]) -> str:
    pattern = _PATTERNS[kind]
    if "{g}" in pattern:
        return pattern.format(g="{" + ", ".join(parts) + "}")
    return pattern.format(x=parts[0], y=parts[1] if len(parts) > 1 else "")


def decision_of(action: Action) -> Decision:
    """The (o, P, g) of an action: replace(w, s) establishes "s replaces w"."""
    kind = SUBGOAL_OF[action.name]
    if isinstance(action, (GroupMove, Slide)):
        named = action.part_ids
    elif isinstance(action, Replace):
        named = (action.target_part_id, action.part_id)
    else:
        named = action.touched
    return Decision(OPERATION_OF[action.name], tuple(sorted(set(action.touched))), subgoal_text(kind, named))


def parse_subgoal(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(kind, part ids) of a canonical subgoal, or None when the text is not in the vocabulary."""
    if text == INSPECT_SUBGOAL:
        return "inspect", ()
    for kind, pattern in _PATTERNS.items():
        regex = "^" + re.escape(pattern).replace(r"\{x\}", "(.+?)").replace(r"\{y\}", "(.+?)") \
            .replace(r"\{g\}", r"\{(.+)\}") + "$"
        m = re.match(regex, text)
        if m:
            parts = tuple(m.group(1).split(", ")) if "{g}" in pattern else m.groups()
            return kind, tuple(parts)
    return None


def subgoal_holds(world: World, state: State, target: State, text: str) -> bool:
    """Does the canonical subgoal `text` hold in `state`? False for text outside the vocabulary."""
    parsed = parse_subgoal(text)
    if parsed is None:
        return False
    kind, parts = parsed
    if kind == "inspect":
        return world.equivalent(state, target)
    slots = [world.index.get(p, world.spare_slot.get(p)) for p in parts]
    if any(i is None for i in slots):
        return False
    check = _CHECKS[kind]
    return all(check(world, state, i, p) for i, p in zip(slots, parts))


def _present(state: State, i: int) -> bool:
    return state.slots[i].present


_CHECKS = {
    "seated": lambda w, s, i, p: _present(s, i) and s.slots[i].occupant == p and not w.pose_off(i, s.slots[i]),
    "group_seated": lambda w, s, i, p: _present(s, i) and s.slots[i].occupant == p and not w.pose_off(i, s.slots[i]),
    "removed": lambda w, s, i, p: not _present(s, i),
    "group_removed": lambda w, s, i, p: not _present(s, i),
    "group_slid": lambda w, s, i, p: _present(s, i) and s.slots[i].occupant == p,
    "replaces": lambda w, s, i, p: _present(s, i) and s.slots[i].occupant == w.ids[i],
    "positioned": lambda w, s, i, p: _present(s, i) and not w.pose_off(i, s.slots[i]),
    "oriented": lambda w, s, i, p: _present(s, i) and not w.rot_off(i, s.slots[i]),
    "released": lambda w, s, i, p: _present(s, i) and s.slots[i].locked is False,
    "engaged": lambda w, s, i, p: _present(s, i) and s.slots[i].locked is True,
}


def valid_decisions(world: World, state: State, target: State, first_actions) -> tuple[Decision, ...]:
    """The decisions of the first steps of the optimal completions; Inspect alone at the target."""
    if world.equivalent(state, target):
        return (INSPECT,)
    return tuple(sorted({decision_of(a) for a in first_actions}))

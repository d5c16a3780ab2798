"""The order of a reference's actions in an SFT target: FORGE's Rework Structuring as data.

FORGE (3.2) uses the dependency structure of eq. 4 "to organize the actions in the reference rework plan and
to provide structured supervision", without any extra output field. A reference plan is a set of actions
with some freedom of order (two removals that do not block each other go either way round), and the target
can spend that freedom on the structure or ignore it. Three orders of the same actions, each a valid plan:

- `reference`: the reference as stored (the lexicographically smallest optimal plan under the canonical
  tie-break key, SEMANTICS §4);
- `structured`: disassembly layer by layer from the outside in to reach the faulty parts, then the fault
  fixes, then reassembly layer by layer from the inside out; the layers are eq. 4's iterations from the
  annotated faults (`semantics.closure.closure_layers`), ties by the canonical key;
- `plain`: the same actions in a fixed pseudo-random preference (a hash of each action's JSON), which knows
  nothing of layers or phases: equally valid and equally short, organised by nothing.

One rule turns a preference into a valid order (`reorder`): at each step, take the most preferred
remaining action that is legal now and after which the remaining actions, in the reference's order,
still replay to the target. The reference's own order always qualifies, so the rule never fails, and
every order it returns replays valid by construction (and is replayed again by the caller's check).
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable, Sequence

from ..model.actions import Action
from ..model.choices import TARGETS
from ..model.errors import InputError
from ..model.state import State
from ..semantics.closure import closure_layers
from ..semantics.engine import World
from ..semantics.grounded import part_ranks
from ..semantics.task import Task

OUT_KINDS = frozenset({"remove", "separate", "rotate_to_unlock", "rotate_translate_to_unlock"})
FIX_KINDS = frozenset({"replace", "rotate", "reset_pose"})
IN_KINDS = frozenset({"insert", "join", "rotate_to_lock", "translate_rotate_to_lock"})
OUT, FIX, IN = 0, 1, 2


def check_targets(targets: str) -> str:
    if targets not in TARGETS:
        raise InputError(f"must be one of {list(TARGETS)}, got {targets!r}", field="targets")
    return targets


def reorder(world: World, actual: State, target: State, actions: Sequence[Action], key: Callable[[int], tuple]) -> list[int]:
    """A valid order of `actions` (indices into it) that follows `key` (smaller first) where validity allows:
    each step takes the smallest-key remaining action that is legal and leaves the rest, in their given
    order, a plan that restores `target`. `actions` must itself restore `target` from `actual`."""
    remaining, state, order = list(range(len(actions))), actual, []
    while remaining:
        for j in sorted(remaining, key=key):
            if world.check(state, actions[j]) is not None:
                continue
            after = world.apply(state, actions[j])
            rest = [actions[k] for k in remaining if k != j]
            if world.restoration(after, rest, target).restored:
                break
        else:   # unreachable while `actions` restores the target: its first remaining action qualifies
            raise ValueError("the actions do not restore the target in their given order")
        order.append(j)
        remaining.remove(j)
        state = after
    return order


def phases(world: World, actual: State, actions: Sequence[Action]) -> list[int]:
    """OUT, FIX or IN per action: by kind; a slide by whether it moves its parts away from their target
    positions (OUT), back (IN) or neither (FIX), measured in the replay of the given order."""
    out, state = [], actual
    for a in actions:
        after = world.apply(state, a)
        if a.name in OUT_KINDS or a.name in FIX_KINDS or a.name in IN_KINDS:
            out.append(OUT if a.name in OUT_KINDS else FIX if a.name in FIX_KINDS else IN)
        else:
            slots = {world.slot_index(p) for p in a.touched}
            far = [sum(abs(c) for i in slots for c in s.slots[i].offset) for s in (state, after)]
            out.append(OUT if far[1] > far[0] else IN if far[1] < far[0] else FIX)
        state = after
    return out


def slot_layers(task: Task, reference: dict) -> dict[int, int]:
    """Slot index -> its layer of eq. 4, grown from the slots the reference annotation names as faulty."""
    world = task.world
    faulty = sorted({world.slot_index(m["part_id"]) for m in reference["annotation"].get("mistakes", [])})
    return {i: k for k, layer in enumerate(closure_layers(world, task.actual, faulty)) for i in layer}


def structured_key(task: Task, reference: dict, actions: Sequence[Action]) -> Callable[[int], tuple]:
    """(phase, layer, canonical key): out-moves outermost layer first, fixes, in-moves innermost first.
    A move's layer is the innermost layer among the slots it touches (outside the closure: beyond the last)."""
    world = task.world
    layer = slot_layers(task, reference)
    beyond = max(layer.values(), default=-1) + 1
    ranks = part_ranks(world)
    phase = phases(world, task.actual, actions)

    def key(j: int) -> tuple:
        a = actions[j]
        depth = min(layer.get(world.slot_index(p), beyond) for p in a.touched)
        return (phase[j], -depth if phase[j] == OUT else depth, a.rank, *a.sort_key(ranks))

    return key


def plain_key(actions: Sequence[Action]) -> Callable[[int], tuple]:
    """A fixed preference that ignores the structure: the SHA-256 of each action's JSON (the same action
    gets the same preference in every task), then its index."""
    digests = [hashlib.sha256(json.dumps(a.to_json(), sort_keys=True).encode("utf-8")).hexdigest() for a in actions]
    return lambda j: (digests[j], j)


def target_order(task: Task, reference: dict, targets: str) -> list[int]:
    """The order (indices into the reference's actions) of a target of this kind, replayed: a target that
    does not restore the task's target state is refused."""
    from ..io.contract import parse_output  # noqa: PLC0415

    actions = parse_output(json.dumps(reference), strict=False).actions
    order = list(range(len(actions)))
    if check_targets(targets) != "reference" and len(actions) > 1:
        key = structured_key(task, reference, actions) if targets == "structured" else plain_key(actions)
        order = reorder(task.world, task.actual, task.target, actions, key)
    if not task.world.restoration(task.actual, [actions[j] for j in order], task.target).restored:
        raise InputError(f"sample {task.sample_id}: the {targets} target does not restore the target state",
                         field="rework_plan.actions")
    return order


def ordered(task: Task, reference: dict, targets: str) -> dict:
    """The reference with its actions in the order of `targets`, replayed (a copy: the stored reference is
    never changed)."""
    steps = reference["rework_plan"]["actions"]
    order = target_order(task, reference, targets)
    return {**reference, "rework_plan": {**reference["rework_plan"], "actions": [steps[j] for j in order]}}

"""A task's action vocabulary as a prompt states it: every action its grammar admits, with its parameters.

Both prompt styles carry it, so a model is told exactly what it may write: `templates` (the `forge`
prompt) gives one template per action spelled as the answer spells it, its parameters as placeholders
whose values `values` lists (the task's part ids, directions, slide distances, offset coordinates, group
sizes) or, where the grammar fixes them, as the values themselves (a lock's turn, a spare's replacement);
`signatures` (the `compact` prompt) gives only each action's name and parameter names. Both are read
from the task grammar (`grammar.admitted_actions`, `grammar.vocabulary`), so a prompt names no action a
constrained decoder refuses and leaves out none it admits. Which actions are legal in a given state is
the engine's to decide, not the vocabulary's.
"""

from __future__ import annotations

import json

from ..model.assembly import DIRECTIONS
from ..semantics.partial_universe import offset_ranges, slide_steps
from ..semantics.task import Task
from .grammar import admitted_actions, group_limit, partial_limit, vocabulary

# actions whose parameters the grammar fixes per part: one template per value of this vocabulary rule
FIXED = {"rotate_to_unlock": "rotate_unlock", "rotate_to_lock": "rotate_lock",
         "rotate_translate_to_unlock": "coupled_unlock", "translate_rotate_to_lock": "coupled_lock",
         "replace": "replace_pair"}
# the placeholder of each parameter (per action where it differs): what the answer writes in its place
SLOT, PART, OFFSET = "<slot>", "<part>", "<offset>"
PLACEHOLDERS = {"part_id": PART, "axis": "<axis>", "angle_deg": "<degrees>", "direction": "<direction>",
                "distance": "<distance>", "offset": OFFSET}
MEMBERS = {"separate": PART, "join": SLOT, "slide": PART}


def signatures(task: Task) -> str:
    """`name(param, ...)` per admitted action, optional fields in brackets: `insert(part_id[, offset])`."""
    out = []
    for name, (params, optional) in admitted_actions(task).items():
        out.append(f"{name}({', '.join(params)}{''.join(f'[, {f}]' for f in optional)})")
    return " ".join(out)


def _placeholder(name: str, field: str):
    if field == "part_id":
        return SLOT if name == "insert" else PART
    if field == "part_ids":
        return [MEMBERS[name], "..."]
    if field == "offsets":
        return [OFFSET, "..."]
    return PLACEHOLDERS[field]


def templates(task: Task) -> list[dict]:
    """One answer-shaped template per admitted action (and per optional form: insert with an offset)."""
    vocab = vocabulary(task)
    out: list[dict] = []
    for name, (params, optional) in admitted_actions(task).items():
        if name in FIXED:
            out += [{"action": name, **json.loads("{" + v + "}")} for v in vocab[FIXED[name]]]
            continue
        plain = {"action": name, **{f: _placeholder(name, f) for f in params}}
        out.append(plain)
        if optional:
            out.append({**plain, **{f: _placeholder(name, f) for f in optional}})
    return out


def values(task: Task) -> dict:
    """What each placeholder the templates use stands for, with the task's values."""
    names = set(admitted_actions(task))
    slots = list(task.assembly.part_ids)
    spares = [w.part_id for w in task.assembly.spares]
    out: dict = {SLOT: slots, PART: slots + spares}   # a spare in a slot moves as the slot's part does
    if "rotate" in names:
        out |= {"<axis>": ["x", "y", "z"], "<degrees>": "a rotation about the axis in degrees (a number)"}
    if names & {"separate", "join", "slide"}:
        out["<direction>"] = list(DIRECTIONS)
        out["members"] = _members(task, names)
    if "slide" in names:
        out["<distance>"] = _distances(task)
    ranges = offset_ranges(task.world)
    if ranges is not None:
        out[OFFSET] = ("[x, y, z] whole voxels from the part's target position, " +
                       ", ".join(f"{a} {r.start} to {r.stop - 1}" for a, r in zip("xyz", ranges)) +
                       "; join names one offset per member, in the members' order")
    return out


def _members(task: Task, names: set[str]) -> dict[str, str]:
    """How many parts each group move names (one per slot at most)."""
    most = {"separate": group_limit(task), "join": group_limit(task), "slide": partial_limit(task)}
    least = {"separate": 2, "join": 2, "slide": 1}
    return {n: f"{least[n]} to {most[n]} distinct parts, one per slot" for n in ("separate", "join", "slide")
            if n in names}


def _distances(task: Task) -> str | dict[str, str]:
    """A slide's distances in whole voxels: one range, or one per direction where they differ."""
    per: dict[str, list[int]] = {}
    for d, k in slide_steps(task.world):
        per.setdefault(d, []).append(k)
    spans = {d: f"{min(ks)} to {max(ks)} voxels" for d, ks in per.items()}
    return next(iter(spans.values())) if len(set(spans.values())) == 1 else spans

"""The output-contract grammar (grammars/rework_plan.lark) and its specialisation to one task.

The generic grammar accepts any ids; a task's grammar replaces the vocabulary rules at the end of the
file with that task's values, so that a constrained decoder can only name parts, spares and lock
mechanisms that exist. The structure stays in the .lark file; this module only writes the values, as
Lark string literals of their compact JSON text (the exact bytes `prompt.target_text` produces).

Group lists (`separate` / `join`, SEMANTICS §5): a task grammar bounds them to at most one member per
slot of the assembly (the engine refuses two members in one slot, and a spare stands in its variant's
slot), written out as nested optionals; when the assembly needs no group move (the grounded task's `has_groups`)
they are empty, which drops separate / join and leaves the nine FORGE actions.

Partial moves (SEMANTICS §9): the slide members, the (direction, distance) pairs of a slide and each
axis's offset coordinates are the grounded universe's (`semantics.partial_universe`: `slide_members`,
`slide_steps`, `offset_ranges`), so every plan of that universe, a proven reference among them, is in
the task's language; they are empty where partial moves are not in play.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from ..io.quoting import lark_string
from ..io.resources import grammars_dir
from ..model.actions import KIND, PoseMove, Turn, lock_move, lock_turn
from ..model.errors import InputError
from ..semantics.grounded import ground
from ..semantics.partial_universe import offset_ranges, slide_members, slide_steps
from ..semantics.task import Task

GRAMMAR_PATH = grammars_dir() / "rework_plan.lark"
VOCABULARY_RULES = ("sample_id", "assembly_id", "slot", "present_part", "spare_slot", "spare", "lock_slot",
                    "rotate_unlock", "rotate_lock", "coupled_unlock", "coupled_lock", "replace_pair",
                    "slide_step", "x_coordinate", "y_coordinate", "z_coordinate")
# group list rule -> (its member rule, fewest members); a slide may move one part (a spare too), join names an
# offset per member
GROUP_RULES = {"separate_group": ("present_part", 2), "slide_group": ("present_part", 1)}
PARTIAL_RULES = ("slide_group",)   # listed only where partial moves are in play (SEMANTICS §9)
ACTION_RULE = "action"  # marked in the automaton: the legal-action mask starts each action there
_RULE_LINE = re.compile(r"^(\??[a-z_][a-z0-9_]*)\s*:(.*)$")


def compact(value) -> str:
    """Compact JSON text, the one serialisation the grammar accepts."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@lru_cache(maxsize=1)
def base_grammar() -> str:
    try:
        return GRAMMAR_PATH.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the grammar: {exc.strerror}", file=str(GRAMMAR_PATH)) from None


lark_literal = lark_string   # the one Lark quoting function (forgeplan.io.quoting), by its old name


def _fields(*pairs) -> str:
    """`"k":v,...` compact JSON members (no braces), for vocabulary values spanning several fields."""
    return compact(dict(pairs))[1:-1]


def _turn(a: Turn) -> str:
    return _fields(("part_id", a.part_id), ("axis", a.axis), ("angle_deg", a.angle_deg))


def _pose(a: PoseMove) -> str:
    return _fields(("part_id", a.part_id), ("after_pose", a.after_pose.to_json()))


def vocabulary(task: Task) -> dict[str, list[str]]:
    """Each vocabulary rule's values for this task, as the JSON text they stand for."""
    asm = task.assembly
    slots = list(asm.part_ids)
    spares = [w.part_id for w in asm.spares]
    spare_slots = list(dict.fromkeys(w.variant_of for w in asm.spares))
    rot = [p for p in asm.parts if p.lock is not None and p.lock.kind == "rotate"]
    coupled = [p for p in asm.parts if p.lock is not None and p.lock.kind == "coupled"]
    return {
        "sample_id": [compact(task.sample_id)],
        "assembly_id": [compact(asm.assembly_id)],
        "slot": [compact(p) for p in slots],
        "present_part": [compact(p) for p in slots + spares],
        "spare_slot": [compact(p) for p in spare_slots],
        "spare": [compact(p) for p in spares],
        "lock_slot": [compact(p.part_id) for p in asm.locks],
        "rotate_unlock": [_turn(lock_turn(p, locking=False)) for p in rot],
        "rotate_lock": [_turn(lock_turn(p, locking=True)) for p in rot],
        "coupled_unlock": [_pose(lock_move(p, locking=False)) for p in coupled],
        "coupled_lock": [_pose(lock_move(p, locking=True)) for p in coupled],
        "replace_pair": [_fields(("wrong_part_id", w.part_id), ("target_part_id", w.variant_of)) for w in asm.spares],
        "slide_step": [f'{compact(d)},"distance":{k}' for d, k in slide_steps(task.world)],
        **_coordinates(task),
    }


def _coordinates(task: Task) -> dict[str, list[str]]:
    """Per axis, the offset coordinates of the grounded universe (none where partial moves are not in play)."""
    ranges = offset_ranges(task.world) or ((), (), ())
    return {f"{axis}_coordinate": [str(k) for k in r] for axis, r in zip("xyz", ranges)}


def partial_limit(task: Task) -> int:
    """Most members a slide (or offsets a join) of this task can name: one per slot; 0 when the grounded
    universe has no slide (partial moves are not in play)."""
    return len(task.assembly.part_ids) if slide_members(task.world) else 0


def group_limit(task: Task) -> int:
    """Most members a group move of this task can name: one per slot; 0 when the assembly needs none."""
    return len(task.assembly.part_ids) if ground(task).has_groups else 0


def bounded_list(item: str, lo: int, hi: int) -> str:
    """Lark text for `item ("," item)*` with lo..hi items, the optional tail as nested optionals
    (unambiguous for LALR, and inside the subset llguidance accepts)."""
    if not 1 <= lo <= hi:
        raise ValueError(f"bad list bounds {lo}..{hi}")
    tail = ""
    for _ in range(hi - lo):
        tail = f'["," {item}{" " + tail if tail else ""}]'
    return " \",\" ".join([item] * lo) + (" " + tail if tail else "")


def join_alternatives(most: int, offsets: bool) -> list[str]:
    """join_group's alternatives: per number k of members (2..most) the k slots, the direction and, with
    `offsets`, optionally k offsets, so that a join names as many offsets as members."""
    out = []
    for k in range(2, most + 1):
        alt = ' "," '.join(["slot"] * k) + ' "],\\"direction\\":" DIRECTION'
        if offsets:
            alt += ' [",\\"offsets\\":[" ' + ' "," '.join(["offset"] * k) + ' "]"]'
        out.append(alt)
    return out


def _rules(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """(items in file order: rule names or verbatim lines, rule name -> its alternatives), by the layout contract."""
    order: list[str] = []
    alts: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _RULE_LINE.match(line)
        if m and not line.startswith((" ", "\t")):
            current = m.group(1).lstrip("?")
            order.append(current)
            alts[current] = [m.group(2).strip()]
        elif current is not None and line.strip().startswith("|"):
            alts[current].append(line.strip()[1:].strip())
        else:
            current = None
            order.append(line)  # a comment, blank line or terminal definition, kept verbatim
    return order, alts


def specialise(task: Task) -> str:
    """The task-specialised grammar text (Lark, same layout, vocabulary rules replaced)."""
    vocab = vocabulary(task)
    order, alts = _rules(base_grammar())
    empty = {name for name, values in vocab.items() if not values}
    for name in VOCABULARY_RULES:
        if name not in alts:
            raise InputError(f"vocabulary rule {name} is missing", file=str(GRAMMAR_PATH))
        alts[name] = [lark_literal(v) for v in vocab[name]]
    for name, (member, least) in GROUP_RULES.items():
        limit = partial_limit(task) if name in PARTIAL_RULES else group_limit(task)
        if name not in alts:
            raise InputError(f"group rule {name} is missing", file=str(GRAMMAR_PATH))
        alts[name] = [] if limit < least or member in empty else [bounded_list(member, least, limit)]
    if "join_group" not in alts:
        raise InputError("group rule join_group is missing", file=str(GRAMMAR_PATH))
    alts["join_group"] = join_alternatives(group_limit(task), partial_limit(task) > 0)
    empty |= {name for name in (*GROUP_RULES, "join_group") if not alts[name]}
    # drop alternatives that use an empty vocabulary, to the fixed point (a rule may become empty too)
    changed = bool(empty)
    while changed:
        changed = False
        for name, lines in alts.items():
            if name in empty:
                continue
            alts[name] = [a for a in lines
                          if not any(re.search(rf"(?<![\w\"]){e}(?![\w\"])", _code(a)) for e in empty)]
            if not alts[name]:
                empty.add(name)
                changed = True
    if "start" in empty:
        raise InputError("the task leaves the grammar empty", field="grammar")
    out = []
    for item in order:
        if item in alts:
            lines = alts[item]
            if not lines:
                continue
            out.append(f"{item}: {lines[0]}")
            out += [f"{' ' * len(item)}| {a}" for a in lines[1:]]
        else:
            out.append(item)
    return "\n".join(out) + "\n"


_ACTION_NAME = re.compile(r'^"\{\\"action\\":\\"([a-z_]+)\\"')
_FIELD = re.compile(r'\\"([a-z_]+)\\":')


def admitted_actions(task: Task) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each action the task grammar admits, in the grammar's order: (its parameters, the optional fields
    the grammar lets it carry: insert's offset and join's offsets where partial moves are in play).

    Read from the specialised grammar itself, so that a prompt listing these names exactly the actions a
    constrained decoder can write: an alternative names its action in its first literal and its fields
    in its own text or in the group rule it refers to."""
    _order, alts = _rules(specialise(task))
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for alt in alts["action"]:
        named = _ACTION_NAME.match(alt)
        if named is None or named.group(1) not in KIND:
            raise InputError(f"an action alternative names no action: {alt[:60]}", file=str(GRAMMAR_PATH), field="action")
        kind = KIND[named.group(1)]
        text = " ".join([alt, *(" ".join(alts[r]) for r in re.findall(r"[a-z_]+", _code(alt)) if r in alts)])
        optional = out.get(kind.name, ((), ()))[1]
        more = tuple(f for f in kind.optional if f in _FIELD.findall(text) and f not in optional)
        out[kind.name] = (kind.params, optional + more)
    return out


def _code(alternative: str) -> str:
    """An alternative with its string literals blanked, so rule names inside literals do not count."""
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', re.sub(r"/(?:[^/\\]|\\.)+/", "//", alternative))


def lark_parser(text: str):
    """The grammar loaded the house way: LALR, strict (conflicts and regex collisions are errors)."""
    from lark import Lark  # noqa: PLC0415
    from lark.exceptions import LarkError  # noqa: PLC0415

    try:
        return Lark(text, parser="lalr", strict=True)
    except LarkError as exc:
        raise InputError(f"grammar does not load: {exc}", field="grammar") from None


def check_llguidance(text: str) -> str:
    """Validate with llguidance; returns a one-line verdict. Raises ImportError when it is not installed."""
    import llguidance  # noqa: PLC0415 - benchmark-only peer

    grm = llguidance.LLMatcher.grammar_from_lark(text)
    is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grm)
    if is_error:
        raise InputError(f"llguidance rejects the grammar: {' '.join(m.strip() for m in messages)}", field="grammar")
    warn = f" (warnings: {' '.join(m.strip() for m in messages)})" if messages else ""
    return f"llguidance {llguidance.__version__} accepts the grammar{warn}"

"""Parse untrusted model output into the output contract, once, as data only, with size limits.

Parsing is strict, as FORGE scores: the answer is one JSON object and nothing else. When it is not, the
error says why, and says so when a markdown fence or text around the object is the cause. On request
(`extract=True`, the command line's `--extract-json`) `answer_json` takes the one JSON object out of a
fenced or chatty answer: the bodies of its ``` blocks when it has any, else the whole text, searched for
balanced {...} spans that parse as JSON objects under the same limits; none or several is an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import ValidationError

from ..model.actions import KIND, Action, GroupMove
from ..model.assembly import Pose
from .guarded import LIMITS, Rejected, parse_json
from .quoting import one_line
from .schema import ActionModel, OutputModel

MAX_OUTPUT_BYTES = LIMITS["output"]
MAX_ACTIONS = 10_000
MAX_DEPTH = 32
CONTRACT_KEYS = tuple(OutputModel.model_fields)   # the top level of the output contract


class ContractError(Exception):
    """The output breaks the contract; `reason` is one line for a person."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class Mistake:
    type: str
    part_id: str
    visible: bool
    observed: tuple[tuple[str, object], ...] = ()  # observable fields, sorted by name


@dataclass(frozen=True)
class MinimalRework:
    """MAGAR's separately predicted (P_m, n_m, R) (C.3.3); the action-id sequence A is the plan's."""

    moved_parts: tuple[str, ...]
    moved_part_count: int
    route_id: str


@dataclass(frozen=True)
class Output:
    sample_id: str
    assembly_id: str
    passed: bool
    mistakes: tuple[Mistake, ...]
    actions: tuple[Action, ...]
    minimal_rework: MinimalRework | None = None  # present only in MAGAR-profile outputs
    ignored: tuple[str, ...] = ()   # top-level keys outside the contract, dropped by a non-strict parse
    extracted: bool = False         # the object was taken out of a fence or surrounding text (`extract`)


def _unclosed(text: str) -> bool:
    """True when the text ends inside a string or an open object/array: a cut-off generation."""
    depth, in_str, esc = 0, False, False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return in_str or depth > 0


def answer_text(raw: str | bytes) -> str:
    """The answer's text within the size limit, stripped (a leading BOM ignored, as in every JSON file read)."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_OUTPUT_BYTES:
            raise ContractError(f"output is {len(raw)} bytes, over the {MAX_OUTPUT_BYTES}-byte limit")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContractError(f"output is not UTF-8: {exc.reason} at byte {exc.start}") from None
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_OUTPUT_BYTES:
        raise ContractError(f"output is over the {MAX_OUTPUT_BYTES}-byte limit")
    text = raw.strip().removeprefix("\ufeff").strip()
    if not text:
        raise ContractError("output is empty")
    return text


def answer_json(raw: str | bytes, extract: bool = False) -> tuple[object, bool]:
    """(the answer's JSON value, whether it was extracted): the whole text, or with `extract` the one
    JSON object inside a fenced or chatty answer. ContractError says what is wrong, and when a fence or
    text around the object is the cause."""
    text = answer_text(raw)
    try:
        return _parse(text), False
    except json.JSONDecodeError as exc:
        if not extract:
            raise ContractError(_decode_problem(text, exc)) from None
    return _parse(extract_object(text)), True


def _parse(text: str):
    try:
        return parse_json(text, MAX_DEPTH)
    except Rejected as exc:
        raise ContractError(f"output JSON{' field ' + one_line(exc.field, 80) if exc.field else ''}: {exc.reason}") from None


FENCE = "```"
EXTRACT_HINT = "pass --extract-json"   # in the reason of an answer that --extract-json could have read
_FENCED = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)   # a markdown code block: info string, newline, body


def _decode_problem(text: str, exc: json.JSONDecodeError) -> str:
    """Why the text is not one JSON object, naming a fence or surrounding text when that is the cause."""
    if FENCE in text:
        return f"output is not one JSON object: the answer is wrapped in a {FENCE} fence; {EXTRACT_HINT} to " \
               "score the object inside"
    if _objects(text):
        return f"output is not one JSON object: the answer has text around its JSON object; {EXTRACT_HINT} to " \
               "score the object alone"
    if exc.msg != "Extra data" and _unclosed(text):
        return f"output is truncated: the JSON ends early ({exc.msg})"
    return f"output is not one JSON object: {exc.msg} at line {exc.lineno} column {exc.colno}"


def extract_object(text: str) -> str:
    """The one JSON object of a fenced or chatty answer: inside its ``` blocks when it has any, else
    anywhere in it; ContractError when there is none or more than one."""
    bodies = _FENCED.findall(text)
    found = [span for body in (bodies or [text]) for span in _objects(body)]
    if len(found) != 1:
        where = f"its {FENCE} blocks hold" if bodies else "it holds"
        raise ContractError(f"--extract-json takes exactly one JSON object out of the answer, and {where} {len(found)}")
    return found[0]


def _objects(text: str) -> list[str]:
    """The balanced {...} spans at the top level of `text` that parse as JSON objects, in order."""
    out = []
    for span in _spans(text):
        try:
            if isinstance(parse_json(span, MAX_DEPTH), dict):
                out.append(span)
        except (Rejected, json.JSONDecodeError):
            pass
    return out


def _spans(text: str) -> list[str]:
    """Balanced {...} spans outside one another; quotes count only inside a span (prose has its own)."""
    spans, depth, start, in_str, esc = [], 0, 0, False, False
    for i, ch in enumerate(text):
        if in_str:
            esc, in_str = (False, True) if esc else (ch == "\\", ch != '"')
        elif ch == '"' and depth:
            in_str = True
        elif ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
    return spans


def parse_output(raw: str | bytes, *, strict: bool = True, extract: bool = False) -> Output:
    """Raw text -> Output, or ContractError saying exactly what is wrong.

    Strict parsing (graders, model outputs) rejects any key outside the contract. With `strict=False`
    the top-level keys outside the contract (such as the `proof` and `sample_id` of forgeplan's own
    reference.json and `solve --json`) are dropped and listed in `Output.ignored`; the contract's own
    objects stay strict either way. `extract`: see `answer_json`.
    """
    data, extracted = answer_json(raw, extract)
    if not isinstance(data, dict):
        raise ContractError(f"output must be a JSON object, got {type(data).__name__}")
    ignored = () if strict else tuple(sorted(k for k in data if k not in CONTRACT_KEYS))
    data = {k: v for k, v in data.items() if k not in ignored}
    plan = data.get("rework_plan")
    if isinstance(plan, dict) and isinstance(plan.get("actions"), list) and len(plan["actions"]) > MAX_ACTIONS:
        raise ContractError(f"rework_plan has {len(plan['actions'])} actions, over the {MAX_ACTIONS} limit")
    try:
        model = OutputModel.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise ContractError(f"field {loc}: {err['msg']}") from None
    return _to_output(model, ignored, extracted)


def _to_output(m: OutputModel, ignored: tuple[str, ...], extracted: bool = False) -> Output:
    mistakes = []
    for k in m.annotation.mistakes:
        observed = tuple(sorted((f, getattr(k, f)) for f in ("observed_part_id", "axis", "angle_deg", "offset", "locked")
                                if getattr(k, f) is not None))
        mistakes.append(Mistake(k.type, k.part_id, k.visible, observed))
    actions = tuple(_to_action(i, a) for i, a in enumerate(m.rework_plan.actions))
    ann = m.annotation
    mr = m.minimal_rework
    magar = MinimalRework(tuple(mr.moved_parts), mr.moved_part_count, mr.route_id) if mr else None
    return Output(ann.sample_id, ann.assembly_id, ann.pass_, tuple(mistakes), actions, magar, ignored, extracted)


def parse_action(text: str) -> Action:
    """One action object of the contract (compact JSON text) -> its Action, or ContractError."""
    try:
        data = json.loads(text)
        return _to_action(0, ActionModel.model_validate(data))
    except (ValueError, ValidationError) as exc:
        raise ContractError(f"not an action of the contract: {one_line(str(exc))[:200]}") from None


def _to_action(i: int, a) -> Action:
    where = f"field rework_plan.actions.{i}"
    kind = KIND[a.action]
    allowed, optional = set(kind.params), set(kind.optional)
    given = {f for f in ActionModel.model_fields if f != "action" and getattr(a, f) is not None}
    if not allowed <= given <= allowed | optional:
        missing, extra = sorted(allowed - given), sorted(given - allowed - optional)
        detail = "; ".join(x for x in (f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else "") if x)
        raise ContractError(f"{where}: {a.action} takes {sorted(allowed)} ({detail})")
    if issubclass(kind, GroupMove) and len(a.part_ids) < 2:
        raise ContractError(f"{where}.part_ids: {a.action} moves a group of two or more parts")
    return kind(*(_value(a, f) for f in kind.params), **{f: _value(a, f) for f in given & optional})


def _value(a, field: str):
    """One checked contract field as the action class holds it (the parameters in `params` order)."""
    value = getattr(a, field)
    if field == "after_pose":
        return Pose(tuple(value.position), tuple(value.rotation))
    if field == "offsets":
        return tuple(tuple(o) for o in value)
    return tuple(value) if field in ("part_ids", "offset") else value


def output_json(sample_id: str, assembly_id: str, mistakes: list[dict], actions) -> dict:
    """The contract object for a diagnosis and a plan (what every plan producer writes)."""
    return {
        "annotation": {"sample_id": sample_id, "assembly_id": assembly_id, "pass": not mistakes, "mistakes": mistakes},
        "rework_plan": {"objective": "restore_to_target_state", "actions": [a.to_json() for a in actions]},
    }

"""Action Grounding as data: each action of a target conditioned on the state the previous actions produce.

FORGE (3.3) conditions each generated action on "the symbolic state produced by preceding operations",
while the training target stays the final annotation and program (eq. 5) and no auxiliary loss is added.
Here that is a grounded rendering of the answer: the engine's state is written into the text at every
point where the model chooses what comes next in the plan, as `@` and the compact JSON list of the parts
that still differ from the target state (catalog order):

    {"annotation":{...},"rework_plan":{"objective":"restore_to_target_state","actions":[@["F"]{"action":"remove",
    "part_id":"A"}@["A","F"],{...}@["A"],{...}@[]]}}

one rendering after `"actions":[` (the actual state), and one after each action (the state it produced),
so the last one, `@[]` when the plan restores the target, precedes the closing `]`. The renderings are
the engine's, never the model's: training gives them no loss (`grounded_rows` in llm.train), and decoding
writes them itself after each action (llm.grounded_mask). Removing them (`strip_states`) gives the
contract object back, character for character: a `@` is never valid JSON outside a string.

`Grounder` is the one reader of that structure, fed byte by byte (the decoder's unit): it finds where a rendering
goes (the list opening, each action's closing brace) and replays the actions in the engine (an action the
engine refuses leaves the state as it was; text that is not an action leaves it too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from ..io.contract import ContractError, parse_action
from ..model.state import State
from ..semantics.task import Task
from .grammar import compact

MARK = "@"
LIST_OPEN = b'"actions":['
QUOTE, BACKSLASH, CLOSING_LIST, CLOSING_OBJECT = b'"'[0], b"\\"[0], b"]"[0], b"}"[0]
OPENING, CLOSING = frozenset(b"{["), frozenset(b"}]")


def rendering(task: Task, state: State) -> str:
    """`@` and the parts of `state` that differ from the task's target state, as compact JSON."""
    world = task.world
    return MARK + compact([world.ids[i] for i in range(len(world.ids))
                           if world.slot_differences(state, task.target, i)])


OPENED, ACTED = "opened", "acted"


@dataclass
class Syntax:
    """Where renderings go in an answer read byte by byte: `feed` says OPENED right after the `[` of
    `"actions":[`, ACTED right after the `}` that closes an action (its bytes in `action`), else None."""

    opened: bool = False        # the action list has begun
    closed: bool = False        # ... and ended
    seen: bytes = b""           # the last bytes before the list opens (to find LIST_OPEN)
    depth: int = 0              # nesting inside the action list
    in_string: bool = False
    escaped: bool = False
    action: bytearray = field(default_factory=bytearray)   # the current action's bytes

    def copy(self) -> "Syntax":
        return replace(self, action=bytearray(self.action))

    @property
    def key(self) -> tuple:
        """Everything that decides where the next rendering point is (not the action's bytes)."""
        return (self.opened, self.closed, self.seen, self.depth, self.in_string, self.escaped)

    def feed(self, b: int) -> str | None:
        if self.closed:
            return None
        if not self.opened:
            # no string tracking needed: in JSON text `"actions":[` can only be a key and its list (inside a
            # string its quotes would be escaped)
            self.seen = (self.seen + bytes((b,)))[-len(LIST_OPEN):]
            self.opened = self.seen == LIST_OPEN
            return OPENED if self.opened else None
        if self.depth:
            self.action.append(b)
        if self.in_string:
            self.escaped, self.in_string = (False, True) if self.escaped else (b == BACKSLASH, b != QUOTE)
        elif b == QUOTE:
            self.in_string = True
        elif b in OPENING:
            if not self.depth:
                self.action = bytearray((b,))
            self.depth += 1
        elif b in CLOSING:
            if not self.depth:
                self.closed = b == CLOSING_LIST
                return None
            self.depth -= 1
            if not self.depth and b == CLOSING_OBJECT:
                return ACTED
        return None


class Grounder:
    """The answer's syntax and the engine's state: `feed` returns the rendering that goes right after a
    byte (or None), having applied the action that byte closed. The decoder keeps one per branch (`copy`)."""

    def __init__(self, task: Task, syntax: Syntax | None = None, state: State | None = None):
        self.task, self.syntax = task, syntax or Syntax()
        self.state = task.actual if state is None else state

    def copy(self) -> "Grounder":
        return Grounder(self.task, self.syntax.copy(), self.state)

    def feed(self, b: int) -> str | None:
        event = self.syntax.feed(b)
        if event == ACTED:
            self._act(self.syntax.action.decode("utf-8", errors="replace"))
        return rendering(self.task, self.state) if event else None

    def _act(self, text: str) -> None:
        """Apply the action the text spells when the engine accepts it; anything else changes nothing."""
        try:
            action = parse_action(text)
        except ContractError:
            return
        if self.task.world.check(self.state, action) is None:
            self.state = self.task.world.apply(self.state, action)


def ground(task: Task, text: str) -> list[tuple[str, bool]]:
    """The grounded rendering of an answer text as pieces (text, is_rendering), in order: the answer's own
    text between the renderings (cut at ASCII bytes, so every piece is whole UTF-8)."""
    g = Grounder(task)
    pieces: list[tuple[str, bool]] = []
    held = bytearray()
    for b in text.encode("utf-8"):
        held.append(b)
        state = g.feed(b)
        if state is not None:
            pieces += [(held.decode("utf-8"), False), (state, True)]
            held = bytearray()
    if held:
        pieces.append((held.decode("utf-8"), False))
    return pieces


def grounded_text(task: Task, text: str) -> str:
    return "".join(piece for piece, _ in ground(task, text))


def strip_states(text: str) -> str:
    """The answer without its state renderings: every `@` outside a JSON string and the JSON value after it."""
    decoder = json.JSONDecoder()
    out: list[str] = []
    k, in_string, escaped = 0, False, False
    while k < len(text):
        ch = text[k]
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch == MARK:
            try:
                _, k = decoder.raw_decode(text, k + 1)
                continue
            except json.JSONDecodeError:
                pass   # a stray @ is the model's: kept, the contract parser judges it
        out.append(ch)
        k += 1
    return "".join(out)

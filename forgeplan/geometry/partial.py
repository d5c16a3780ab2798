"""BurrTools-style disassembly with partial moves (SEMANTICS.md §9) and the dotted level.

Two-handed, as BurrTools: a (sub)assembly floats in free space; a *move* translates one group of its
parts along one direction by `k >= 1` unit steps (one move whatever `k`, every step collision-free) or
out to infinity, which separates it in two. For each subassembly a breadth-first search over
displacement states finds a shortest sequence of moves ending in a separation; the two halves are then
taken apart in turn, each starting from the displacements it has.

- **State canonicalisation.** Only relative positions matter in free space, so a state is the tuple
  of offsets relative to an *anchor* part (a frame if there is one, else the first part); a move of a
  group holding the anchor is recorded as the equivalent opposite move of the complement.
- **Moves.** As BurrTools generates them: for each seed part, direction and distance `k`, the group
  that must come along (every part met within `k` steps by the group, to the fixed point). A group whose
  every gap is a clear ray separates (`geometry/displacement.py`). Groups are bitmasks, each move's
  group and direction tried once per state.
- **Finiteness.** Before anything separates every part stays within the others' bounding box (once the
  boxes of a group and the rest are apart along an axis the group leaves along it), so the state space
  of an inseparable set is finite and the search proves it: every reachable state was visited.

- **Budget.** A user's file can describe a state space far beyond any clock (loose cubes rattling in a
  hollow shell), so every search runs under a `Budget`: at most `states` displacement states over the whole
  tree and, for the command line, a wall-time deadline. A search cut by its budget proves nothing; the
  verdict then says *undecided within the budget* instead of inseparable.
- **Minimal.** Every group that can move (closed under "meets within one step") is tried with every
  distance, so the first separation of each subassembly takes the fewest moves §9 allows.

The level string follows BurrTools: the number of moves of a separation, then `.` and the level of the
remaining half, then of the removed half, each only when some separation inside that half takes more
than one move.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import NamedTuple

from ..model.assembly import DIRECTION_VECTORS, DIRECTIONS, Assembly
from ..model.state import NO_OFFSET
from .displacement import FREE, Shapes, Vec, closure, shapes, unions

MAX_STATES = 2_000_000   # per subassembly search; beyond it the verdict says the search gave up
# what the command line allows one verdict by default (`--time-limit` changes the time, counted from the
# command's start): visited states stay under ~150 MB however many parts a state holds, and the answer
# comes within 10 s
CLI_POSITIONS = 1_500_000
CLI_SECONDS = 8.0
# when an assembly file or a task folder is loaded: no clock, so whether it loads is the same on every
# machine; the real puzzles need at most 48,199 (Pelikan Burr), an interlocked 12³ shell takes ~3 s to refuse
LOAD_POSITIONS = 200_000
MAX_UNIONS = 1 << 14     # groups of one state along one direction (unions of seed closures)
_VEC = tuple(DIRECTION_VECTORS[d] for d in DIRECTIONS)


class OutOfBudget(Exception):
    """The search met its budget (`Budget.why` says which limit)."""


@dataclass
class Budget:
    """What a whole disassembly may spend: `positions` stored part positions over every subassembly
    search (a visited state of n parts stores n; this is what the search's memory grows with), and
    `seconds` of wall time from the budget's creation (inf: none, the same answer on every machine)."""

    positions: float = math.inf
    seconds: float = math.inf
    start: float | None = None     # time.monotonic() the seconds count from (default: now)
    used: int = 0
    why: str | None = None
    deadline: float = field(init=False)

    def __post_init__(self) -> None:
        self.deadline = (time.monotonic() if self.start is None else self.start) + self.seconds

    def spend(self, n: int) -> None:
        """Count `n` stored positions (0: a unit of work that stores nothing); OutOfBudget once a
        limit is met. The clock is read at every 0 and every 1,024 positions."""
        before, self.used = self.used, self.used + n
        if self.used > self.positions:
            self.why = f"{self.positions:,} part positions"
            raise OutOfBudget(self.why)
        if not n or (before >> 10) != (self.used >> 10):
            if time.monotonic() > self.deadline:
                self.why = f"{self.seconds:g} s"
                raise OutOfBudget(self.why)


class Move(NamedTuple):
    """One move: `parts` translate along `direction` by `distance` steps, or out (`distance` None)."""

    parts: tuple[str, ...]
    direction: str
    distance: int | None

    def to_json(self) -> dict:
        return {"move": list(self.parts), "dir": self.direction,
                "distance": "out" if self.distance is None else self.distance}


@dataclass(frozen=True)
class Node:
    """A subassembly and how it comes apart: `moves` ends with the separation (empty for one part);
    `stuck` when no sequence of moves separates it (`searched` states were all visited, or the cap)."""

    parts: tuple[str, ...]
    moves: tuple[Move, ...] = ()
    left: "Node | None" = None
    removed: "Node | None" = None
    stuck: bool = False
    searched: int = 0
    capped: bool = False   # stuck because the search hit its cap or budget, not because it was exhausted

    def multi(self) -> bool:
        """BurrTools' containsMultiMoves: some separation in this subtree takes more than one move."""
        return len(self.moves) > 1 or any(n.multi() for n in (self.left, self.removed) if n)

    def level(self) -> str:
        """BurrTools' dotted level (movesText): first this separation, then each half holding a multi-move."""
        if not self.moves:
            return ""
        text = str(len(self.moves))
        for half in (self.left, self.removed):
            if half is not None and half.multi():
                text += "." + half.level()
        return text

    def steps(self) -> tuple[Move, ...]:
        """The plan in data/burr order: this separation's moves, then the remaining half, then the removed one."""
        out = list(self.moves)
        for half in (self.left, self.removed):
            if half is not None:
                out += half.steps()
        return tuple(out)

    def stuck_sets(self) -> tuple[tuple[str, ...], ...]:
        if self.stuck:
            return (self.parts,)
        return tuple(s for h in (self.left, self.removed) if h for s in h.stuck_sets())

    def capped_anywhere(self) -> bool:
        return self.capped or any(h.capped_anywhere() for h in (self.left, self.removed) if h)

    def states(self) -> int:
        return self.searched + sum(h.states() for h in (self.left, self.removed) if h)


# ----------------------------------------------------------------------------- the search


def _add(a: Vec, v: Vec, k: int) -> Vec:
    return (a[0] + v[0] * k, a[1] + v[1] * k, a[2] + v[2] * k)


def _gap_table(sh: Shapes, members: tuple[int, ...], state: tuple[Vec, ...]) -> list[list[tuple[int, ...]]]:
    """gaps[a][b]: per direction, how far member `a` can move before meeting member `b` (local indices)."""
    n = len(members)
    table: list[list[tuple[int, ...]]] = [[()] * n for _ in range(n)]
    for a in range(n):
        oa = state[a]
        for b in range(a + 1, n):
            ob = state[b]
            g = sh.gaps(members[a], members[b], (ob[0] - oa[0], ob[1] - oa[1], ob[2] - oa[2]))
            table[a][b] = g
            table[b][a] = (g[1], g[0], g[3], g[2], g[5], g[4])
    return table


def _group_moves(table, n: int, d: int, anchor: int | None, budget: Budget | None = None) -> list[tuple[int, int]]:
    """(group mask, room) of every group without the anchor (None: any proper group) that can move along
    `d` (room FREE: it separates). Such a group is closed under "meets within one step", so it is a union
    of the closures of its members; all unions of seed closures are tried, smallest first."""
    touch = [sum(1 << b for b in range(n) if b != a and table[a][b][d] < 1) for a in range(n)]
    closures = {c for c in (closure(touch, seed) for seed in range(n)) if anchor is None or not c >> anchor & 1}
    found = unions(closures, MAX_UNIONS if budget is not None else None)
    if found is None:   # 2^k groups of k loose parts (a cap is set only with a budget)
        why = f"{MAX_UNIONS:,} movable groups in one state"
        if budget is not None:
            budget.why = why
        raise OutOfBudget(why)
    found.discard(0)
    found.discard((1 << n) - 1)
    out = []
    for group in sorted(found, key=lambda g: (bin(g).count("1"), g)):
        inside = [a for a in range(n) if group >> a & 1]
        outside = [b for b in range(n) if not group >> b & 1]
        out.append((group, min(table[a][b][d] for a in inside for b in outside)))
    return out


def _search(sh: Shapes, members: tuple[int, ...], start: tuple[Vec, ...], anchor: int, cap: int, budget: Budget):
    """Breadth-first: (moves as (local group mask, direction index, distance|None), the separated mask,
    states visited) or (None, None, visited) when nothing separates. OutOfBudget when `budget` runs out
    (its `used` then counts this search's states)."""
    n = len(members)
    base = start[anchor]
    root = tuple((o[0] - base[0], o[1] - base[1], o[2] - base[2]) for o in start)
    parent: dict = {root: None}
    queue = deque([root])
    while queue:
        state = queue.popleft()
        budget.spend(0)
        table = _gap_table(sh, members, state)
        exits = []
        for d in range(6):
            for group, room in _group_moves(table, n, d, anchor, budget):
                if room >= FREE:
                    exits.append(_smaller_side(group, d, n))
                    continue
                vec = _VEC[d]
                for k in range(1, room + 1):
                    child = tuple(_add(o, vec, k) if group >> a & 1 else o for a, o in enumerate(state))
                    if child not in parent:
                        parent[child] = (state, (group, d, k))
                        queue.append(child)
                        budget.spend(n)
        if exits:
            group, d = min(exits, key=lambda gd: (bin(gd[0]).count("1"), gd[1], gd[0]))
            return _path(parent, state) + [(group, d, None)], group, len(parent)
        if len(parent) > cap:
            break
    return None, None, len(parent)


def _smaller_side(group: int, d: int, n: int) -> tuple[int, int]:
    """A separation takes out the smaller half: the group along `d` or, equivalently, the rest along -d."""
    rest = ((1 << n) - 1) & ~group
    if bin(rest).count("1") < bin(group).count("1"):
        return rest, d ^ 1
    return group, d


def _path(parent: dict, state) -> list:
    out = []
    while parent[state] is not None:
        state, move = parent[state]
        out.append(move)
    return out[::-1]


def _anchor(asm: Assembly, members: tuple[int, ...]) -> int:
    for a, i in enumerate(members):
        if asm.parts[i].kind == "frame":
            return a
    return 0


def _solve(asm: Assembly, sh: Shapes, members: tuple[int, ...], start: tuple[Vec, ...], cap: int,
           budget: Budget) -> Node:
    names = tuple(sh.ids[i] for i in members)
    if len(members) == 1:
        return Node(names)
    before = budget.used
    try:
        moves, removed, searched = _search(sh, members, start, _anchor(asm, members), cap, budget)
    except OutOfBudget:
        return Node(names, stuck=True, searched=(budget.used - before) // max(1, len(members)), capped=True)
    if moves is None:
        return Node(names, stuck=True, searched=searched, capped=searched > cap)
    state = list(start)
    out = []
    for group, d, k in moves:
        out.append(Move(tuple(names[a] for a in range(len(members)) if group >> a & 1), DIRECTIONS[d], k))
        if k is not None:
            state = [_add(o, _VEC[d], k) if group >> a & 1 else o for a, o in enumerate(state)]
    keep = [a for a in range(len(members)) if not removed >> a & 1]
    gone = [a for a in range(len(members)) if removed >> a & 1]
    left = _solve(asm, sh, tuple(members[a] for a in keep), tuple(state[a] for a in keep), cap, budget)
    right = _solve(asm, sh, tuple(members[a] for a in gone), tuple(state[a] for a in gone), cap, budget)
    return Node(names, tuple(out), left, right, searched=searched)


@lru_cache(maxsize=32)
def disassemble_partial(asm: Assembly, cap: int = MAX_STATES) -> Node:
    """The BurrTools-style disassembly tree of the whole assembly, from its assembled pose (`cap` states
    per subassembly search, no clock: the same answer on every machine)."""
    return budgeted_tree(asm, Budget(), cap)


def budgeted_tree(asm: Assembly, budget: Budget, cap: int = MAX_STATES) -> Node:
    """The disassembly tree under `budget`; cached when the budget has no clock (then the answer is the
    same on every machine), so loading the same assembly again does not search again."""
    if math.isinf(budget.seconds) and budget.used == 0:
        tree, budget.used, budget.why = _clockless_tree(asm, budget.positions, cap)
        return tree
    sh = shapes(asm)
    n = len(sh.ids)
    return _solve(asm, sh, tuple(range(n)), (NO_OFFSET,) * n, cap, budget)


@lru_cache(maxsize=32)
def _clockless_tree(asm: Assembly, positions: float, cap: int) -> tuple[Node, int, str | None]:
    budget = Budget(positions)
    sh = shapes(asm)
    n = len(sh.ids)
    return _solve(asm, sh, tuple(range(n)), (NO_OFFSET,) * n, cap, budget), budget.used, budget.why


def partial_verdict(asm: Assembly, cap: int = MAX_STATES, budget: Budget | None = None) -> dict:
    """How the assembly comes apart when partial moves are allowed: the dotted level, the plan (data/burr
    steps, replayable by `displacement.replay_moves`) and the sets no sequence of moves separates. Under a
    `budget`, a search it cuts makes the verdict `undecided` (`disassemblable` null): neither a plan nor a proof."""
    tree = disassemble_partial(asm, cap) if budget is None else budgeted_tree(asm, budget, cap)
    stuck = tree.stuck_sets()
    undecided = tree.capped_anywhere()
    out: dict = {
        "assembly_id": asm.assembly_id,
        "disassemblable": not stuck if not undecided else None,
        "mode": "partial_moves" if not stuck else ("undecided" if undecided else "inseparable"),
        "level": tree.level() or None,
        "first_separation_moves": len(tree.moves) or None,
        "steps": [m.to_json() for m in tree.steps()],
        "inseparable": [list(s) for s in stuck],
        "states_searched": tree.states(),
    }
    slides = sum(1 for m in tree.steps() if m.distance is not None)
    if not stuck:
        n = len(tree.moves)
        out["verdict"] = (f"disassemblable with partial moves: level {tree.level()} ({n} move{'s' * (n != 1)} to "
                          f"the first separation, {slides} slide{'s' * (slides != 1)} in all)")
        return out
    sets = "; ".join(str(list(s)) for s in stuck)
    done = f"after level {tree.level()} " if tree.moves else ""
    if undecided:
        limit = (budget.why if budget is not None else None) or f"{cap:,} states per subassembly"
        out["budget"] = {"limit": limit, "part_positions": budget.used if budget is not None else None}
        out["verdict"] = (f"undecided within the budget: {done}the search for a sequence of moves separating parts "
                          f"{sets} stopped at {limit}; it neither found one nor proved there is none"
                          + (" (--time-limit gives it longer)" if limit.endswith(" s") else ""))
        return out
    out["verdict"] = (f"not fully disassemblable: {done}parts {sets} cannot be separated by any sequence of moves "
                      "(every reachable displacement state was searched)")
    return out


def separates_completely(asm: Assembly, parts, offsets: tuple[Vec, ...] | None = None) -> bool:
    """Do these parts, alone at their target geometry displaced by `offsets` (catalog order; default 0),
    come apart completely with partial moves (SEMANTICS §9's *separable*)?"""
    return not separation_tree(asm, parts, offsets).stuck_sets()


def separation_tree(asm: Assembly, parts, offsets: tuple[Vec, ...] | None = None) -> Node:
    """The disassembly tree of these parts alone, displaced by `offsets` (catalog order; default 0)."""
    keep = set(parts)
    sub = replace(asm, assembly_id=f"{asm.assembly_id}[{','.join(sorted(keep))}]",
                  parts=tuple(p for p in asm.parts if p.part_id in keep), spares=())
    if offsets is None or all(o == NO_OFFSET for o in offsets):
        return disassemble_partial(sub)
    moved = tuple(replace(p, voxels=frozenset((x + o[0], y + o[1], z + o[2]) for x, y, z in p.voxels))
                  for p, o in zip(sub.parts, offsets))
    return disassemble_partial(replace(sub, parts=moved))


def main_chain(asm: Assembly) -> tuple[tuple[Move, ...], tuple[str, ...]]:
    """The separations that keep taking the remaining half apart, from the whole assembly (the moves
    one-handed replay can do: what comes out is gone), and the parts left at the end."""
    node = disassemble_partial(asm)
    moves: list[Move] = []
    while node.left is not None and node.moves:
        moves += node.moves
        node = node.left
    return tuple(moves), node.parts


def insertion_order(asm: Assembly) -> tuple[str, ...]:
    """An assembly order for an assembly that needs partial moves: what the main chain leaves, then each
    half it took out, latest first (members in catalog order)."""
    moves, rest = main_chain(asm)
    outs = [m.parts for m in moves if m.distance is None]
    return (*rest, *(p for out in reversed(outs) for p in out))


def needs_partial_moves(asm: Assembly) -> bool:
    """Is this an assembly of SEMANTICS §9's scope: every part may move in all six directions (a real
    puzzle, not a mechanism with guided parts) and straight moves do not take it apart?"""
    from .separation import is_level1

    return all(len(set(p.removal_dirs)) == len(DIRECTIONS) for p in asm.parts) and not is_level1(asm)

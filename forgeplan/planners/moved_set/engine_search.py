"""Is any plan the engine accepts at most `limit` actions long? Decided exactly, over every engine move,
without ever enumerating where an arrival lands (SEARCH.md §3.1 proves each step).

The moves of the moved set `M` inside the position bound are slides (a clear ray ahead too), departures,
arrivals (an insertion anywhere with a clear ray, a join in any arrangement) and mends. Arrivals are the
moves no search can list, so the decision uses two searches without them:

* `F`, forward from the start: slides, departures, mends;
* `B`, backward from the target: the reverses of slides, arrivals and mends, i.e. slides, departures
  and "un-mends" (a faulty slot appears where it has a clear ray).

A plan splits at its last departure `τ`: before it `F`'s moves and arrivals, after it `B`'s moves
reversed. Where no arrival comes before `τ`, the state at `τ` is in both searches (a *meet*, which is a
plan). Where one does (a *crossing*), deleting the slots that arrive from the prefix leaves a state of
`F`, so the state at `τ` less the arrived slots is in `F` (`_late_crossings`); only where that
necessary condition holds is the plan cut at the first departure after an arrival instead, where every
arrived group is shut in (`_early_crossings`). No meet and no crossing left: no plan of `limit` actions.
Every pruning bound is valid for the states it prunes (`_Bounds`); a search past its cap, or a
separability verdict cut by its own cap, raises Undecided.
"""

from __future__ import annotations

from itertools import combinations
from typing import Callable, Iterator, NamedTuple, Optional

from ...geometry.displacement import FREE
from ...model.assembly import DIRECTIONS
from ...model.state import NO_OFFSET
from ...semantics.assembly_grounding import AssemblyGrounding
from ...semantics.partial_offers import (Config, Move, OfferTable, SeparabilityCapped, Universe, bits, room,
                                         separable_at)
from .bounds import FAR, LowerBound, leave_distances
from .reach import Undecided, within

Node = tuple[Config, int]     # offsets (None when absent) and the mask of present slots still faulty
Step = tuple[Node, Move]      # the node a move is made in, and the move
Edge = tuple[Move, Node]      # a move and the node it leads to


class Verdict(NamedTuple):
    """`plan`: the steps of a plan of at most `limit` moves from the start, or None when none exists;
    `spent`: the nodes both searches kept."""

    plan: Optional[list[Step]]
    spent: int


def shorter_plan(ag: AssemblyGrounding, start: Node, movable: int, limit: int, home_bound: LowerBound, cap: int,
                 deadline: float | None = None) -> Verdict:
    """Does an engine plan of at most `limit` moves of `movable` slots lead from `start` to the target?
    Raises Undecided past `cap` kept nodes or the deadline. Where the two searches cannot rule out a
    crossing, the forward search over every engine move (`_forward`, exact while at most one slot of the
    set is absent at once: its landings are listed) may still show that no plan exists."""
    try:
        return _meet(ag, start, movable, limit, home_bound, cap, deadline)
    except Undecided:
        found, spent = _forward(ag, start, movable, limit + 1, home_bound, cap, deadline)
        if found:
            raise
        return Verdict(None, spent)


def _meet(ag: AssemblyGrounding, start: Node, movable: int, limit: int, home_bound: LowerBound, cap: int,
          deadline: float | None = None) -> Verdict:
    """The two searches of the module docstring and their crossings."""
    if home_bound(start) > limit:
        return Verdict(None, 0)
    table, world = ag.offers, ag.world
    if any(world.supports_mask[i] or len(world.parts[i].removal_dirs) < len(DIRECTIONS) for i in bits(movable)):
        raise Undecided("a part of the moved set has supports or fewer than six directions: the proof does not hold")
    bounds = _Bounds(ag, start, movable, home_bound, cap, deadline)
    budget = [cap]
    fwd = _ball(table, start, movable, max(0, limit + 1 - bounds.away), bounds.keep_forward(limit), False, 0,
                budget, deadline)

    def meets(node: Node, r: int) -> bool:
        k = fwd.dist.get(node)
        return k is not None and k + r <= limit

    back = _ball(table, (_home(start), 0), movable, limit, bounds.keep_backward(limit), True, start[1], budget, deadline,
                 meets)
    spent = len(fwd.dist) + len(back.dist)
    if back.met is not None:
        return Verdict(fwd.path(back.met) + back.reversed_path(back.met), spent)
    if not _late_crossings(fwd, back, movable, limit, bounds, start):
        return Verdict(None, spent)
    early = _ball(table, (_home(start), 0), movable, limit - 2, bounds.keep_backward(limit, partial=True), True, start[1], budget,
                  deadline)
    if _early_crossings(table, fwd, early, movable, limit, bounds):
        raise Undecided("a plan that arrives before it departs could not be ruled out")
    return Verdict(None, spent + len(early.dist))


def _home(start: Node) -> Config:
    return tuple(NO_OFFSET for _ in start[0])


# ----------------------------------------------------------------------------- the two searches

class _Ball(NamedTuple):
    """A breadth-first search: each node's depth and the step that first reached it."""

    dist: dict[Node, int]
    parent: dict[Node, Step]
    met: Optional[Node] = None     # the node the search stopped at

    def path(self, node: Node) -> list[Step]:
        """The forward steps from the origin to `node`."""
        out = []
        while node in self.parent:
            before, move = self.parent[node]
            out.append((before, move))
            node = before
        return out[::-1]

    def reversed_path(self, node: Node) -> list[Step]:
        """The forward steps from `node` to the origin of a backward search (each move undone)."""
        out = []
        while node in self.parent:
            before, move = self.parent[node]
            out.append((node, _undo(before, move)))
            node = before
        return out


def _undo(before: Node, move: Move) -> Move:
    """The forward move that takes the node a backward move led to back to `before`."""
    if move[0] == "slide":
        return ("slide", move[1], DIRECTIONS[DIRECTIONS.index(move[2]) ^ 1], move[3])
    if move[0] == "out":
        return ("in", move[1], move[2], tuple(before[0][i] for i in bits(move[1])))
    return ("mend", move[1])


def _ball(table: OfferTable, origin: Node, movable: int, depth: int, keep: "_Keep", reverse: bool, faulty: int,
          budget: list[int], deadline: float | None, stop: Callable[[Node, int], bool] | None = None) -> _Ball:
    """Breadth-first to `depth` over the arrival-free moves (`_moves`), keeping the nodes `keep` admits at
    their depth, up to the first that `stop` accepts; the kept nodes are taken off `budget` (Undecided when
    it runs out)."""
    dist: dict[Node, int] = {origin: 0}
    parent: dict[Node, Step] = {}
    layer = [origin]
    if stop is not None and stop(origin, 0):
        return _Ball(dist, parent, origin)
    for k in range(1, depth + 1):
        nxt = []
        for node in layer:
            for move, after in _moves(table, node, movable, reverse, faulty, lambda n: n not in dist and keep(n, k),
                                      lambda group, d: keep.slides_ok(node, k, group, d)):
                if after not in dist and keep(after, k):
                    dist[after], parent[after] = k, (node, move)
                    if stop is not None and stop(after, k):
                        return _Ball(dist, parent, after)
                    nxt.append(after)
        budget[0] -= len(nxt)
        if budget[0] < 0:
            raise Undecided("past the decision's budget of nodes")
        within(0, 1, deadline)
        if not nxt:
            break
        layer = nxt
    return _Ball(dist, parent)


def _moves(table: OfferTable, node: Node, movable: int, reverse: bool, faulty: int,
           admit: Callable[[Node], bool], slides_ok: Callable[[int, int], bool]) -> Iterator[Edge]:
    """The arrival-free moves of `movable` slots, each with the node it leads to: forward, mends, slides
    (a clear ray ahead too, up to the bound) and departures (which take their members' faults along);
    backward, un-mends of the slots faulty at the start, slides and departures of sound groups (the
    reverse of an arrival, which brings sound parts). The kernel's moves of every engine move
    (`partial_offers.Universe.ENGINE`): a group's departure is asked its separability only where `admit`
    keeps the node it leads to, its slides listed only where `slides_ok` lets some distance through; a
    negative separability verdict cut by the level search's cap is no proof, so it stops the decision."""
    config, bad = node
    if reverse:
        for i in bits(faulty & movable & table.pairs_of(config).present & ~bad):
            if table.clear(config, i):
                yield ("mend", i), (config, bad | 1 << i)
    else:
        for i in bits(bad & movable & table.pairs_of(config).present):
            if table.clear(config, i):
                yield ("mend", i), (config, bad & ~(1 << i))
    try:
        for move, after in table.moves(config, movable, Universe.ENGINE, strict=True, slides_ok=slides_ok,
                                       admit=lambda group, gone: not (reverse and group & bad) and admit((gone, bad & ~group))):
            if move[0] != "out":
                yield move, (after, bad)
            elif not (reverse and move[1] & bad):
                yield move, (after, bad & ~move[1])
    except SeparabilityCapped:
        raise Undecided("a separability search was cut by its state cap") from None


def _separable(table: OfferTable, config: Config, group: int) -> bool:
    """§9's separability of `group` where it is (strict: a verdict cut by a cap stops the decision)."""
    if group & (group - 1) == 0:
        return True
    try:
        return separable_at(table.world, group, [config[i] for i in bits(group)], strict=True)  # type: ignore[misc]  # members are present
    except SeparabilityCapped:
        raise Undecided("a separability search was cut by its state cap") from None


# ----------------------------------------------------------------------------- bounds

class _Bounds:
    """Lower bounds on the moves between the start, a node and the target (SEARCH.md §3.2): each is
    `min(fixed + slides, cap)`, `slides` the slides a node's offsets are away from a reference (`m` slides
    along an axis give at most `2^m` distinct differences on it), `fixed` its departures, arrivals and
    mends, `cap` a plan in which a present slot leaves and comes back (`away` from the target, `away_s`
    from the start). The `partial` bounds only shrink when slots are deleted from a node, so they also
    bound the nodes of a plan with its arrived or departing slots deleted; the others bound exact states."""

    def __init__(self, ag: AssemblyGrounding, start: Node, movable: int, home_bound: LowerBound, cap: int,
                 deadline: float | None):
        self.home_bound, self.away, self.start = home_bound, home_bound.away, start
        leave = leave_distances(ag, start[0], movable, cap, deadline)
        self.away_s = 2 + min(leave.values()) if leave else FAR

    def keep_forward(self, limit: int) -> "_Keep":
        """`F` keeps what a crossing's deleted prefix reaches (to `limit - away`: the partial bound) and
        what a plan's prefix reaches (exact states: `LowerBound`, whose absent slots come back in
        `e(q) + 1` moves, more than any slide changes)."""
        cut = limit - self.away

        def partial(config: Config, bad: int, axis: int = -1, slid: int = 0) -> int:
            return min(_slides(config, None, axis, slid) + bin(bad).count("1"), self.away)

        def bound(node: Node, k: int, axis: int = -1, slid: int = 0) -> int:
            config, bad = node
            least = partial(config, bad, axis, slid)
            if k < cut or k == cut and (slid or self.crossing(node, k, limit)):
                return least
            return max(least, self.home_bound(node) if None in config or not slid else least)
        return _Keep(limit, bound)

    def crossing(self, node: Node, k: int, limit: int) -> bool:
        """Can `node` at depth `k` of `F` be a plan's state at its last departure less the slots that
        arrived before it? Then one of its absent slots `h`, present at the start, left at `τ > k` and comes
        back in `e(h) + 1` moves, and another one arrived before `τ`."""
        config, s_config, leave = node[0], self.start[0], self.home_bound.leave
        absent = [i for i in leave if config[i] is None]
        return len(absent) >= 2 and any(s_config[h] is not None and leave[h] is not None and
                                        k + 2 + leave[h] <= limit for h in absent)  # type: ignore[operator]  # checked not None

    def keep_backward(self, limit: int, partial: bool = False) -> "_Keep":
        """`B` keeps exact states of a plan's suffix (`partial`: their projections, `early`'s)."""
        return _Keep(limit, lambda node, k, axis=-1, slid=0: self.from_start(node, partial, axis, slid))

    def from_start(self, node: Node, partial: bool = False, axis: int = -1, slid: int = 0) -> int:
        """Moves from the start to `node` (with `slid`: to any of its slides along `axis`)."""
        config, bad = node
        s_config, s_bad = self.start
        if bad & ~s_bad:
            return FAR      # faults are never made
        arrives = departs = False
        present = 0
        for i, (a, b) in enumerate(zip(s_config, config)):
            arrives |= a is None and b is not None
            departs |= a is not None and b is None
            present |= (b is not None) << i
        fixed = arrives + (not partial and departs) + bin(s_bad & present & ~bad).count("1")
        return min(fixed + _slides(config, s_config, axis, slid), self.away_s)

    def to_home(self, node: Node) -> int:
        return self.home_bound(node)


class _Keep:
    """Which nodes a search keeps at depth `k`: those with `k + bound <= limit`. `slides_ok` asks once
    for every distance of a group's slides along a direction, with the least the slid axis can add (its
    members may land on the others' values)."""

    def __init__(self, limit: int, bound: Callable[..., int]):
        self.limit, self.bound = limit, bound

    def __call__(self, node: Node, k: int) -> bool:
        return k + self.bound(node, k) <= self.limit

    def slides_ok(self, node: Node, k: int, group: int, d: int) -> bool:
        return k + self.bound(node, k, d // 2, group) <= self.limit


def _slides(config: Config, ref: Config | None, axis: int = -1, slid: int = 0) -> int:
    """Slides `config` is at least away from `ref` (None: the target), over the slots present in both.
    With `slid` (a group about to slide along `axis`), the least over its distances: the members' values
    on that axis are left out."""
    out = 0
    for a in range(3):
        skip = slid if a == axis else 0
        if ref is None:
            values = {o[a] for i, o in enumerate(config) if o is not None and not skip >> i & 1}
        else:
            values = {o[a] - r[a] for i, (o, r) in enumerate(zip(config, ref))
                      if o is not None and r is not None and not skip >> i & 1}
        values.discard(0)
        out += len(values).bit_length()
    return out


# ----------------------------------------------------------------------------- crossings

def _late_crossings(fwd: _Ball, back: _Ball, movable: int, limit: int, bounds: _Bounds, start: Node) -> bool:
    """Could a plan of at most `limit` moves arrive before its last departure `τ`? Its state at `τ` is a
    node `Z` of `B` with the departed group absent (present at the start); deleting the slots `G` that
    arrived before `τ` from the prefix reaches `Z - G` within `τ - 1` moves, a node of `F`."""
    for z, r in back.dist.items():
        config, bad = z
        if not any(start[0][i] is not None and config[i] is None for i in bits(movable)):
            continue
        present = [i for i in bits(movable) if config[i] is not None and not bad >> i & 1]
        for size in range(1, len(present) + 1):
            for arrived in combinations(present, size):
                g = sum(1 << i for i in arrived)
                u = (tuple(None if g >> i & 1 else o for i, o in enumerate(config)), bad)
                k = fwd.dist.get(u)
                if k is None or k + r > limit - 1 or not bounds.crossing(u, k, limit):
                    continue
                if max(k + 1, bounds.from_start(z)) + max(r, bounds.to_home(z)) <= limit:
                    return True
    return False


def _early_crossings(table: OfferTable, fwd: _Ball, early: _Ball, movable: int, limit: int, bounds: _Bounds) -> bool:
    """The same plans cut at `t = j - 1`, `j` the first departure after an arrival: the state `Y` then
    less the slots that have arrived is a node `U` of `F`, less the slots that depart later a node `Z` of
    `early` (`B` with partial bounds); `Y` is their union, some group `D` of the later-departing slots `H`
    leaves `Y`, and every group that arrived is shut in once `D` has left (else it could arrive after `j`,
    one crossing fewer: SEARCH.md §3.1)."""
    index: dict[Node, list[tuple[int, int, Node]]] = {}
    for z, r in early.dist.items():
        config, bad = z
        present = [i for i in bits(movable) if config[i] is not None and not bad >> i & 1]
        for size in range(1, len(present) + 1):
            for arrived in combinations(present, size):
                g = sum(1 << i for i in arrived)
                index.setdefault((tuple(None if g >> i & 1 else o for i, o in enumerate(config)), bad), []).append((r, g, z))
    for u, k in fwd.dist.items():
        if k > limit - 1 - bounds.away:
            continue
        config, bad = u
        present = [i for i in bits(movable) if config[i] is not None]
        for size in range(1, len(present) + 1):
            for leaving in combinations(present, size):
                h = sum(1 << i for i in leaving)
                for r, g, z in index.get((tuple(None if h >> i & 1 else o for i, o in enumerate(config)), bad & ~h), ()):
                    if not g & h and k + r <= limit - 2 and _crossing_state(table, u, z, g, h, k, r, limit, bounds):
                        return True
    return False


def _crossing_state(table: OfferTable, u: Node, z: Node, g: int, h: int, k: int, r: int, limit: int,
                    bounds: _Bounds) -> bool:
    """Can `Y` = `u` with the arrived slots `g` where `z` has them be a plan's state at `t = j - 1`?"""
    y = (tuple(z[0][i] if g >> i & 1 else o for i, o in enumerate(u[0])), u[1] | z[1])
    pairs = table.pairs_of(y[0])
    if any(pairs.rows[a][b] is not None and pairs.rows[a][b][0] < 0 for a in bits(g) for b in bits(h)):
        return False       # the arrived and the departing slots overlap
    if max(k + 1, bounds.from_start(y)) + max(r + 1, bounds.to_home(y)) > limit:
        return False
    for d in _leaving_groups(table, y[0], h):
        gone = tuple(None if d >> i & 1 else o for i, o in enumerate(y[0]))
        if _shut_in(table, gone, g):
            return True
    return False


def _leaving_groups(table: OfferTable, config: Config, candidates: int) -> Iterator[int]:
    """Every non-empty group of `candidates` that can leave `config` (clear rays along one direction,
    separable where it is)."""
    pairs = table.pairs_of(config)
    for size in range(1, len(bits(candidates)) + 1):
        for members in combinations(bits(candidates), size):
            group = sum(1 << i for i in members)
            if any(room(pairs, group, d) >= FREE for d in range(len(DIRECTIONS))) and _separable(table, config, group):
                yield group


def _shut_in(table: OfferTable, config: Config, arrived: int) -> bool:
    """Can the slots `arrived` be split into groups none of which has a clear ray for every member along
    one direction (so none could arrive where it is)?"""
    pairs = table.pairs_of(config)

    def stuck(group: list[int]) -> bool:
        mask = sum(1 << i for i in group)
        others = bits(pairs.present & ~mask)
        return not any(all(pairs.rows[i][j][d] >= FREE for i in group for j in others) for d in range(len(DIRECTIONS)))

    return any(all(stuck(part) for part in split) for split in _partitions(bits(arrived)))


def _partitions(items: list[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for split in _partitions(rest):
        yield [[first], *split]
        for n in range(len(split)):
            yield split[:n] + [[first, *split[n]]] + split[n + 1:]


# ----------------------------------------------------------------------------- one absent slot at a time

def _forward(ag: AssemblyGrounding, start: Node, movable: int, c: int, bound: LowerBound, cap: int,
             deadline: float | None = None) -> tuple[bool, int]:
    """Does a plan of fewer than `c` actions from `start` move only `movable` slots, over every engine
    move? And the nodes kept. Raises Undecided past `cap` or `deadline`, or where a join could follow.

    The last layer is never built: a node one move short of the depth is asked directly whether one
    move ends the plan (`_one_move_home`)."""
    limit = c - 1
    if _goal(start):
        return True, 1
    if limit == 0 or bound(start) > limit:
        return False, 1
    if limit == 1:
        return _one_move_home(ag, start, movable), 1
    goal = (tuple(NO_OFFSET for _ in start[0]), 0)
    seen, layer = {start}, [start]
    for depth in range(1, limit):
        near = depth == limit - 1

        def fits(nxt: Node) -> bool:
            return nxt not in seen and (near or depth + bound(nxt) <= limit)

        nxt_layer = []
        for node in layer:
            for nxt in _engine_moves(ag, node, movable, fits):
                if nxt in seen:
                    continue
                if nxt == goal:
                    return True, len(seen)
                if near:
                    if _one_move_home(ag, nxt, movable):
                        return True, len(seen)
                    continue
                if depth + bound(nxt) > limit:
                    continue
                seen.add(nxt)
                within(len(seen), cap, deadline)
                nxt_layer.append(nxt)
        layer = nxt_layer
    return False, len(seen)


def _goal(node: Node) -> bool:
    config, bad = node
    return bad == 0 and all(o == NO_OFFSET for o in config)


def _engine_moves(ag: AssemblyGrounding, node: Node, movable: int, fits=lambda nxt: True) -> Iterator[Node]:
    """The nodes every engine move of `movable` slots leads to: mends, slides (a clear ray ahead too, up
    to the bound), departures, insertions. A group's departure is offered only where `fits` admits the
    node it leads to, before its separability (a search of its own) is asked."""
    config, bad = node
    table = ag.offers
    pairs = table.pairs_of(config)
    for i in bits(bad & movable & pairs.present):
        if table.clear(config, i):
            yield config, bad & ~(1 << i)
    for move, nxt in table.moves(config, movable, Universe.ENGINE, admit=lambda g, after: fits((after, bad & ~g))):
        yield nxt, bad & ~move[1] if move[0] == "out" else bad
    absent = bits(movable & ~pairs.present)
    if len(absent) > 1:
        raise Undecided("two slots of the moved set are absent: a join may arrive in any arrangement")
    if absent:
        i = absent[0]
        for o in table.landings_of(config, i):
            yield tuple(o if j == i else x for j, x in enumerate(config)), bad


def _one_move_home(ag: AssemblyGrounding, node: Node, movable: int) -> bool:
    """Does one engine move of `movable` slots take `node` to the goal? Only a mend of its one faulty slot
    (every slot home), a slide back of the displaced slots (all by the same step along one axis), an
    insertion or a join at the target of the absent ones can."""
    config, bad = node
    table = ag.offers
    away = sum(1 << i for i, o in enumerate(config) if o != NO_OFFSET)
    if bad:
        return bad & (bad - 1) == 0 and not away and bool(bad & movable) and table.clear(config, bad.bit_length() - 1)
    if away & ~movable or not away:
        return False
    absent = sum(1 << i for i, o in enumerate(config) if o is None)
    if absent:
        if absent != away:
            return False
        home = tuple(NO_OFFSET for _ in config)
        pairs = table.pairs_of(home)
        if absent & (absent - 1) and not ag.world.separable(absent):
            return False
        others = bits(pairs.present & ~absent)
        return any(all(pairs.rows[i][j][d] >= FREE for i in bits(absent) for j in others)
                   for d in range(len(DIRECTIONS)))
    steps = {config[i] for i in bits(away)}
    if len(steps) != 1:
        return False
    v = steps.pop()
    axes = [a for a in range(3) if v[a]]   # type: ignore[index]  # present: an offset
    if len(axes) != 1:
        return False
    a = axes[0]
    d = 2 * a + (1 if v[a] > 0 else 0)     # type: ignore[index]  # back along the axis: -v
    return room(table.pairs_of(config), away, d) >= abs(v[a])  # type: ignore[index]  # present: an offset

"""Partial moves (SEMANTICS.md §9) for Fast Downward: one action per group move, blocking as derived atoms.

The grounded partial-move problem of `slides` (positions as objects, its single-part steps and costs)
with its group moves, rendered so that a state has no intermediate phases for slides and departures
(with a transaction of zero-cost steps per member, A* would store every partial transaction of every
configuration: on a six-piece burr two orders of magnitude more states than configurations). The groups
are the grounded task's (`semantics.grounded`): `slide_groups` slide, `separable_groups` leave and join. Here:

- `blk g h d k` (derived, `k` a distance or `out`): slot `g` at its position would meet slot `h` at
  its position when `g` slides `k` unit steps along `d` (or leaves along `d`). Meeting depends on the
  relative offset only (`Shapes.gaps`), so the rules read derived coordinates (`c g a v`: g's offset
  along axis a is v) and their differences (`rel g h a v`): one rule per relative offset, for the
  shortest move it blocks (a longer move inherits it). `edge g d k`: `g` is at a position from which
  `k` steps along `d` leave its position domain.
- `slide G d k`, one action per non-empty set `G` of slots (`slide_groups`) and choice of occupants (a
  slot that may hold its spare slides it, as `out` does): every member present with that occupant,
  touched, not `edge`, and `¬blk g h d k` for every member `g` and non-member `h`; conditional effects
  move each member from where it is. Members never block each other; every present non-member is
  checked: exactly the rigid move of §9.
- `out G d` (`remove` for one member, else `separate` of a group of `separable_groups`, one action per
  choice of occupants when a member's slot may hold a spare): `¬blk g h d out` likewise; every member's `at` atoms are deleted.
- `insert p o d`: `p` absent and touched, its ray along `d` from `o` clear of every present slot.
- `join` of a separable group at offsets stays a transaction (`begin_join d G` when its members are
  absent and touched; `place` per member of G in member order with a clear ray and no overlap with a
  member placed before; `finish_join d G` once all are placed; `settle` per member), so the offsets need
  not be multiplied out.

The groups that leave are separable at their target arrangement; at the arrangement they have when they
leave, and for joins, the *separable* condition of §9 is left out (it depends on the members' relative
offsets, which no literal names): a relaxation, so every plan is replayed in the engine. `slides.decode` reads plans back. Fast
Downward needs a configuration that supports axioms and conditional effects (`astar(blind())`).
"""

from __future__ import annotations

from itertools import product

from ...model.actions import Insert, Remove, Separate, Slide
from ...model.assembly import DIRECTIONS
from ...semantics.grounded import DEFAULT_WEIGHT, ground, slide_groups
from ...semantics.task import Task
from .abstraction import Abstraction
from .positions import PositionTables
from .slides import RESET, SlideProblem, _at, _flu, _touched, build_slide_problem, member_order, pos_name
from .vocabulary import DIRECTION_NAMES


def build_group_problem(task: Task, tables: PositionTables, objective: str = "moved-parts,actions",
                        weight: int = DEFAULT_WEIGHT) -> SlideProblem:
    """The grounded problem of a partial-move task with one action per group move."""
    return build_slide_problem(task, tables, objective, weight, _group_moves)


def _blk(i: int, j: int, d: str, k: int | None) -> str:
    return f"(blk_{i}_{j}_{DIRECTION_NAMES[d]}_{'out' if k is None else f'k{k}'})"


def _edge(i: int, d: str, k: int) -> str:
    return f"(edge_{i}_{DIRECTION_NAMES[d]}_k{k})"


def _group_moves(sp: SlideProblem, ab: Abstraction) -> None:
    """Touch steps, the derived blocking atoms, slide/out per group, insert per position, joins."""
    world = sp.task.world
    for pid in sp.names:
        sp.add(f"touch_{sp.names[pid]}", [(_flu(sp, "touched", pid), False)], [(_flu(sp, "touched", pid), True)],
               sp.touch_cost, ("touch", pid))
    # the grounded task's groups: any non-empty set slides; two or more leave only when separable (capped)
    sliding = [tuple(_members(g)) for g in slide_groups(world)]
    separable = set(ground(sp.task).separable_groups)
    leaving = [g for g in sliding if len(g) == 1 or sum(1 << i for i in g) in separable]
    _coordinate_axioms(sp)
    for d in DIRECTIONS:
        _blocking_axioms(sp, d)
        for k in sp.tables.distances:
            for g in sliding:
                _slide(sp, ab, g, d, k)
        for g in leaving:
            _out(sp, ab, g, d)
    _inserts(sp)
    _joins(sp, ab, [g for g in leaving if len(g) > 1])


def _coordinate_axioms(sp: SlideProblem) -> None:
    """`c_i_a_v`: slot i is at a position whose coordinate along axis a is v; `rel_i_j_a_v`: j's coordinate
    minus i's is v. Blocking depends on relative offsets only, so it is written over these (a few rules
    per pair and axis) rather than over every pair of positions."""
    world, tables = sp.task.world, sp.tables
    coords: dict = {}
    for i, pid in enumerate(world.ids):
        for o in tables.positions[i]:
            for a in range(3):
                sp.derived.setdefault(_coord(i, a, o[a]), []).append([(_at(sp, pid, o), True)])
                coords.setdefault((i, a), set()).add(o[a])
    n = len(world.ids)
    for i in range(n):
        for j in range(n):
            if i != j:
                for a in range(3):
                    for u, w in product(sorted(coords[i, a]), sorted(coords[j, a])):
                        sp.derived.setdefault(_rel(i, j, a, w - u), []).append([(_coord(i, a, u), True), (_coord(j, a, w), True)])


def _coord(i: int, a: int, v: int) -> str:
    return f"(c_{i}_{'xyz'[a]}_{_num(v)})"


def _rel(i: int, j: int, a: int, v: int) -> str:
    return f"(rel_{i}_{j}_{'xyz'[a]}_{_num(v)})"


def _num(v: int) -> str:
    return f"m{-v}" if v < 0 else str(v)


def _blocking_axioms(sp: SlideProblem, d: str) -> None:
    """`blk i j d k` for every distance k and `out`, from the relative offsets at which j is in i's way
    (`Shapes.gaps`). Each relative offset gets one rule, for the shortest move it blocks; a longer move
    inherits the shorter one's (`blk_k2 <- blk_k1`, `blk_out <- blk_k2`): a gap below k is below every
    longer distance. Overlapping offsets get none (no state has two slots overlap). `edge i d k` from
    the positions k steps from the domain's boundary."""
    from ...geometry.displacement import FREE, shapes

    world, tables = sp.task.world, sp.tables
    gaps = shapes(world.assembly).gaps
    axis = DIRECTIONS.index(d)
    modes = [*sp.tables.distances, None]
    limits = [*sp.tables.distances, FREE]
    n = len(world.ids)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            for r in _relative_offsets(sp, i, j):
                gap = gaps(i, j, r)[axis]
                if 0 <= gap < FREE:
                    k = next(m for m, limit in zip(modes, limits) if gap < limit)
                    sp.derived.setdefault(_blk(i, j, d, k), []).append([(_rel(i, j, a, r[a]), True) for a in range(3)])
            for shorter, longer in zip(modes, modes[1:]):
                if _blk(i, j, d, shorter) in sp.derived:
                    sp.derived.setdefault(_blk(i, j, d, longer), []).append([(_blk(i, j, d, shorter), True)])
        for k in sp.tables.distances:
            for o in tables.positions[i]:
                if tables.shifted(i, o, d, k) is None:
                    sp.derived.setdefault(_edge(i, d, k), []).append([(_at(sp, world.ids[i], o), True)])


def _relative_offsets(sp: SlideProblem, i: int, j: int) -> list[tuple]:
    """Every offset of slot j minus one of slot i over their position domains."""
    ps, qs = sp.tables.positions[i], sp.tables.positions[j]
    return sorted({tuple(b - a for a, b in zip(o, oj)) for o in ps for oj in qs})


def _free(sp: SlideProblem, g: tuple[int, ...], d: str, k: int | None) -> list:
    """No member meets a non-member (the derived atoms that have rules)."""
    n = len(sp.task.world.ids)
    lits = [(_blk(i, j, d, k), False) for i in g for j in range(n) if j not in g]
    return [lit for lit in lits if lit[0] in sp.derived]


def _slide(sp: SlideProblem, ab: Abstraction, g: tuple[int, ...], d: str, k: int) -> None:
    """slide G along d by k, once per choice of occupants: a slot that may hold its spare slides it as
    its slot's part (§9: a spare blocks and moves as its slot's part does), and the action names it."""
    world, tables = sp.task.world, sp.tables
    ids = [world.ids[i] for i in g]
    choices = [[pid] + ([ab.spare_in[pid]] if pid in ab.spare_in else []) for pid in ids]
    for occupants in product(*choices):
        pre = [("(idle)", True), *_free(sp, g, d, k)]
        when = []
        for i, pid, x in zip(g, ids, occupants):
            wrong = ("wrong", pid) in ab.fluents
            pre += [(_flu(sp, "present", pid), True), *_touched(sp, [x])]
            pre += ([(_flu(sp, "wrong", pid), False)] if wrong else []) if x == pid else [(_flu(sp, "wrong", pid), True)]
            pre += [(_edge(i, d, k), False)] if _edge(i, d, k) in sp.derived else []
            for o in tables.positions[i]:
                to = tables.shifted(i, o, d, k)
                if to is not None:
                    when.append(([(_at(sp, pid, o), True)], [(_at(sp, pid, o), False), (_at(sp, pid, to), True)]))
        name = "_".join(["slide", *(sp.names[x] for x in occupants), DIRECTION_NAMES[d], f"k{k}"])
        sp.add(name, pre, [], sp.step_cost, ("action", Slide(tuple(occupants), d, k)), when=tuple(when))


def _out(sp: SlideProblem, ab: Abstraction, g: tuple[int, ...], d: str, _k=None) -> None:
    """remove or separate along d, once per choice of occupants (a slot that may hold a spare)."""
    world, tables = sp.task.world, sp.tables
    ids = [world.ids[i] for i in g]
    choices = [[pid] + ([ab.spare_in[pid]] if pid in ab.spare_in else []) for pid in ids]
    for occupants in product(*choices):
        pre = [("(idle)", True), *_free(sp, g, d, None)]
        eff = []
        for i, pid, x in zip(g, ids, occupants):
            wrong = ("wrong", pid) in ab.fluents
            pre += [(_flu(sp, "present", pid), True), *_touched(sp, [x])]
            pre += ([(_flu(sp, "wrong", pid), False)] if wrong else []) if x == pid else [(_flu(sp, "wrong", pid), True)]
            eff += [(_flu(sp, "present", pid), False), *((_flu(sp, f, pid), False) for f in RESET if (f, pid) in ab.fluents)]
            eff += [(_at(sp, pid, o), False) for o in tables.positions[i]]
        action = Remove(occupants[0]) if len(g) == 1 else Separate(tuple(occupants), d)
        name = "_".join(["out", *(sp.names[x] for x in occupants), DIRECTION_NAMES[d]])
        sp.add(name, pre, eff, sp.step_cost, ("action", action))


def _inserts(sp: SlideProblem) -> None:
    """insert p at offset o, arriving along -d: absent, supports present, a clear ray along d from o."""
    world, tables = sp.task.world, sp.tables
    for i, pid in enumerate(world.ids):
        supports = [(_flu(sp, "present", q), True) for q in world.parts[i].supports]
        for o in tables.positions[i]:
            rays = dict.fromkeys(tuple((_at(sp, world.ids[j], oj), False) for j, oj in tables.ray(i, o, d))
                                 for d in world.parts[i].removal_dirs)
            for ray in rays:
                sp.add(f"insert_{sp.names[pid]}_{pos_name(o)}",
                       [("(idle)", True), (_flu(sp, "present", pid), False), *supports, *ray, *_touched(sp, [pid])],
                       [(_flu(sp, "present", pid), True), (_at(sp, pid, o), True)], sp.step_cost,
                       ("action", Insert(pid, o)), o)


def _joins(sp: SlideProblem, ab: Abstraction, groups: list[tuple[int, ...]]) -> None:
    """join of a separable group G at offsets: `begin_join d G` (every member absent and touched; each
    becomes `allowed`), `place` per allowed member in member order, `finish_join d G` once every member
    is placed, `settle` per member, `end_settle`."""
    world, tables = sp.task.world, sp.tables
    order = member_order(world)
    ids = world.ids
    for d in DIRECTIONS:
        dn = DIRECTION_NAMES[d]
        for g in groups:
            names = "_".join(sp.names[ids[x]] for x in g)
            allowed = [(_flu(sp, "allowed", ids[x]), True) for x in g]
            sp.add(f"begin_join_{dn}_{names}",
                   [("(idle)", True), *((_flu(sp, "present", ids[x]), False) for x in g), *_touched(sp, [ids[x] for x in g])],
                   [("(idle)", False), ("(placing)", True), (f"(mode {dn} in)", True), *allowed], sp.step_cost,
                   ("begin", "in", d, frozenset(ids[x] for x in g)))
            sp.add(f"finish_join_{dn}_{names}",
                   [("(placing)", True), (f"(mode {dn} in)", True), *allowed,
                    *((_flu(sp, "pending", ids[x]), True) for x in g)],
                   [("(placing)", False), (f"(mode {dn} in)", False), ("(settling)", True),
                    *((a, False) for a, _ in allowed)], 0, ("finish", "in", d, None))
        for r, i in enumerate(order):
            _place(sp, ab, i, d, [ids[j] for j in order[r + 1:]])
    sp.add("end_settle", [("(settling)", True), *((_flu(sp, "pending", p), False) for p in ids)],
           [("(settling)", False), ("(idle)", True)], 0, ("settled",))
    for r, i in enumerate(order):
        pid = ids[i]
        earlier = [(_flu(sp, "pending", ids[j]), False) for j in order[:r]]
        for o in tables.positions[i]:
            carried = f"(carried {sp.names[pid]} {pos_name(o)})"
            sp.add(f"settle_{sp.names[pid]}_{pos_name(o)}",
                   [("(settling)", True), (_flu(sp, "pending", pid), True), (carried, True), *earlier],
                   [(_flu(sp, "pending", pid), False), (carried, False), (_at(sp, pid, o), True)], 0, ("settle", pid), o)


def _place(sp: SlideProblem, ab: Abstraction, i: int, d: str, after: list[str]) -> None:
    """place slot i at o in a join along -d, after every earlier member and before any later one: absent,
    touched, supports present or placed before, a clear ray along d from o, no overlap with a member
    placed before."""
    world, tables = sp.task.world, sp.tables
    pid, dn = world.ids[i], DIRECTION_NAMES[d]
    n = sp.names[pid]
    reset = [(_flu(sp, f, pid), False) for f in RESET if (f, pid) in ab.fluents]
    supports = [(_flu(sp, "present", q), True) for q in world.parts[i].supports]
    none_later = [(_flu(sp, "pending", t), False) for t in after]
    for o in tables.positions[i]:
        ray = [(_at(sp, world.ids[j], oj), False) for j, oj in tables.ray(i, o, d)]
        apart = [(f"(carried {sp.names[world.ids[j]]} {pos_name(oj)})", False)
                 for j in range(len(world.ids)) if j != i for oj in tables.overlap(i, o, j)]
        pre = [("(placing)", True), (f"(mode {dn} in)", True), (_flu(sp, "allowed", pid), True),
               (_flu(sp, "present", pid), False), *supports, *ray, *apart, *_touched(sp, [pid]), *none_later]
        eff = [(_flu(sp, "present", pid), True), (f"(carried {n} {pos_name(o)})", True), (_flu(sp, "pending", pid), True),
               *reset]
        sp.add(f"place_{n}_{pos_name(o)}_{dn}", pre, eff, 0, ("place", pid, o, d), o)


def _members(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]

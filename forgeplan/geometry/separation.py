"""Subassembly (group) moves: the two-handed model with straight translations to infinity.

Following Wilson & Latombe's non-directional blocking graphs, a set `G` of present parts can leave
along direction `d` when no present part outside `G` blocks a member of `G` along `d`
(`forgeplan.geometry.relations.blocking_relation`, which is pairwise and exact for straight moves to infinity).
Equivalently `G` is closed under "blockers along `d`" within the present set; as for `remove` and
`separate` in SEMANTICS.md, every member must also allow `d` among its `removal_dirs`. Supports do not
restrict removal (they constrain `insert`/`join` only), so they play no part here.

A set of parts is *separable* (level-1 disassemblable) when it is a single part, or when it
splits into a moving group and a rest that are both separable. In this model separability is
hereditary — every subset of a separable set is separable, because restricting a valid split to a
subset is still a valid split (blocking between two parts does not depend on the others). Hence any
valid split of a separable set leads to separable halves, and a greedy search that takes the first
split it finds and recurses is complete: if it gets stuck on a subset, no split at all exists for
that subset, which proves the whole assembly is not level-1. The search only has to try the
*minimal* candidate groups (the closure of one seed part): any valid moving group contains the
closure of each of its members, and that closure is itself a valid moving group.

Parts are handled internally as bitmasks over the catalog order; results are memoised per set.
One module (about 400 lines) because the verdict, the search and the replay share the compiled bitmask form.

Some of the public functions serve the tests only, as oracles for the search: `blocking_closure` and
`is_movable` (single closure and movability queries on the same compiled form the search uses, which
tests could reach only through private helpers), `replay_separations` (an independent check of any
separation plan, such as the reference disassemblies that come with imported burr puzzles),
`assembly_steps` and `is_level1` (the verdict in the terms the burr literature uses).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, NamedTuple, Sequence

from ..model.assembly import DIRECTIONS, Assembly
from ..model.errors import AssemblyError
from .relations import blocking_relation

OPPOSITE = {"+x": "-x", "-x": "+x", "+y": "-y", "-y": "+y", "+z": "-z", "-z": "+z"}


class Step(NamedTuple):
    """One separation: the listed parts translate together along `direction` to infinity."""

    move: tuple[str, ...]
    direction: str

    def to_json(self) -> dict:
        return {"move": list(self.move), "dir": self.direction}


@dataclass(frozen=True)
class Disassembly:
    """A two-handed disassembly found by `disassemble`.

    `steps` is in the reference-plan order of data/burr: after each separation the remaining part is
    handled first, then the moved group. When `interlocked` is non-empty the plan is partial: each
    listed set admits no straight separation at all (see `interlocked_sets`).
    """

    steps: tuple[Step, ...]
    interlocked: tuple[tuple[str, ...], ...]

    @property
    def complete(self) -> bool:
        return not self.interlocked

    @property
    def group_steps(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if len(s.move) > 1)


class SeparationReplay(NamedTuple):
    """Outcome of `replay_separations`: `valid` plans end with every part on its own."""

    valid: bool
    executed: int
    reason: str | None
    components: tuple[tuple[str, ...], ...]


# ----------------------------------------------------------------------------- compiled assembly

@dataclass(frozen=True, eq=False)
class _Compiled:
    ids: tuple[str, ...]
    blockers: dict[str, tuple[int, ...]]   # direction -> per part: mask of parts blocking it
    dirs: tuple[frozenset[str], ...]       # per part: allowed removal directions
    frames: int                            # mask of parts of kind "frame" (preferred to stay)
    index: dict[str, int] = field(default_factory=dict)
    allowed: dict[str, int] = field(default_factory=dict)   # direction -> mask of parts whose removal_dirs has it
    memo: dict = field(default_factory=dict)

    def mask(self, parts: Iterable[str]) -> int:
        m = 0
        for p in parts:
            if p not in self.index:
                raise KeyError(p)
            m |= 1 << self.index[p]
        return m

    def names(self, mask: int) -> tuple[str, ...]:
        return tuple(self.ids[i] for i in _bits(mask))


def _bits(mask: int) -> Iterable[int]:
    """The set bits of `mask`, lowest first, in time proportional to their number (200-part masks)."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@lru_cache(maxsize=256)
def _compile(asm: Assembly) -> _Compiled:
    ids = asm.part_ids
    index = {p: i for i, p in enumerate(ids)}
    blockers = {d: [0] * len(ids) for d in DIRECTIONS}
    for d, edges in blocking_relation(asm).items():
        for b, p in edges:
            blockers[d][index[p]] |= 1 << index[b]
    frames = sum(1 << i for i, p in enumerate(asm.parts) if p.kind == "frame")
    allowed = {d: sum(1 << i for i, p in enumerate(asm.parts) if d in p.removal_dirs) for d in DIRECTIONS}
    return _Compiled(ids, {d: tuple(v) for d, v in blockers.items()},
                     tuple(frozenset(p.removal_dirs) for p in asm.parts), frames, index, allowed=allowed)


def _closure(c: _Compiled, seed: int, d: str, within: int) -> int:
    """Smallest superset of `seed` inside `within` closed under blockers along `d`."""
    group, frontier = seed, seed
    block = c.blockers[d]
    while frontier:
        grown = 0
        for i in _bits(frontier):
            grown |= block[i]
        grown &= within & ~group
        group |= grown
        frontier = grown
    return group


def _dirs_ok(c: _Compiled, group: int, d: str) -> bool:
    return not group & ~c.allowed[d]


def _is_closed(c: _Compiled, group: int, d: str, within: int) -> bool:
    outside = within & ~group
    return not any(c.blockers[d][i] & outside for i in _bits(group))


def _minimal_groups(c: _Compiled, within: int) -> list[tuple[int, str]]:
    """Distinct seed closures that may leave `within` (proper subsets), in preference order."""
    key = ("minimal", within)
    hit = c.memo.get(key)
    if hit is not None:
        return hit
    seen, out = set(), []
    for d in DIRECTIONS:
        for i in _bits(within):
            g = _closure(c, 1 << i, d, within)
            if g != within and (g, d) not in seen and _dirs_ok(c, g, d):
                seen.add((g, d))
                out.append((g, d))
    # smallest group first; at equal size keep frames (BurrTools' heavy pieces) in place;
    # then direction order and catalog order, so plans are deterministic
    # (the last key orders equal-sized groups as their ascending member lists would: the group holding
    # the lowest member of the two groups' difference first, i.e. the larger bit-reversed mask)
    width = len(c.ids)
    out.sort(key=lambda gd: (gd[0].bit_count(), bool(gd[0] & c.frames), DIRECTIONS.index(gd[1]),
                             -int(format(gd[0], f"0{width}b")[::-1], 2)))
    c.memo[key] = out
    return out


def _split(c: _Compiled, within: int) -> tuple[int, str] | None:
    groups = _minimal_groups(c, within)
    return groups[0] if groups else None


def _disassemble(c: _Compiled, within: int) -> tuple[tuple[tuple[int, str], ...], tuple[int, ...]]:
    """(separations, stuck sets) for `within`, memoised on the set."""
    key = ("plan", within)
    hit = c.memo.get(key)
    if hit is not None:
        return hit
    if within & (within - 1) == 0:
        out: tuple = ((), ())
    else:
        split = _split(c, within)
        if split is None:
            out = ((), (within,))
        else:
            g, _ = split
            rest_steps, rest_stuck = _disassemble(c, within & ~g)
            moved_steps, moved_stuck = _disassemble(c, g)
            out = ((split, *rest_steps, *moved_steps), (*rest_stuck, *moved_stuck))
    c.memo[key] = out
    return out


def _mask_of(c: _Compiled, parts: Iterable[str] | None, what: str) -> int:
    if parts is None:
        return (1 << len(c.ids)) - 1
    try:
        return c.mask(parts)
    except KeyError as exc:
        raise AssemblyError(f"{what} names unknown part {exc.args[0]!r}") from None


# ----------------------------------------------------------------------------- public API

def blocking_closure(asm: Assembly, seed: str, direction: str, present: Iterable[str] | None = None) -> frozenset[str]:
    """The smallest group containing `seed` that no other present part blocks along `direction`."""
    c = _compile(asm)
    within = _mask_of(c, present, "present")
    s = _mask_of(c, (seed,), "seed")
    return frozenset(c.names(_closure(c, s, direction, within | s)))


def is_movable(asm: Assembly, group: Iterable[str], direction: str, present: Iterable[str] | None = None) -> bool:
    """Can `group` (all present) leave along `direction`: every member allows it, nothing outside blocks it."""
    c = _compile(asm)
    within = _mask_of(c, present, "present")
    g = _mask_of(c, group, "group")
    return bool(g) and g & ~within == 0 and _dirs_ok(c, g, direction) and _is_closed(c, g, direction, within)


def minimal_groups(asm: Assembly, present: Iterable[str] | None = None) -> dict[str, tuple[frozenset[str], ...]]:
    """Per direction, the distinct minimal movable groups: closures of one seed part, not the whole set.

    Every group that can leave along `d` is a union of these (closed sets are closed under union).
    Groups with a member whose `removal_dirs` excludes `d` are left out.
    """
    c = _compile(asm)
    within = _mask_of(c, present, "present")
    out: dict[str, list[frozenset[str]]] = {d: [] for d in DIRECTIONS}
    for g, d in _minimal_groups(c, within):
        out[d].append(frozenset(c.names(g)))
    return {d: tuple(v) for d, v in out.items()}


def minimal_group_counts(asm: Assembly, present: Iterable[str] | None = None) -> dict[str, int]:
    return {d: len(v) for d, v in minimal_groups(asm, present).items()}


def is_separable(asm: Assembly, parts: Iterable[str] | None = None) -> bool:
    """Can these parts, alone in free space, be taken apart by straight group moves to infinity?"""
    c = _compile(asm)
    return not _disassemble(c, _mask_of(c, parts, "parts"))[1]


def disassemble(asm: Assembly, parts: Iterable[str] | None = None) -> Disassembly:
    """A full two-handed disassembly with straight moves, or the interlocked sets that stop it."""
    c = _compile(asm)
    steps, stuck = _disassemble(c, _mask_of(c, parts, "parts"))
    return Disassembly(tuple(Step(c.names(g), d) for g, d in steps), tuple(c.names(s) for s in stuck))


def is_level1(asm: Assembly) -> bool:
    """Level-1 verdict: the whole assembly comes apart with straight single-part and group moves."""
    return disassemble(asm).complete


def needs_group_moves(asm: Assembly) -> bool:
    """Level-1, but only with a group move somewhere: `disassembly_verdict`'s `group_moves` mode."""
    plan = disassemble(asm)
    return plan.complete and bool(plan.group_steps)


def replay_separations(asm: Assembly, steps: Sequence[dict | Step]) -> SeparationReplay:
    """Check a separation plan (`{move: [ids], dir, distance?}` steps) under straight group moves.

    Each step must move a proper subset of one current subassembly out of it along `dir` to
    infinity (`distance` absent or "out"); the plan is valid when every part ends on its own.
    """
    c = _compile(asm)
    components = [(1 << len(c.ids)) - 1]

    def result(valid: bool, k: int, reason: str | None) -> SeparationReplay:
        return SeparationReplay(valid, k, reason, tuple(c.names(m) for m in components))

    d: str | None
    for k, raw in enumerate(steps):
        if isinstance(raw, Step):
            move, d, dist = raw.move, raw.direction, "out"
        else:
            move, d, dist = raw.get("move", ()), raw.get("dir"), raw.get("distance", "out")
        if d not in DIRECTIONS:
            return result(False, k, f"step {k + 1}: direction {d!r} is not one of {list(DIRECTIONS)}")
        if dist != "out":
            return result(False, k, f"step {k + 1}: a partial move (distance {dist!r}) is outside forgeplan's model "
                                    "of straight removals to infinity")
        try:
            g = c.mask(move)
        except KeyError as exc:
            return result(False, k, f"step {k + 1}: unknown part {exc.args[0]!r}")
        home = [m for m in components if m & g]
        if not g or len(home) != 1 or g & ~home[0]:
            return result(False, k, f"step {k + 1}: {list(move)} is not inside one current subassembly")
        comp = home[0]
        if g == comp:
            return result(False, k, f"step {k + 1}: {list(move)} is a whole subassembly; nothing is separated")
        if not _dirs_ok(c, g, d):
            bad = [c.ids[i] for i in _bits(g) if d not in c.dirs[i]]
            return result(False, k, f"step {k + 1}: {bad} may not move along {d} (removal_dirs)")
        if not _is_closed(c, g, d, comp):
            rest = comp & ~g
            hit = 0
            for i in _bits(g):
                hit |= c.blockers[d][i] & rest
            return result(False, k, f"step {k + 1}: moving {list(move)} along {d} is blocked by {list(c.names(hit))}")
        components.remove(comp)
        components += [comp & ~g, g]
    if any(m & (m - 1) for m in components):
        left = [list(c.names(m)) for m in components if m & (m - 1)]
        return result(False, len(steps), f"plan ends with parts still together: {left}")
    return result(True, len(steps), None)


def assembly_steps(asm: Assembly) -> tuple[Step, ...]:
    """A two-handed assembly order: the disassembly reversed; step `(G, d)` joins G along `OPPOSITE[d]`."""
    plan = disassemble(asm)
    if not plan.complete:
        raise AssemblyError(_interlock_text(plan), file=f"assembly {asm.assembly_id}")
    return tuple(reversed(plan.steps))


class MainBody(NamedTuple):
    """How the main body grows when the plan is reversed: `core` first, then each pre-assembled group
    of `joins` comes in along `OPPOSITE[step.direction]` (the last group separated joins first)."""

    core: str
    joins: tuple[Step, ...]

    @property
    def insertion_order(self) -> tuple[str, ...]:
        return (self.core, *(p for s in self.joins for p in s.move))


def main_body(asm: Assembly) -> MainBody:
    """The chain of separations from the whole assembly, each taken from what stays (see `disassemble`)."""
    c = _compile(asm)
    within, chain = (1 << len(c.ids)) - 1, []
    while within & (within - 1):
        split = _split(c, within)
        if split is None:
            raise AssemblyError(_interlock_text(disassemble(asm)), file=f"assembly {asm.assembly_id}")
        chain.append(Step(c.names(split[0]), split[1]))
        within &= ~split[0]
    return MainBody(c.names(within)[0], tuple(reversed(chain)))


def _interlock_text(plan: Disassembly) -> str:
    sets = "; ".join(f"parts {list(s)} interlock" for s in plan.interlocked)
    done = ", ".join(f"{list(st.move)} along {st.direction}" for st in plan.steps)
    before = f"straight moves separate {done} first, then " if done else ""
    return (f"not disassemblable with straight moves: {before}{sets} (no straight translation to infinity separates "
            "them into two groups); partial moves (BurrTools level above 1) are needed: `forgeplan assemblies --check` "
            "finds them, and tasks and benchmarks take the assemblies they take apart")


def disassembly_verdict(asm: Assembly) -> dict:
    """Can the assembly be fully taken apart with straight moves to infinity, and how.

    `mode` is `single_part` (one part at a time, FORGE's nine actions suffice), `group_moves` (some
    separation must slide a group out together: `separate`/`join` are needed) or `interlocked`
    (not level-1; `interlocked` names the stuck sets and the verdict says partial moves are needed).
    """
    plan = disassemble(asm)
    groups = plan.group_steps
    out: dict = {
        "assembly_id": asm.assembly_id,
        "disassemblable": plan.complete,
        "mode": "interlocked" if not plan.complete else ("group_moves" if groups else "single_part"),
        "steps": [s.to_json() for s in plan.steps],
        "group_steps": len(groups),
        "first_group_move": groups[0].to_json() if groups else None,
        "interlocked": [list(s) for s in plan.interlocked],
    }
    n = len(plan.steps)
    if not plan.complete:
        out["verdict"] = _interlock_text(plan)
    elif groups:
        g = groups[0]
        out["verdict"] = (f"disassemblable with straight moves only by moving groups: {len(groups)} of {n} "
                          f"separations move a group; first group move: separate {list(g.move)} along {g.direction}")
    else:
        out["verdict"] = f"disassemblable one part at a time with straight moves ({n} removals)"
    return out

"""The benchmark's composition, planned before anything is solved.

`plan_composition` decides, for every task index, its split, assembly, condition (no-fault, boundary
no-fault, single-fault, multi-fault) and counterfactual partner, purely from (assemblies, N, seed). The
default N=4000 reproduces FORGE-Bench exactly; a smaller N keeps the proportions (largest remainder).

Assemblies that need partial moves (SEMANTICS.md §9) form an *expert tier* laid over that plan: the
plan is made for the other assemblies alone, then each partial-move assembly takes over fault slots
(single or multi, not in a counterfactual pair) of one split, as many as an average assembly of that
split holds. Totals, split sizes, condition counts and pairs stay exactly those of the plan, and every
slot not taken over keeps its assembly, so its task is the same as in a build without the tier.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# FORGE-Bench, 4,000-task protocol
PROTOCOL = {"tasks": 4000, "train": 3000, "test": 1000, "no_fault": 1115, "single_fault": 2353, "multi_fault": 532,
            "counterfactual_pairs": 160, "assemblies": 26, "test_assemblies": 5}
BOUNDARY_SHARE = 0.4  # share of no-fault tasks that are boundary no-fault (poses perturbed inside tolerance)
MIN_UNSEEN_TEST_FAMILIES = 2


@dataclass(frozen=True)
class Slot:
    """One planned task: everything decided before generation."""

    index: int
    split: str
    assembly_id: str
    condition: str            # nofault | boundary | single | multi
    pair: int | None = None   # counterfactual pair id (the no-fault partner shares it)
    pair_role: str | None = None  # "fault" | "nofault"


def apportion(total: int, weights: dict[str, float]) -> dict[str, int]:
    """Integer counts summing to `total`, proportional to weights (largest remainder, ties by key)."""
    wsum = sum(weights.values())
    raw = {k: total * w / wsum for k, w in weights.items()}
    out = {k: int(v) for k, v in raw.items()}
    rest = total - sum(out.values())
    for k in sorted(raw, key=lambda k: (-(raw[k] - out[k]), k))[:rest]:
        out[k] += 1
    return out


def split_assemblies(families: dict[str, str], seed: int,
                     group_moves: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """Assembly-disjoint train/test split; at least two test families never appear in training.

    `families` maps assembly id -> family. The test side takes whole small families first (so their
    family is unseen in training), then single identities of larger families, up to 5/26 of the library.
    When two or more assemblies need group moves (`group_moves`, SEMANTICS §5), one of them takes the
    place of the last single identity picked, so that both splits hold group-move tasks.
    """
    ids = sorted(families)
    n_test = max(1, round(len(ids) * PROTOCOL["test_assemblies"] / PROTOCOL["assemblies"]))
    by_family: dict[str, list[str]] = {}
    for a in ids:
        by_family.setdefault(families[a], []).append(a)
    rng = random.Random(seed)
    test: list[str] = []
    small = sorted(by_family, key=lambda f: (len(by_family[f]), f))
    for fam in small:
        if len([f for f in by_family if any(a in test for a in by_family[f])]) >= MIN_UNSEEN_TEST_FAMILIES:
            break
        if len(test) + len(by_family[fam]) <= n_test and len(by_family) > 1:
            test.extend(by_family[fam])
    others = [f for f in sorted(by_family) if not any(a in test for a in by_family[f]) and len(by_family[f]) > 1]
    rng.shuffle(others)
    singles: list[str] = []
    for fam in others:
        if len(test) >= n_test:
            break
        singles.append(rng.choice(by_family[fam]))
        test.append(singles[-1])
    movable = sorted(a for a in group_moves if a in families and families[a] in others)
    if len(movable) >= 2 and singles and not set(test) & set(movable):
        test[test.index(singles[-1])] = rng.choice(movable)
    train = [a for a in ids if a not in test]
    return train, sorted(test)


def plan_composition(families: dict[str, str], tasks: int = 4000, seed: int = 42,
                     group_moves: frozenset[str] = frozenset(), partial_moves: frozenset[str] = frozenset()) -> list[Slot]:
    """Every slot of the benchmark; `partial_moves` names the assemblies of the expert tier (the rest,
    two or more of two or more families, make the plan)."""
    experts = sorted(a for a in partial_moves if a in families)
    base = {a: f for a, f in families.items() if a not in partial_moves}
    slots = _base_plan(base, tasks, seed, group_moves)
    return expert_tier(slots, experts, seed) if experts else slots


def _base_plan(families: dict[str, str], tasks: int, seed: int, group_moves: frozenset[str]) -> list[Slot]:
    p = PROTOCOL
    train_ids, test_ids = split_assemblies(families, seed, group_moves)
    split_n = apportion(tasks, {"train": p["train"], "test": p["test"]})
    cond_n = apportion(tasks, {"no_fault": p["no_fault"], "single": p["single_fault"], "multi": p["multi_fault"]})
    pairs = round(tasks * p["counterfactual_pairs"] / p["tasks"])
    rng = random.Random(seed)
    # conditions per split, proportional; then shuffled deterministically
    slots: list[Slot] = []
    for split, ids in (("train", train_ids), ("test", test_ids)):
        n = split_n[split]
        share = {k: v * n / tasks for k, v in cond_n.items()}
        counts = apportion(n, share) if split == "train" else {
            k: cond_n[k] - sum(1 for s in slots if _cond_key(s.condition) == k) for k in cond_n}
        conds: list[str] = []
        n_boundary = round(counts["no_fault"] * BOUNDARY_SHARE)
        conds += ["boundary"] * n_boundary + ["nofault"] * (counts["no_fault"] - n_boundary)
        conds += ["single"] * counts["single"] + ["multi"] * counts["multi"]
        rng.shuffle(conds)
        for k, cond in enumerate(conds):
            slots.append(Slot(len(slots), split, ids[k % len(ids)], cond))
    return _assign_pairs(slots, pairs, rng)


def expert_tier(slots: list[Slot], experts: list[str], seed: int) -> list[Slot]:
    """The partial-move assemblies take over fault slots: in a seeded order, alternately in train and
    test (one alone goes to train), each as many slots as an average assembly of its split holds (at
    least one), drawn by the seed from the split's single- and multi-fault slots outside the pairs."""
    rng = random.Random(f"{seed}:expert")
    order = list(experts)
    rng.shuffle(order)
    out = list(slots)
    sides = {aid: ("train", "test")[k % 2] for k, aid in enumerate(order)}
    for aid in order:
        split = sides[aid]
        members = {s.assembly_id for s in slots if s.split == split} | {a for a, sp in sides.items() if sp == split}
        size = sum(1 for s in slots if s.split == split)
        share = max(1, round(size / len(members)))
        free = [s.index for s in out if s.split == split and s.condition in ("single", "multi") and s.pair is None
                and s.assembly_id not in sides]
        for i in sorted(rng.sample(free, min(share, len(free)))):
            out[i] = Slot(i, split, aid, out[i].condition)
    return out


def _cond_key(condition: str) -> str:
    return "no_fault" if condition in ("nofault", "boundary") else condition


def _assign_pairs(slots: list[Slot], pairs: int, rng: random.Random) -> list[Slot]:
    """Pair single-fault tasks with boundary no-fault tasks of the same assembly and split."""
    out = list(slots)
    pool: dict[tuple[str, str], list[int]] = {}
    for s in slots:
        if s.condition == "boundary":
            pool.setdefault((s.split, s.assembly_id), []).append(s.index)
    singles = [s for s in slots if s.condition == "single"]
    rng.shuffle(singles)
    made = 0
    for s in singles:
        if made == pairs:
            break
        partners = pool.get((s.split, s.assembly_id))
        if not partners:
            continue
        partner = partners.pop(0)
        out[s.index] = Slot(s.index, s.split, s.assembly_id, s.condition, made, "fault")
        p = out[partner]
        out[partner] = Slot(p.index, p.split, p.assembly_id, p.condition, made, "nofault")
        made += 1
    return out


def composition_counts(slots: list[Slot]) -> dict:
    out = {"tasks": len(slots), "train": 0, "test": 0, "no_fault": 0, "boundary_no_fault": 0,
           "single_fault": 0, "multi_fault": 0, "counterfactual_pairs": 0}
    for s in slots:
        out[s.split] += 1
        key = {"nofault": "no_fault", "boundary": "no_fault", "single": "single_fault", "multi": "multi_fault"}[s.condition]
        out[key] += 1
        out["boundary_no_fault"] += s.condition == "boundary"
        out["counterfactual_pairs"] += s.pair_role == "fault"
    out["assemblies_train"] = len({s.assembly_id for s in slots if s.split == "train"})
    out["assemblies_test"] = len({s.assembly_id for s in slots if s.split == "test"})
    return out

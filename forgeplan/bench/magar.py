"""`bench build --profile magar`: MAGAR-Bench's two symbolic task families, Assembly Decision and Minimal Rework.

Proportions (MAGAR §4.2, C.3.3): 974 Assembly Decision and 600 Minimal Rework samples, 238 and 100 of
them in Test, scaled to the requested size by largest remainder. The split is family-disjoint: whole
families of the library go to Test, chosen so that the number of Test assemblies is the one closest
to MAGAR's 6 of 26 assembly families (with the built-in library: 6 assemblies in 3 families). Atomic
Action (native GUI events) has no symbolic counterpart and is not built. Minimal Rework samples come from
every assembly, those with partial moves (the expert tier, SEMANTICS §9) included, each reference from the
registry's proving planner as in the default profile. Assembly Decision samples come from the assemblies
without slides only: their valid decisions are the first steps of every optimal plan, which clingo's brave
consequences give (`planners.asp.first_steps`), while the moved-set search proves one optimal plan and
does not enumerate the others.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from ..executors import run_ordered
from ..io.output import json_text, new_folder, output_folder
from ..io.task_files import write_json
from ..library import BUILTIN
from ..model.errors import InputError
from ..model.state import Tolerances
from ..semantics.grounded import Capability, assembly_capabilities
from .card import write_card
from .composition import PROTOCOL, Slot, apportion
from .digests import seal
from .decisions import EPISODES, DecisionSlot, generate_decision
from .generate import generate
from .shards import drop_partial, write_task_folder
from .sources import load_sources
from .store import MANIFEST, _versions

MAGAR = {"assembly_decision": 974, "minimal_rework": 600, "assembly_decision_test": 238, "minimal_rework_test": 100,
         "families": 26, "test_families": 6}
DEFAULT_TASKS = MAGAR["assembly_decision"] + MAGAR["minimal_rework"]
MIN_TASKS = 20
BATCH = 4                  # samples per worker call: fewer round trips, same order and bytes
EXHAUSTIVE_FAMILIES = 16   # 2^16 family subsets at most are compared


def family_split(families: dict[str, str], seed: int) -> tuple[list[str], list[str]]:
    """(train, test) assembly ids; whole families go to Test, as close to 6/26 of the assemblies as the
    library allows (ties broken by the seed; beyond EXHAUSTIVE_FAMILIES families, whole families in a
    seeded order until the share is reached). Needs two or more families."""
    by_family: dict[str, list[str]] = {}
    for a in sorted(families):
        by_family.setdefault(families[a], []).append(a)
    if len(by_family) < 2:
        raise InputError(f"a family-disjoint split needs two or more families, got {sorted(by_family)}", field="--assemblies")
    want = max(1, round(len(families) * MAGAR["test_families"] / MAGAR["families"]))
    names = sorted(by_family)
    rng = random.Random(seed)
    if len(names) > EXHAUSTIVE_FAMILIES:
        rng.shuffle(names)
        chosen: list[str] = []
        for f in names[:-1]:
            if sum(len(by_family[c]) for c in chosen) + len(by_family[f]) <= want or not chosen:
                chosen.append(f)
    else:
        combos = [c for r in range(1, len(names)) for c in itertools.combinations(names, r)]
        gap = {c: abs(sum(len(by_family[f]) for f in c) - want) for c in combos}
        best = min(gap.values())
        chosen = list(rng.choice([c for c in combos if gap[c] == best]))
    test = sorted(a for f in chosen for a in by_family[f])
    return [a for a in sorted(families) if a not in test], test


def plan_magar(families: dict[str, str], tasks: int, seed: int, decisions: frozenset[str] | None = None) -> list:
    """Every sample planned before anything is solved: DecisionSlots (on the assemblies of `decisions`,
    default all), then Minimal Rework Slots (on all)."""
    train, test = family_split(families, seed)
    decides = {split: [a for a in ids if decisions is None or a in decisions]
               for split, ids in (("train", train), ("test", test))}
    if not all(decides.values()):
        empty = next(split for split, ids in decides.items() if not ids)
        raise InputError(f"Assembly Decision needs an assembly without slides (SEMANTICS §9) in the {empty} split, "
                         f"which holds only {', '.join(train if empty == 'train' else test)}", field="--assemblies")
    n = apportion(tasks, {"assembly_decision": MAGAR["assembly_decision"], "minimal_rework": MAGAR["minimal_rework"]})
    rng = random.Random(seed)
    slots: list = []
    used = {"train": 0, "test": 0}   # Minimal Rework continues the assembly rotation where decisions left it
    ad_test = round(n["assembly_decision"] * MAGAR["assembly_decision_test"] / MAGAR["assembly_decision"])
    for split, count in (("train", n["assembly_decision"] - ad_test), ("test", ad_test)):
        ids = decides[split]
        episodes = [EPISODES[k % 2] for k in range(count)]
        rng.shuffle(episodes)
        base = len(slots)
        slots += [DecisionSlot(base + k, split, ids[k % len(ids)], ep) for k, ep in enumerate(episodes)]
        used[split] = count
    mr_test = round(n["minimal_rework"] * MAGAR["minimal_rework_test"] / MAGAR["minimal_rework"])
    for split, ids, count in (("train", train, n["minimal_rework"] - mr_test), ("test", test, mr_test)):
        cond = apportion(count, {"single": PROTOCOL["single_fault"], "multi": PROTOCOL["multi_fault"]})
        conds = ["single"] * cond["single"] + ["multi"] * cond["multi"]
        rng.shuffle(conds)
        base = len(slots)
        slots += [Slot(base + k, split, ids[(used[split] + k) % len(ids)], c) for k, c in enumerate(conds)]
    return slots


def _one(slot, asm, seed: int, tolerances: Tolerances):
    if isinstance(slot, DecisionSlot):
        return generate_decision(slot, asm, seed, tolerances)
    g = generate(slot, asm, seed, tolerances)
    g.files["meta.json"]["task_family"] = "minimal_rework"
    return g


def _batch(pairs, seed: int, tolerances: Tolerances) -> list:
    return [_one(slot, asm, seed, tolerances) for slot, asm in pairs]


def build_magar_bench(out: Path, tasks: int = DEFAULT_TASKS, seed: int = 42, jobs: int = 1, progress=None,
                      tolerances: Tolerances = Tolerances(), assemblies=None) -> dict:
    """Generate the MAGAR-profile benchmark into `out` (empty or absent); returns the manifest."""
    if not MIN_TASKS <= tasks <= 100_000:
        raise InputError(f"must be between {MIN_TASKS} and 100,000 for the magar profile, got {tasks}", field="--tasks")
    if output_folder(out, create=False).exists() and any(out.iterdir()):
        raise InputError("output folder is not empty", file=str(out), field="--out")
    sources = load_sources(assemblies if assemblies is not None else list(BUILTIN))
    families = {a: s.assembly.family for a, s in sources.items()}
    decides = frozenset(a for a, s in sources.items() if Capability.SLIDES not in assembly_capabilities(s.assembly))
    slots = plan_magar(families, tasks, seed, decides)
    asms = [sources[s.assembly_id].assembly for s in slots]
    pairs = list(zip(slots, asms))
    batches = [(pairs[k:k + BATCH], seed, tolerances) for k in range(0, len(pairs), BATCH)]
    with new_folder(out) as folder:   # built beside `out` and renamed: a benchmark appears whole or not at all
        records = _write_tasks(folder, run_ordered(_batch, batches, jobs), progress)
        manifest = _manifest(records, families, sources, tasks, seed, tolerances)
        manifest["digests"] = seal(folder, [r["sample_id"] for r in records], write_card(folder, manifest))
        write_json(folder / MANIFEST, manifest)
    return manifest


def _write_tasks(out: Path, results, progress) -> list[dict]:
    """The task folders of the generated batches under OUT/tasks; their manifest records."""
    records = []
    (out / "tasks").mkdir()
    for _, generated in results:
        for g in generated:
            write_task_folder(out, g.sample_id, {name: json_text(data) for name, data in g.files.items()})
            meta = g.files["meta.json"]
            records.append({k: meta[k] for k in ("sample_id", "assembly_id", "family", "split", "task_family",
                                                 "condition", "fault_types", "difficulty")} | {"hidden": bool(meta.get("hidden"))})
            if progress:
                progress(1)
    drop_partial(out)
    return records


def _manifest(records, families, sources, tasks, seed, tolerances) -> dict:
    count = {s: {f: sum(r["split"] == s and r["task_family"] == f for r in records)
                 for f in ("assembly_decision", "minimal_rework")} for s in ("train", "test")}
    train, test = family_split(families, seed)
    train_families, test_families = (sorted({families[a] for a in ids}) for ids in (train, test))
    return {
        "schema_version": "1.0", "benchmark": "forgeplan MAGAR-Bench-shaped", "profile": "magar", "seed": seed,
        "tasks": tasks, "library": sorted(families), "sources": {a: s.origin for a, s in sources.items()},
        "protocol": MAGAR, "tolerances": tolerances.to_json(), "versions": _versions(),
        "composition": {"tasks": len(records), **{f"{s}_{f}": n for s, fam in count.items() for f, n in fam.items()}},
        "split_rule": (f"family-disjoint: {len(train_families)} train / {len(test_families)} test families "
                       f"({len(train)} / {len(test)} assemblies; MAGAR: 20 / 6 assembly families)"),
        "splits": {s: [r["sample_id"] for r in records if r["split"] == s] for s in ("train", "test")},
        "assemblies": {s: sorted({r["assembly_id"] for r in records if r["split"] == s}) for s in ("train", "test")},
        "families": {"train": train_families, "test": test_families},
        "records": records,
    }

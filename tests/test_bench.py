"""Benchmark composition, split, determinism, closed loop and counterfactual pairs."""

import filecmp
import gc
import json
import weakref

import pytest

from conftest import SMALL_BENCH_ASSEMBLIES, SMALL_BENCH_TASKS
from forgeplan.bench.composition import PROTOCOL, composition_counts, plan_composition, split_assemblies
from forgeplan.bench.store import build_bench, load_manifest
from forgeplan.io.catalog import load_assembly
from forgeplan.io.task_files import load_task
from forgeplan.library import BUILTIN
from forgeplan.verify import verify
from cases import PARTIAL_MOVES

LIBRARY = {a: load_assembly(a).family for a in BUILTIN}
FAMILIES = {a: f for a, f in LIBRARY.items() if a not in PARTIAL_MOVES}   # the 26 that make the plan
GROUP_BURRS = frozenset({"burr_6_split", "burr_6_pairs"})


def test_default_composition_is_exactly_forge_bench():
    c = composition_counts(plan_composition(FAMILIES, 4000, 42))
    assert (c["tasks"], c["train"], c["test"]) == (4000, 3000, 1000)
    assert (c["no_fault"], c["single_fault"], c["multi_fault"]) == (1115, 2353, 532)
    assert c["counterfactual_pairs"] == 160
    assert c["boundary_no_fault"] > 0


def test_synthetic_26_assembly_library_splits_21_5_with_two_unseen_families():
    fams = {f"a{i:02d}": f"fam{i % 8}" for i in range(24)} | {"rare_a": "rare1", "rare_b": "rare2"}
    train, test = split_assemblies(fams, 42)
    assert (len(train), len(test)) == (21, 5) and not set(train) & set(test)
    unseen = {fams[a] for a in test} - {fams[a] for a in train}
    assert len(unseen) >= 2
    c = composition_counts(plan_composition(fams, 4000, 42))
    assert (c["assemblies_train"], c["assemblies_test"]) == (21, 5)


def test_group_move_burrs_land_in_both_splits():
    """The built-in library's two burrs that need group moves: one is held out, one stays in training,
    whatever the seed; the synthetic split above is untouched when no assembly needs group moves."""
    movable = frozenset({"burr_6_split", "burr_6_pairs"})
    for seed in (42, 1, 2, 3, 4):
        train, test = split_assemblies(FAMILIES, seed, movable)
        assert len(test) == 5 and set(test) & movable and set(train) & movable, seed
        assert len({FAMILIES[a] for a in test} - {FAMILIES[a] for a in train}) >= 2
    fams = {f"a{i:02d}": f"fam{i % 8}" for i in range(24)} | {"rare_a": "rare1", "rare_b": "rare2"}
    assert split_assemblies(fams, 42, frozenset({"a00"})) == split_assemblies(fams, 42)  # one alone: no swap


def test_smaller_builds_keep_the_proportions():
    c = composition_counts(plan_composition(FAMILIES, 400, 42))
    assert (c["train"], c["test"]) == (300, 100)
    assert abs(c["no_fault"] - 111.5) <= 1 and abs(c["single_fault"] - 235.3) <= 1 and abs(c["multi_fault"] - 53.2) <= 1
    assert c["counterfactual_pairs"] == 16


@pytest.mark.parametrize("tasks, seed", [(4000, 42), (400, 42), (200, 7), (40, 1)])
def test_the_expert_tier_keeps_every_count_and_every_other_slot(tasks, seed):
    """The partial-move burrs take over fault slots outside the pairs, one burr per split, each an average
    assembly's share of its split; totals, splits, conditions and pairs are the plan's, and every other
    slot is the slot of the plan without them (so its task is byte for byte the same)."""
    base = plan_composition(FAMILIES, tasks, seed, GROUP_BURRS)
    full = plan_composition(LIBRARY, tasks, seed, GROUP_BURRS, PARTIAL_MOVES)
    old, new = composition_counts(base), composition_counts(full)
    assert {k: v for k, v in new.items() if not k.startswith("assemblies_")} == \
           {k: v for k, v in old.items() if not k.startswith("assemblies_")}
    assert [(s.index, s.split, s.condition, s.pair, s.pair_role) for s in full] == \
           [(s.index, s.split, s.condition, s.pair, s.pair_role) for s in base]
    taken = [s for s, b in zip(full, base) if s != b]
    assert all(s.assembly_id in PARTIAL_MOVES and s.condition in ("single", "multi") and s.pair is None for s in taken)
    assert [s for s in full if s.assembly_id in PARTIAL_MOVES] == taken
    sides = {s.assembly_id: s.split for s in taken}
    assert sorted(sides) == sorted(PARTIAL_MOVES) and sorted(sides.values()) == ["test", "train"]
    for aid, split in sides.items():
        members = {s.assembly_id for s in full if s.split == split}
        expected = max(1, round(sum(s.split == split for s in full) / len(members)))
        assert sum(s.assembly_id == aid for s in taken) == expected, (aid, split)


def test_the_expert_tier_at_the_default_size():
    full = plan_composition(LIBRARY, 4000, 42, GROUP_BURRS, PARTIAL_MOVES)
    counts = {a: sum(s.assembly_id == a for s in full) for a in sorted(PARTIAL_MOVES)}
    assert counts == {"burr_6_level4": 136, "burr_6_level5": 167}
    c = composition_counts(full)
    assert (c["assemblies_train"], c["assemblies_test"]) == (22, 6)


def test_one_partial_move_assembly_alone_goes_to_training():
    slots = plan_composition({**FAMILIES, "burr_6_level4": "burr6"}, 200, 7, GROUP_BURRS, frozenset({"burr_6_level4"}))
    assert {s.split for s in slots if s.assembly_id == "burr_6_level4"} == {"train"}
    assert plan_composition(FAMILIES, 200, 7, GROUP_BURRS, frozenset({"burr_6_level4"})) == \
           plan_composition(FAMILIES, 200, 7, GROUP_BURRS)   # named but not in the library: no tier


def test_split_is_disjoint_by_assembly(small_bench):
    m = load_manifest(small_bench)
    assert not set(m["assemblies"]["train"]) & set(m["assemblies"]["test"])
    assert len(m["splits"]["train"]) + len(m["splits"]["test"]) == 40


def test_every_reference_is_proven_and_valid(small_bench):
    m = load_manifest(small_bench)
    for sid in m["splits"]["train"] + m["splits"]["test"]:
        folder = small_bench / "tasks" / sid
        ref = json.loads((folder / "reference.json").read_text())
        assert ref["proof"]["optimal"] is True
        v = verify(load_task(folder), json.dumps({k: ref[k] for k in ("annotation", "rework_plan")}))
        assert v.valid, (sid, v.reason)
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["split"] in ("train", "test") and meta["difficulty"] in ("easy", "medium", "hard", "expert")


def test_counterfactual_pairs_differ_only_in_the_faulty_part(small_bench):
    m = load_manifest(small_bench)
    by_pair = {}
    for r in m["records"]:
        if r["counterfactual_pair"] is not None:
            by_pair.setdefault(r["counterfactual_pair"], {})[r["counterfactual_role"]] = r["sample_id"]
    assert by_pair
    for roles in by_pair.values():
        fault = load_task(small_bench / "tasks" / roles["fault"])
        clean = load_task(small_bench / "tasks" / roles["nofault"])
        ref = json.loads((small_bench / "tasks" / roles["fault"] / "reference.json").read_text())
        faulty = {m["part_id"] for m in ref["annotation"]["mistakes"]}
        differ = {fault.world.ids[i] for i, (a, b) in enumerate(zip(fault.actual.slots, clean.actual.slots)) if a != b}
        assert differ == faulty


@pytest.mark.slow
def test_same_seed_gives_byte_identical_output_whatever_the_jobs(small_bench, tmp_path):
    other = tmp_path / "b1"
    build_bench(other, tasks=SMALL_BENCH_TASKS, seed=42, jobs=1, assemblies=SMALL_BENCH_ASSEMBLIES)
    cmp = filecmp.dircmp(small_bench, other)
    assert not cmp.left_only and not cmp.right_only and not cmp.diff_files
    a = sorted(p.relative_to(small_bench) for p in small_bench.rglob("*.json"))
    b = sorted(p.relative_to(other) for p in other.rglob("*.json"))
    assert a == b
    assert all((small_bench / p).read_bytes() == (other / p).read_bytes() for p in a)


def test_a_batch_is_solved_on_a_grounding_that_is_not_kept_after_it(monkeypatch):
    from forgeplan.bench import generate as gen
    from forgeplan.bench.shards import batches
    from forgeplan.model.state import Tolerances
    from forgeplan.planners.asp.grounding import groundings

    asm = load_assembly("mortise_frame")
    slots = plan_composition({"mortise_frame": asm.family, "luban_lock_3": "luban"}, 40, 42)
    batch = next(b for b in batches(slots) if b[0].assembly_id == "mortise_frame")[:6]
    held, kept = [], set()
    take = gen.generate

    def generate(*a):   # a[5]: the batch's assembly grounding
        kept.update(weakref.ref(g) for g in groundings(a[5]).cache.values())
        held.append(len(groundings(a[5]).cache))
        return take(*a)

    monkeypatch.setattr(gen, "generate", generate)
    gc.disable()
    try:
        assert len(gen.generate_batch(batch, asm, 42, Tolerances())) == len(batch)
        assert held == [1] * len(batch) and kept and all(ref() is None for ref in kept)   # freed at once
    finally:
        gc.enable()

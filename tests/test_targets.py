"""Rework Structuring as data: the structured and plain orders of a reference's actions (llm.targets).

Every exported target of a small build is replayed in the engine; the structured order disassembles by
the layers of eq. 4 from the outside in, fixes, and reassembles from the inside out; the plain order
keeps the same actions in an order that ignores the layers, and the two differ on tasks of more than one
layer.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from forgeplan.bench.export import export_jsonl
from forgeplan.io.contract import parse_output
from forgeplan.library import build
from forgeplan.llm.bench import load_sample, split_ids
from forgeplan.llm.targets import FIX, IN, OUT, ordered, phases, reorder, slot_layers
from forgeplan.model.choices import TARGETS
from forgeplan.model.errors import InputError
from forgeplan.planners.reference import simple_reference
from forgeplan.semantics.closure import closure_layers, dependency_closure
from forgeplan.semantics.diagnosis import faulty_slots
from forgeplan.semantics.faults import FaultSpec, make_task


def _actions(reference: dict):
    return parse_output(json.dumps(reference), strict=False).actions


def _samples(bench):
    return [(sid, *load_sample(bench, sid)) for split in ("train", "test") for sid in split_ids(bench, split)]


@pytest.mark.slow   # the fast lane replays the structured and plain orders of the same build below (`ordered`)
def test_every_exported_target_replays_valid_with_the_references_actions(small_bench, tmp_path):
    """bench export --targets reference|structured|plain: each completion restores the target from the actual
    state, with exactly the reference's actions (so as short, moving the same parts)."""
    samples = {sid: (task, ref) for sid, task, ref in _samples(small_bench)}
    for targets in TARGETS:
        counts = export_jsonl(small_bench, tmp_path / targets, prompt="compact", targets=targets)
        assert sum(counts.values()) == len(samples)
        for split in counts:
            for line in (tmp_path / targets / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                task, ref = samples[row["sample_id"]]
                plan = parse_output(row["completion"][0]["content"]).actions
                assert task.world.restoration(task.actual, plan, task.target).restored, (targets, row["sample_id"])
                assert Counter(plan) == Counter(_actions(ref))


def test_structured_and_plain_differ_on_tasks_with_more_than_one_layer(small_bench):
    """Where the dependency closure has more than one layer and the plan has room to reorder, the two
    targets are different orders; a target of one layer has nothing for the structure to say."""
    multi = differ = 0
    for _, task, ref in _samples(small_bench):
        steps = ref["rework_plan"]["actions"]
        structured = ordered(task, ref, "structured")["rework_plan"]["actions"]
        plain = ordered(task, ref, "plain")["rework_plan"]["actions"]
        if len(set(slot_layers(task, ref).values())) > 1 and len(steps) >= 5:
            multi += 1
            differ += structured != plain
    assert multi >= 10 and differ >= multi / 2, (differ, multi)


def test_structured_targets_disassemble_then_fix_then_reassemble(small_bench):
    """On every task of the build the structured order puts every out-move before every fix and every fix
    before every in-move; the plain order does not always."""
    plain_mixed = 0
    for _, task, ref in _samples(small_bench):
        actions = _actions(ref)
        for targets in ("structured", "plain"):
            plan = _actions(ordered(task, ref, targets))
            kinds = phases(task.world, task.actual, plan)
            if targets == "structured":
                assert kinds == sorted(kinds), (task.sample_id, kinds)
            else:
                plain_mixed += kinds != sorted(kinds)
        assert Counter(phases(task.world, task.actual, actions)) == Counter(kinds)
    assert plain_mixed > 0


@pytest.fixture(scope="module")
def cabinet():
    """drawer_cabinet_3 with its side under-inserted: the side's blockers (shelves, top) form layer 1, what
    blocks or locks those (drawers, the lock) layer 2."""
    task = make_task(build("drawer_cabinet_3"), [FaultSpec("under_insertion", "DrawerCabinet3_Part02_Side")], seed=0)
    return task, simple_reference(task)


def test_structured_order_goes_layer_by_layer_from_the_outside_in_and_back(cabinet):
    task, ref = cabinet
    world = task.world
    layer = {world.ids[i]: k for i, k in slot_layers(task, ref).items()}
    assert layer["DrawerCabinet3_Part02_Side"] == 0
    assert {layer[p] for p in ("DrawerCabinet3_Part05_Shelf", "DrawerCabinet3_Part06_Shelf", "DrawerCabinet3_Part11_Top")} == {1}
    assert {layer[p] for p in ("DrawerCabinet3_Part08_Drawer", "DrawerCabinet3_Part09_Drawer", "DrawerCabinet3_Part10_Lock")} == {2}
    plan = _actions(ordered(task, ref, "structured"))
    kinds = phases(world, task.actual, plan)
    depth = [min(layer[world.ids[world.slot_index(p)]] for p in a.touched) for a in plan]
    out = [d for k, d in zip(kinds, depth) if k == OUT]
    back = [d for k, d in zip(kinds, depth) if k == IN]
    assert out == sorted(out, reverse=True) and out[0] == 2 and out[-1] == 1
    assert back == sorted(back) and back[0] == 1 and back[-1] == 2
    assert [a.name for a, k in zip(plan, kinds) if k == FIX] == ["reset_pose"]
    assert str(plan[0]).startswith("rotate_to_unlock(DrawerCabinet3_Part10_Lock")   # the outermost layer first
    plain = _actions(ordered(task, ref, "plain"))
    assert plain != plan and Counter(plain) == Counter(plan)


def test_closure_layers_are_the_iterations_of_eq_4(cabinet):
    """Layer 0 is the faulty slots, each further layer what the previous one's blockers, supports and locks
    add, and together they are the dependency closure."""
    task, _ = cabinet
    world = task.world
    faulty = faulty_slots(world, task.actual, task.target)
    layers = closure_layers(world, task.actual, faulty)
    assert layers[0] == faulty and sorted(i for layer in layers for i in layer) == dependency_closure(world, task.actual, faulty)
    assert all(set(a).isdisjoint(b) for k, a in enumerate(layers) for b in layers[k + 1:])
    assert closure_layers(world, task.actual, []) == []


def test_reorder_keeps_every_prefix_completable_and_refuses_a_plan_that_does_not_restore(cabinet):
    task, ref = cabinet
    actions = _actions(ref)
    world = task.world
    backwards = reorder(world, task.actual, task.target, actions, lambda j: -j)   # prefers the last action first
    assert world.restoration(task.actual, [actions[j] for j in backwards], task.target).restored
    with pytest.raises(ValueError):
        reorder(world, task.actual, task.target, actions[:-1], lambda j: j)
    broken = {**ref, "rework_plan": {**ref["rework_plan"], "actions": ref["rework_plan"]["actions"][:-1]}}
    with pytest.raises(InputError, match="does not restore"):
        ordered(task, broken, "reference")

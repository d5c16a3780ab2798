"""Sharded, resumed and distributed builds write the benchmark a plain build writes, byte for byte;
crosscheck and evaluate give the same answers whatever runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SMALL_BENCH_ASSEMBLIES, SMALL_BENCH_TASKS
from forgeplan.bench import generate as generate_module
from forgeplan.bench.shards import PARTIAL, batches, merge, parse_shard
from forgeplan.bench.store import BUILD_FILE, build_bench
from forgeplan.model.errors import InputError
from forgeplan.planners.crosscheck import crosscheck


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def build(out: Path, **kw) -> dict:
    return build_bench(out, tasks=SMALL_BENCH_TASKS, seed=42, jobs=1, assemblies=SMALL_BENCH_ASSEMBLIES, **kw)


def test_shards_merge_into_the_plain_build(small_bench, tmp_path):
    shards = [tmp_path / f"s{k}" for k in (1, 2, 3)]
    for k, d in enumerate(shards, start=1):
        build(d, shard=(k, 3))
        assert not (d / "manifest.json").exists() and (d / "shard.json").is_file()
    assert sum(len(list((d / "tasks").iterdir())) for d in shards) == SMALL_BENCH_TASKS
    merge(tmp_path / "merged", shards[::-1])
    assert tree(tmp_path / "merged") == tree(small_bench)


def test_merge_refuses_missing_or_foreign_shards(tmp_path):
    build(tmp_path / "a1", shard=(1, 2))
    with pytest.raises(InputError, match=r"need shards 1..2"):
        merge(tmp_path / "m", [tmp_path / "a1"])
    build_bench(tmp_path / "b2", tasks=SMALL_BENCH_TASKS, seed=43, jobs=1, assemblies=SMALL_BENCH_ASSEMBLIES, shard=(2, 2))
    with pytest.raises(InputError, match="another build"):
        merge(tmp_path / "m", [tmp_path / "a1", tmp_path / "b2"])


def test_shard_batches_cover_the_plan_once_per_assembly():
    from forgeplan.bench.composition import plan_composition

    slots = plan_composition({a: a.split("_")[0] for a in SMALL_BENCH_ASSEMBLIES}, 200, 1, frozenset())
    parts = [batches(slots, (k, 4)) for k in range(1, 5)]
    flat = [s.index for p in parts for b in p for s in b]
    assert sorted(flat) == sorted(s.index for s in slots)
    assert all(len({s.assembly_id for s in b}) == 1 for p in parts for b in p)
    for bad in ("0/2", "3/2", "1/0", "2", "a/b"):
        with pytest.raises(InputError, match="K/N"):
            parse_shard(bad)


class Interrupted(Exception):
    pass


def test_an_interrupted_build_resumes_to_the_plain_build(small_bench, tmp_path, monkeypatch):
    out = tmp_path / "b"
    real = generate_module.generate
    calls = {"n": 0}

    def dies_after_seven(*args, **kw):
        calls["n"] += 1
        if calls["n"] > 7:
            raise Interrupted
        return real(*args, **kw)

    monkeypatch.setattr(generate_module, "generate", dies_after_seven)
    with pytest.raises(Interrupted):
        build(out)
    monkeypatch.setattr(generate_module, "generate", real)
    assert (out / BUILD_FILE).is_file() and not (out / "manifest.json").exists()
    # a half-written task is never taken for a complete one
    half = out / PARTIAL / "bayonet_structure_test_000000"
    half.mkdir(parents=True)
    (half / "meta.json").write_text("{")
    with pytest.raises(InputError, match="not empty"):
        build(out)
    with pytest.raises(InputError, match="other options"):
        build_bench(out, tasks=SMALL_BENCH_TASKS, seed=7, jobs=1, assemblies=SMALL_BENCH_ASSEMBLIES, resume=True)
    build(out, resume=True)
    assert tree(out) == tree(small_bench)
    with pytest.raises(InputError, match="no interrupted build"):
        build(out, resume=True)


@pytest.mark.slow
def test_crosscheck_verdicts_do_not_depend_on_jobs(small_bench):
    def verdicts(jobs):
        return [(c.task_id, c.verdict, c.reason) for c in crosscheck(small_bench, limit=6, jobs=jobs)]

    one = verdicts(1)
    assert len(one) == 6 and {v for _, v, _ in one} == {"agree"}
    assert verdicts(2) == one


def test_crosscheck_leaves_the_working_directory_alone(small_bench, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert [c.verdict for c in crosscheck(small_bench, limit=2)] == ["agree", "agree"]
    assert list(tmp_path.iterdir()) == []


def test_evaluate_scores_do_not_depend_on_jobs(small_bench, tmp_path):
    from forgeplan.bench.store import load_manifest, load_sample_task, read_sample_file
    from forgeplan.evaluation.baselines import BASELINES
    from forgeplan.evaluation.evaluate import score_split, summarise

    p = {sid: BASELINES["greedy-legal"](load_sample_task(small_bench, sid), read_sample_file(small_bench, sid, "reference.json"))
         for sid in load_manifest(small_bench)["splits"]["test"]}
    one = summarise(score_split(small_bench, p, "test", jobs=1), "test")
    assert json.dumps(summarise(score_split(small_bench, p, "test", jobs=2), "test")) == json.dumps(one)


def test_workers_get_the_heaviest_batches_first_in_a_stable_order():
    from forgeplan.bench.shards import heaviest_first
    from forgeplan.bench.store import cost_rank
    from forgeplan.io.catalog import load_assembly

    work = [("a", 1), ("b", 3), ("c", 1), ("d", 3)]
    assert heaviest_first(work, lambda w: w[1]) == [("b", 3), ("d", 3), ("a", 1), ("c", 1)]
    small, large = load_assembly("luban_lock_3"), load_assembly("drawer_cabinet_4")
    assert cost_rank(large, False) > cost_rank(small, False) and cost_rank(small, True) == 3 * cost_rank(small, False)

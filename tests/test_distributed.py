"""The Ray executor on a real local cluster (two CPUs): the same benchmark, verdicts and scores as the
local executor. Needs the [distributed] extra, which the test install includes."""

from __future__ import annotations

import json

import pytest

from conftest import SMALL_BENCH_ASSEMBLIES, SMALL_BENCH_TASKS
from forgeplan.bench.store import build_bench
from forgeplan.executors import init_ray
from forgeplan.planners.crosscheck import crosscheck
from test_bench_scale import tree

ray = pytest.importorskip("ray", reason="the [distributed] extra (ray) is not installed")


@pytest.fixture(scope="module")
def cluster():
    init_ray(2)
    assert ray.cluster_resources().get("CPU") == 2
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ray_build_is_the_local_build(cluster, small_bench, tmp_path):
    build_bench(tmp_path / "b", tasks=SMALL_BENCH_TASKS, seed=42, jobs=2, assemblies=SMALL_BENCH_ASSEMBLIES,
                executor="ray")
    assert tree(tmp_path / "b") == tree(small_bench)


@pytest.mark.slow
def test_ray_shard_and_local_shard_merge_into_the_local_build(cluster, small_bench, tmp_path):
    from forgeplan.bench.shards import merge

    kw = dict(tasks=SMALL_BENCH_TASKS, seed=42, jobs=2, assemblies=SMALL_BENCH_ASSEMBLIES)
    build_bench(tmp_path / "s1", shard=(1, 2), executor="ray", **kw)
    build_bench(tmp_path / "s2", shard=(2, 2), **kw)
    merge(tmp_path / "m", [tmp_path / "s1", tmp_path / "s2"])
    assert tree(tmp_path / "m") == tree(small_bench)


@pytest.mark.slow
def test_ray_crosscheck_and_evaluate_match_local(cluster, small_bench):
    from forgeplan.bench.store import load_manifest, load_sample_task, read_sample_file
    from forgeplan.evaluation.baselines import BASELINES
    from forgeplan.evaluation.evaluate import score_split, summarise

    def verdicts(executor):
        return [(c.task_id, c.verdict, c.reason) for c in crosscheck(small_bench, limit=4, jobs=2, executor=executor)]

    assert verdicts("ray") == verdicts("local")
    preds = {sid: BASELINES["local-repair"](load_sample_task(small_bench, sid), read_sample_file(small_bench, sid, "reference.json"))
             for sid in load_manifest(small_bench)["splits"]["test"]}
    local = summarise(score_split(small_bench, preds, "test"), "test")
    remote = summarise(score_split(small_bench, preds, "test", jobs=2, executor="ray"), "test")
    assert json.dumps(remote) == json.dumps(local)

"""A benchmark that proves itself: every reader refuses a file changed since the build, by name (exit 2);
what costs nothing is checked at every load even when the digests are forged too; `bench check` derives
everything again and finds each kind of tampering (exit 1), and holds on an untouched build (exit 0).

Each test works on a cut of the session's small benchmark (one to three of its samples, with the card
and the digests a build of them writes), so that `bench check` solves a few tasks only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lab.fuzzing import judge, run_cli
from forgeplan.bench.card import write_card
from forgeplan.bench.digests import DIGESTS, seal, seal_folder
from forgeplan.bench.labels import difficulty, minimal_rework
from forgeplan.bench.shards import manifest_of
from forgeplan.io.contract import parse_output
from forgeplan.io.task_files import load_task, write_json
from forgeplan.model.actions import Insert, Remove, moved_parts


def _manifest(bench: Path) -> dict:
    return json.loads((bench / "manifest.json").read_text())


def cut(source: Path, ids: list[str], out: Path) -> Path:
    """The samples `ids` of a built benchmark as a build of them alone writes them: task folders, card,
    SHA256SUMS and manifest."""
    manifest = _manifest(source)
    head = {k: v for k, v in manifest.items() if k not in ("splits", "assemblies", "families", "records", "digests")}
    manifest = manifest_of(head, [r for r in manifest["records"] if r["sample_id"] in ids])
    for sid in ids:
        shutil.copytree(source / "tasks" / sid, out / "tasks" / sid)
    write_card(out, manifest)
    manifest["digests"] = seal(out, ids)
    write_json(out / "manifest.json", manifest)
    return out


def forge_digests(bench: Path) -> None:
    """What an attacker who rewrites SHA256SUMS and the manifest's record of it too does."""
    seal_folder(bench, _manifest(bench))


def first(source: Path, condition: str) -> str:
    """The first test sample of a condition (evaluate and the baselines score the test split)."""
    return next(r["sample_id"] for r in _manifest(source)["records"] if r["condition"] == condition and r["split"] == "test")


def _oracle(bench: Path, tmp_path: Path) -> None:
    """The oracle's predictions, made from the untouched files (what a model's answers are to a reader)."""
    assert run_cli(["baseline", "oracle", "--bench", bench, "--out", tmp_path / "oracle.jsonl"]).code == 0


@pytest.fixture
def one(small_bench, tmp_path) -> tuple[Path, str]:
    sid = first(small_bench, "single")
    bench = cut(small_bench, [sid], tmp_path / "b")
    _oracle(bench, tmp_path)
    return bench, sid


def _evaluate(bench: Path, tmp_path: Path):
    return run_cli(["evaluate", "--bench", bench, "--predictions", tmp_path / "oracle.jsonl", "--json"])


def _check(bench: Path):
    o = run_cli(["bench", "check", bench, "--jobs", "1", "--quiet"])
    assert judge(o) is None, o.err
    return o


def _refused(o, file: str, text: str) -> None:
    assert o.code == 2 and judge(o) is None and file in o.err and text in o.err, (o.code, o.err)


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=1))


# ----------------------------------------------------------------------------- digests

def test_an_untouched_cut_holds_and_scores(one, tmp_path):
    bench, _ = one
    assert _evaluate(bench, tmp_path).code == 0
    o = _check(bench)
    assert o.code == 0 and o.out.startswith("all holds: 1 tasks"), o.out


@pytest.mark.parametrize("name", ["reference.json", "part_catalog.json", *(pytest.param(n, marks=pytest.mark.slow) for n in
                                  ("meta.json", "minimal_rework.json", "actual_state.json"))])
def test_a_changed_file_is_refused_by_name(one, tmp_path, name):
    bench, sid = one
    assert _evaluate(bench, tmp_path).code == 0
    path = bench / "tasks" / sid / name
    path.write_text(path.read_text() + " ")   # the same JSON: only the digest knows
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/{name}", "changed since the build (digest mismatch)")
    readers = [["baseline", "greedy-legal", "--bench", bench, "--out", tmp_path / "g.jsonl"]]
    if name not in ("meta.json", "minimal_rework.json"):   # what training data is made of (a reader hashes what it reads)
        readers.append(["bench", "export", bench, "--out", tmp_path / "export"])
    for argv in readers:
        _refused(run_cli(argv), f"tasks/{sid}/{name}", "digest mismatch")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/{name}: changed since the build (digest mismatch)" in o.out, o.out


def test_digest_file_files_and_manifest_are_checked(one, tmp_path):
    bench, sid = one
    (bench / "tasks" / sid / "extra.json").write_text("{}")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/extra.json: is not a file of the build" in o.out, o.out
    (bench / "tasks" / sid / "extra.json").unlink()
    (bench / DIGESTS).write_text((bench / DIGESTS).read_text().replace("  README.md", "  tasks.jsonl", 1))
    _refused(_evaluate(bench, tmp_path), DIGESTS, "changed since the build")
    o = _check(bench)
    assert o.code == 1 and "SHA256SUMS: changed since the build" in o.out, o.out
    manifest = _manifest(bench)
    del manifest["digests"]
    write_json(bench / "manifest.json", manifest)
    _refused(_evaluate(bench, tmp_path), "manifest.json", "records no digests")


def test_bench_merge_refuses_a_shard_file_changed_since_its_build(small_bench, tmp_path):
    from forgeplan.bench.shards import merge
    from forgeplan.model.errors import InputError

    sid = first(small_bench, "single")
    shard = tmp_path / "s1"
    shutil.copytree(small_bench / "tasks" / sid, shard / "tasks" / sid)
    record = next(r for r in _manifest(small_bench)["records"] if r["sample_id"] == sid)
    head = {k: v for k, v in _manifest(small_bench).items() if k not in ("splits", "assemblies", "families", "records",
                                                                         "digests")} | {"tasks": 1}
    write_json(shard / "shard.json", {"head": head, "shard": [1, 1], "records": [[0, record]], "digests": seal(shard, [sid])})
    merge(tmp_path / "whole", [shard])
    assert _check(tmp_path / "whole").code == 0
    path = shard / "tasks" / sid / "reference.json"
    path.write_text(path.read_text() + "\n")
    with pytest.raises(InputError, match="changed since the shard was built"):
        merge(tmp_path / "m", [shard])


# ----------------------------------------------------------------------------- the digests forged too

def _detour(task) -> list[dict]:
    """Two actions that leave the target as it is: a part taken out and put back."""
    for pid in task.world.ids:
        if task.world.check(task.target, Remove(pid)) is None:
            if task.world.check(task.world.apply(task.target, Remove(pid)), Insert(pid)) is None:
                return [Remove(pid).to_json(), Insert(pid).to_json()]
    raise AssertionError("no part comes out of the target and back")


def longer_reference_everywhere(bench: Path, sid: str) -> None:
    """A valid but longer reference still claiming `optimal`, with every file derived from it made to agree
    (minimal_rework.json, meta.json, the manifest, the card) and the digests forged: only a proof finds it."""
    folder = bench / "tasks" / sid
    ref = json.loads((folder / "reference.json").read_text())
    ref["rework_plan"]["actions"] += _detour(load_task(folder))
    plan = parse_output(json.dumps(ref), strict=False).actions
    ref["proof"].update(moved_parts=len(moved_parts(plan)), actions=len(plan))
    write_json(folder / "reference.json", ref)
    write_json(folder / "minimal_rework.json", minimal_rework(sid, plan))
    meta = json.loads((folder / "meta.json").read_text())
    meta["difficulty"] = difficulty(meta["condition"], len(plan), ref["annotation"]["mistakes"])
    write_json(folder / "meta.json", meta)
    manifest = _manifest(bench)
    manifest["records"] = [r | {"difficulty": meta["difficulty"], "reference_actions": len(plan),
                                "reference_moved_parts": len(moved_parts(plan))} if r["sample_id"] == sid else r
                           for r in manifest["records"]]
    write_card(bench, manifest)
    seal_folder(bench, manifest)


def test_a_longer_reference_claiming_optimal_is_found_by_its_proof(one, tmp_path):
    bench, sid = one
    longer_reference_everywhere(bench, sid)
    assert _evaluate(bench, tmp_path).code == 0   # nothing a reader can check cheaply is wrong
    o = _check(bench)
    assert o.code == 1 and o.out.count("\n") == 2, o.out
    assert f"tasks/{sid}/reference.json: proof.optimal: claims optimal, but clingo proves a plan of" in o.out


def test_a_longer_reference_is_refused_by_evaluate_until_every_file_derived_from_it_agrees(one, tmp_path):
    """The attack on a perfect answer's score (a longer valid plan in place of the proven one): refused by
    its digest, then, with the digests forged, by the proof's figures, then by minimal_rework.json."""
    bench, sid = one
    folder = bench / "tasks" / sid
    ref = json.loads((folder / "reference.json").read_text())
    ref["rework_plan"]["actions"] += _detour(load_task(folder))
    write_json(folder / "reference.json", ref)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/reference.json", "digest mismatch")
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/reference.json: proof.actions", "the reference plan")
    plan = parse_output(json.dumps(ref), strict=False).actions
    ref["proof"].update(moved_parts=len(moved_parts(plan)), actions=len(plan))
    write_json(folder / "reference.json", ref)
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/minimal_rework.json", "the reference plan")


def test_a_lock_angle_of_1e308_in_a_benchmark_is_refused_by_readers_and_found_by_the_check(small_bench, tmp_path):
    sid = next(r["sample_id"] for r in _manifest(small_bench)["records"]
               if r["assembly_id"] == "bayonet_structure" and r["split"] == "test" and r["condition"] == "single")
    bench = cut(small_bench, [sid], tmp_path / "b")
    _oracle(bench, tmp_path)
    _edit(bench / "tasks" / sid / "part_catalog.json",
          lambda d: next(p["lock"] for p in d["parts"] if p["lock"]).update(angle_deg=1e308))
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/part_catalog.json: parts.", "less than or equal to 360")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/part_catalog.json: parts." in o.out and "angle_deg" in o.out, o.out


def test_a_wrong_diagnosis_with_a_valid_plan_is_refused(one, tmp_path):
    bench, sid = one
    _edit(bench / "tasks" / sid / "reference.json",
          lambda r: r["annotation"]["mistakes"][0].update(visible=not r["annotation"]["mistakes"][0]["visible"]))
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/reference.json", "digest mismatch")
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/reference.json: annotation.mistakes",
             "the diagnosis is not the task's")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/reference.json: annotation.mistakes: sample {sid}: the diagnosis" in o.out


def test_a_recorded_fault_that_is_not_the_diagnosed_one_is_refused(one, tmp_path):
    bench, sid = one
    _edit(bench / "tasks" / sid / "meta.json", lambda m: m.update(fault_types=["wrong_part"]))
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), "manifest.json: records.", "its meta.json")   # the manifest's record says otherwise
    manifest = _manifest(bench)
    manifest["records"][0]["fault_types"] = ["wrong_part"]
    write_card(bench, manifest)
    seal_folder(bench, manifest)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/meta.json: fault_types", "disagrees with the reference's diagnosis")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/meta.json: fault_types: disagrees with the reference's diagnosis" in o.out


@pytest.mark.parametrize("field,value", [("moved_part_count", 9), ("route_id", "R-000000000000"),
                                         ("moved_parts", []), ("sample_id", "other_000001")])
def test_a_tampered_minimal_rework_is_refused(one, tmp_path, field, value):
    bench, sid = one
    _edit(bench / "tasks" / sid / "minimal_rework.json", lambda m: m.update({field: value}))
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/minimal_rework.json: {field}", "the reference plan")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/minimal_rework.json: {field}" in o.out, o.out


def test_an_actual_state_naming_another_sample_is_refused(one, tmp_path):
    bench, sid = one
    _edit(bench / "tasks" / sid / "actual_state.json", lambda s: s.update(sample_id="someone_else"))
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/actual_state.json: sample_id", "not the one its folder names")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/actual_state.json: sample_id" in o.out, o.out


def test_a_manifest_moving_a_sample_to_another_split_is_refused(small_bench, tmp_path):
    records = _manifest(small_bench)["records"]
    train, test = (next(r["sample_id"] for r in records if r["split"] == s) for s in ("train", "test"))
    bench = cut(small_bench, [train, test], tmp_path / "b")
    manifest = _manifest(bench)
    manifest["splits"] = {"train": [test], "test": [train]}
    write_json(bench / "manifest.json", manifest)
    o = run_cli(["bench", "stats", bench])
    assert o.code == 2 and judge(o) is None and "manifest.json: records." in o.err and "its record says" in o.err, o.err


# ----------------------------------------------------------------------------- Assembly Decision

def _acts(bench: Path, sid: str) -> bool:
    """Does the decision sample's reference act (so that Inspect is not among its valid decisions)?"""
    return json.loads((bench / "tasks" / sid / "decision.json").read_text())["reference"]["operation"] != "Inspect"


@pytest.fixture
def decision(magar_bench, tmp_path) -> tuple[Path, str]:
    sid = next(r["sample_id"] for r in _manifest(magar_bench)["records"]
               if r["task_family"] == "assembly_decision" and r["split"] == "test" and _acts(magar_bench, r["sample_id"]))
    bench = cut(magar_bench, [sid], tmp_path / "d")
    _oracle(bench, tmp_path)
    return bench, sid


def test_a_decision_whose_reference_is_not_valid_is_refused(decision, tmp_path):
    bench, sid = decision
    assert _check(bench).code == 0
    path = bench / "tasks" / sid / "decision.json"
    _edit(path, lambda d: d["reference"].update(next_subgoal="assembly matches target", operation="Inspect",
                                                involved_parts=[]))
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/decision.json", "digest mismatch")
    forge_digests(bench)
    _refused(_evaluate(bench, tmp_path), f"tasks/{sid}/decision.json: reference",
             "the reference decision is not among the valid decisions")
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/decision.json: reference: the reference decision is not among" in o.out


def test_a_decision_set_holding_a_decision_that_is_not_valid_is_found(decision, tmp_path):
    bench, sid = decision
    path = bench / "tasks" / sid / "decision.json"
    data = json.loads(path.read_text())
    extra = {"operation": "Recover", "involved_parts": [data["reference"]["involved_parts"][0] if
                                                         data["reference"]["involved_parts"] else "x"],
             "next_subgoal": "x removed"}
    _edit(path, lambda d: d["valid"].append(extra))
    forge_digests(bench)
    assert _evaluate(bench, tmp_path).code == 0   # a reader cannot tell without solving
    o = _check(bench)
    assert o.code == 1 and f"tasks/{sid}/decision.json: valid: is not what the state solved again gives" in o.out, o.out

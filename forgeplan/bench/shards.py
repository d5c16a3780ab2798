"""Batches, shards, atomic task folders and the merge of shard folders into one benchmark.

The composition plan is cut into batches of at most BATCH_SIZE slots of one assembly (so that a
worker grounds an assembly once per batch); shard K of N takes every N-th batch; workers get the
heaviest batches first. A task folder is
written under OUT/.partial and renamed into OUT/tasks when complete, so a folder in tasks/ is always
whole. A shard folder ends with shard.json (the manifest head and its records with their plan
positions); `merge` joins shard folders into the benchmark a single build writes, byte for byte.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ..io.guarded import read_bytes
from ..io.output import environment_fault, new_folder, output_folder
from ..io.schema import DigestsEntry, ManifestRecord, Strict, parse_model
from ..io.task_files import read_json, write_json
from ..model.errors import InputError
from .card import write_card
from .composition import Slot
from .digests import digest, read_sums, seal

BATCH_SIZE = 200   # a worker grounds an assembly, and keeps its answers, once per batch: the full build has one batch per assembly
PARTIAL = ".partial"
SHARD_FILE = "shard.json"
SHARD_SPEC = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)")   # whole string: fullmatch
MAX_SHARDS = 100_000   # as many as a benchmark's most tasks (bench.store.MAX_TASKS)


def parse_shard(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N) with 1 <= K <= N."""
    m = SHARD_SPEC.fullmatch(text)
    if not m or len(m.group(2)) > 6 or int(m.group(1)) > int(m.group(2)) or int(m.group(2)) > MAX_SHARDS:
        raise InputError(f"must be K/N with 1 <= K <= N <= {MAX_SHARDS} (e.g. 2/4), got {text[:40]!r}", field="--shard")
    return int(m.group(1)), int(m.group(2))


def batches(slots: list[Slot], shard: tuple[int, int] | None = None) -> list[list[Slot]]:
    """The plan's slots by assembly (first appearance order), in chunks of BATCH_SIZE; shard (K, N)
    keeps batch i when i % N == K - 1. Independent of the number of workers."""
    by: dict[str, list[Slot]] = {}
    for slot in slots:
        by.setdefault(slot.assembly_id, []).append(slot)
    out = [group[i:i + BATCH_SIZE] for group in by.values() for i in range(0, len(group), BATCH_SIZE)]
    if shard is None:
        return out
    k, n = shard
    return [b for i, b in enumerate(out) if i % n == k - 1]


def heaviest_first(work: list[tuple], weight) -> list[tuple]:
    """The batches in the order to hand them out: the heaviest `weight` first (stable), so that no long
    batch is left for the end while the other workers idle. The output does not depend on the order."""
    return sorted(work, key=lambda w: -weight(w))


def write_task_folder(out: Path, sample_id: str, texts: dict[str, str]) -> None:
    """Write the task's files (name -> text) under OUT/.partial, then rename the folder into OUT/tasks (the
    builder syncs the disk once before the manifest, which marks the benchmark complete)."""
    tmp = out / PARTIAL / sample_id
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for name, text in texts.items():
            (tmp / name).write_text(text, encoding="utf-8")
        os.replace(tmp, out / "tasks" / sample_id)
    except OSError as exc:
        raise environment_fault(exc, out / "tasks" / sample_id) or exc from None


def drop_partial(out: Path) -> None:
    """Remove OUT/.partial: what an interrupted build left half-written, or the empty staging folder."""
    shutil.rmtree(out / PARTIAL, ignore_errors=True)


def finished(out: Path) -> set[str]:
    """Sample ids whose folders are complete (after dropping any half-written ones)."""
    drop_partial(out)
    tasks = out / "tasks"
    return {p.name for p in tasks.iterdir() if p.is_dir()} if tasks.is_dir() else set()


def record_of(files: dict[str, dict]) -> dict:
    """A task's manifest record, from its meta.json, reference.json and minimal_rework.json."""
    return files["meta.json"] | {"reference_actions": len(files["reference.json"]["rework_plan"]["actions"]),
                                 "reference_moved_parts": files["minimal_rework.json"]["moved_part_count"]}


def read_record(out: Path, sample_id: str) -> dict:
    folder = out / "tasks" / sample_id
    return record_of({n: read_json(folder / n, "bench file", root=out)
                      for n in ("meta.json", "reference.json", "minimal_rework.json")})


def manifest_of(head: dict, records: list[dict]) -> dict:
    """The manifest: the build's head, then splits, assemblies and families derived from the records."""
    return head | {
        "splits": {s: [r["sample_id"] for r in records if r["split"] == s] for s in ("train", "test")},
        "assemblies": {s: sorted({r["assembly_id"] for r in records if r["split"] == s}) for s in ("train", "test")},
        "families": {s: sorted({r["family"] for r in records if r["split"] == s}) for s in ("train", "test")},
        "records": records,
    }


def merge(out: Path, shard_dirs: list[Path]) -> dict:
    """Join complete shard folders (every K of one N, same build) into the benchmark `out`; returns its manifest."""
    shards = [_read_shard(d) for d in shard_dirs]
    head, n = shards[0]["head"], shards[0]["shard"][1]
    for d, s in zip(shard_dirs, shards):
        if s["head"] != head or s["shard"][1] != n:
            raise InputError("is a shard of another build (seed, size, library, tolerances or versions differ)",
                             file=str(d / SHARD_FILE), field="head")
    have = sorted(s["shard"][0] for s in shards)
    if have != list(range(1, n + 1)):
        raise InputError(f"need shards 1..{n} once each, got {have}", field="SHARD_DIR")
    positions = {p: r for s in shards for p, r in s["records"]}
    if sorted(positions) != list(range(head["tasks"])):
        raise InputError(f"the shards hold {len(positions)} of {head['tasks']} tasks", field="SHARD_DIR")
    ids = [r["sample_id"] for r in positions.values()]
    if len(set(ids)) != len(ids):
        raise InputError("the shards name a sample id twice", field="SHARD_DIR")
    if output_folder(out, create=False).exists() and any(out.iterdir()):
        raise InputError("output folder is not empty", file=str(out), field="--out")
    with new_folder(out) as folder:   # built beside `out` and renamed: the benchmark appears whole or not at all
        (folder / "tasks").mkdir()
        for d, s in zip(shard_dirs, shards):
            sums = read_sums(Path(d), s["digests"], str(Path(d) / SHARD_FILE))
            for _, r in s["records"]:
                copy_task_folder(Path(d), r["sample_id"], folder, sums)
        manifest = manifest_of(head, [positions[p] for p in range(head["tasks"])])
        manifest["digests"] = seal(folder, ids, write_card(folder, manifest))
        write_json(folder / "manifest.json", manifest)
    return manifest


def copy_task_folder(shard: Path, sample_id: str, out: Path, sums: dict[str, str]) -> None:
    """Copy SHARD/tasks/<sample_id> to OUT/tasks/<sample_id>: the folder and each file in it regular (no
    symlink, FIFO or subfolder), read through the guarded reader, so nothing outside the shard is read,
    and each file the one the shard's build recorded in its SHA256SUMS (`sums`)."""
    src, dst = shard / "tasks" / sample_id, out / "tasks" / sample_id
    if src.is_symlink() or not src.is_dir():
        raise InputError("is not a task folder (a symlink or missing)", file=str(src))
    names = [p.rsplit("/", 1)[1] for p in sums if p.startswith(f"tasks/{sample_id}/")]
    dst.mkdir()
    for entry in sorted(os.scandir(src), key=lambda e: e.name):
        if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
            raise InputError("is not a regular file (a symlink, folder or device)", file=entry.path)
        data = read_bytes(Path(entry.path), "bench file", root=shard)
        if digest(data) != sums.get(f"tasks/{sample_id}/{entry.name}"):
            raise InputError("changed since the shard was built (digest mismatch, or not in its SHA256SUMS)",
                             file=entry.path)
        (dst / entry.name).write_bytes(data)
        names.remove(entry.name)
    if names:
        raise InputError(f"misses files the shard's build wrote: {sorted(names)}", file=str(src))


class ShardDigests(Strict):
    digests: DigestsEntry


def _read_shard(folder: Path) -> dict:
    path = Path(folder) / SHARD_FILE
    if not path.is_file():
        raise InputError("not a finished shard folder (no shard.json; resume its build with --resume)", file=str(folder))
    data = read_json(path, "bench file", root=Path(folder))
    if not isinstance(data, dict) or not {"head", "shard", "records", "digests"} <= set(data):
        raise InputError("expected an object with head, shard, records and digests (a shard of an older forgeplan: "
                         "build it again)", file=str(path))
    parse_model(ShardDigests, {"digests": data["digests"]}, str(path))
    if not isinstance(data["records"], list):
        raise InputError("expected a list of [position, record]", file=str(path), field="records")
    for k, item in enumerate(data["records"]):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)):
            raise InputError("expected [position, record]", file=str(path), field=f"records.{k}")
        try:   # the sample id is a folder name, the labels are names
            parse_model(ManifestRecord, item[1], str(path))
        except InputError as exc:
            raise InputError(exc.reason, file=str(path), field=f"records.{k}.1.{exc.field}") from None
    return data

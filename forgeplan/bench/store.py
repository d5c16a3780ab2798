"""Build a benchmark folder: plan, generate (in parallel), write deterministically, summarise."""

from __future__ import annotations

import json
import os
import platform
import time
from collections import Counter
from pathlib import Path

from .. import __version__
from ..io.output import output_folder, together
from ..io.task_files import read_json, write_json
from ..model.choices import OBJECTIVES
from ..model.errors import InputError
from ..model.state import Tolerances
from ..semantics.grounded import assemblies_by_kind
from ..semantics.task import Task
from .card import write_card
from .digests import seal
from .composition import PROTOCOL, composition_counts, plan_composition
from ..executors import run_batches
from .generate import Rendered, generate_batch, sample_id
from .shards import (SHARD_FILE, batches, drop_partial, finished, heaviest_first, manifest_of, read_record,
                     write_task_folder)
from .folder import MANIFEST, open_bench
from .sources import load_sources


def _versions() -> dict:
    import clingo

    return {"forgeplan": __version__, "clingo": clingo.__version__, "python": platform.python_version()}


MIN_TASKS = 20   # fewer cannot keep every stratum of the composition
MAX_TASKS = 100_000


def check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise InputError(f"objective {objective!r} must be one of {list(OBJECTIVES)}", field="--objective")


def check_task_count(tasks: int) -> None:
    if tasks < MIN_TASKS:
        raise InputError(f"must be at least {MIN_TASKS} to keep every stratum, got {tasks}", field="--tasks")
    if tasks > MAX_TASKS:
        raise InputError(f"at most {MAX_TASKS} tasks per benchmark, got {tasks}", field="--tasks")


BUILD_FILE = "build.json"   # the head of a build in progress (what --resume checks)


def build_bench(out: Path, tasks: int = 4000, seed: int = 42, jobs: int = 1, progress=None,
                tolerances: Tolerances = Tolerances(), assemblies: list[str | Path] | None = None,
                shard: tuple[int, int] | None = None, resume: bool = False, executor: str = "local",
                address: str | None = None, phases: dict | None = None, objective: str = "moved-parts,actions") -> dict:
    """Generate the benchmark into `out` (must be empty or absent, unless `resume`); returns the manifest.

    `assemblies` lists built-in ids and assembly JSON file paths (default: every built-in). With
    `shard` (K, N) only that slice of the batches is built and shard.json replaces the manifest
    (`shards.merge` joins the shards). `resume` keeps the complete task folders of an interrupted
    build with the same head and builds the rest. `phases`, when given, receives `time.process_time()` at
    the start and the end of the parallel part (`python -m lab bench` separates the serial part) and, under
    `task_cpu`, each task's CPU seconds in its worker.
    `objective` (`model.choices.OBJECTIVES`): what every reference is proved minimal in.
    """
    check_task_count(tasks)
    check_objective(objective)
    sources = load_sources(assemblies)
    families = {a: s.assembly.family for a, s in sources.items()}
    kinds = assemblies_by_kind({a: s.assembly for a, s in sources.items()})
    slots = plan_composition(families, tasks, seed, kinds.groups, kinds.partial)
    head = {
        "schema_version": "1.0", "benchmark": "forgeplan FORGE-Bench-shaped", "seed": seed, "tasks": tasks,
        "library": sorted(families), "sources": {a: s.origin for a, s in sources.items()},
        "protocol": PROTOCOL, "objective": objective, "tolerances": tolerances.to_json(), "versions": _versions(),
        "composition": composition_counts(slots),
    }
    done = _start(out, {"head": head, "shard": list(shard) if shard else None}, resume)
    position = {s.index: k for k, s in enumerate(slots)}
    records: dict[int, dict] = {}
    work = []
    for batch in batches(slots, shard):
        kept = [s for s in batch if sample_id(s) not in done]
        records.update((position[s.index], read_record(out, sample_id(s))) for s in batch if sample_id(s) in done)
        if kept:
            work.append((kept, sources[kept[0].assembly_id].assembly, seed, tolerances, objective))
    if progress and records:
        progress(len(records))
    work = heaviest_first(work, lambda w: cost_rank(w[1], w[1].assembly_id in kinds.groups))
    if phases is not None:
        phases["parallel_start"] = time.process_time()
    made: dict[str, Rendered] = {}
    _write_tasks(out, run_batches(generate_batch, work, jobs, executor, address), records, position, progress,
                 None if phases is None else phases.setdefault("task_cpu", {}), made)
    if phases is not None:
        phases["parallel_end"] = time.process_time()
    ordered = [records[k] for k in sorted(records)]
    ids = [r["sample_id"] for r in ordered]
    known = {s: g.digests for s, g in made.items()}
    os.sync()   # every task folder on disk before the file that marks the build complete
    with together():
        if shard is not None:
            write_json(out / SHARD_FILE, {"head": head, "shard": list(shard), "records": [[k, records[k]] for k in sorted(records)],
                                          "digests": seal(out, ids, known=known)})
        manifest = manifest_of(head, ordered)
        if shard is None:
            manifest["digests"] = seal(out, ids, write_card(out, manifest, {s: g.row for s, g in made.items()}), known)
            write_json(out / MANIFEST, manifest)
    drop_partial(out)
    (out / BUILD_FILE).unlink()
    return manifest


def _write_tasks(out: Path, results, records: dict, position: dict, progress, task_cpu: dict | None,
                 made: dict) -> None:
    """Each generated task's folder (whole: `write_task_folder`) and its manifest record (and its worker's
    CPU seconds into `task_cpu`, when given; into `made` the task, without its texts, for the card and the
    digests); a failure (a full disk, an interrupt) removes the half-written folder and leaves build.json
    for --resume."""
    try:
        for generated in results:
            for g in generated:
                write_task_folder(out, g.sample_id, g.texts)
                records[position[g.slot.index]] = g.record
                g.texts = {}
                made[g.sample_id] = g
                if task_cpu is not None:
                    task_cpu[g.sample_id] = g.cpu
            if progress:
                progress(len(generated))
    except BaseException:
        drop_partial(out)
        raise


def cost_rank(asm, group_moves: bool) -> int:
    """A rough rank of the solving cost of an assembly's tasks: the length of the plan that takes every
    part out and back and re-locks every lock (the deepest horizon), tripled for group moves."""
    return (2 * len(asm.parts) + 2 * len(asm.locks)) * (3 if group_moves else 1)


def _start(out: Path, build: dict, resume: bool) -> set[str]:
    """Check the output folder and mark the build as started: the sample ids already complete."""
    if output_folder(out, create=False).exists() and any(out.iterdir()):
        if not resume:
            raise InputError("output folder is not empty (use --resume to finish an interrupted build)",
                             file=str(out), field="--out")
        if not (out / BUILD_FILE).is_file():
            raise InputError("holds no interrupted build to resume (no build.json: finished, or not a build)",
                             file=str(out), field="--resume")
        if read_json(out / BUILD_FILE, "bench file", root=out) != json.loads(json.dumps(build)):
            raise InputError("was started with other options (seed, size, library, tolerances, shard or versions)",
                             file=str(out / BUILD_FILE), field="--resume")
    output_folder(out / "tasks")
    write_json(out / BUILD_FILE, build)
    return finished(out)


# by path, for callers that hold a benchmark's folder name: each opens it through the one loader (bench.folder)

def load_manifest(bench: Path) -> dict:
    """manifest.json, validated as a build writes it, its digests read and checked."""
    return open_bench(bench, full=True).manifest


def sample_folder(bench: Path, sample_id: str) -> Path:
    return open_bench(bench).folder(sample_id)


def read_sample_file(bench: Path, sample_id: str, name: str) -> dict:
    """One of a sample's benchmark files, checked against its digest and its schema."""
    return open_bench(bench).json(sample_id, name)


def load_sample_task(bench: Path, sample_id: str) -> Task:
    return open_bench(bench).task(sample_id)


def read_reference(bench: Path, sample_id: str, task: Task) -> dict:
    """A sample's reference.json, checked against its task (bench.consistency.check_reference)."""
    return open_bench(bench).reference(sample_id, task)


def stats(manifest: dict) -> dict:
    """Composition tables: per split x condition, fault type, difficulty, assembly; assembly origins."""
    recs = manifest["records"]
    table: dict = {}
    for key in ("condition", "difficulty", "assembly_id", "family"):
        table[key] = {s: dict(sorted(Counter(r[key] for r in recs if r["split"] == s).items())) for s in ("train", "test")}
    table["fault_type"] = {s: dict(sorted(Counter(t for r in recs if r["split"] == s for t in r["fault_types"]).items()))
                           for s in ("train", "test")}
    table["hidden"] = {s: sum(r["hidden"] for r in recs if r["split"] == s) for s in ("train", "test")}
    table["composition"] = manifest["composition"]
    table["sources"] = manifest.get("sources", {})  # absent in benchmarks built before imports
    return table

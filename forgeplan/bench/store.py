"""Build a benchmark folder: plan, generate (in parallel), write deterministically, summarise."""

from __future__ import annotations

import multiprocessing
import platform
import re
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from collections import Counter
from functools import partial
from pathlib import Path

from .. import __version__
from ..geometry.separation import needs_group_moves
from ..io.guarded import output_folder
from ..io.schema import BENCH_FILE_MODELS, ManifestFile, parse_model
from ..io.task_files import load_task, read_json, write_json
from ..model.errors import ForgeplanError, InputError
from ..model.state import Tolerances
from .composition import PROTOCOL, composition_counts, plan_composition
from .generate import generate
from .sources import load_sources

MANIFEST = "manifest.json"
SAFE_SAMPLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


def _versions() -> dict:
    import clingo

    return {"forgeplan": __version__, "clingo": clingo.__version__, "python": platform.python_version()}


MIN_TASKS = 20   # fewer cannot keep every stratum of the composition
MAX_TASKS = 100_000


def check_task_count(tasks: int) -> None:
    if tasks < MIN_TASKS:
        raise InputError(f"must be at least {MIN_TASKS} to keep every stratum, got {tasks}", field="--tasks")
    if tasks > MAX_TASKS:
        raise InputError(f"at most {MAX_TASKS} tasks per benchmark, got {tasks}", field="--tasks")


def build_bench(out: Path, tasks: int = 4000, seed: int = 42, jobs: int = 1, progress=None,
                tolerances: Tolerances = Tolerances(), assemblies: list[str | Path] | None = None) -> dict:
    """Generate the benchmark into `out` (must be empty or absent); returns the manifest.

    `assemblies` lists built-in ids and assembly JSON file paths (default: every built-in assembly).
    """
    check_task_count(tasks)
    if output_folder(out, create=False).exists() and any(out.iterdir()):
        raise InputError("output folder is not empty", file=str(out), field="--out")
    sources = load_sources(assemblies)
    families = {a: s.assembly.family for a, s in sources.items()}
    group_moves = frozenset(a for a, s in sources.items() if needs_group_moves(s.assembly))
    slots = plan_composition(families, tasks, seed, group_moves)
    work = partial(generate, seed=seed, tolerances=tolerances)
    asms = [sources[s.assembly_id].assembly for s in slots]
    output_folder(out / "tasks")
    records = []
    # an executor (not multiprocessing.Pool) so that a worker that dies raises instead of hanging
    jobs = max(1, min(jobs, -(-tasks // 4)))  # never more workers than chunks of work
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) if jobs > 1 else None
    try:
        results = pool.map(work, slots, asms, chunksize=4) if pool else map(work, slots, asms)
        for g in results:
            folder = out / "tasks" / g.sample_id
            folder.mkdir()
            for name, data in g.files.items():
                write_json(folder / name, data)
            records.append(g.files["meta.json"] | {"reference_actions": len(g.files["reference.json"]["rework_plan"]["actions"]),
                                                    "reference_moved_parts": g.files["minimal_rework.json"]["moved_part_count"]})
            if progress:
                progress(1)
    except BrokenProcessPool:
        raise ForgeplanError("a benchmark worker process died (killed from outside or out of memory)") from None
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    manifest = {
        "schema_version": "1.0", "benchmark": "forgeplan FORGE-Bench-shaped", "seed": seed, "tasks": tasks,
        "library": sorted(families), "sources": {a: s.origin for a, s in sources.items()},
        "protocol": PROTOCOL, "tolerances": tolerances.to_json(), "versions": _versions(),
        "composition": composition_counts(slots),
        "splits": {s: [r["sample_id"] for r in records if r["split"] == s] for s in ("train", "test")},
        "assemblies": {s: sorted({r["assembly_id"] for r in records if r["split"] == s}) for s in ("train", "test")},
        "families": {s: sorted({r["family"] for r in records if r["split"] == s}) for s in ("train", "test")},
        "records": records,
    }
    write_json(out / MANIFEST, manifest)
    return manifest


def load_manifest(bench: Path) -> dict:
    """manifest.json, validated (every field `stats` and the readers use; sample ids are folder names)."""
    path = Path(bench) / MANIFEST
    if not path.is_file():
        raise InputError("not a benchmark folder (no manifest.json)", file=str(bench))
    data = read_json(path, "bench file", root=Path(bench))
    parse_model(ManifestFile, data, str(path))
    return data


def sample_folder(bench: Path, sample_id: str) -> Path:
    """DIR/tasks/<sample_id>, refused when the id is not a single safe folder name."""
    if not SAFE_SAMPLE_ID.match(sample_id):
        raise InputError(f"sample id {sample_id[:80]!r} is not a folder name (letters, digits, '_', '-', '.')",
                         file=str(Path(bench) / MANIFEST), field="splits")
    return Path(bench) / "tasks" / sample_id


def read_sample_file(bench: Path, sample_id: str, name: str) -> dict:
    """One of a sample's benchmark files (reference.json, meta.json, minimal_rework.json), validated;
    it must lie inside the benchmark folder."""
    path = sample_folder(bench, sample_id) / name
    data = read_json(path, "bench file", root=Path(bench))
    parse_model(BENCH_FILE_MODELS[name], data, str(path))
    return data


def load_sample_task(bench: Path, sample_id: str):
    """The task of a sample; its files must lie inside the benchmark folder."""
    return load_task(sample_folder(bench, sample_id), root=Path(bench))


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

"""The one reader of a benchmark folder: manifest.json, SHA256SUMS and the task folders under tasks/.

Every command that reads a benchmark opens it here (`open_bench`), and every file it reads comes through
`Bench.read`: through the guarded reader, then checked against the SHA-256 the build recorded, so a file
changed since the build is refused by name (exit 2; `forgeplan bench check` says what else changed). What
costs nothing to check is checked at every load (bench.consistency): ids against folders, the reference
replayed and its diagnosis derived again, the labels and minimal_rework.json derived from it, the
decision among its valid ones, the manifest's records against the files.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..io.guarded import decode, loads, read_bytes
from ..io.schema import BENCH_FILE_MODELS, ManifestFile, SplitsFile, parse_model
from ..io.task_files import load_task
from ..model.errors import InputError
from ..model.names import sample_id_problem
from ..semantics.task import Task
from . import consistency
from .digests import digest, read_sums

MANIFEST = "manifest.json"


class BenchChanged(InputError):
    """A file of a benchmark is not the one its build wrote (a digest mismatch, or a file it did not write)."""


def _refuse_changed(path: Path, root: Path) -> BenchChanged:
    return BenchChanged(f"changed since the build (digest mismatch); rebuild, or run `forgeplan bench check {root}` "
                        "to see everything that changed", file=str(path))


@dataclass(frozen=True)
class ReworkSample:
    """What scoring a rework sample reads, checked against each other: the task, its reference and plan,
    meta.json and minimal_rework.json."""

    task: Task
    reference: dict
    plan: tuple
    meta: dict
    minimal_rework: dict


class Bench:
    """An open benchmark folder: its manifest and the digests of its files (see the module's docstring)."""

    def __init__(self, root: Path, manifest: dict, digests: dict[str, str]):
        self.root, self.manifest, self.digests = Path(root), manifest, digests

    def __reduce__(self):   # what a worker process receives: the folder, the manifest and the digests
        return Bench, (self.root, self.manifest, self.digests)

    @property
    def manifest_file(self) -> str:
        return str(self.root / MANIFEST)

    @property
    def profile(self) -> str:
        return "magar" if self.manifest.get("profile") == "magar" else "forge"

    def split(self, name: str) -> list[str]:
        """The sample ids of a split, in manifest order."""
        splits = self.manifest["splits"]
        if name not in splits:
            raise InputError(f"no split {name!r} (have {sorted(splits)})", field="--split")
        return list(splits[name])

    @cached_property
    def records(self) -> dict[str, dict]:
        return {r["sample_id"]: r for r in self.manifest.get("records", [])}

    # ------------------------------------------------------------------------- files

    def folder(self, sample_id: str) -> Path:
        """ROOT/tasks/<sample_id>: the id a single safe folder name, the folder no symlink."""
        why = sample_id_problem(sample_id)
        if why is not None:
            raise InputError(f"sample id {repr(sample_id)[:80]} {why}", file=self.manifest_file, field="splits")
        folder = self.root / "tasks" / sample_id
        if folder.is_symlink():
            raise InputError("the sample's task folder is a symlink (refused)", file=str(folder))
        return folder

    def has(self, sample_id: str, name: str) -> bool:
        """Is `name` a file of the sample's folder in the build (recorded in SHA256SUMS)?"""
        return f"tasks/{sample_id}/{name}" in self.digests

    def read(self, path: Path, kind: str = "bench file") -> bytes:
        """A file of the benchmark, read through the guarded reader and checked against its recorded digest."""
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            raise InputError(f"is outside the benchmark folder {self.root}", file=str(path)) from None
        want = self.digests.get(rel)
        if want is None:
            raise BenchChanged("is not a file of the build (SHA256SUMS does not list it); rebuild, or run "
                               f"`forgeplan bench check {self.root}`", file=str(path))
        data = read_bytes(path, kind, root=self.root)
        if digest(data) != want:
            raise _refuse_changed(Path(path), self.root)
        return data

    def raw(self, sample_id: str, name: str):
        """The JSON of one of a sample's files, checked against its digest (not against a schema)."""
        path = self.folder(sample_id) / name
        return loads(decode(self.read(path), str(path), "bench file"), str(path), kind="bench file")

    def json(self, sample_id: str, name: str) -> dict:
        """One of a sample's benchmark files (meta.json, reference.json, minimal_rework.json, decision.json),
        checked against its digest and its schema."""
        data = self.raw(sample_id, name)
        parse_model(BENCH_FILE_MODELS[name], data, str(self.folder(sample_id) / name))
        return data

    def task(self, sample_id: str) -> Task:
        """The task of a sample: its eight files checked against their digests; actual_state.json names the folder."""
        folder = self.folder(sample_id)
        task = load_task(folder, root=self.root, read=lambda path: self.read(path, "task file"))
        consistency.check_task(sample_id, task, str(folder / "actual_state.json"))
        return task

    # ------------------------------------------------------------------------- checked files

    def meta(self, sample_id: str) -> dict:
        meta = self.json(sample_id, "meta.json")
        consistency.check_meta(sample_id, meta, str(self.folder(sample_id) / "meta.json"), self.records.get(sample_id),
                               self.manifest_file, derived="split_mode" in self.manifest)
        return meta

    def reference(self, sample_id: str, task: Task) -> dict:
        """reference.json, checked against its task: the sample's, replayed to the target, its diagnosis the task's."""
        reference = self.json(sample_id, "reference.json")
        consistency.check_reference(sample_id, reference, task, str(self.folder(sample_id) / "reference.json"))
        return reference

    def rework(self, sample_id: str) -> ReworkSample:
        """Everything a rework sample holds, each file checked against the others and the manifest's record."""
        folder = self.folder(sample_id)
        task = self.task(sample_id)
        reference = self.json(sample_id, "reference.json")
        plan = consistency.check_reference(sample_id, reference, task, str(folder / "reference.json"))
        meta = self.meta(sample_id)
        consistency.check_assembly(meta, task, str(folder / "meta.json"))
        consistency.check_labels(meta, reference, plan, str(folder / "meta.json"))
        rework = self.json(sample_id, "minimal_rework.json")
        consistency.check_rework(sample_id, rework, plan, str(folder / "minimal_rework.json"))
        if sample_id in self.records:
            consistency.check_record(sample_id, self.records[sample_id], plan, rework, self.manifest_file)
        return ReworkSample(task, reference, plan, meta, rework)

    def decision(self, sample_id: str, meta: dict | None = None) -> dict:
        """decision.json of an Assembly Decision sample: the sample's, its reference among its valid decisions."""
        folder = self.folder(sample_id)
        decision = self.json(sample_id, "decision.json")
        consistency.check_decision(sample_id, decision, meta if meta is not None else self.meta(sample_id),
                                   str(folder / "decision.json"), str(folder / "meta.json"))
        return decision

    def is_decision(self, sample_id: str) -> bool:
        return self.has(sample_id, "decision.json")

    def part(self, sample_ids) -> "Bench":
        """The same benchmark holding the digests of these samples only: what a worker needs of it."""
        keep = {f"tasks/{sid}/" for sid in sample_ids}
        return Bench(self.root, self.manifest, {p: d for p, d in self.digests.items() if p[:p.rfind("/") + 1] in keep})


# ----------------------------------------------------------------------------- opening

_OPEN: OrderedDict[tuple, Bench] = OrderedDict()


def open_bench(root: Path | str | Bench, full: bool = False) -> Bench:
    """The benchmark folder `root`, its manifest validated and its digests read and checked. `full`: the
    manifest must carry everything a build writes (records, composition), as `bench stats` needs.
    An open benchmark is kept per process while its manifest and SHA256SUMS are unchanged on disk."""
    if isinstance(root, Bench):
        return root
    root = Path(root)
    path = root / MANIFEST
    if not path.is_file():
        raise InputError("not a benchmark folder (no manifest.json)", file=str(root))
    key = (str(root.resolve()), full, *_stamp(path), *_stamp(root / "SHA256SUMS"))
    if key in _OPEN:
        return _OPEN[key]
    data = loads(decode(read_bytes(path, "bench file", root=root), str(path), "bench file"), str(path), kind="bench file")
    if not isinstance(data, dict) or "digests" not in data:
        raise InputError("records no digests of the benchmark's files (built by an older forgeplan, or by hand); "
                         "rebuild it with `forgeplan bench build`", file=str(path), field="digests")
    parse_model(ManifestFile if full else SplitsFile, data, str(path))
    bench = Bench(root, data, read_sums(root, data["digests"], str(path)))
    check_manifest(bench)
    _OPEN[key] = bench
    while len(_OPEN) > 4:
        _OPEN.popitem(last=False)
    return bench


def _stamp(path: Path) -> tuple:
    try:
        st = path.stat()
    except OSError:
        return (None,)
    return st.st_ino, st.st_size, st.st_mtime_ns


def check_manifest(bench: Bench) -> None:
    """The manifest's own consistency: every sample in one split once, every split's sample with a record
    of that split (train, test), and with its files in SHA256SUMS."""
    seen: dict[str, str] = {}
    for split, ids in bench.manifest["splits"].items():
        for sid in ids:
            if sid in seen:
                raise InputError(f"sample {sid} is in split {seen[sid]!r} and in {split!r}", file=bench.manifest_file,
                                 field=f"splits.{split}")
            seen[sid] = split
    records = bench.manifest.get("records", [])
    if len(bench.records) != len(records):
        raise InputError("names a sample in two records", file=bench.manifest_file, field="records")
    if records and set(bench.records) != set(seen):
        odd = sorted(set(bench.records) ^ set(seen))[:3]
        raise InputError(f"the records and the splits name different samples, e.g. {odd}", file=bench.manifest_file,
                         field="records")
    for sid, split in seen.items():
        record = bench.records.get(sid)
        if record is not None and split in ("train", "test") and record["split"] != split:
            raise InputError(f"sample {sid} is in split {split!r}, its record says {record['split']!r}",
                             file=bench.manifest_file, field=f"records.{sid}.split")
    folders = {p.split("/")[1] for p in bench.digests if p.startswith("tasks/")}
    missing = sorted(set(seen) - folders)
    if missing:
        raise InputError(f"SHA256SUMS lists no file of samples {missing[:3]}", file=str(bench.root / "SHA256SUMS"))

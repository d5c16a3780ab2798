"""`forgeplan bench check DIR`: derive again everything a reader of a benchmark trusts, and say what is wrong.

Every reader checks the digests of what it reads and what costs nothing (bench.folder, bench.consistency).
This check also derives again what costs a solver, so it finds a changed file whose digest was forged too:

* files: SHA256SUMS against the manifest, every file against SHA256SUMS, files the build did not write;
* the manifest: every sample in one split, records and splits from the task folders; README.md and
  tasks.jsonl written again from the manifest and the task folders;
* a rework sample: ids against its folder, the reference replayed, its diagnosis the task's (SEMANTICS §7)
  and as many mistakes as its condition's faults, meta.json's labels and minimal_rework.json derived from
  the reference, and the reference's optimality at the level it claims, proved again by the registry's
  proving planner (`optimal`: no plan is better; `grounded_optimal`: none of the grounded universe is;
  otherwise it claims to be valid, which the replay shows);
* a decision sample: its state solved again, and the optimum, the canonical plan, the first steps of the
  optimal plans, the valid decisions and the reference decision derived from that.

Each finding is one line: the file (relative to the benchmark), the field, what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..io.guarded import read_bytes, read_json
from ..io.schema import DigestsEntry, SplitsFile, parse_model
from ..model.errors import InputError
from .digests import CARD_FILES, DIGESTS, digest, parse_sums
from .folder import MANIFEST, Bench, check_manifest

SOLVE_SECONDS = 60.0   # as bench build gives each reference
BATCH = 8              # samples per worker call


@dataclass(frozen=True, order=True)
class Finding:
    file: str             # relative to the benchmark folder
    field: str
    problem: str

    def line(self) -> str:
        return ": ".join(x for x in (self.file, self.field, self.problem) if x)


def _relative(root: Path, file: str | None) -> str:
    if not file:
        return ""
    try:
        return Path(file).relative_to(root).as_posix()
    except ValueError:
        return file


def _finding(root: Path, exc: InputError) -> Finding:
    return Finding(_relative(root, exc.file), exc.field or "", exc.reason)


class Findings(list):
    """The findings of one part of the check; `attempt` runs a check and keeps its refusal as a finding."""

    def __init__(self, root: Path):
        super().__init__()
        self.root = root

    def attempt(self, check: Callable):
        try:
            return check()
        except InputError as exc:
            self.append(_finding(self.root, exc))
            return None

    def add(self, file: str, field: str, problem: str) -> None:
        self.append(Finding(file, field, problem))


def check_bench(root: Path, jobs: int = 1, progress=None, time_limit: float = SOLVE_SECONDS,
                executor: str = "local", address: str | None = None, total=None) -> tuple[list[Finding], int]:
    """(every finding, sorted by file; the number of samples checked). A folder without a readable
    manifest is bad input (InputError); everything else wrong is a finding. `progress(n)` is told of
    every n samples checked, `total(n)` of how many there are once the manifest is read."""
    from ..executors import run_ordered

    root = Path(root)
    manifest = _read_manifest(root)
    found = Findings(root)
    sums = _recorded(root, manifest, found)
    bench = Bench(root, manifest, _on_disk(root, manifest, sums, found))   # read what is there, whatever the digests say
    found.attempt(lambda: check_manifest(bench))
    _derived_manifest(bench, found)
    _card(bench, found)
    ids = [sid for split in manifest["splits"].values() for sid in split if (root / "tasks" / sid).is_dir()]
    batches = [(bench.part(ids[k:k + BATCH]), ids[k:k + BATCH], time_limit) for k in range(0, len(ids), BATCH)]
    if total:
        total(len(ids))
    for batch, more in run_ordered(check_samples, batches, jobs, executor, address):
        found += more
        if progress:
            progress(len(batch[1]))
    return sorted(set(found)), len(ids)


def _read_manifest(root: Path) -> dict:
    path = root / MANIFEST
    if not path.is_file():
        raise InputError("not a benchmark folder (no manifest.json)", file=str(root))
    data = read_json(path, "bench file", root=root)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", file=str(path))
    parse_model(SplitsFile, {**data, "digests": data.get("digests", _NO_DIGESTS)}, str(path))
    return data


_NO_DIGESTS = {"file": DIGESTS, "sha256": "0" * 64, "files": 0}


def _recorded(root: Path, manifest: dict, found: Findings) -> dict[str, str]:
    """The digests SHA256SUMS lists, checked against the manifest's record of it ({} when unreadable)."""
    entry = manifest.get("digests")
    if entry is None:
        found.add(MANIFEST, "digests", "records no digests of the benchmark's files (built by an older forgeplan, or by hand)")
    elif found.attempt(lambda: parse_model(DigestsEntry, entry, str(root / MANIFEST))) is None:
        entry = None
    data = found.attempt(lambda: read_bytes(root / DIGESTS, "digest file", root=root)) if (root / DIGESTS).is_file() else None
    if data is None:
        if entry is not None:
            found.add(DIGESTS, "", "missing: the manifest names it")
        return {}
    if entry is not None and digest(data) != entry["sha256"]:
        found.add(DIGESTS, "", f"changed since the build (its digest is not the one {MANIFEST} records)")
    sums = found.attempt(lambda: parse_sums(data, str(root / DIGESTS))) or {}
    if entry is not None and len(sums) != entry["files"]:
        found.add(DIGESTS, "", f"lists {len(sums)} files, the manifest {entry['files']}")
    return sums


def _on_disk(root: Path, manifest: dict, sums: dict[str, str], found: Findings) -> dict[str, str]:
    """The digest of every file of the benchmark as it is now; each one that is not the one the build
    recorded, missing, or not written by the build, is a finding."""
    ids = {sid for split in manifest["splits"].values() for sid in split}
    paths = [n for n in CARD_FILES if (root / n).is_file()]
    tasks = root / "tasks"
    for folder in sorted(tasks.iterdir()) if tasks.is_dir() else []:
        if folder.name not in ids:
            found.add(f"tasks/{folder.name}", "", "is not a sample of the manifest")
        elif folder.is_symlink() or not folder.is_dir():
            found.add(f"tasks/{folder.name}", "", "is not a task folder (a symlink or a file)")
        else:
            paths += [f"tasks/{folder.name}/{p.name}" for p in sorted(folder.iterdir())]
    for sid in sorted(ids):
        if not (tasks / sid).is_dir():
            found.add(f"tasks/{sid}", "", "missing: the manifest names the sample")
    disk = {}
    for rel in paths:
        data = found.attempt(lambda: read_bytes(root / rel, "bench file", root=root))
        if data is not None:
            disk[rel] = digest(data)
    for rel in sorted(set(sums) | set(disk)):
        if rel not in disk:
            found.add(rel, "", "missing: the build wrote it (SHA256SUMS lists it)")
        elif rel not in sums:
            found.add(rel, "", "is not a file of the build (SHA256SUMS does not list it)")
        elif sums[rel] != disk[rel]:
            found.add(rel, "", "changed since the build (digest mismatch)")
    return disk


def _derived_manifest(bench: Bench, found: Findings) -> None:
    """The splits and assemblies of a build are those of its records (a derived split keeps its own)."""
    manifest, records = bench.manifest, bench.manifest.get("records", [])
    if not records or "split_mode" in manifest:
        return
    for split, ids in manifest["splits"].items():
        want = [r["sample_id"] for r in records if r["split"] == split]
        if ids != want:
            found.add(MANIFEST, f"splits.{split}", "is not the records' samples of that split, in their order")
    for split, names in (manifest.get("assemblies") or {}).items():
        if names != sorted({r["assembly_id"] for r in records if r["split"] == split}):
            found.add(MANIFEST, f"assemblies.{split}", "is not the records' assemblies of that split")


def _card(bench: Bench, found: Findings) -> None:
    """README.md and tasks.jsonl are what the manifest and the task folders give."""
    from .card import card_files

    names = [n for n in CARD_FILES if (bench.root / n).is_file()]   # a missing one is a finding of _on_disk
    if not names or not bench.manifest.get("records"):
        return
    texts = found.attempt(lambda: card_files(bench.root, bench.manifest))
    for name in names if texts is not None else []:
        data = found.attempt(lambda: read_bytes(bench.root / name, "bench file", root=bench.root))
        if data is None:
            continue
        have = data.decode("utf-8", "replace")
        if have != texts[name]:
            line = next((k for k, (a, b) in enumerate(zip(have.splitlines(), texts[name].splitlines()), 1) if a != b),
                        min(have.count("\n"), texts[name].count("\n")) + 1)
            found.add(name, f"line {line}", "is not what the manifest and the task folders give (derived again)")


def check_samples(bench: Bench, sample_ids: list[str], time_limit: float) -> list[Finding]:
    """One batch of `check_bench`: the findings of each sample."""
    from .sample_check import check_decision_sample, check_rework_sample

    found = Findings(bench.root)
    for sid in sample_ids:
        (check_decision_sample if bench.is_decision(sid) else check_rework_sample)(bench, sid, time_limit, found)
    return list(found)


def report_lines(findings: list[Finding]) -> list[str]:
    return [f.line() for f in findings]


def to_json(findings: list[Finding], samples: int) -> dict:
    return {"samples": samples, "findings": [{"file": f.file, "field": f.field, "problem": f.problem} for f in findings],
            "holds": not findings}


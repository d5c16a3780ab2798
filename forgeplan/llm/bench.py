"""Reading a benchmark folder: DIR/manifest.json (splits) and DIR/tasks/<sample_id>/ (task + reference)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..task import Task, load_task, read_json


def split_ids(bench: Path, split: str) -> list[str]:
    """Sample ids of one split, in manifest order."""
    manifest = read_json(Path(bench) / "manifest.json")
    splits = manifest.get("splits") if isinstance(manifest, dict) else None
    if not isinstance(splits, dict):
        raise InputError("no 'splits' object", file=str(Path(bench) / "manifest.json"), field="splits")
    if split not in splits:
        raise InputError(f"unknown split {split!r}; the manifest has {sorted(splits)}",
                         file=str(Path(bench) / "manifest.json"), field="splits")
    return [str(s) for s in splits[split]]


def task_dir(bench: Path, sample_id: str) -> Path:
    return Path(bench) / "tasks" / sample_id


def load_sample(bench: Path, sample_id: str) -> tuple[Task, dict | None]:
    """The task and its reference.json (None when the folder has none)."""
    folder = task_dir(bench, sample_id)
    task = load_task(folder)
    ref_path = folder / "reference.json"
    return task, (read_json(ref_path) if ref_path.is_file() else None)

"""Reading a benchmark folder: DIR/manifest.json (splits) and DIR/tasks/<sample_id>/ (task + reference)."""

from __future__ import annotations

from pathlib import Path

from ..bench.store import load_sample_task, read_sample_file, sample_folder
from ..io.schema import SplitsFile, parse_model
from ..io.task_files import read_json
from ..model.errors import InputError
from ..semantics.task import Task


def split_ids(bench: Path, split: str) -> list[str]:
    """Sample ids of one split, in manifest order."""
    path = Path(bench) / "manifest.json"
    splits = parse_model(SplitsFile, read_json(path, "bench file", root=Path(bench)), str(path)).splits
    if split not in splits:
        raise InputError(f"unknown split {split!r}; the manifest has {sorted(splits)}",
                         file=str(Path(bench) / "manifest.json"), field="splits")
    return [str(s) for s in splits[split]]


def task_dir(bench: Path, sample_id: str) -> Path:
    return sample_folder(bench, sample_id)


def load_sample(bench: Path, sample_id: str) -> tuple[Task, dict | None]:
    """The task and its reference.json (None when the folder has none)."""
    task = load_sample_task(bench, sample_id)
    has_ref = (task_dir(bench, sample_id) / "reference.json").is_file()
    return task, (read_sample_file(bench, sample_id, "reference.json") if has_ref else None)

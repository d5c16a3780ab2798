"""Reading a benchmark folder for the model side: split ids, and per sample its task and reference, through
the benchmark's one loader (bench.folder: digests and consistency checked)."""

from __future__ import annotations

from pathlib import Path

from ..bench.folder import Bench, open_bench
from ..semantics.task import Task


def split_ids(bench: Path | Bench, split: str) -> list[str]:
    """Sample ids of one split, in manifest order."""
    return open_bench(bench).split(split)


def task_dir(bench: Path | Bench, sample_id: str) -> Path:
    return open_bench(bench).folder(sample_id)


def load_sample(bench: Path | Bench, sample_id: str) -> tuple[Task, dict | None]:
    """The task and its reference.json (None when the build wrote none for it: a decision sample)."""
    bench = open_bench(bench)
    task = bench.task(sample_id)
    return task, (bench.reference(sample_id, task) if bench.has(sample_id, "reference.json") else None)

"""The run directory `evaluate --out DIR` writes beside its report: run.json, samples.jsonl and, when
pyarrow is installed, samples.parquet (the same rows); and its reading back (`compare`, `view`).

run.json: {"bench", "predictions" (absolute paths), "split", "options", "counts": {"samples", "answered",
"extracted"}}. samples.jsonl: one flat row per scored sample (`rows.sample_row`) with the sample's raw
output last, read back from the predictions file one line at a time, so that large outputs are never all
held at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..io.guarded import read_json, read_jsonl, read_jsonl_line
from ..io.output import Staged, staging
from ..io.tables import json_line, parquet_available, witness_order, write_parquet
from ..model.errors import InputError
from .rows import ID_FIELDS, METRIC_COLUMNS

RUN_FILE, SAMPLES_FILE, PARQUET_FILE = "run.json", "samples.jsonl", "samples.parquet"
PARQUET_BATCH = 500


def run_info(bench: Path, predictions: Path, split: str, options: dict, rows: list[dict]) -> dict:
    """run.json's content."""
    return {"bench": str(Path(bench).absolute()), "predictions": str(Path(predictions).absolute()), "split": split,
            "options": options, "counts": {"samples": len(rows), "answered": sum(r["answered"] for r in rows),
                                           "extracted": sum(r["extracted"] for r in rows)}}


@staging
def write_run(info: dict, out: Staged, rows: list[dict], predictions: Path) -> list[Path]:
    """run.json, samples.jsonl and (with pyarrow) samples.parquet into the output folder `out`."""
    where = _line_index(predictions)
    order = witness_order([r | {"raw_output": "" if r["sample_id"] in where else None} for r in rows])
    out.write_text(RUN_FILE, json.dumps(info, indent=1) + "\n")
    with out.open(SAMPLES_FILE) as fh:
        for row in _with_raw((rows[i] for i in order), predictions, where):
            fh.write(json_line(row))
    files = [out.path(RUN_FILE), out.path(SAMPLES_FILE)]
    if parquet_available():
        typed = [r | {"raw_output": "" if r["sample_id"] in where else None} for r in rows]
        with out.open(PARQUET_FILE, "wb") as fh:
            write_parquet(fh, _batches([rows[i] for i in order], predictions, where), typed)
        files.append(out.path(PARQUET_FILE))
    return files


def _line_index(predictions: Path) -> dict[str, tuple[int, int]]:
    """sample_id -> (byte offset, line number) of its prediction."""
    return {row["sample_id"]: (offset, n) for n, offset, row in read_jsonl(predictions, lone_surrogates=True, offsets=True)
            if isinstance(row, dict) and isinstance(row.get("sample_id"), str)}


def _with_raw(rows, predictions: Path, where: dict) -> Iterator[dict]:
    for row in rows:
        at = where.get(row["sample_id"])
        raw = None
        if at is not None:
            line = read_jsonl_line(predictions, at[0], at[1], lone_surrogates=True)
            raw = line.get("raw_output") if isinstance(line, dict) else None
        yield row | {"raw_output": raw if isinstance(raw, str) else None}


def _batches(rows: list[dict], predictions: Path, where: dict) -> Iterator[list[dict]]:
    for k in range(0, len(rows), PARQUET_BATCH):
        yield list(_with_raw(rows[k:k + PARQUET_BATCH], predictions, where))


# ----------------------------------------------------------------------------- reading a run directory

SAMPLES_LINE_BYTES = 4_000_000   # a row holds one raw output (a predictions line: at most 2 MB) and its reason


def read_run(folder: Path) -> tuple[dict, list[dict]]:
    """(run.json, or {} when absent; the rows of samples.jsonl without raw outputs), checked: every row
    has the identity fields with their types and the same metric columns, numbers or null."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("no such run folder (write one with `forgeplan evaluate --out DIR`)", file=str(folder),
                         field="RUN_DIR")
    path = folder / SAMPLES_FILE
    if not path.is_file():
        raise InputError(f"not a run folder: no {SAMPLES_FILE} (write one with `forgeplan evaluate --out DIR`)",
                         file=str(folder), field="RUN_DIR")
    info = read_json(folder / RUN_FILE, "run file") if (folder / RUN_FILE).is_file() else {}
    if not isinstance(info, dict):
        raise InputError("expected a JSON object", file=str(folder / RUN_FILE))
    rows, metrics, seen = [], None, set()
    for n, row in read_jsonl(path, "run samples", max_line=SAMPLES_LINE_BYTES):
        checked = _checked_row(row, str(path), n)
        keys = [k for k in checked if k in METRIC_COLUMNS]
        if metrics is None:
            metrics = keys
        elif keys != metrics:
            raise InputError(f"has the metric columns {keys}, the first row {metrics}", file=str(path), field=f"line {n}")
        if checked["sample_id"] in seen:
            raise InputError(f"sample {checked['sample_id'][:80]!r} appears twice", file=str(path), field=f"line {n}")
        seen.add(checked["sample_id"])
        rows.append(checked)
    if not rows:
        raise InputError("holds no sample", file=str(path))
    return info, rows


_TYPES = {"sample_id": str, "family": str, "split": str, "assembly_id": str, "assembly_family": str,
          "fault_types": list, "stratum": str, "difficulty": str, "answered": bool, "extracted": bool,
          "verdict": str, "reason": str}


def _checked_row(row, file: str, n: int) -> dict:
    """A row without its raw output, or a one-line error naming the line and the field."""
    if not isinstance(row, dict):
        raise InputError("expected a JSON object per line", file=file, field=f"line {n}")
    for key in ID_FIELDS:
        if key not in row:
            raise InputError(f"missing field {key!r}", file=file, field=f"line {n}")
        want = _TYPES.get(key)
        if want is not None and not isinstance(row[key], want):
            raise InputError(f"expected {want.__name__}, got {type(row[key]).__name__}", file=file, field=f"line {n}.{key}")
    for key in METRIC_COLUMNS:
        value = row.get(key)
        if isinstance(value, bool) or not (value is None or isinstance(value, (int, float))):
            raise InputError("expected a number or null", file=file, field=f"line {n}.{key}")
    return {k: v for k, v in row.items() if k in ID_FIELDS or k in METRIC_COLUMNS}

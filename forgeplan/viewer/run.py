"""An evaluate run directory as `view` reads it: run.json, samples.jsonl and the benchmark they name.

The files are untrusted (guarded readers, sizes capped): a row missing a field the page needs is bad
input naming the line and the field; the raw output of a model stays text, cut to MAX_RAW characters.
"""

from __future__ import annotations

from pathlib import Path

from ..io.guarded import read_json, read_jsonl
from ..model.errors import InputError

RUN_FILE, SAMPLES_FILE = "run.json", "samples.jsonl"
MAX_RAW = 20_000          # characters of a raw output kept in the page
ROW_FIELDS = {"sample_id": str, "family": str, "assembly_id": str, "fault_types": list, "verdict": str,
              "reason": str}


def read_run(folder: Path, bench: Path | None = None) -> tuple[dict, list[dict], Path]:
    """(run.json, the rows of samples.jsonl, the benchmark folder: `bench`, else run.json's)."""
    folder = Path(folder)
    if not (folder / SAMPLES_FILE).is_file():
        raise InputError("not an evaluate run folder (no samples.jsonl; `forgeplan evaluate ... --out DIR` writes one)",
                         file=str(folder))
    info = read_json(folder / RUN_FILE, "bench file") if (folder / RUN_FILE).is_file() else {}
    if not isinstance(info, dict):
        raise InputError("expected a JSON object", file=str(folder / RUN_FILE))
    where = bench if bench is not None else info.get("bench")
    if not isinstance(where, str | Path) or not (Path(where) / "manifest.json").is_file():
        raise InputError("names no benchmark folder (give one with --bench)", file=str(folder / RUN_FILE), field="bench")
    rows = [_row(folder / SAMPLES_FILE, n, row) for n, row in read_jsonl(folder / SAMPLES_FILE, lone_surrogates=True)]
    return info, rows, Path(where)


def _row(path: Path, n: int, row) -> dict:
    if not isinstance(row, dict):
        raise InputError("expected a JSON object", file=str(path), field=f"line {n}")
    for key, kind in ROW_FIELDS.items():
        if not isinstance(row.get(key), kind):
            raise InputError(f"expected {kind.__name__}", file=str(path), field=f"line {n}.{key}")
    raw = row.get("raw_output")
    if raw is not None and not isinstance(raw, str):
        raise InputError("expected a string or null", file=str(path), field=f"line {n}.raw_output")
    cut = isinstance(raw, str) and len(raw) > MAX_RAW
    return row | {"raw_output": raw[:MAX_RAW] if isinstance(raw, str) else None, "raw_cut": cut}

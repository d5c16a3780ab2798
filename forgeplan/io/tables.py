"""Row files other tools read as they are: JSONL for pandas and `datasets`, Parquet when pyarrow is installed.

`datasets.load_dataset("json", ...)` types each column from the first block of the file it reads (10 MB)
and fails on a later value of a column that held only nulls (or empty lists) there. So the rows are
written in their own order except that the first rows are the witnesses: for each column, the first row
that has a value in it. Every other row keeps its place; readers that key rows by id see no difference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import IO

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_value(value) -> bool:
    """A value a column's type can be read from: not null, not an empty list."""
    return value is not None and value != []


def witness_order(rows: list[dict]) -> list[int]:
    """Row indices: for each column in order of first appearance, the first row with a value in it, then
    every other row, each group in the original order."""
    first: dict[str, int] = {}
    for i, row in enumerate(rows):
        for key, value in row.items():
            if key not in first and has_value(value):
                first[key] = i
    witnesses = sorted(set(first.values()))
    chosen = set(witnesses)
    return witnesses + [i for i in range(len(rows)) if i not in chosen]


def json_line(row: dict) -> str:
    """One row as a JSONL line, UTF-8 as written; a lone surrogate (an escape no UTF-8 text holds) is
    written as U+FFFD, which every JSON reader accepts."""
    return _LONE_SURROGATE.sub("\ufffd", json.dumps(row, ensure_ascii=False)) + "\n"


def jsonl_text(rows: list[dict]) -> str:
    """The JSONL text of the rows, witnesses first (see the module's docstring)."""
    return "".join(json_line(rows[i]) for i in witness_order(rows))


def parquet_available() -> bool:
    """Whether pyarrow, which writes Parquet, is installed."""
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def write_parquet(sink: IO[bytes], batches: Iterable[list[dict]], columns: list[dict]) -> None:
    """Write the rows (given batch by batch, so that large texts are held one batch at a time) as Parquet to
    the binary file `sink`; `columns` are rows whose values show every column's type (the rows without
    their large texts and one row holding a text). Needs pyarrow (`parquet_available`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.Table.from_pylist(columns).schema
    with pq.ParquetWriter(sink, schema) as writer:
        for batch in batches:
            writer.write_table(pa.Table.from_pylist([_clean(r) for r in batch], schema=schema))


def _clean(row: dict) -> dict:
    return {k: _LONE_SURROGATE.sub("\ufffd", v) if isinstance(v, str) else v for k, v in row.items()}

"""Stored results of `python -m lab`: write one run as docs/results/NAME.json, render them all as markdown.

A stored result is `{"command", "machine", "date", "load", "result"}`: the command that printed it, the
machine it ran on, the UTC date, the load average after the run and what the command printed. The
rendering (`python -m lab report`) is a pure function of the files, so docs/performance.md can be
regenerated and compared byte for byte; it adds no figure of its own.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path

from forgeplan.io.quoting import json_text, markdown_cell

RESULTS = Path("docs") / "results"
REPORT = Path("docs") / "performance.md"
INTRO = ("Figures measured with `python -m lab NAME`, rendered by `python -m lab report` from the files in "
         "`docs/results/` (one per run). Each section states the command, the machine, the date and the load "
         "average (1, 5, 15 minutes) after the run; on a shared machine the load says how noisy the timings are.")


# the headline figures of the known benchmarks, shown first: (label, dotted path into the result)
HEADLINES = {
    "verify": [("engine replay, actions/s (median)", "actions_per_second_median"), ("assembly", "assembly"),
               ("seconds per run (median)", "seconds_median")],
    "solve": [("built-in fault tasks", "builtin.tasks"), ("proved optimal", "builtin.proved_optimal"),
              ("median wall s per task", "builtin.median_s"), ("median CPU s per task", "builtin.median_cpu_s"),
              ("p90 wall s per task", "builtin.p90_s"), ("max wall s per task", "builtin.max_s")],
    "bench": [("tasks", "tasks"), ("worker processes", "jobs"), ("CPU s (median)", "cpu_seconds_median"),
              ("wall s (median)", "wall_seconds_median"), ("peak RSS per worker, MiB", "peak_rss_mib_worker"),
              ("task CPU s, median", "task_cpu.median_seconds"), ("task CPU s, p90", "task_cpu.p90_seconds"),
              ("task CPU s, max", "task_cpu.max_seconds")],
}


def stored(command: str, result, machine: dict | None = None) -> dict:
    """One run in the stored shape, with this machine, today's UTC date and the load average now."""
    info = {"cpus": os.cpu_count(), "machine": platform.machine(), "system": platform.system(),
            "python": platform.python_version(), **(machine or {})}
    return {"command": command, "machine": info,
            "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
            "load": [round(x, 2) for x in os.getloadavg()], "result": result}


def store(folder: Path, name: str, command: str, result) -> Path:
    """Write `folder/NAME.json` (replacing an earlier run of the same benchmark)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json_text(stored(command, result)) + "\n", encoding="utf-8")
    return path


def _value(v) -> str:
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (dict, list)):
        return markdown_cell(json.dumps(v, ensure_ascii=False, separators=(", ", ": ")))
    return markdown_cell(v)


def _scalar(v) -> bool:
    return not isinstance(v, (dict, list)) or (isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(markdown_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _record_table(records: list[dict]) -> list[str]:
    """Rows of records (dicts) as one table; a record's nested values are written as compact JSON."""
    columns: list[str] = []
    for r in records:
        columns += [c for c in r if c not in columns]
    rows = [[_value(r.get(c, "")) for c in columns] for r in records]
    return _table(columns, rows)


def _is_records(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _is_keyed_records(v) -> bool:
    """A dict of dicts of scalars (`{"burr_6": {"tasks": 3, ...}, ...}`): one row per key."""
    return (isinstance(v, dict) and len(v) > 1 and all(isinstance(x, dict) and x for x in v.values())
            and all(_scalar(y) for x in v.values() for y in x.values()))


def _section(title: str, obj, depth: int) -> list[str]:
    """A result (or a part of it) as tables: its scalars in one key/value table, then each nested part."""
    if not isinstance(obj, dict):
        obj = {"value": obj}
    out: list[str] = []
    scalars = [[markdown_cell(k), _value(v)] for k, v in obj.items() if _scalar(v)]
    if scalars:
        out += _table(["figure", "value"], scalars) + [""]
    for k, v in obj.items():
        if _scalar(v):
            continue
        heading = "#" * min(depth, 6) + " " + markdown_cell(f"{title} / {k}")
        if _is_records(v):
            out += [heading, ""] + _record_table(v) + [""]
        elif _is_keyed_records(v):
            out += [heading, ""] + _record_table([{"key": key, **row} for key, row in v.items()]) + [""]
        else:
            out += [heading, ""] + _section(f"{title} / {k}", v, depth + 1)
    return out


def _lookup(obj, path: str):
    for key in path.split("."):
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _headlines(name: str, result) -> list[str]:
    """The known benchmark's headline figures as one table (those its result holds)."""
    rows = [[markdown_cell(label), _value(v)] for label, path in HEADLINES.get(name, [])
            if (v := _lookup(result, path)) is not None]
    return _table(["headline", "value"], rows) + [""] if rows else []


def _run_header(data: dict) -> list[str]:
    machine = data.get("machine")
    machine_text = ", ".join(f"{k} {v}" for k, v in machine.items()) if isinstance(machine, dict) else "not recorded"
    load = data.get("load")
    load_text = " / ".join(str(x) for x in load) if isinstance(load, list) else "not recorded"
    return [f"`{markdown_cell(data.get('command', '?'))}`", "",
            f"machine: {markdown_cell(machine_text)}; date: {markdown_cell(data.get('date', 'not recorded'))}; "
            f"load average: {markdown_cell(load_text)}", ""]


def render(folder: Path) -> str:
    """docs/performance.md from every `*.json` of `folder`, in file-name order."""
    lines = ["# Performance", "", INTRO, ""]
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))  # the project's own files
        lines += [f"## {markdown_cell(path.stem)}", ""] + _run_header(data) + _headlines(path.stem, data.get("result"))
        lines += _section(path.stem, data.get("result"), 3)
    return "\n".join(lines).rstrip("\n") + "\n"

"""Planner configurations on a PDDL suite: problems solved within the time limit, agreement with costs.csv."""

from __future__ import annotations

import csv
import json
import re
import statistics
import time
from pathlib import Path

NAME = "pddl-suite"
# name -> (folder, planner, configuration, the costs.csv column its optimum is checked against)
CONFIGS = {
    "fd-lmcut-strips-costs": ("strips-costs", "fd", "astar(lmcut())", "cost"),
    "fd-lmcut-grounded": ("grounded", "fd", "astar(lmcut())", "cost"),
    "fd-blind-lifted": ("lifted", "fd", "astar(blind())", "cost"),
    "fd-lmcut-lifted": ("lifted", "fd", "astar(lmcut())", "cost"),
    "pyperplan-lmcut-strips": ("strips", "pyperplan", "-s astar -H lmcut", "length"),
    "pyperplan-lmcut-strips-table": ("strips-table", "pyperplan", "-s astar -H lmcut", "cost"),
    "fd-blind-partial": ("partial", "fd", "astar(blind())", "cost"),
    "fd-lmcut-partial": ("partial", "fd", "astar(lmcut())", "cost"),
}


def add_arguments(p) -> None:
    p.add_argument("suite", type=Path, metavar="SUITE", help="a folder written by `bench export --format pddl`")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per planner run")
    p.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=list(CONFIGS), metavar="CONFIG",
                   help=f"planner configurations to run, of {', '.join(CONFIGS)} (default: all)")
    p.add_argument("--limit", type=int, help="only the first N problems (default: every problem)")


def plan_cost(planner: str, text: str, table: dict | None = None) -> int:
    """A plan's cost: Fast Downward's `; cost = N` line, the sum of the table's costs of its steps
    (`strips-table`), or its number of steps (unit costs)."""
    found = re.search(r"; cost = (\d+)", text)
    if planner == "fd" and found:
        return int(found.group(1))
    steps = [line.strip()[1:-1].split()[0] for line in text.splitlines() if line.strip().startswith("(")]
    return sum(table[s] for s in steps) if table is not None else len(steps)


def _run_config(suite: Path, rows: list[dict], config: tuple, time_limit: float) -> dict:
    from forgeplan.planners.pddl.external import solve_files

    folder, planner, search, column = config
    solved, agree, seconds, seconds_solved = [], [], [], []
    codes: dict[str, int] = {}
    for row in rows:
        problem = suite / folder / f"{row['problem']}.pddl"
        if not problem.is_file():  # the lifted folder has no group-move problems
            continue
        domain = suite / folder / ("domain.pddl" if folder == "lifted" else f"{row['problem']}-domain.pddl")
        t0 = time.perf_counter()
        code, text = solve_files(planner, domain, problem, search, time_limit)
        seconds.append(time.perf_counter() - t0)
        codes[str(code)] = codes.get(str(code), 0) + 1
        table = suite / folder / f"{row['problem']}-costs.json"
        costs = json.loads(table.read_text(encoding="utf-8"))["costs"] if table.is_file() else None
        if text is not None:
            solved.append(row["problem"])
            seconds_solved.append(seconds[-1])
            if row[column] != "" and plan_cost(planner, text, costs) == int(row[column]):
                agree.append(row["problem"])
    return {"folder": folder, "planner": planner, "config": search, "checked_against": column,
            "problems": len(seconds), "solved": len(solved), "agree_with_costs_csv": len(agree),
            "disagree": sorted(set(solved) - set(agree)), "exit_codes": codes,
            "median_seconds": round(statistics.median(seconds), 3) if seconds else None,
            "max_seconds": round(max(seconds), 3) if seconds else None,
            "seconds_solved": dict(zip(solved, (round(x, 1) for x in seconds_solved)))}


def run(args) -> dict:
    from forgeplan.model.errors import InputError
    from . import machine

    if not (args.suite / "costs.csv").is_file():
        raise InputError("not a PDDL suite (no costs.csv; write one with `bench export --format pddl`)", file=str(args.suite))
    with (args.suite / "costs.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[: args.limit]
    results = {name: _run_config(args.suite, rows, CONFIGS[name], args.time_limit) for name in args.configs}
    return {"machine": machine(), "suite": str(args.suite), "time_limit": args.time_limit, "configs": results}

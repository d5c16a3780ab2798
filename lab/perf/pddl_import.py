"""Damaged reference plans of a PDDL suite: import-plan's verdict against unified-planning's validator.

For each problem of a suite (`bench export --format pddl`) and each folder it is in, the benchmark's
reference plan as the steps of that folder's problem, and every copy with one step dropped, two adjacent
steps swapped or one repeated (`replay.damaged_copies`). Each copy is judged three ways: unified-planning's
SequentialPlanValidator on the problem as written; import-plan (the plan replayed in the PDDL task, then
mapped and replayed in the engine); and the mapping alone, replayed in the engine, which is what a
valid verdict said before the PDDL replay (`lenient`).
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

NAME = "pddl-import"
FOLDERS = {"lifted": ("full", False), "grounded": ("full", True), "strips-costs": ("strips-costs", True),
           "strips": ("strips", True)}


def add_arguments(p) -> None:
    p.add_argument("suite", type=Path, metavar="SUITE", help="a folder written by `bench export --format pddl`")
    p.add_argument("--bench", type=Path, required=True, metavar="DIR", help="the benchmark the suite was written from")
    p.add_argument("--folders", nargs="+", choices=list(FOLDERS), default=list(FOLDERS), metavar="FOLDER",
                   help=f"folders to check, of {', '.join(FOLDERS)} (default: all)")
    p.add_argument("--limit", type=int, help="only the first N problems (default: every problem)")


def _validator(replay, steps: list[str]) -> bool:
    from unified_planning.engines import ValidationResultStatus
    from unified_planning.plans import SequentialPlan
    from unified_planning.shortcuts import PlanValidator

    from forgeplan.planners.pddl.files import plan_instances

    plan = SequentialPlan([ai for _, ai in plan_instances(replay.writer, "\n".join(steps) + "\n")])
    with PlanValidator(name="sequential_plan_validator") as validator:
        return validator.validate(replay.enc.problem, plan).status == ValidationResultStatus.VALID


def _judge(task, replay, steps: list[str]) -> tuple[bool, bool, bool]:
    """(validator, import-plan, the mapping alone in the engine) on one plan."""
    from forgeplan.planners.pddl.files import plan_instances

    text = "\n".join(steps) + "\n"
    restored = lambda actions: task.world.restoration(task.actual, actions, task.target).restored  # noqa: E731
    _, actions = replay.read(text)
    lenient = restored(replay.enc.decode([ai for _, ai in plan_instances(replay.writer, text)]))
    return _validator(replay, steps), actions is not None and restored(actions), lenient


def _problem(bench: Path, row: dict, folders: list[str], counts: dict) -> None:
    from forgeplan.bench.store import load_sample_task, read_reference
    from forgeplan.io.contract import parse_output
    from forgeplan.planners.pddl.profiles import build_export
    from forgeplan.planners.pddl.replay import Replay, damaged_copies

    task = load_sample_task(bench, row["sample_id"])
    plan = parse_output(json.dumps(read_reference(bench, row["sample_id"], task)), strict=False).actions
    for folder in folders:
        if folder == "lifted" and row["lifted"] != "1":
            continue
        replay = Replay(build_export(task, FOLDERS[folder][0], grounded=FOLDERS[folder][1]))
        steps = replay.steps_of(plan)
        for _, copy in damaged_copies(steps or []):
            up, strict, lenient = _judge(task, replay, copy)
            c = counts[folder]
            c["copies"] += 1
            c["invalid"] += not up
            c["agree"] += up == strict
            c["lenient_accepts_invalid"] += lenient and not up


def run(args) -> dict:
    from forgeplan.model.errors import InputError
    from . import machine

    if not (args.suite / "costs.csv").is_file():
        raise InputError("not a PDDL suite (no costs.csv; write one with `bench export --format pddl`)", file=str(args.suite))
    with (args.suite / "costs.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[: args.limit]
    counts = {f: {"copies": 0, "invalid": 0, "agree": 0, "lenient_accepts_invalid": 0} for f in args.folders}
    t0 = time.perf_counter()
    for row in rows:
        _problem(args.bench, row, args.folders, counts)
    total = {k: sum(c[k] for c in counts.values()) for k in ("copies", "invalid", "agree", "lenient_accepts_invalid")}
    return {"machine": machine(), "suite": str(args.suite), "problems": len(rows), "folders": counts, "total": total,
            "seconds": round(time.perf_counter() - t0, 1)}

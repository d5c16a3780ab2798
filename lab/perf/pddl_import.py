"""Damaged reference plans of a PDDL suite: import-plan's verdict against unified-planning's validator.

For each problem of a suite (`bench export --format pddl`) and each folder it is in, the benchmark's
reference plan as the steps of that folder's problem, and every copy with one step dropped, two adjacent
steps swapped or one repeated (`replay.damaged_copies`). Each copy is judged three ways: the validator;
import-plan (the plan replayed in the PDDL task, then mapped and replayed in the engine); and the mapping
alone, replayed in the engine, which is what a valid verdict said before the PDDL replay (`lenient`).
The validator is unified-planning's SequentialPlanValidator on the problem as written, except in
`partial`, whose derived predicates unified-planning does not read: there it is the PDDL replay itself,
so `agree` counts the copies where the engine confirms the PDDL verdict (the rendering's soundness).
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

NAME = "pddl-import"
FOLDERS = {"lifted": ("full", False), "grounded": ("full", True), "strips-costs": ("strips-costs", True),
           "strips-table": ("strips-table", True), "strips": ("strips", True), "partial": ("full", True)}
COUNTS = ("copies", "invalid", "agree", "lenient_accepts_invalid")


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
    _, actions = replay.read(text)
    lenient = _restored(task, replay.enc.decode([ai for _, ai in plan_instances(replay.writer, text)]))
    return _validator(replay, steps), actions is not None and _restored(task, actions), lenient


def _judge_partial(task, sp, steps: list[str]) -> tuple[bool, bool, bool]:
    """The same in a partial-move problem, the PDDL replay standing in for the validator."""
    from forgeplan.planners.pddl.replay import read_partial
    from forgeplan.planners.pddl.slides import decode

    verdict, actions = read_partial(sp, "".join(f"({s})\n" for s in steps))
    return verdict.valid, actions is not None and _restored(task, actions), _restored(task, decode(sp, steps))


def _restored(task, actions) -> bool:
    return task.world.restoration(task.actual, actions, task.target).restored


def judges(task, plan, row: dict, folder: str):
    """(the reference plan as steps of `folder`'s problem, the judge of a copy), or None when the problem
    is not in that folder (partial-move problems are in `partial` only, `lifted` is for some problems)."""
    from forgeplan.planners.pddl.positions import position_tables
    from forgeplan.planners.pddl.profiles import build_export
    from forgeplan.planners.pddl.replay import Replay
    from forgeplan.planners.pddl.slide_groups import build_group_problem
    from forgeplan.planners.pddl.slides import encode

    if (folder == "partial") != (row["radius"] != "") or folder == "lifted" and row["lifted"] != "1":
        return None
    if folder == "partial":
        sp = build_group_problem(task, position_tables(task, int(row["radius"])))
        return encode(sp, plan), lambda copy: _judge_partial(task, sp, copy)
    replay = Replay(build_export(task, FOLDERS[folder][0], grounded=FOLDERS[folder][1]))
    return replay.steps_of(plan), lambda copy: _judge(task, replay, copy)


def _problem(bench: Path, row: dict, folders: list[str], counts: dict) -> None:
    from forgeplan.bench.store import load_sample_task, read_reference
    from forgeplan.io.contract import parse_output
    from forgeplan.planners.pddl.replay import damaged_copies

    task = load_sample_task(bench, row["sample_id"])
    plan = parse_output(json.dumps(read_reference(bench, row["sample_id"], task)), strict=False).actions
    for folder in folders:
        found = judges(task, plan, row, folder)
        if found is None:
            continue
        steps, judge = found
        for _, copy in damaged_copies(steps or []):
            up, strict, lenient = judge(copy)
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
    counts = {f: dict.fromkeys(COUNTS, 0) for f in args.folders}
    t0 = time.perf_counter()
    for row in rows:
        _problem(args.bench, row, args.folders, counts)
    total = {k: sum(c[k] for c in counts.values()) for k in COUNTS}
    return {"machine": machine(), "suite": str(args.suite), "problems": len(rows), "folders": counts, "total": total,
            "seconds": round(time.perf_counter() - t0, 1)}

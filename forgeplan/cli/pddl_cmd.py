"""`forgeplan export-pddl` and `forgeplan import-plan`: hand a task to any PDDL planner and read its plan back."""

from __future__ import annotations

import sys
from pathlib import Path

from . import EXIT_NEGATIVE, emit_json

OBJECTIVE_HELP = "what the action costs minimise (default: moved-parts,actions, lexicographically)"


def _add_mode(p) -> None:
    from ..pddl import OBJECTIVES

    p.add_argument("--grounded", action="store_true",
                   help="plain STRIPS with action costs (no quantifiers, no conditional effects)")
    p.add_argument("--objective", choices=OBJECTIVES, default=OBJECTIVES[0], help=OBJECTIVE_HELP)


def register(sub) -> None:
    p = sub.add_parser("export-pddl", help="write a task as PDDL (domain.pddl + problem.pddl)")
    p.add_argument("task_dir", type=Path, metavar="TASK_DIR")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write the two files into")
    _add_mode(p)
    p.set_defaults(func=run_export)
    q = sub.add_parser("import-plan", help="map a PDDL planner's plan for an export back to the output contract")
    q.add_argument("task_dir", type=Path, metavar="TASK_DIR")
    q.add_argument("plan_file", type=Path, metavar="PLAN_FILE", help="one '(action args)' per line, ';' comments")
    _add_mode(q)
    q.set_defaults(func=run_import)


def run_export(args) -> int:
    from ..pddl import build_problem, write_pddl
    from ..task import load_task

    enc = build_problem(load_task(args.task_dir), args.objective, grounded=args.grounded)
    domain, problem, *groups = write_pddl(enc, args.out)
    print(f"wrote {domain} and {problem} ({'grounded' if args.grounded else 'lifted'}, "
          f"{len(enc.problem.actions)} actions, objective {args.objective})")
    if enc.groups is not None:
        counts = enc.groups.counts()
        for what, label in (("candidates", "candidate groups"), ("exported", "group moves kept (dominated directions dropped)")):
            print(f"{label} per direction, for separate and for join: "
                  + ", ".join(f"{d} {n}" for d, n in counts[what].items()))
        print(f"the groups are listed in {groups[0]}")
    return 0


def run_import(args) -> int:
    from ..contract import output_json
    from ..diagnosis import diagnose
    from ..errors import InputError
    from ..pddl import build_problem, read_plan
    from ..task import load_task

    task = load_task(args.task_dir)
    enc = build_problem(task, args.objective, grounded=args.grounded)
    try:
        text = args.plan_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", file=str(args.plan_file)) from None
    actions = read_plan(enc, text, str(args.plan_file))
    world = task.world
    emit_json(output_json(task.sample_id, task.assembly.assembly_id, diagnose(world, task.actual, task.target), actions))
    replay = world.replay(task.actual, actions)
    if replay.failure is not None:
        print(f"forgeplan: the plan is illegal: {replay.failure}", file=sys.stderr)
        return EXIT_NEGATIVE
    if not world.equivalent(replay.final, task.target):
        print("forgeplan: the plan does not restore the target: " + "; ".join(world.differences(replay.final, task.target)[:5]),
              file=sys.stderr)
        return EXIT_NEGATIVE
    return 0

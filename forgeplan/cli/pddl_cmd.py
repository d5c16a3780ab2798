"""`forgeplan export-pddl` and `forgeplan import-plan`: hand a task to any PDDL planner and read its plan back."""

from __future__ import annotations

import sys
from pathlib import Path

from ..io.output import output_path
from . import EXIT_NEGATIVE, emit_json

PLANNER_NAMES = {"fd": "Fast Downward", "pyperplan": "pyperplan"}
OBJECTIVE_HELP = ("what the action costs minimise, one of: moved-parts,actions (distinct moved parts, then "
                  "actions; the default) | actions | moved-parts")


def _add_mode(p) -> None:
    from ..model.choices import OBJECTIVES, PROFILES

    p.add_argument("--grounded", action="store_true",
                   help="one parameterless action per grounded action, no quantifiers: STRIPS with negative "
                        "preconditions and action costs; for assemblies that need partial moves also conditional "
                        "effects and derived predicates (the domain's :requirements line lists what an export uses)")
    p.add_argument("--objective", choices=OBJECTIVES, default=None, metavar="OBJECTIVE", help=OBJECTIVE_HELP)
    p.add_argument("--profile", choices=PROFILES, default=PROFILES[0],
                   help="full: as built; strips-costs: grounded, no negative preconditions, :action-costs; "
                        "strips: the same without costs (objective actions), for pyperplan and other STRIPS planners; "
                        "strips-table: strips-costs without cost syntax (no :functions, which pyperplan does not "
                        "read), the action costs in costs.json beside it")
    p.add_argument("--radius", type=int, default=None, metavar="R",
                   help="assemblies that need partial moves only: offsets within R voxels per axis instead of the "
                        "whole position domain (default the whole domain; a smaller problem whose optimum is no proof)")


def register(sub) -> None:
    from ..model.choices import PLANNERS

    p = sub.add_parser(
        "export-pddl", help="write a task as PDDL (domain.pddl + problem.pddl)",
        description="Write a task as a PDDL domain and problem for any external planner. The lifted form uses the "
                    "domain of domains/rework.pddl; --grounded writes one parameterless action per grounded action, "
                    "STRIPS with negative preconditions and action costs, which assemblies that need group moves "
                    "require (for assemblies that need partial moves also conditional effects and derived predicates, "
                    "which Fast Downward's astar(blind()) reads); --profile strips-costs, strips-table and strips "
                    "compile the negative preconditions away for plain STRIPS planners. "
                    "`forgeplan plan-external DIR` runs the Fast Downward that ships with forgeplan on the export.")
    p.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="task folder")
    p.add_argument("--out", type=output_path, required=True, metavar="DIR", help="folder to write the two files into")
    _add_mode(p)
    p.set_defaults(func=run_export)
    q = sub.add_parser(
        "import-plan", help="map a PDDL planner's plan for an export back to the output contract",
        description="Read a plan a PDDL planner wrote for `export-pddl`'s problem (such as the sas_plan of "
                    "`plan-external`), replay it in that PDDL task as unified-planning's plan validator does, and "
                    "only when it is a valid plan there print it as the output contract (JSON) and replay it in the "
                    "engine. Give the same --profile, --grounded, --objective and --radius as the export. Exit 0 when "
                    "the plan restores the target; 1 when a step is not applicable in the PDDL task (the step and its "
                    "false preconditions are named), the plan misses the PDDL goal, or the engine finds it illegal or "
                    "incomplete; 2 on bad input.")
    q.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="task folder the export was written from")
    q.add_argument("plan_file", type=Path, metavar="PLAN_FILE", help="one '(action args)' per line, ';' comments")
    _add_mode(q)
    q.set_defaults(func=run_import)
    r = sub.add_parser(
        "plan-external", help="run Fast Downward or pyperplan on an export and write DIR/sas_plan",
        description="Run a planner on DIR/domain.pddl and DIR/problem.pddl (written by `export-pddl`) and write its "
                    "plan to DIR/sas_plan, ready for `import-plan`: the Fast Downward shipped in the up-fast-downward "
                    "package (`--planner fd`, any profile), or pyperplan (`--planner pyperplan`, which reads the "
                    "`--profile strips` and `--profile strips-table` exports only). The planner runs in a scratch folder and is stopped, with every "
                    "process it started, at the time limit. Any other planner that writes one '(action args)' per "
                    "line works the same way. Exit 0 with a plan, 1 without one.")
    r.add_argument("pddl_dir", type=Path, metavar="DIR", help="folder written by `export-pddl`")
    r.add_argument("--planner", choices=sorted(PLANNERS), default="fd", help="the planner to run (default fd)")
    r.add_argument("--config", "--search", dest="config", default=None,
                   help="the planner's options: Fast Downward's --search (default "
                        f"{PLANNERS['fd'][1]}, optimal for action costs), pyperplan's flags (default "
                        f"'{PLANNERS['pyperplan'][1]}', optimal in plan length)")
    r.add_argument("--time-limit", type=float, default=300.0, metavar="S", help="seconds (default 300)")
    r.set_defaults(func=run_external, writes_inside=("sas_plan",))


def _partial_rendering(task) -> bool:
    """Does the registry give this task the partial-move rendering (SEMANTICS §9)?"""
    from ..planners.registry import renders_partial_moves

    return renders_partial_moves(task)


def run_export(args) -> int:
    from ..io.output import output_folder
    from ..planners.pddl.files import requirements, write_pddl
    from ..planners.pddl.profiles import build_export
    from ..io.task_files import load_task

    output_folder(args.out, create=False)
    task = load_task(args.task_dir)
    if _partial_rendering(task):
        from ..planners.pddl.partial_files import export_partial
        from ..planners.pddl.profiles import profile_objective

        domain, problem, summary = export_partial(task, args.out, profile_objective(args.profile, args.objective),
                                                  args.grounded, args.profile, args.radius)
        print(f"wrote {domain} and {problem} ({summary})")
        print(f"requirements: {' '.join(requirements(domain.read_text(encoding='utf-8')))}")
        return 0
    enc = build_export(task, args.profile, args.objective, grounded=args.grounded)
    domain, problem, *more = write_pddl(enc, args.out)
    print(f"wrote {domain} and {problem} (profile {args.profile}, {'grounded' if enc.grounded else 'lifted'}, "
          f"{len(enc.problem.actions)} actions, objective {enc.objective})")
    print(f"requirements: {' '.join(requirements(domain.read_text(encoding='utf-8')))}")
    groups = [p for p in more if p.name == "groups.json"]
    if enc.costs is not None:
        print(f"the action costs are in {more[0]} (a plan costs the sum of its actions' costs)")
    if enc.groups is not None:
        counts = enc.groups.counts()
        for what, label in (("candidates", "candidate groups"), ("exported", "group moves kept (dominated directions dropped)")):
            print(f"{label} per direction, for separate and for join: "
                  + ", ".join(f"{d} {n}" for d, n in counts[what].items()))
        print(f"the groups are listed in {groups[0]}")
    return 0


def run_import(args) -> int:
    """Replay the plan in the PDDL task it was written for, map it to the contract, judge it in the engine."""
    from ..io.contract import output_json
    from ..semantics.diagnosis import diagnose
    from ..io.guarded import read_text
    from ..io.quoting import one_line
    from ..io.task_files import load_task

    task = load_task(args.task_dir)
    verdict, actions = _read_imported(task, read_text(args.plan_file, "plan file"), args)
    if actions is None:
        print(f"forgeplan: {one_line(verdict.reason())}", file=sys.stderr)
        return EXIT_NEGATIVE
    world = task.world
    emit_json(output_json(task.sample_id, task.assembly.assembly_id, diagnose(world, task.actual, task.target), actions))
    replay = world.restoration(task.actual, actions, task.target)
    if replay.failure is not None:
        print(f"forgeplan: the plan is illegal: {one_line(replay.failure)}", file=sys.stderr)
        return EXIT_NEGATIVE
    if not replay.restored:
        print("forgeplan: the plan does not restore the target: "
              + one_line("; ".join(world.differences(replay.final, task.target)[:5])), file=sys.stderr)
        return EXIT_NEGATIVE
    return 0


def _read_imported(task, text: str, args):
    """(the plan's verdict in the export's PDDL task, its forgeplan actions when valid there)."""
    from ..planners.pddl.profiles import build_export, profile_objective

    if _partial_rendering(task):
        from ..planners.pddl.partial_files import read_partial_plan

        return read_partial_plan(task, text, str(args.plan_file), profile_objective(args.profile, args.objective),
                                 args.grounded, args.profile, args.radius)
    from ..planners.pddl.replay import Replay

    return Replay(build_export(task, args.profile, args.objective, grounded=args.grounded)).read(text, str(args.plan_file))


def run_external(args) -> int:
    """Run the chosen planner on the export's two files and keep its plan as DIR/sas_plan."""
    from ..io.output import check_output, write_text
    from ..model.errors import InputError
    from ..planners.pddl.external import PLANNERS, solve_files
    from ..planners.pddl.fd import FD_MAX_TIMEOUT

    if not args.time_limit > 0:
        raise InputError("must be a positive number of seconds", field="--time-limit")
    timeout = args.time_limit if args.time_limit <= FD_MAX_TIMEOUT else None  # larger: no limit
    domain, problem = args.pddl_dir / "domain.pddl", args.pddl_dir / "problem.pddl"
    for f in (domain, problem):
        if not f.is_file():
            raise InputError("not found; expected the folder written by `forgeplan export-pddl`", file=str(f))
    config = args.config or PLANNERS[args.planner][1]
    plan = check_output(args.pddl_dir / "sas_plan")
    if plan.is_dir():
        raise InputError("is a folder; expected the place of the plan file to write", file=str(plan))
    plan.unlink(missing_ok=True)   # no earlier plan may pass for this run's
    code, text = solve_files(args.planner, domain, problem, config, timeout)
    name = PLANNER_NAMES[args.planner]
    if code is None:
        print(f"forgeplan: {name} found no plan within {args.time_limit:g} s", file=sys.stderr)
        return EXIT_NEGATIVE
    if text is None:
        hint = {"pyperplan": " (pyperplan reads the `export-pddl --profile strips` and `--profile strips-table` "
                             "exports only)",
                "fd": " (the lifted export has axioms, which lmcut does not support: export with --grounded, "
                      "or give --config 'astar(blind())')" if code == 34 else ""}[args.planner]
        print(f"forgeplan: {name} wrote no plan (exit {code}){hint}", file=sys.stderr)
        return EXIT_NEGATIVE
    write_text(plan, text)
    steps = [x for x in text.splitlines() if x.startswith("(")]
    print(f"wrote {plan} ({len(steps)} actions; {name}, {config})")
    return 0

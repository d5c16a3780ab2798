"""`forgeplan crosscheck PATH`: the proving planner and its cross-check must reach the same optimum on every task."""

from __future__ import annotations

from pathlib import Path

from ..model.limits import CHECK_MEMORY_MB
from . import EXIT_NEGATIVE, emit_json, seconds

MAX_EXTRA_STEPS = 50   # the grounding grows with the horizon: a bound on what one flag can ask of clingo
DEFAULT_TIME_LIMIT = 600.0   # seconds per planner per task: every run ends (docs/limits.md)


def register(sub) -> None:
    from ..model.choices import OBJECTIVES
    from .bench_cmd import add_executor_arguments

    objectives = list(OBJECTIVES)

    p = sub.add_parser(
        "crosscheck", help="compare the proving planner's optimal plans with an independent planner's on tasks",
        description="Solve each task twice, with the planner that proves references (clingo; the moved-set search "
                    "where partial moves are in play) and with an independent one (Fast Downward's optimal search on "
                    "the PDDL export; where partial moves are in play clingo on encodings/partial_check.lp, over the "
                    "smallest box of offsets and the shortest horizon that hold the first plan), and compare the "
                    "optima (distinct moved parts, actions). Both plans are replayed in the engine. Exit 0 when "
                    "every task agrees (or is unknown after a time limit), 1 on a disagreement, 2 on bad input.")
    p.add_argument("path", type=Path, metavar="PATH", help="a task folder, or a folder with task folders at any depth")
    p.add_argument("--limit", type=int, metavar="N", help="check only the first N tasks (path order)")
    p.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, metavar="S",
                   help="seconds per planner per task, grounding included, then: unknown ('inf': none; the "
                        f"partial-move checker also stops at {CHECK_MEMORY_MB:,} MB)")
    p.add_argument("--objective", choices=objectives, default=objectives[0], metavar="OBJECTIVE",
                   help="what both planners minimise, one of: " + " | ".join(objectives) + f" (default: {objectives[0]})")
    p.add_argument("--extra-steps", type=int, default=0, metavar="K",
                   help="partial moves: the checker's horizon is the first plan's length plus K, so plans up to K "
                        "steps longer (which may move fewer parts) are covered too (default 0; each step costs time)")
    p.add_argument("--json", action="store_true", help="print every comparison and the summary as JSON")
    p.add_argument("--jobs", type=int, default=1, help="tasks compared at a time (worker processes or Ray CPUs)")
    add_executor_arguments(p)
    p.set_defaults(func=run)


def _plan(side) -> str:
    if side.plan is None:
        return f"{side.planner}: no plan ({side.status})"
    return f"{side.planner} [{side.status}, J={side.moved_parts}, c={side.actions}]: " + (", ".join(map(str, side.plan)) or "(empty)")


def run(args) -> int:
    from ..planners.crosscheck import crosscheck, summary
    from ..model.errors import InputError

    if args.limit is not None and args.limit < 1:
        raise InputError("must be a positive number of tasks", field="--limit")
    if args.jobs < 1:
        raise InputError(f"must be at least 1, got {args.jobs}", field="--jobs")
    if not 0 <= args.extra_steps <= MAX_EXTRA_STEPS:
        raise InputError(f"must be 0 to {MAX_EXTRA_STEPS} steps, got {args.extra_steps}", field="--extra-steps")
    done = []
    time_limit = None if args.time_limit == float("inf") else args.time_limit
    for c in crosscheck(args.path, limit=args.limit, time_limit=time_limit, objective=args.objective,
                        jobs=args.jobs, executor=args.executor, address=args.address, extra_steps=args.extra_steps):
        done.append(c)
        if not args.json:
            ratio = "-" if c.ratio is None else f"{c.ratio:.1f}x"
            print(f"{c.verdict:8s} {c.task_id}: {c.reason} ({c.prover.planner} {c.prover.seconds:.2f}s, "
                  f"{c.checker.planner} {c.checker.seconds:.2f}s, ratio {ratio})", flush=True)
            if c.verdict == "disagree":
                print(f"         {c.path}\n         {_plan(c.prover)}\n         {_plan(c.checker)}", flush=True)
    total = summary(done)
    if args.json:
        emit_json({"comparisons": [c.to_json() for c in done], "summary": total})
    else:
        print(f"{total['agree']} agree, {total['disagree']} disagree, {total['unknown']} unknown of {total['tasks']} tasks; "
              f"median time ratio checker / prover: {total['median_ratio_checker_over_prover']}")
    return EXIT_NEGATIVE if total["disagree"] else 0

"""`forgeplan solve | closure | facts TASK_DIR`: clingo references, the dependency closure, the ASP facts."""

from __future__ import annotations

from pathlib import Path

from ..io.quoting import one_line
from . import EXIT_NEGATIVE, emit_json

ALL_OPTIMAL_TIME_LIMIT = 60.0  # enumeration can take hours on large assemblies: bounded unless asked


def register(sub) -> None:
    from ..model.choices import OBJECTIVES

    p = sub.add_parser(
        "solve", help="a recovery plan proved minimal by clingo (output contract + proof)",
        description="Find a recovery plan with clingo and prove it minimal over all plan lengths (by default "
                    "the fewest distinct moved parts, then the fewest actions). Prints the plan with steps "
                    "numbered from 1, or with --json the output contract plus a `proof` object; `verify` accepts "
                    "that file. Exit 0 with a plan, 1 when no plan exists or none was found in time.")
    p.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="task folder")
    p.add_argument("--objective", default="moved-parts,actions", choices=list(OBJECTIVES), metavar="OBJECTIVE",
                   help=" | ".join(OBJECTIVES) + ": distinct moved parts then actions (default), "
                   "moved parts only, or actions only")
    p.add_argument("--json", action="store_true", help="print the output contract with the proof object")
    p.add_argument("--time-limit", type=float, metavar="S", help="stop after S seconds of wall time (any positive "
                   "number, 'inf' for none; one grounding step may overshoot it); the best plan is then reported "
                   "with optimal: false")
    p.add_argument("--all-optimal", action="store_true", help="count the optimal plans and list them (time limit "
                   f"{ALL_OPTIMAL_TIME_LIMIT:g} s unless --time-limit is given)")
    p.add_argument("--max-plans", type=int, default=100, metavar="N", help="list at most N optimal plans (default 100)")
    p.set_defaults(func=run_solve)

    c = sub.add_parser(
        "closure", help="the dependency closure of a task's faults",
        description="List the dependency closure of a task's faulty parts: every part that may have to move to "
                    "reach them: the parts that block it along any removal direction, the parts it rests on and "
                    "the engaged locks that hold it, transitively. It bounds what a repair can need, so it is usually larger than what the "
                    "minimal plan of `solve` actually moves. (Over-disassembly is moving a part no optimal plan moves; "
                    "`verify` falls back to this closure only where the optimal plans are not enumerated.)")
    c.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="task folder")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(func=run_closure)

    f = sub.add_parser("facts", help="print the ASP facts of a task",
                       description="Print the ASP facts clingo reads for a task (parts, blocking, locks, the faulty "
                                   "and target states); the predicates are documented at the top of encodings/*.lp.")
    f.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="task folder")
    f.set_defaults(func=run_facts)


def run_solve(args) -> int:
    from ..planners.reference import reference_output
    from ..planners.result import Status
    from ..planners.registry import solve
    from ..model.errors import InputError
    from ..io.task_files import load_task

    if args.max_plans < 1:
        raise InputError("must be at least 1", field="--max-plans")
    task = load_task(args.task_dir)
    limit = ALL_OPTIMAL_TIME_LIMIT if args.all_optimal and args.time_limit is None else args.time_limit
    result = solve(task, args.objective, limit, args.all_optimal, args.max_plans)
    if args.json:
        emit_json(reference_output(task, result))
    else:
        print("\n".join(one_line(line) for line in _summary(result, args.all_optimal).split("\n")))
    return 0 if result.status in (Status.OPTIMAL, Status.FEASIBLE) else EXIT_NEGATIVE


def _summary(r, all_optimal: bool = False) -> str:
    by = " and the engine search" if r.proved_by == "engine-search" else ""
    head = {"optimal": f"optimal ({r.objective}; proof: {r.proof}{by})",
            "feasible": ("feasible: fewest moved parts proved over every plan; fewest actions proved over the grounded "
                         "partial-move universe only (SEMANTICS §9 \"One universe\")" if r.grounded_optimal else
                         "feasible: best plan found within the time limit, optimality NOT proved"),
            "unsolvable": f"unsolvable: no plan of any length restores the target (proof: {r.proof})",
            "timeout": "timeout: no plan found within the time limit"}[r.status.value]
    lines = [head]
    if r.status.value in ("optimal", "feasible"):
        lines.append(f"moved parts {r.moved_parts}, actions {r.actions}, lower bound on moved parts "
                     f"{r.lower_bound}, horizon {r.horizon}, {r.seconds:.3f} s")
        lines += [f"  {k + 1:3d}. {a}" for k, a in enumerate(r.plan)]
    if r.n_optimal is None and r.status.value == "optimal" and all_optimal:
        lines.append("optimal plans not counted: the enumeration reached the time limit")
    if r.n_optimal is not None:
        lines.append(f"{r.n_optimal} optimal plans" + (f" ({len(r.optimal_plans)} listed in --json)" if r.optimal_plans else ""))
    lines.append(f"closure: {', '.join(r.closure) or '(empty)'}")
    return "\n".join(lines)


def run_closure(args) -> int:
    from ..semantics.closure import dependency_closure
    from ..semantics.diagnosis import faulty_slots
    from ..io.task_files import load_task

    task = load_task(args.task_dir)
    world = task.world
    faulty = faulty_slots(world, task.actual, task.target)
    closure = [world.ids[i] for i in dependency_closure(world, task.actual, faulty)]
    if args.json:
        emit_json({"sample_id": task.sample_id, "faulty": [world.ids[i] for i in faulty], "closure": closure})
    else:
        print("\n".join(one_line(p) for p in closure))
    return 0


def run_facts(args) -> int:
    from ..planners.asp.facts import task_facts
    from ..io.task_files import load_task

    print(task_facts(load_task(args.task_dir)).text, end="")
    return 0

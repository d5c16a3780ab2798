"""The prover vs Fast Downward: solve time per task at the same proved optimum (built-in and scaling
assemblies), or (`--tier N`) what the cross-check reaches on the expert tier of an N-task build: the
tasks whose references the moved-set search proves (SEMANTICS §9), each checked by clingo
(`encodings/partial_check.lp`) over the box and the horizon that hold the search's plan."""

from __future__ import annotations

import statistics

from . import machine

NAME = "crosscheck"


def stored_name(args) -> str:
    """`--tier` measures another thing than the built-in comparison: it is stored as crosscheck-tier.json."""
    return f"{NAME}-tier" if args.tier is not None else NAME


def add_arguments(p) -> None:
    p.add_argument("--runs", type=int, default=3, help="repetitions per task (median reported)")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds per planner per run")
    p.add_argument("--fault", default="missing_part", help="fault type of the one task per built-in assembly")
    p.add_argument("--sizes", default="10,20,40", help="parts of the synthetic chain assemblies")
    p.add_argument("--depth", type=int, default=4, help="blocking-chain depth of the synthetic assemblies")
    p.add_argument("--tier", type=int, default=None, metavar="N",
                   help="instead: the expert tier of an N-task build (`--seed`), one comparison per task")
    p.add_argument("--seed", type=int, default=42, help="seed of the build whose tier --tier checks (default 42)")


def _row(group: str, task, runs: int, time_limit: float) -> dict:
    from forgeplan.planners.crosscheck import compare_task

    comps = [compare_task(task, time_limit=time_limit) for _ in range(runs)]
    cl = statistics.median(c.prover.seconds for c in comps)
    fd = statistics.median(c.checker.seconds for c in comps)
    own = [c.checker.own_seconds for c in comps if c.checker.own_seconds is not None]
    last = comps[-1]
    return {"group": group, "task": task.sample_id, "parts": len(task.world.ids),
            "verdicts": sorted({c.verdict for c in comps}), "moved_parts": last.checker.moved_parts, "actions": last.checker.actions,
            "clingo_seconds": round(cl, 4), "fd_seconds": round(fd, 4),
            "fd_planner_seconds": round(statistics.median(own), 4) if own else None,
            "ratio_fd_over_clingo": round(fd / cl, 2) if cl else None}


def _summary(rows: list[dict]) -> dict:
    agreed = [r for r in rows if r["verdicts"] == ["agree"]]
    med = lambda key: round(statistics.median(r[key] for r in agreed), 4) if agreed else None  # noqa: E731
    return {"tasks": len(rows), "agree": len(agreed), "median_clingo_seconds": med("clingo_seconds"),
            "median_fd_seconds": med("fd_seconds"), "median_fd_planner_seconds": med("fd_planner_seconds"),
            "median_ratio_fd_over_clingo": med("ratio_fd_over_clingo")}


def _tier_row(task, time_limit: float) -> dict:
    from forgeplan.planners.crosscheck import compare_task

    c = compare_task(task, time_limit=time_limit)
    p, k = c.prover, c.checker
    return {"task": task.sample_id, "verdict": c.verdict, "reason": c.reason, "prover": p.planner,
            "prover_status": p.status, "prover_value": [p.moved_parts, p.actions], "checker_status": k.status,
            "checker_value": [k.moved_parts, k.actions], "checker_valid": k.valid, "box": k.box, "horizon": k.horizon,
            "checker": k.planner, "finished": k.exhausted, "prover_seconds": round(p.seconds, 3),
            "checker_seconds": round(k.seconds, 3)}


def run_tier(args) -> dict:
    """Every expert-tier task of the build's plan, made as the build makes it, then cross-checked."""
    import os

    from forgeplan.bench.generate import build_task
    from forgeplan.model.state import Tolerances
    from .tier import tier_slots

    rows = [_tier_row(build_task(slot, asm, args.seed, Tolerances())[0], args.time_limit)
            for slot, asm in tier_slots(args.tier, args.seed)]
    done = [r for r in rows if r["finished"]]
    return {"benchmark": "crosscheck", "tier_of": args.tier, "seed": args.seed, "time_limit": args.time_limit,
            "tasks": len(rows), "finished": len(done), "finished_share": round(len(done) / len(rows), 3) if rows else None,
            "verdicts": {v: sum(r["verdict"] == v for r in rows) for v in ("agree", "disagree", "unknown")},
            "median_checker_seconds_finished": round(statistics.median(r["checker_seconds"] for r in done), 3) if done else None,
            "finished_means": "the checker completed its search within the time limit (its optimum, or no plan, over "
                              "the plans of at most `horizon` steps inside `box`)",
            "rows": rows, "load_average": [round(x, 2) for x in os.getloadavg()], **machine()}


def run(args) -> dict:
    if args.tier is not None:
        return run_tier(args)
    from forgeplan.io.catalog import load_assembly
    from forgeplan.semantics.faults import FaultSpec, candidates, make_task
    from forgeplan.library import BUILTIN
    from forgeplan.bench.synthetic import chain_task
    from forgeplan.semantics.grounded import Capability, assembly_capabilities
    from forgeplan.semantics.engine import World
    from forgeplan.model.state import Tolerances

    rows = []
    for asm_id in BUILTIN:
        asm = load_assembly(asm_id)
        if Capability.SLIDES in assembly_capabilities(asm):   # the tier's cross-check is `--tier`
            continue
        if candidates(World(asm, Tolerances()), args.fault):
            rows.append(_row("builtin", make_task(asm, [FaultSpec(args.fault)], seed=0), args.runs, args.time_limit))
    for n in (int(x) for x in args.sizes.split(",")):
        rows.append(_row("synthetic", chain_task(n, args.depth), args.runs, args.time_limit))
    return {"benchmark": "crosscheck", "runs": args.runs, "fault": args.fault, "time_limit": args.time_limit,
            "fd_time": "fd_seconds: wall time of unified-planning's solve() on the expanded problem (write PDDL, start "
                       "Fast Downward, translate, search); fd_planner_seconds: Fast Downward's own 'Planner time'",
            "clingo_time": "SolveResult.seconds of forgeplan.planners.asp.solve.solve_task",
            "builtin": _summary([r for r in rows if r["group"] == "builtin"]),
            "synthetic": _summary([r for r in rows if r["group"] == "synthetic"]),
            "rows": rows, "target_ratio": 10, **machine()}

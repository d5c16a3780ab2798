"""Partial-move disassembly of real puzzles: time per puzzle against its level, the plan replayed, the level compared with the file's."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from . import machine

NAME = "partial"


def add_arguments(p) -> None:
    p.add_argument("--data", type=Path, default=None,
                   help="folder of voxel JSON puzzles (default: the example burrs shipped with forgeplan)")
    p.add_argument("--runs", type=int, default=3,
                   help="disassembly runs per puzzle, cross-check runs per task (medians reported; default 3)")
    p.add_argument("--crosscheck", type=float, default=None, metavar="S",
                   help="also cross-check every rework task with the registry's cross-checking planner (clingo on "
                        "encodings/partial_check.lp), S seconds each (JSON section `crosscheck`)")
    p.add_argument("--crosscheck-tasks", type=int, default=None, metavar="N",
                   help="with --crosscheck: the first N rework tasks of each puzzle (default all)")
    p.add_argument("--proof", action="store_true", help="also prove the minimal rework of every single fault "
                   "(moved-set search, SEMANTICS §9): per puzzle and fault type the proof time, status, J and c")
    p.add_argument("--proof-limit", type=float, default=30.0, metavar="S",
                   help="time limit of each proof in seconds (default 30); an unfinished proof is reported as such")
    p.add_argument("--asp", action="store_true", help="also solve every single fault with clingo (encodings/partial.lp) "
                   "and compare with the moved-set search (JSON section `asp`; references are not affected)")
    p.add_argument("--asp-radius", type=int, default=1, metavar="R",
                   help="with --asp: offsets within R voxels per axis (default 1); every claim is about that box")
    p.add_argument("--asp-horizon", type=int, default=12, metavar="H", help="with --asp: the largest horizon (default 12)")
    p.add_argument("--asp-limit", type=float, default=60.0, metavar="S",
                   help="with --asp: seconds per task for clingo, and again for the search (default 60)")
    p.add_argument("--asp-tasks", type=int, default=None, metavar="N", help="with --asp: the first N tasks per fault type")
    p.add_argument("--asp-builtin", action="store_true",
                   help="with --asp: also the built-in assemblies that need partial moves (burr_6_level4/5)")


def _disassemble_fresh(asm):
    """One disassembly from cold caches, so every run pays for its gap computations."""
    from forgeplan.geometry.displacement import shapes
    from forgeplan.geometry.partial import disassemble_partial

    shapes.cache_clear()
    disassemble_partial.cache_clear()
    t0 = time.perf_counter()
    tree = disassemble_partial(asm)
    return tree, time.perf_counter() - t0


FAULTS = ("missing_part", "wrong_orientation", "misplacement", "under_insertion")


def _rework(asm) -> dict:
    """Every single fault of every part that can carry it: does the repair search's plan replay to the
    target, and how long is it (actions, moved parts)? Not minimal: `--proof` adds the proved ones."""
    from forgeplan.model.actions import moved_parts
    from forgeplan.planners.registry import feasible_plan
    from forgeplan.semantics.faults import FaultSpec, candidates, make_task

    world = make_task(asm, []).world
    rows = []
    for ftype in FAULTS:
        for i in candidates(world, ftype):
            task = make_task(asm, [FaultSpec(ftype, world.ids[i])])
            t0 = time.perf_counter()
            plan = feasible_plan(task)
            seconds = time.perf_counter() - t0
            ok = plan is not None and task.world.restoration(task.actual, plan, task.target).restored
            rows.append({"fault": ftype, "part_id": world.ids[i], "valid": ok, "seconds": round(seconds, 4),
                         "actions": None if plan is None else len(plan),
                         "moved_parts": None if plan is None else len(moved_parts(plan))})
    valid = [r for r in rows if r["valid"]]
    return {"tasks": len(rows), "valid": len(valid),
            "actions": {"median": statistics.median(r["actions"] for r in valid), "max": max(r["actions"] for r in valid)}
            if valid else None, "seconds_max": max((r["seconds"] for r in rows), default=None), "rows": rows}


def _proofs(asm, limit: float) -> dict:
    """Per fault type: every single fault's minimal rework from the moved-set search, with its status
    (optimal = every smaller moved set exhausted; feasible = best plan found; timeout = none)."""
    from forgeplan.planners.registry import solve as solve_task
    from forgeplan.semantics.faults import FaultSpec, candidates, make_task

    world = make_task(asm, []).world
    out = {}
    for ftype in FAULTS:
        rows = []
        for i in candidates(world, ftype):
            task = make_task(asm, [FaultSpec(ftype, world.ids[i])])
            r = solve_task(task, time_limit=limit)
            rows.append({"part_id": world.ids[i], "status": r.status.value, "proof": r.proof, "J": r.moved_parts,
                         "c": r.actions, "seconds": round(r.seconds, 3)})
        proved = [r["seconds"] for r in rows if r["status"] == "optimal"]
        out[ftype] = {"tasks": len(rows), "proved": len(proved),
                      "median_seconds_proved": round(statistics.median(proved), 3) if proved else None,
                      "median_seconds_all": round(statistics.median(r["seconds"] for r in rows), 3) if rows else None,
                      "rows": rows}
    return out


def _crosscheck(asm, time_limit: float, first: int | None, runs: int) -> dict:
    """The registry's cross-check on every single-fault rework task of a puzzle (`planners.crosscheck.compare_task`:
    the checker's optimum replayed in the engine, against the proving planner, the moved-set search). Each
    task runs `runs` times; its checker seconds are the median (plans and verdicts of the first run)."""
    from forgeplan.planners.crosscheck import compare_task
    from forgeplan.semantics.faults import FaultSpec, candidates, make_task

    world = make_task(asm, []).world
    rows = []
    for ftype, i in [(ftype, i) for ftype in FAULTS for i in candidates(world, ftype)][:first]:
        task = make_task(asm, [FaultSpec(ftype, world.ids[i])])
        c = compare_task(task, time_limit=time_limit)
        k, other = c.checker, c.prover
        seconds = [k.seconds] + [compare_task(task, time_limit=time_limit).checker.seconds for _ in range(max(1, runs) - 1)]
        rows.append({"fault": ftype, "part_id": world.ids[i], "verdict": c.verdict, "reason": c.reason,
                     "checker": k.planner, "checker_status": k.status, "box": k.box, "horizon": k.horizon,
                     "checker_seconds": round(statistics.median(seconds), 3), "checker_value": [k.moved_parts, k.actions],
                     "checker_valid": k.valid, "other": other.planner, "other_status": other.status,
                     "other_value": [other.moved_parts, other.actions]})
    finished = [r for r in rows if r["checker_status"] in ("optimal", "no-plan")]
    return {"tasks": len(rows), "finished": len(finished),
            "verdicts": {v: sum(r["verdict"] == v for r in rows) for v in ("agree", "disagree", "unknown")},
            "checker_seconds_median": statistics.median(r["checker_seconds"] for r in finished) if finished else None,
            "rows": rows}


def _row(path: Path, runs: int, proof_limit: float | None = None) -> dict:
    from forgeplan.geometry.displacement import replay_moves
    from forgeplan.io.guarded import read_json
    from forgeplan.io.importers import import_puzzle

    asm = import_puzzle(path)
    recorded = str(read_json(path, "puzzle file").get("level", ""))
    times, tree = [], None
    for _ in range(max(1, runs)):
        tree, seconds = _disassemble_fresh(asm)
        times.append(seconds)
    steps = [m.to_json() for m in tree.steps()]
    level = tree.level() or None
    replay = replay_moves(asm, steps)
    together = sorted(sorted(c) for c in replay.components if len(c) > 1)
    return {"puzzle": path.name, "parts": len(asm.parts), "voxels": sum(len(p.voxels) for p in asm.parts),
            "level": level, "recorded_level": recorded or None,
            "first_separation_matches": level is not None and level.split(".")[0] == recorded.split(".")[0],
            "level_matches": level == recorded, "first_separation_moves": len(tree.moves),
            "moves": len(steps), "slides": sum(1 for s in steps if s["distance"] != "out"),
            "states_searched": tree.states(), "inseparable": [list(s) for s in tree.stuck_sets()],
            "replays": replay.executed == len(steps) and together == sorted(sorted(s) for s in tree.stuck_sets()),
            "rework": _rework(asm) if level not in (None, "1") and not tree.stuck_sets() else None,
            "proofs": _proofs(asm, proof_limit) if proof_limit is not None and level not in (None, "1")
            and not tree.stuck_sets() else None, "seconds": round(statistics.median(times), 4),
            "seconds_all": [round(t, 4) for t in times]}


def _proof_summary(rows: list[dict]) -> dict:
    """Per puzzle: proved / tasks and the median proof time of the proved ones, every fault type together."""
    out = {}
    for r in rows:
        if r["proofs"]:
            tasks = [t for f in r["proofs"].values() for t in f["rows"]]
            proved = [t["seconds"] for t in tasks if t["status"] == "optimal"]
            out[r["puzzle"]] = {"tasks": len(tasks), "proved": len(proved),
                                "median_seconds_proved": round(statistics.median(proved), 3) if proved else None,
                                "median_seconds_all": round(statistics.median(t["seconds"] for t in tasks), 3)}
    return out


def run(args) -> dict:
    from forgeplan.io.resources import examples_dir

    folder = args.data or examples_dir()
    limit = args.proof_limit if args.proof else None
    rows = [_row(p, args.runs, limit) for p in sorted(Path(folder).glob("*.json"))]
    checked = None
    if args.crosscheck is not None:
        from forgeplan.io.importers import import_puzzle

        checked = {r["puzzle"]: _crosscheck(import_puzzle(Path(folder) / r["puzzle"]), args.crosscheck,
                                            args.crosscheck_tasks, args.runs)
                   for r in rows if r["rework"] is not None}
    asp = _asp(args, folder, rows) if args.asp else None
    by_level = {}
    for r in rows:
        if r["level"] is not None and r["level"] != "1":
            by_level[r["puzzle"]] = {"first": r["first_separation_moves"], "seconds": r["seconds"]}
    return {"benchmark": "partial", "runs": args.runs, "puzzles": len(rows),
            "first_separation_matches": sum(r["first_separation_matches"] for r in rows),
            "level_matches": sum(r["level_matches"] for r in rows),
            "replayed": sum(r["replays"] for r in rows),
            "fully_disassembled": sum(not r["inseparable"] for r in rows),
            "seconds": "median wall time of geometry.partial.disassemble_partial from cold caches (the level, the "
                       "plan and every sub-assembly's search)",
            "rework": "per puzzle that needs partial moves: every single fault the repair search repairs (valid = "
                      "its plan replays to the target in the engine; seconds: the plan, with the level search "
                      "already cached); not proved minimal",
            "proofs": "with --proof, per puzzle (row `proofs`) and fault type: the moved-set search's status, J "
                      "(moved parts), c (actions) and wall time of each single fault, one run each, time limit "
                      f"{args.proof_limit:g} s; medians over the tasks" if args.proof else "not run (--proof)",
            "proof_summary": _proof_summary(rows) if args.proof else None,
            "rework_valid": sum(r["rework"]["valid"] for r in rows if r["rework"]),
            "rework_tasks": sum(r["rework"]["tasks"] for r in rows if r["rework"]),
            "time_vs_level": by_level, "rows": rows,
            **({"crosscheck": {"seconds_limit": args.crosscheck,
                               "what": "per puzzle that needs partial moves, every single-fault rework task: the "
                                       "registry's cross-check (clingo on encodings/partial_check.lp over the box and "
                                       "horizon that hold the moved-set search's plan), replayed in the engine and "
                                       "compared (planners.crosscheck)",
                               "puzzles": checked}} if checked is not None else {}),
            **({"asp": asp} if asp is not None else {}),
            **machine()}


def _asp(args, folder, rows) -> dict:
    """clingo against the moved-set search on the puzzles that need partial moves (perf._partial_asp)."""
    from forgeplan.io.importers import import_puzzle
    from ._partial_asp import asp_rows

    asms = {r["puzzle"]: import_puzzle(Path(folder) / r["puzzle"]) for r in rows if r["rework"] is not None}
    if args.asp_builtin:
        from forgeplan.library import BUILTIN, build
        from forgeplan.semantics.grounded import Capability, assembly_capabilities

        asms.update({name: build(name) for name in sorted(BUILTIN)
                     if Capability.SLIDES in assembly_capabilities(build(name))})
    return {"radius": args.asp_radius, "max_horizon": args.asp_horizon, "seconds_limit": args.asp_limit,
            "what": "per task: clingo's (J, c) on encodings/partial.lp within the radius box, proved over every "
                    "plan length (moved-lower-bound) or over plans of at most `horizon` steps; the moved-set "
                    "search's value with the same time limit; verdict (lab.asp.partial_compare.verdict)",
            "puzzles": {name: asp_rows(asm, FAULTS, args.asp_radius, args.asp_horizon, args.asp_limit, args.asp_tasks)
                        for name, asm in asms.items()}}


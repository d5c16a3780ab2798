"""Candidate groups per direction in the grounded PDDL export, and Fast Downward on a fault inside each level-1 burr."""

from __future__ import annotations

import statistics
from pathlib import Path

from . import machine

NAME = "pddl-groups"


def add_arguments(p) -> None:
    p.add_argument("--data", type=Path, default=None,
                   help="folder of voxel JSON puzzles (default: the example burrs shipped with forgeplan)")
    p.add_argument("--runs", type=int, default=3, help="Fast Downward runs per task (median reported)")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds per planner per run")
    p.add_argument("--clingo", action="store_true", help="also cross-check each task with clingo")
    p.add_argument("--builtin", action="store_true",
                   help="also the built-in assemblies that need group moves (burr_6_split, burr_6_pairs)")


def _fault_row(asm, ftype: str, runs: int, time_limit: float, clingo: bool) -> dict:
    from forgeplan.bench.burr_faults import fault_task
    from forgeplan.model.actions import GroupMove
    from forgeplan.planners.crosscheck import compare_task
    from forgeplan.planners.pddl.fd import solve_fd
    from forgeplan.planners.pddl.problem import build_problem

    found = fault_task(asm, ftype)
    if found is None:
        return {"fault": ftype, "part_id": None, "skipped": "no inner piece can carry this fault"}
    pid, task = found
    world = task.world
    results = [solve_fd(task, time_limit=time_limit) for _ in range(runs)]
    plan = results[-1].plan
    own = [r.planner_seconds for r in results if r.planner_seconds is not None]
    row = {"fault": ftype, "part_id": pid, "status": results[-1].status.name.lower(),
           "moved_parts": None if plan is None else len({p for a in plan for p in a.touched}),
           "actions": None if plan is None else len(plan),
           "group_moves": None if plan is None else sum(isinstance(a, GroupMove) for a in plan),
           "valid_in_engine": plan is not None and world.restoration(task.actual, plan, task.target).restored,
           "expanded_actions": len(build_problem(task, grounded=True).problem.actions),
           "fd_seconds": round(statistics.median(r.seconds for r in results), 4),
           "fd_planner_seconds": round(statistics.median(own), 4) if own else None,
           "build_seconds": round(statistics.median(r.build_seconds for r in results), 4)}
    if clingo:
        c = compare_task(task, time_limit=time_limit)
        row["crosscheck"] = {"verdict": c.verdict, "reason": c.reason, "clingo_status": c.prover.status,
                             "clingo_seconds": round(c.prover.seconds, 4)}
    return row


def _puzzle_row(name: str, asm, args) -> dict:
    from forgeplan.bench.burr_faults import FAULTS
    from forgeplan.geometry.separation import disassembly_verdict
    from forgeplan.planners.pddl.groups import candidate_groups
    from forgeplan.model.state import Tolerances
    from forgeplan.semantics.assembly_grounding import AssemblyGrounding
    from forgeplan.semantics.engine import World

    counts = candidate_groups(AssemblyGrounding(World(asm, Tolerances()))).counts()
    return {"puzzle": name, "assembly_id": asm.assembly_id, "parts": len(asm.parts),
            "mode": disassembly_verdict(asm)["mode"], "candidate_groups": counts["candidates"],
            "group_moves_exported": counts["exported"],
            "faults": [_fault_row(asm, f, args.runs, args.time_limit, args.clingo) for f in FAULTS]}


def builtin_group_assemblies() -> list:
    """The built-in assemblies that come apart only with group moves, in library order."""
    from forgeplan.library import BUILTIN, build
    from forgeplan.semantics.grounded import Capability, assembly_capabilities

    return [build(a) for a in BUILTIN if assembly_capabilities(build(a)) == {Capability.GROUPS}]


def _times(rows: list[dict]) -> dict:
    """Median and max of Fast Downward's time over the solved fault tasks of `rows`."""
    solved = [f for r in rows for f in r["faults"] if f.get("status") == "solved_optimally"]
    out: dict = {"tasks": len(solved)}
    for key in ("fd_seconds", "fd_planner_seconds", "clingo_seconds"):
        xs = [f[key] if key in f else f.get("crosscheck", {}).get(key) for f in solved]
        xs = [x for x in xs if x is not None]
        out[key] = {"median": round(statistics.median(xs), 4), "max": max(xs)} if xs else None
    if any("crosscheck" in f for f in solved):
        out["agree"] = sum(f["crosscheck"]["verdict"] == "agree" for f in solved)
    return out


def run(args) -> dict:
    from forgeplan.bench.burr_faults import FAULTS, level1_puzzles
    from forgeplan.io.importers import import_puzzle
    from forgeplan.io.resources import examples_dir

    rows = [_puzzle_row(p.name, import_puzzle(p), args) for p in level1_puzzles(args.data or examples_dir())]
    builtin = [_puzzle_row(f"built-in {a.assembly_id}", a, args) for a in builtin_group_assemblies()] if args.builtin else []
    return {"benchmark": "pddl-groups", "runs": args.runs, "time_limit": args.time_limit, "faults": list(FAULTS),
            "fault_part": "the first piece of groups.main_body's insertion order (the core first) that can carry "
                          "the fault and that no straight move frees in the assembled puzzle",
            "candidate_groups": "per direction, for separate and for join alike: the separable sets of two or more "
                                "pieces whose members all may move along it (SEMANTICS §5); zero without group moves",
            "group_moves_exported": "per direction: the candidate groups whose move along it the grounded export "
                                    "keeps (directions whose blockers include another's are dropped)",
            "fd_time": "fd_seconds: wall time of solve_fd (write PDDL, translate, search); fd_planner_seconds: "
                       "Fast Downward's own 'Planner time'",
            "all": _times(rows), "group_moves": _times([r for r in rows if r["mode"] == "group_moves"]),
            "rows": rows, **({"builtin": _times(builtin), "builtin_rows": builtin} if args.builtin else {}), **machine()}

"""CPU time of the expert tier of a benchmark build: the references of the tasks on assemblies that need
partial moves (SEMANTICS.md §9), made one after another in this process as a build's worker makes them.

The tier's references come from the moved-set search, whose cost per task varies by orders of magnitude
(a task whose optimum is not proved spends the whole state budget), so it is measured apart from the rest
of the build: the figure is the CPU seconds of `generate.build_task` over every tier slot of the plan.
"""

from __future__ import annotations

import statistics
import time

from . import machine

NAME = "tier"


def add_arguments(p) -> None:
    p.add_argument("--tasks", type=int, default=4000, help="benchmark size whose plan gives the tier's slots")
    p.add_argument("--seed", type=int, default=42, help="seed of the build (default 42)")
    p.add_argument("--runs", type=int, default=1, help="repetitions from cold caches (medians reported)")


def tier_slots(tasks: int, seed: int):
    """The tier's slots of the build's plan, with their loaded assemblies."""
    from forgeplan.bench.composition import plan_composition
    from forgeplan.bench.sources import load_sources
    from forgeplan.semantics.grounded import assemblies_by_kind

    sources = load_sources(None)
    families = {a: s.assembly.family for a, s in sources.items()}
    kinds = assemblies_by_kind({a: s.assembly for a, s in sources.items()})
    slots = plan_composition(families, tasks, seed, kinds.groups, kinds.partial)
    return [(s, sources[s.assembly_id].assembly) for s in slots if s.assembly_id in kinds.partial]


def one_run(tasks: int, seed: int) -> dict:
    """Every tier reference from cold search caches (one new assembly grounding per assembly, owned by
    the run): CPU seconds, proved count, per-task CPU."""
    from forgeplan.bench.generate import build_task
    from forgeplan.model.state import Tolerances
    from forgeplan.semantics.assembly_grounding import AssemblyGrounding
    from forgeplan.semantics.engine import World

    shared: dict[str, AssemblyGrounding] = {}
    rows = []
    c0 = time.process_time()
    for slot, asm in tier_slots(tasks, seed):
        t0 = time.process_time()
        grounding = shared.setdefault(asm.assembly_id, AssemblyGrounding(World(asm, Tolerances())))
        _, ref, plan, _ = build_task(slot, asm, seed, Tolerances(), shared=grounding)
        rows.append({"slot": slot.index, "assembly": asm.assembly_id, "optimal": bool(ref["proof"].get("optimal")),
                     "grounded": bool(ref["proof"].get("grounded_optimal", ref["proof"].get("optimal"))),
                     "method": ref["proof"].get("method"), "actions": len(plan), "cpu": time.process_time() - t0})
    return {"cpu": time.process_time() - c0, "rows": rows}


def run(args) -> dict:
    runs = [one_run(args.tasks, args.seed) for _ in range(max(1, args.runs))]
    rows = runs[-1]["rows"]
    cpu = sorted(r["cpu"] for r in rows)
    import os

    return {"benchmark": "tier", "tasks": args.tasks, "seed": args.seed, "runs": len(runs),
            "tier_tasks": len(rows), "proved": sum(r["optimal"] for r in rows),
            "proved_grounded": sum(r["grounded"] for r in rows),
            "methods": {m: sum(r["method"] == m for r in rows) for m in sorted({str(r["method"]) for r in rows})},
            "cpu_seconds_median": round(statistics.median(r["cpu"] for r in runs), 2),
            "cpu_seconds_all": [round(r["cpu"], 2) for r in runs],
            "task_cpu_seconds": {"median": round(statistics.median(cpu), 4), "p90": round(cpu[int(0.9 * (len(cpu) - 1))], 4),
                                 "max": round(cpu[-1], 3)} if cpu else None,
            "load_average": [round(x, 2) for x in os.getloadavg()], **machine()}

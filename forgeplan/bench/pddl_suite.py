"""`forgeplan bench export --format pddl`: the benchmark as an IPC-style planning suite with proven optimal costs.

Every task that needs repair becomes one problem `pNNN`: in each profile folder (`pNNN.pddl` with its own
`pNNN-domain.pddl`; the `lifted` folder shares one `domain.pddl`, identical for every task), or, for a task
that needs partial moves, in `partial/` only, at the smallest radius that holds its reference plan.
Tasks without a fault (an empty plan) are left out. `costs.csv` gives clingo's proven optima: the
lexicographic cost W*moved_parts + actions that the cost profiles encode, and the plan length that the
`strips` profile (no costs) minimises. The suite's own README.md says how it was made and which planner
configurations read which folder. The files are staged and appear together (`io.output.staged`).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..io.quoting import markdown_cell
from ..model.errors import InputError
from ..semantics.grounded import DEFAULT_WEIGHT, ground
from .folder import Bench, open_bench

# folder -> (profile, grounded): the lifted folder shares one domain, the others have one per problem
FOLDERS = {"lifted": ("full", False), "grounded": ("full", True), "strips-costs": ("strips-costs", True),
           "strips-table": ("strips-table", True), "strips": ("strips", True)}
PARTIAL = "partial"
COLUMNS = ("problem", "sample_id", "assembly_id", "family", "lifted", "radius", "moved_parts", "actions", "cost", "length")
LENGTH_TIME_LIMIT = 120.0  # seconds for clingo to prove the shortest plan (objective `actions`)
# partial moves: the largest radius written. A six-piece burr's domain is 19 MB at radius 1 and over 1 GB at
# radius 3 (the derived blocking rules grow with the square of the positions per slot)
MAX_RADIUS = 1
NAMES = ("rework", "rework-partial")   # the names unified-planning's writer and slides.pddl_text give


def export_pddl_suite(bench: Path | Bench, out: Path, progress=None) -> list[dict]:
    """Write the suite into `out` (must be empty or absent); returns the rows of costs.csv."""
    from ..io.output import staged
    from ..planners.pddl.files import domain_text

    bench = open_bench(bench)
    manifest = bench.manifest
    if out.exists() and any(out.iterdir()):
        raise InputError("output folder is not empty", file=str(out))
    ids = [sid for split in ("train", "test") for sid in manifest["splits"][split]]
    width = max(2, len(str(len(ids))))
    rows: list[dict] = []
    left_out = {"no fault": 0, "no proven moved-parts,actions optimum": 0,
                f"partial moves, the reference leaves radius {MAX_RADIUS}": 0}
    with staged(out) as folder:
        folder.write_text("lifted/domain.pddl", domain_text())
        for sid in ids:
            row = _export_task(bench, sid, folder, f"p{len(rows) + 1:0{width}d}", left_out)
            if row is not None:
                rows.append(row)
            if progress:
                progress(1)
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        folder.write_text("costs.csv", text.getvalue())
        folder.write_text("README.md", suite_readme(manifest, rows, left_out))
    return rows


def _export_task(bench: Bench, sid: str, out, name: str, left_out: dict) -> dict | None:
    """One task in every folder it fits, and its row of costs.csv (the optima come from the reference's
    proof); None when the task is left out (counted in `left_out`)."""
    from ..io.contract import parse_output

    import json

    task = bench.task(sid)
    reference = bench.reference(sid, task)
    proof = reference.get("proof")
    plan = parse_output(json.dumps(reference), strict=False).actions
    if not plan:
        left_out["no fault"] += 1
        return None
    if not isinstance(proof, dict) or not proof.get("optimal") or proof.get("objective") != "moved-parts,actions":
        left_out["no proven moved-parts,actions optimum"] += 1   # a feasible reference of the expert tier
        return None
    row = {"problem": name, "sample_id": task.sample_id, "assembly_id": task.assembly.assembly_id,
           "family": task.assembly.family, "lifted": 0, "radius": "", "moved_parts": proof["moved_parts"],
           "actions": proof["actions"], "cost": DEFAULT_WEIGHT * proof["moved_parts"] + proof["actions"], "length": ""}
    if ground(task).has_slides:
        radius = reach(task, plan)
        if radius > MAX_RADIUS or not _write_partial(task, out, name, radius):
            left_out[f"partial moves, the reference leaves radius {MAX_RADIUS}"] += 1
            return None
        return {**row, "radius": radius}
    row["lifted"] = int(not ground(task).has_groups)
    _write_profiles(task, out, name, bool(row["lifted"]))
    return {**row, "length": _length(task)}


def _write_profiles(task, out, name: str, lifted: bool) -> None:
    from ..planners.pddl.files import cost_table, domain_text, pddl_writer
    from ..planners.pddl.profiles import build_export

    lifted_domain = domain_text()

    for sub, (profile, grounded) in FOLDERS.items():
        if sub == "lifted" and not lifted:
            continue
        export = build_export(task, profile, grounded=grounded)
        writer = pddl_writer(export)
        domain, problem = writer.get_domain(), writer.get_problem()
        if sub == "lifted":
            if domain != lifted_domain:
                raise RuntimeError("internal: the lifted domain depends on the task")
            out.write_text(f"{sub}/{name}.pddl", renamed(problem, name, NAMES[0]))
            continue
        out.write_text(f"{sub}/{name}-domain.pddl", renamed(domain, name, NAMES[0], own_domain=True))
        out.write_text(f"{sub}/{name}.pddl", renamed(problem, name, NAMES[0], own_domain=True))
        if export.costs is not None:
            out.write_json(f"{sub}/{name}-costs.json", cost_table(export, writer))


def _write_partial(task, out, name: str, radius: int) -> bool:
    """The partial-move problem at `radius` in partial/; False when it is too large to write."""
    from ..planners.pddl.positions import position_tables
    from ..planners.pddl.slide_groups import build_group_problem
    from ..planners.pddl.slides import pddl_text

    try:
        sp = build_group_problem(task, position_tables(task, radius))
    except InputError:
        return False
    domain, problem = pddl_text(sp)
    out.write_text(f"{PARTIAL}/{name}-domain.pddl", renamed(domain, name, NAMES[1], own_domain=True))
    out.write_text(f"{PARTIAL}/{name}.pddl", renamed(problem, name, NAMES[1], own_domain=True))
    return True


def renamed(text: str, name: str, base: str, own_domain: bool = False) -> str:
    """A written domain or problem under the suite's names: problem `name`, and with its own domain file
    that domain `name-domain` (the writers call every domain `base-domain` and every problem `base-problem`)."""
    domain = f"{name}-domain" if own_domain else f"{base}-domain"
    if base == NAMES[1]:   # slides.pddl_text: (domain rework-partial), (problem rework-partial-task)
        text = text.replace(f"(define (domain {base})", f"(define (domain {domain})", 1)
        text = text.replace(f"(define (problem {base}-task) (:domain {base})", f"(define (problem {name}) (:domain {domain})", 1)
        return text
    text = text.replace(f"(define (domain {base}-domain)", f"(define (domain {domain})", 1)
    return text.replace(f"(define (problem {base}-problem)\n (:domain {base}-domain)",
                        f"(define (problem {name})\n (:domain {domain})", 1)


def reach(task, plan) -> int:
    """The smallest radius that holds a plan: the largest offset along any axis of any present slot in
    the states it passes through (at least 1)."""
    state, out = task.actual, 1
    for a in (None, *plan):
        if a is not None:
            state = task.world.apply(state, a)
        out = max([out, *(abs(c) for s in state.slots if s.present for c in s.offset)])
    return out


def _length(task) -> int | str:
    from ..planners.registry import solve

    shortest = solve(task, "actions", time_limit=LENGTH_TIME_LIMIT)
    return shortest.actions if shortest.optimal else ""


def suite_readme(manifest: dict, rows: list[dict], left_out: dict) -> str:
    """The suite's README.md: provenance, layout, the cost columns and which planner reads which folder."""
    lifted = sum(r["lifted"] for r in rows)
    partial = [r for r in rows if r["radius"] != ""]
    stated = manifest.get("versions")
    versions: dict = stated if isinstance(stated, dict) else {}
    gone = "; ".join(f"{n} ({why})" for why, n in left_out.items() if n) or "none"
    return f"""# forgeplan repair planning suite

{len(rows)} problems from a forgeplan benchmark (seed {markdown_cell(manifest.get("seed"))}, forgeplan {markdown_cell(versions.get("forgeplan"))},
clingo {markdown_cell(versions.get("clingo"))}), written by `forgeplan bench export BENCH --format pddl --out DIR`.
Problem `pNN` is the same task in every folder it is in; costs.csv maps it to its sample_id and assembly.
Benchmark tasks left out: {gone}.

## Optimal costs (costs.csv)

Every cost is proven optimal (clingo, forgeplan's ASP encoding, or for partial moves forgeplan's
moved-set search), not a best-known value.

- `cost` = {DEFAULT_WEIGHT} x `moved_parts` + `actions`: the action-cost optimum of the `lifted`, `grounded`,
  `strips-costs`, `strips-table` and `partial` problems. The objective is lexicographic: fewest distinct parts
  moved, then fewest actions; the weight {DEFAULT_WEIGHT} makes one moved part outweigh any plan of fewer than
  {DEFAULT_WEIGHT} actions.
- `length`: the fewest actions of any plan (objective `actions`), the optimum of the `strips` problems (no costs).
  Empty when clingo did not prove it within {LENGTH_TIME_LIMIT:g} s, and for partial-move problems (not in `strips`).
- `lifted` is 0 for assemblies that need group moves (sliding several parts out together), which only the
  grounded folders express; {lifted} of {len(rows)} problems have a lifted version.
- `radius`: set for the {len(partial)} problems of assemblies that need partial moves (sliding parts part-way), which are
  in `partial/` only: positions within `radius` voxels of the target per axis, the smallest radius that holds the
  reference plan, so the problem has a plan of cost `cost` (tasks whose reference leaves radius {MAX_RADIUS} are left
  out: the derived blocking rules grow with the square of the positions per slot). The rendering leaves out one condition of the
  engine (a group that leaves or joins away from its target arrangement must be separable there), so a planner
  could find a cheaper plan that the engine refuses; on small partial-move puzzles forgeplan's tests find Fast
  Downward's optimum equal to an exhaustive search over the engine's moves.

## Folders and planners

Every folder but `lifted` has one domain per problem, `pNN-domain.pddl` beside `pNN.pddl` (the grounded
domains hold the task's objects and actions); `lifted` has one `domain.pddl` shared by all its problems.

| folder | PDDL requirements | optimal configurations that read it |
|---|---|---|
| `lifted` | STRIPS, typing, negative preconditions, disjunctive preconditions, equality, quantified preconditions, conditional effects, action costs | Fast Downward `astar(blind())`: the translator compiles the quantified negations into axioms, which `lmcut` refuses (exit 34) |
| `grounded` | STRIPS, typing, negative preconditions, action costs | Fast Downward `astar(lmcut())`, `astar(hmax())`, `astar(blind())` |
| `strips-costs` | STRIPS, typing, action costs (`:functions (total-cost)`) | any STRIPS planner with action costs; Fast Downward `astar(lmcut())` |
| `strips-table` | STRIPS, typing; no cost syntax: the action costs are in `pNN-costs.json` | parsers without numeric fluents (pyperplan's); a planner that takes the table finds `cost`; pyperplan itself searches unit costs (optimal for plan length, not for the table) |
| `strips` | STRIPS, typing | pyperplan `-s astar -H lmcut` (or `-H hmax`, `-s bfs`); optimal for plan length |
| `partial` | STRIPS, negative preconditions, action costs, conditional effects, derived predicates | Fast Downward `astar(blind())` (`lmcut` supports neither axioms nor conditional effects; pyperplan reads none of them) |

The grounded folders have one parameterless action per grounded action, free direction and first-touch
variant. `strips`, `strips-costs` and `strips-table` replace each negative precondition by a `not_` twin fluent
(unified-planning's NegativeConditionsRemover). Plans of any folder map back to forgeplan actions with
`forgeplan import-plan TASK_DIR PLAN --profile full|strips|strips-costs|strips-table [--grounded] [--radius R]`
(`partial`: `--grounded --radius R`), which first replays the plan in the PDDL task and refuses a step that
is not applicable there.
"""

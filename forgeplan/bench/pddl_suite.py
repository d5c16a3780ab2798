"""`forgeplan bench export --format pddl`: the benchmark as an IPC-style planning suite with proven optimal costs.

Every task becomes one problem `pNNN` in each profile folder; `costs.csv` gives clingo's proven optima:
the lexicographic cost W*moved_parts + actions that the cost profiles encode, and the plan length that
the `strips` profile (no costs) minimises. The suite's own README.md says how it was made and which
planner configurations read which folder.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..io.output import new_folder
from ..io.quoting import markdown_cell
from ..model.errors import InputError
from ..semantics.grounded import DEFAULT_WEIGHT, ground
from .store import load_manifest, load_sample_task, read_sample_file, sample_folder

# folder -> (profile, grounded): the lifted folder shares one domain, the others have one per problem
FOLDERS = {"lifted": ("full", False), "grounded": ("full", True), "strips-costs": ("strips-costs", True),
           "strips": ("strips", True)}
COLUMNS = ("problem", "sample_id", "assembly_id", "family", "lifted", "moved_parts", "actions", "cost", "length")
LENGTH_TIME_LIMIT = 120.0  # seconds for clingo to prove the shortest plan (objective `actions`)


def export_pddl_suite(bench: Path, out: Path, progress=None) -> list[dict]:
    """Write the suite into `out` (must be empty or absent; built beside it and renamed, so it appears whole
    or not at all); returns the rows of costs.csv."""
    if out.exists() and any(out.iterdir()):
        raise InputError("output folder is not empty", file=str(out))
    with new_folder(out) as folder:
        return _write_suite(bench, folder, progress)


def _write_suite(bench: Path, out: Path, progress) -> list[dict]:
    manifest = load_manifest(bench)
    ids = [sid for split in ("train", "test") for sid in manifest["splits"][split]]
    # the suite's domain (domains/rework.pddl) has no slides (SEMANTICS §9): tasks with slides go
    kept = {t.sample_id for t in (load_sample_task(bench, sid) for sid in ids) if not ground(t).has_slides}
    skipped = [sid for sid in ids if sid not in kept]
    ids = [sid for sid in ids if sid in kept]
    if progress and skipped:
        progress(len(skipped))
    width = max(2, len(str(len(ids))))
    for folder in FOLDERS:
        (out / folder).mkdir(parents=True, exist_ok=True)
    rows = []
    for n, sid in enumerate(ids, start=1):
        rows.append(_export_task(bench, sid, out, f"p{n:0{width}d}"))
        if progress:
            progress(1)
    with (out / "costs.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    (out / "README.md").write_text(suite_readme(manifest, rows, len(skipped)), encoding="utf-8")
    return rows


def _export_task(bench: Path, sid: str, out: Path, name: str) -> dict:
    """One task in every profile folder, and its row of costs.csv (the optima come from clingo's proofs)."""
    from ..planners.asp.solve import solve_task
    from ..planners.pddl.files import pddl_writer
    from ..planners.pddl.profiles import build_export

    task = load_sample_task(bench, sid)
    proof = read_sample_file(bench, sid, "reference.json").get("proof")
    if not isinstance(proof, dict) or not proof.get("optimal") or proof.get("objective") != "moved-parts,actions":
        raise InputError("the reference is not a proven moved-parts,actions optimum", file=str(sample_folder(bench, sid) / "reference.json"),
                         field="proof")
    lifted = not ground(task).has_groups
    for sub, (profile, grounded) in FOLDERS.items():
        if sub == "lifted" and not lifted:
            continue
        writer = pddl_writer(build_export(task, profile, grounded=grounded))
        domain = out / sub / ("domain.pddl" if sub == "lifted" else f"{name}-domain.pddl")
        text = writer.get_domain()
        if sub == "lifted" and domain.exists() and domain.read_text(encoding="utf-8") != text:
            raise RuntimeError("internal: the lifted domain depends on the task")
        domain.write_text(text, encoding="utf-8")
        (out / sub / f"{name}.pddl").write_text(writer.get_problem(), encoding="utf-8")
    shortest = solve_task(task, "actions", time_limit=LENGTH_TIME_LIMIT)
    return {"problem": name, "sample_id": task.sample_id, "assembly_id": task.assembly.assembly_id,
            "family": task.assembly.family, "lifted": int(lifted), "moved_parts": proof["moved_parts"],
            "actions": proof["actions"], "cost": DEFAULT_WEIGHT * proof["moved_parts"] + proof["actions"],
            "length": shortest.actions if shortest.optimal else ""}


def suite_readme(manifest: dict, rows: list[dict], skipped: int = 0) -> str:
    """The suite's README.md: provenance, layout, the cost columns and which planner reads which folder."""
    lifted = sum(r["lifted"] for r in rows)
    stated = manifest.get("versions")
    versions: dict = stated if isinstance(stated, dict) else {}
    left_out = (f" The benchmark's {skipped} tasks on assemblies that need partial moves (slides) are left out:\n"
                "the PDDL export does not express them yet.") if skipped else ""
    return f"""# forgeplan repair planning suite

{len(rows)} problems from a forgeplan benchmark (seed {markdown_cell(manifest.get("seed"))}, forgeplan {markdown_cell(versions.get("forgeplan"))},
clingo {markdown_cell(versions.get("clingo"))}), written by `forgeplan bench export BENCH --format pddl --out DIR`.
Problem `pNN` is the same task in every folder; costs.csv maps it to its sample_id and assembly.{left_out}

## Optimal costs (costs.csv)

Every cost is proven optimal by clingo (forgeplan's ASP encoding, optimality over all plan lengths),
not a best-known value.

- `cost` = {DEFAULT_WEIGHT} x `moved_parts` + `actions`: the action-cost optimum of the `lifted`, `grounded` and
  `strips-costs` problems. The objective is lexicographic: fewest distinct parts moved, then fewest actions;
  the weight {DEFAULT_WEIGHT} makes one moved part outweigh any plan of fewer than {DEFAULT_WEIGHT} actions.
- `length`: the fewest actions of any plan (objective `actions`), the optimum of the `strips` problems (no costs).
  Empty when clingo did not prove it within {LENGTH_TIME_LIMIT:g} s.
- `lifted` is 0 for assemblies that need group moves (sliding several parts out together), which only the
  grounded folders express; {lifted} of {len(rows)} problems have a lifted version.

## Folders and planners

| folder | PDDL | domain | optimal configurations |
|---|---|---|---|
| `lifted` | typing, negative preconditions, quantified preconditions, conditional effects, numeric costs | `domain.pddl` (shared) | Fast Downward `astar(blind())`: the translator compiles the quantified negations into axioms, which `lmcut` refuses (exit 34) |
| `grounded` | STRIPS, typing, negative preconditions, action costs | `pNN-domain.pddl` | Fast Downward `astar(lmcut())`, `astar(hmax())`, `astar(blind())` |
| `strips-costs` | STRIPS, typing, action costs | `pNN-domain.pddl` | any STRIPS planner with action costs; Fast Downward `astar(lmcut())` |
| `strips` | STRIPS, typing | `pNN-domain.pddl` | pyperplan `-s astar -H lmcut` (or `-H hmax`, `-s bfs`); optimal for plan length |

The grounded folders have one parameterless action per grounded action, free direction and first-touch
variant. `strips` and `strips-costs` replace each negative precondition by a `not_` twin fluent
(unified-planning's NegativeConditionsRemover). Plans of any folder map back to forgeplan actions with
`forgeplan import-plan TASK_DIR PLAN --profile full|strips|strips-costs [--grounded]`.
"""

"""A benchmark folder's dataset card (README.md) and tasks.jsonl (one row per task with its reference).

Both are functions of manifest.json and the task folders alone, so a sharded build merged by `bench
merge` writes them byte for byte as a plain build does. They are written before the manifest, which a
build writes last.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..io.quoting import markdown_cell
from ..io.schema import BENCH_FILE_MODELS, parse_model
from ..io.output import write_text
from ..io.tables import jsonl_text
from ..io.task_files import read_json

CARD, TASKS = "README.md", "tasks.jsonl"
SPLITS = ("train", "test")
TASK_FIELDS = {
    "sample_id": "the task folder's name under tasks/",
    "family": "`rework` (FORGE's task, MAGAR's Minimal Rework) or `decision` (MAGAR's Assembly Decision)",
    "split": "`train` or `test` (assembly-disjoint; family-disjoint in the magar profile)",
    "assembly_id, assembly_family": "the assembly and its family (the split groups by family)",
    "condition": "nofault, boundary, single, multi; a decision's episode: assembly or recovery",
    "fault_types": "the injected fault types (a list; empty without faults)",
    "faults, hidden": "the number of injected faults; whether one is not visible from the observed state",
    "difficulty": "easy, medium, hard or expert (docs/benchmark.md)",
    "counterfactual_pair, counterfactual_role": "a counterfactual pair's number and this task's role in it, or null",
    "reference_actions, reference_moved_parts": "the reference plan's length and the parts it moves",
    "proof_method, proof_optimal": "the planner that produced the reference and whether it is proved minimal",
    "annotation": "the reference diagnosis (the output contract's `annotation`) as JSON text, or null for a decision",
    "plan": "the reference plan's actions as JSON text (a decision: the optimal completion of the recorded state)",
    "route_id": "MAGAR's recovery route id of the reference plan, or null for a decision",
    "decision, valid_decisions": "a decision's reference and every valid decision as JSON text, or null",
}
FILES = {
    "part_catalog.json": "the parts (voxels, kinds, symmetry, locks) and spare parts; the assembly's description and source",
    "assembly_graph.json, blocking_graph.json, contact_graph.json": "supports and assembly sequence; blocking per direction; face contacts",
    "action_space.json": "every action of the task with its parameters",
    "initial_state.json, actual_state.json, target_state.json": "the start, the observed (faulty) state, the target with its tolerances",
    "reference.json": "rework tasks: the expected annotation and the proven rework plan, with its proof object",
    "minimal_rework.json": "rework tasks: MAGAR's moved parts, their count, route id and action ids",
    "decision.json": "decision tasks: the reference decision, every valid decision and first step, the optimum, the episode",
    "meta.json": "the labels of the task (split, condition, fault types, difficulty, pair)",
}


def _text(value) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def task_row(bench: Path, sample_id: str) -> dict:
    """The tasks.jsonl row of one task, from its meta.json and its reference files (read and checked)."""
    folder = Path(bench) / "tasks" / sample_id

    def read(name: str) -> dict:
        data = read_json(folder / name, "bench file", root=Path(bench))
        parse_model(BENCH_FILE_MODELS[name], data, str(folder / name))
        return data

    return row_of(sample_id, read)


def row_of(sample_id: str, read) -> dict:
    """The tasks.jsonl row of one task; `read(name)` gives one of its files as parsed JSON."""
    meta = read("meta.json")
    decision = meta.get("task_family") == "assembly_decision"
    row = {"sample_id": sample_id, "family": "decision" if decision else "rework", "split": meta["split"],
           "assembly_id": meta["assembly_id"], "assembly_family": meta["family"], "condition": meta["condition"],
           "fault_types": list(meta["fault_types"]), "faults": meta.get("faults", 0), "hidden": bool(meta.get("hidden")),
           "difficulty": meta["difficulty"], "counterfactual_pair": meta.get("counterfactual_pair"),
           "counterfactual_role": meta.get("counterfactual_role")}
    if decision:
        d = read("decision.json")
        return row | {"reference_actions": d["optimum"]["actions"], "reference_moved_parts": d["optimum"]["moved_parts"],
                      "proof_method": "clingo", "proof_optimal": True, "annotation": None,
                      "plan": _text(d["reference_plan"]), "route_id": None, "decision": _text(d["reference"]),
                      "valid_decisions": _text(d["valid"])}
    ref, rework = read("reference.json"), read("minimal_rework.json")
    proof = ref.get("proof") or {}
    return row | {"reference_actions": len(ref["rework_plan"]["actions"]), "reference_moved_parts": rework["moved_part_count"],
                  "proof_method": proof.get("method"), "proof_optimal": proof.get("optimal"),
                  "annotation": _text(ref["annotation"]), "plan": _text(ref["rework_plan"]["actions"]),
                  "route_id": rework["route_id"], "decision": None, "valid_decisions": None}


def card_files(bench: Path, manifest: dict, rows: dict[str, dict] | None = None) -> dict[str, str]:
    """{name: text} of tasks.jsonl and README.md, from the manifest and the task folders (`bench check`
    compares them with the files a build wrote); `rows` holds the rows a build made from the texts it wrote."""
    made = rows or {}
    every = [made[r["sample_id"]] if r["sample_id"] in made else task_row(Path(bench), r["sample_id"])
             for r in manifest["records"]]
    return {TASKS: jsonl_text(every), CARD: card_text(Path(bench), manifest, every)}


def write_card(bench: Path, manifest: dict, rows: dict[str, dict] | None = None) -> dict[str, str]:
    """tasks.jsonl and README.md of a benchmark folder whose task folders are complete; returns their texts
    (for the digests: inside `io.output.together` the files appear only when the block ends)."""
    card = card_files(Path(bench), manifest, rows)
    for name, text in card.items():
        write_text(Path(bench) / name, text)
    return card


def _count_table(title: str, counts: dict[str, Counter]) -> list[str]:
    keys = sorted(set().union(*counts.values()))
    lines = [f"| {title} | " + " | ".join(SPLITS) + " | all |", "|---|" + "---|" * (len(SPLITS) + 1)]
    for k in keys:
        per = [counts[s][k] for s in SPLITS]
        lines.append(f"| {markdown_cell(k)} | " + " | ".join(str(n) for n in per) + f" | {sum(per)} |")
    return lines + [""]


def composition_lines(rows: list[dict]) -> list[str]:
    """The tables of the card's Composition section."""
    def by(key) -> dict[str, Counter]:
        return {s: Counter(v for r in rows if r["split"] == s for v in key(r)) for s in SPLITS}

    lines = []
    for title, key in (("family", lambda r: [r["family"]]), ("condition", lambda r: [r["condition"]]),
                       ("difficulty", lambda r: [r["difficulty"]]),
                       ("fault type (tasks with it)", lambda r: r["fault_types"]),
                       ("assembly", lambda r: [f"{r['assembly_id']} ({r['assembly_family']})"])):
        lines += _count_table(title, by(key))
    return lines


def licence_lines(bench: Path, manifest: dict, rows: list[dict]) -> list[str]:
    """Built-in assemblies are forgeplan's (MIT); an imported puzzle keeps its own licence, per source."""
    sources = _sources(manifest)
    builtin = sorted(a for a, s in sources.items() if s.get("origin") == "built-in")
    imported = sorted(a for a in sources if a not in builtin)
    lines = ["The tasks, states, references and labels are generated by forgeplan, which is published under the "
             "MIT licence."]
    if builtin:
        lines += ["", f"{len(builtin)} assemblies are forgeplan's built-ins (`origin: built-in` in manifest.json): "
                  "their shapes and everything derived from them are under the MIT licence."]
    if imported:
        first = {r["assembly_id"]: r["sample_id"] for r in reversed(rows)}
        lines += ["", "Imported puzzles keep the licence of their source, which applies to the tasks made from them: "
                  "check it before you redistribute this benchmark.", "",
                  "| assembly | file (SHA-256) | source | credit and licence as the source states them |", "|---|---|---|---|"]
        for a in imported:
            s = sources[a]
            catalog = (read_json(Path(bench) / "tasks" / first[a] / "part_catalog.json", "task file", root=Path(bench))
                       if a in first else {})
            lines.append(f"| {markdown_cell(a)} | {markdown_cell(Path(str(s.get('path', ''))).name)} "
                         f"({markdown_cell(str(s.get('sha256', ''))[:12])}) | {markdown_cell(catalog.get('source', '–'))} | "
                         f"{markdown_cell(catalog.get('description') or 'not stated by the source', 300)} |")
    return lines + [""]


def _sources(manifest: dict) -> dict[str, dict]:
    """The manifest's sources (assembly id -> origin); an entry that is not an object counts as unknown."""
    sources = manifest.get("sources")
    return {str(a): s if isinstance(s, dict) else {} for a, s in sources.items()} if isinstance(sources, dict) else {}


def _int(value) -> str:
    return str(value) if isinstance(value, int) else "?"


def card_text(bench: Path, manifest: dict, rows: list[dict]) -> str:
    """README.md: what the benchmark is, its composition, its files and fields, its licence, how to load it."""
    magar = manifest.get("profile") == "magar"
    imported = any(s.get("origin") != "built-in" for s in _sources(manifest).values())
    n = {s: sum(r["split"] == s for r in rows) for s in SPLITS}
    name, versions = str(manifest.get("benchmark", "forgeplan benchmark")), manifest.get("versions") or {}
    title = f"{name} ({len(rows)} tasks, seed {_int(manifest.get('seed'))})"
    command = (f"forgeplan bench build --tasks {_int(manifest.get('tasks'))} --seed {_int(manifest.get('seed'))}"
               + (" --profile magar" if magar else ""))
    lines = ["---", f"license: {'other' if imported else 'mit'}",
             f"pretty_name: {json.dumps(title)}",
             "configs:", "- config_name: default", "  data_files:", "  - split: tasks", f"    path: {TASKS}", "---", "",
             f"# {markdown_cell(name)}: {len(rows)} tasks", "",
             f"Built by forgeplan {markdown_cell(versions.get('forgeplan', '–'))} (`{command}`, clingo "
             f"{markdown_cell(versions.get('clingo', '–'))}): {n['train']} train and {n['test']} test tasks over "
             f"{len({r['assembly_id'] for r in rows})} assemblies. Each task is an interlocking assembly in an observed, possibly "
             "faulty state; the answer is a diagnosis and a repair plan that the engine replays to the target"
             + (" (rework), or the next structured decision of an assembly or recovery episode (decision)" if magar else "")
             + ". Every reference is replayed before it is kept; `proof_optimal` says whether it is proved minimal.", "",
             "## Composition", ""]
    lines += composition_lines(rows)
    lines += ["## Files", "", f"- `manifest.json`: the build's options, versions, sources, splits and one record per task.",
              f"- `{TASKS}`: one row per task with its labels and its reference (fields below).",
              "- `tasks/<sample_id>/`: the task itself:"]
    lines += [f"  - `{k}`: {v}" for k, v in FILES.items()]
    lines += ["", f"## Fields of {TASKS}", "", "| field | value |", "|---|---|"]
    lines += [f"| {', '.join(f'`{k}`' for k in key.split(', '))} | {v} |" for key, v in TASK_FIELDS.items()]
    lines += ["", "The JSON-text fields hold nested objects whose keys vary by action and fault (load them with "
              "`json.loads`). The first rows are, for each field, the first task that has a value in it; the others "
              "follow in manifest order.", "", "## Licence", ""]
    lines += licence_lines(bench, manifest, rows)
    lines += ["## Loading", "", "```python", "import json", "import pandas as pd", "",
              f'tasks = pd.read_json("{TASKS}", lines=True)', 'test = tasks[tasks["split"] == "test"]',
              'plan = json.loads(test.iloc[0]["plan"])', "", "from datasets import load_dataset", "",
              'tasks = load_dataset("path/to/this/folder", split="tasks")   # README.md\'s configs name tasks.jsonl',
              f'tasks = load_dataset("json", data_files="{TASKS}", split="train")   # the same rows',
              "```", "", "With forgeplan:", "", "```bash", "forgeplan bench stats DIR                        # the composition",
              "forgeplan bench export DIR                       # prompt/completion JSONL for fine-tuning",
              "forgeplan baseline greedy-legal --bench DIR --out preds.jsonl",
              "forgeplan evaluate --bench DIR --predictions preds.jsonl --out run   # run/samples.jsonl: every sample scored",
              "```", ""]
    return "\n".join(lines)

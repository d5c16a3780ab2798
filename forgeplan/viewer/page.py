"""The view page: every sample of a run with its prediction and reference traced step by step, in one
self-contained HTML file (data, script and style inlined; no server, no network).

Per sample the page holds the row of samples.jsonl (raw output cut to run.MAX_RAW characters), and for a
rework sample whose output parses: the prediction's and the reference's steps (action, what changed,
the engine's reason at a refused step), the poses after each step (at most MAX_STEPS per plan), and the
first divergence. Pictures are drawn by the page's script from these poses, only for the sample opened.
Every piece of text from the run goes in through `script_json` and reaches the screen as text nodes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..bench.folder import Bench, BenchChanged, open_bench
from ..io.contract import ContractError, parse_output
from ..io.quoting import html_text, script_json
from ..model.errors import ForgeplanError
from ..semantics.diagnosis import diagnose
from ..trace import Trace, divergence, trace_plan
from .run import read_run
from .scenes import assembly_scene, state_poses

MAX_STEPS = 40            # steps of one plan kept (and drawn) per sample
ASSETS = ("view.html", "view.css", "view.js")   # beside this module (package data)


def plan_data(task, trace: Trace, look, labels: dict) -> dict:
    """A traced plan for the page: its steps and the poses before the first and after each legal step."""
    world = task.world
    index = {pid: k for k, pid in enumerate(world.ids)}
    steps = []
    for s in trace.steps[:MAX_STEPS]:
        parts = sorted({index[p] for p in s.action.touched if p in index} |
                       {index[world.ids[world.spare_slot[p]]] for p in s.action.touched if p in world.spare_slot})
        steps.append({"step": s.step, "text": str(s.action), "legal": s.legal, "code": s.code, "reason": s.reason,
                      "parts": parts, "changes": [str(c) for c in s.changes]})
    states = [state_poses(world, st, look) for st in trace.states[:MAX_STEPS + 1]]
    return {"steps": steps, "states": states, "more": max(0, len(trace.steps) - MAX_STEPS)}


def _parsed(raw: str | None):
    """The prediction's plan: the raw output as is, else the one JSON object inside it (a fenced or chatty
    answer, read as `--extract-json` reads it), else None."""
    if raw is None:
        return None
    for extract in (False, True):
        try:
            return parse_output(raw, strict=False, extract=extract).actions
        except ContractError:
            continue
    return None


def sample_data(bench: Path | Bench, row: dict, scenes: dict) -> dict:
    """The page's entry for one row: the row itself, and the traced plans where there are any."""
    out: dict = {"row": {k: v for k, v in row.items() if k != "raw_cut"}, "raw_cut": row.get("raw_cut", False)}
    if row["family"] != "rework":
        return out
    try:
        opened = open_bench(bench)
        task = opened.task(row["sample_id"])
        reference = parse_output(json.dumps(opened.reference(row["sample_id"], task)), strict=False).actions
    except BenchChanged:
        raise   # a benchmark changed since its build is refused, not drawn
    except ForgeplanError as exc:
        out["note"] = f"the task cannot be read: {exc}"
        return out
    aid = task.assembly.assembly_id
    if aid not in scenes:
        scenes[aid] = assembly_scene(task.assembly)
    scene, look = scenes[aid]
    out["assembly"] = aid
    out["faulty"] = sorted(task.world.index[m["part_id"]] for m in diagnose(task.world, task.actual, task.target))
    out["reference"] = plan_data(task, trace_plan(task.world, task.actual, reference), look, look.labels)
    predicted = _parsed(row.get("raw_output"))
    if predicted is None:
        out["note"] = "the output holds no plan to draw" if row.get("raw_output") is not None else "no prediction"
        return out
    out["prediction"] = plan_data(task, trace_plan(task.world, task.actual, predicted), look, look.labels)
    d = divergence(task.world, task.actual, predicted, reference)
    out["divergence"] = d.step
    return out


def page_data(run_dir: Path, bench: Path | None = None, progress=None) -> dict:
    """Everything the page shows: the run's facts, the samples and the assemblies they draw."""
    info, rows, where = read_run(run_dir, bench)
    opened = open_bench(where)
    scenes: dict = {}
    samples = []
    for row in rows:
        samples.append(sample_data(opened, row, scenes))
        if progress is not None:
            progress(1)
    return {"run": {"folder": str(Path(run_dir).absolute()), "bench": str(where.absolute()),
                    "predictions": info.get("predictions"), "split": info.get("split"),
                    "counts": info.get("counts")},
            "samples": samples, "assemblies": {aid: scene for aid, (scene, _) in scenes.items()},
            "limits": {"steps": MAX_STEPS}}


_MARKER = re.compile(r"@@(TITLE|CSS|JS|DATA)@@")


def render_page(data: dict) -> str:
    """The HTML text: the template with its style, script, title and data filled in one pass (so that no
    value can bring in a marker for another)."""
    html, css, js = ((Path(__file__).parent / name).read_text(encoding="utf-8") for name in ASSETS)
    title = html_text(f"forgeplan view: {Path(data['run']['folder']).name}")
    values = {"TITLE": title, "CSS": css, "JS": js, "DATA": script_json(data)}
    return _MARKER.sub(lambda m: values[m.group(1)], html)

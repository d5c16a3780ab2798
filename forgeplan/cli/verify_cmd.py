"""`forgeplan verify TASK_DIR OUTPUT_JSON`: judge one model output against a task."""

from __future__ import annotations

import sys
from pathlib import Path

from ..io.quoting import one_line
from . import EXIT_NEGATIVE, emit_json, plural


def register(sub) -> None:
    p = sub.add_parser(
        "verify", help="verify a model output (annotation + rework plan) against a task",
        description="Judge one output (an annotation of the faults plus a rework plan) against a task folder: "
                    "check the output contract and the diagnosis, replay every action in the engine from the "
                    "faulty state and compare the final state with the target. Prints 'valid' or the failure "
                    "category with the first failing step (steps count from 1). Any file forgeplan writes that "
                    "holds an output is accepted (reference.json, `solve --json`): top-level keys outside the "
                    "contract are ignored with a note, unless --strict. Exit 0 valid, 1 invalid, 2 bad input.")
    p.add_argument("task_dir", type=Path, metavar="TASK_DIR", help="task folder written by `task make` or `bench build`")
    p.add_argument("output", metavar="OUTPUT_JSON", help="the raw output file ('-' reads standard input)")
    p.add_argument("--strict", action="store_true",
                   help="reject top-level keys outside the output contract (schema_failure), as a grader of model "
                        "outputs does (default: ignore them with a note)")
    p.add_argument("--extract-json", action="store_true",
                   help="take the one JSON object out of an output wrapped in a ``` fence or in text (refused when it "
                        "holds several); default: the output must be one JSON object and nothing else")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.add_argument("--trace", action="store_true",
                   help="after the verdict, the state after each action (the parts each step changed, the engine's "
                        "reason at a refused step) and the first step where the plan leaves the task's reference "
                        "(reference.json beside the task, when present); with --json, as a `trace` object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..io.guarded import read_bytes, read_stdin
    from ..io.task_files import load_task
    from ..model.errors import InputError
    from ..verify import verify

    task = load_task(args.task_dir)
    # an output over the size limit is a schema_failure verdict, not bad input: read its head only
    raw = read_stdin("output", head=True) if args.output == "-" else read_bytes(Path(args.output), "output", head=True)
    if _is_predictions(raw):
        raise InputError("holds predictions JSONL rows; verify takes one JSON answer (evaluate scores a JSONL: "
                         "forgeplan evaluate --bench BENCH --predictions FILE)", file=args.output)
    v = verify(task, raw, strict=args.strict, extract=args.extract_json)
    if v.extracted:
        print("note: the JSON object was taken out of a ``` fence or surrounding text (--extract-json)", file=sys.stderr)
    if v.ignored_keys:
        print("note: ignored top-level keys outside the output contract: "
              + one_line(", ".join(v.ignored_keys), 300), file=sys.stderr)
    trace = _trace(args.task_dir, task, v) if args.trace else None
    if args.json:
        emit_json(v.to_json() | ({"trace": trace.to_json() if trace else None} if args.trace else {}))
        return 0 if v.valid else EXIT_NEGATIVE
    _print_verdict(v)
    if args.trace:
        _print_trace(trace, (args.task_dir / "reference.json").is_file())
    return 0 if v.valid else EXIT_NEGATIVE


def _is_predictions(raw: bytes) -> bool:
    """Whether the first line is a predictions row ({"sample_id", "raw_output"}) or a batch output row
    ({"custom_id", ...}): a JSONL file, not one answer."""
    from ..io.guarded import Rejected, parse_json

    try:
        row = parse_json(raw.lstrip().split(b"\n", 1)[0].decode("utf-8"))
    except (ValueError, Rejected, RecursionError):
        return False
    return isinstance(row, dict) and ("raw_output" in row or "custom_id" in row)


def _trace(folder: Path, task, v):
    """The plan's trace (None when the output does not parse), against the reference beside the task."""
    from ..trace import reference_actions, trace_against

    if v.output is None:
        return None
    return trace_against(task.world, task.actual, v.output.actions, reference_actions(folder))


def _print_trace(trace, has_reference: bool) -> None:
    from ..trace import divergence_lines, trace_lines

    if trace is None:
        print("trace: none (the output does not parse into a plan)")
        return
    print(f"trace: the state after each action ({plural(len(trace.steps), 'step')}; the parts each one changed)")
    for line in trace_lines(trace) or ["  (the plan is empty)"]:
        print(one_line(line))
    if trace.divergence is not None:
        for line in divergence_lines(trace.divergence):
            print(one_line(line))
    elif not has_reference:
        print("reference: none beside the task (reference.json), so no divergence to show")


def _print_verdict(v) -> None:
    if v.valid:
        print(f"valid: {plural(v.actions, 'action')}, {plural(len(v.moved_parts), 'moved part')}" + (f" (over-disassembly: {v.reason.removeprefix('valid (').removesuffix(')')})" if v.over_disassembly else ""))
    else:
        print(f"invalid [{v.category}]: {one_line(v.reason)}")

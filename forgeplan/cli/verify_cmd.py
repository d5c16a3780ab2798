"""`forgeplan verify TASK_DIR OUTPUT_JSON`: judge one model output against a task."""

from __future__ import annotations

import sys
from pathlib import Path

from . import EXIT_NEGATIVE, emit_json


def register(sub) -> None:
    p = sub.add_parser("verify", help="verify a model output (annotation + rework plan) against a task")
    p.add_argument("task_dir", type=Path, metavar="TASK_DIR")
    p.add_argument("output", metavar="OUTPUT_JSON", help="the raw output file ('-' reads standard input)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..contract import MAX_OUTPUT_BYTES
    from ..errors import InputError
    from ..task import load_task
    from ..verify import verify

    task = load_task(args.task_dir)
    if args.output == "-":
        raw = sys.stdin.buffer.read(MAX_OUTPUT_BYTES + 1)
    else:
        path = Path(args.output)
        try:
            with path.open("rb") as fh:
                raw = fh.read(MAX_OUTPUT_BYTES + 1)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    v = verify(task, raw)
    if args.json:
        emit_json(v.to_json())
    elif v.valid:
        print(f"valid: {v.actions} actions, {len(v.moved_parts)} moved parts" + (" (over-disassembly: moves parts outside the closure)" if v.over_disassembly else ""))
    else:
        print(f"invalid [{v.category}]: {v.reason}")
    return 0 if v.valid else EXIT_NEGATIVE

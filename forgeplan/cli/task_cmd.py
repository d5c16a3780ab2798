"""`forgeplan task make`: write a task folder (the eight public files plus reference.json)."""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("task", help="make rework tasks")
    tsub = p.add_subparsers(dest="task_command", metavar="ACTION")
    tsub.required = True
    m = tsub.add_parser("make", help="write a task for one assembly")
    m.add_argument("assembly", metavar="ASSEMBLY_ID", help="built-in id or assembly JSON file")
    m.add_argument("--out", required=True, type=Path, help="task folder to write")
    m.add_argument("--fault", action="append", default=[], metavar="TYPE[:PART_ID]",
                   help="inject a fault (repeatable); types: missing_part, wrong_orientation, misplacement, "
                        "under_insertion, wrong_part, interference_lock")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--boundary", action="store_true", help="perturb poses inside the tolerances (boundary no-fault)")
    m.set_defaults(func=run_make)


def run_make(args) -> int:
    from ..assembly import load_assembly
    from ..errors import InputError
    from ..faults import FaultSpec, make_task
    from ..reference import simple_reference
    from ..task import write_json, write_task

    asm = load_assembly(args.assembly)
    task = make_task(asm, [FaultSpec.parse(f) for f in args.fault], seed=args.seed, boundary=args.boundary)
    ref = simple_reference(task)
    if ref is None:
        raise InputError("no valid rework plan exists for these faults; try another seed or part", field="--fault")
    write_task(task, args.out)
    write_json(args.out / "reference.json", ref)
    n = len(ref["rework_plan"]["actions"])
    print(f"wrote {args.out} ({asm.assembly_id}, {len(ref['annotation']['mistakes'])} mistakes, reference plan of {n} actions)")
    return 0

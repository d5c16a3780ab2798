"""`forgeplan task make`: write a task folder (the eight public files plus reference.json)."""

from __future__ import annotations

from ..io.output import output_path

FAULT_TYPES = "missing_part, wrong_orientation, misplacement, under_insertion, wrong_part, interference_lock"


def register(sub) -> None:
    p = sub.add_parser("task", help="make rework tasks",
                       description="Make rework tasks: a faulty state of an assembly with its target state.")
    tsub = p.add_subparsers(dest="task_command", metavar="ACTION")
    tsub.required = True
    m = tsub.add_parser(
        "make", help="write a task for one assembly",
        description="Inject faults into one assembly and write a task folder: the public files (assembly, "
                    "graphs, faulty and target states, tolerances) and reference.json, the expected annotation "
                    "with a rework plan that clingo proved minimal (distinct moved parts, then actions). "
                    "--no-proof writes a faster, valid but not necessarily minimal plan instead; the message and "
                    "reference.json's `proof.optimal` say which. Exit 2 when the assembly cannot take the faults "
                    "(no locks for interference_lock, no spares for wrong_part, interlocked assembly).")
    m.add_argument("assembly", metavar="ASSEMBLY_ID", help="built-in id or assembly JSON file")
    m.add_argument("--out", required=True, type=output_path, help="task folder to write (must not exist yet)")
    m.add_argument("--fault", action="append", default=[], metavar="TYPE[:PART_ID]",
                   help=f"inject a fault (repeatable; default: none, a no-fault task); types: {FAULT_TYPES}; "
                        "without PART_ID the seed picks the part")
    m.add_argument("--seed", type=int, default=0, help="seed for the faulty part and the perturbation (default 0)")
    m.add_argument("--boundary", action="store_true", help="perturb poses inside the tolerances (boundary no-fault)")
    m.add_argument("--no-proof", action="store_true",
                   help="write the repair search's plan (valid, fast, not proved minimal) instead of clingo's")
    m.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                   help="seconds for clingo's proof (default 60); past it the best plan is kept, marked unproved")
    m.set_defaults(func=run_make, reads=("assembly",))


def run_make(args) -> int:
    from ..io.catalog import load_assembly
    from ..model.errors import InputError
    from ..semantics.faults import FaultSpec, make_task
    from ..io.output import new_folder, output_folder
    from ..io.quoting import one_line
    from ..planners.reference import describe_proof, proven_reference, simple_reference
    from ..io.task_files import write_json, write_task
    from . import plural

    output_folder(args.out, create=False)
    asm = load_assembly(args.assembly)
    task = make_task(asm, [FaultSpec.parse(f) for f in args.fault], seed=args.seed, boundary=args.boundary)
    ref = simple_reference(task) if args.no_proof else proven_reference(task, args.time_limit)
    if ref is None:
        raise InputError("no valid rework plan exists for these faults; try another seed or part", field="--fault")
    with new_folder(args.out) as folder:   # the whole task folder appears at once, or nothing
        write_task(task, folder)
        write_json(folder / "reference.json", ref)
    n, k = len(ref["rework_plan"]["actions"]), len(ref["annotation"]["mistakes"])
    print(f"wrote {one_line(args.out)} ({one_line(asm.assembly_id)}, {plural(k, 'mistake')}); "
          f"reference plan of {plural(n, 'action')}, {describe_proof(ref)}")
    return 0

"""`forgeplan import PATH --out ASSEMBLY_FILE`: a real puzzle (voxel JSON or BurrTools) as an assembly."""

from __future__ import annotations

from pathlib import Path

from ..io.output import output_path
from . import EXIT_NEGATIVE, emit_json, seconds


def register(sub) -> None:
    p = sub.add_parser(
        "import", help="import a voxel JSON puzzle or a BurrTools .xmpuzzle file as an assembly",
        description="Read a real interlocking puzzle (a voxel JSON puzzle, a BurrTools .xmpuzzle file or one of "
                    "the example puzzles shipped with forgeplan) and write it as an assembly JSON file that every "
                    "other command accepts. The summary says whether the assembly comes apart with straight "
                    "moves, and otherwise its partial-move level (see `assemblies --check`). Exit 0 when straight "
                    "or partial moves take it apart (tasks and benchmarks take it), 1 when some parts cannot be "
                    "separated by any sequence of moves (the file is still written, but forgeplan cannot use it), "
                    "2 on bad input.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("path", metavar="PATH", type=Path, nargs="?", help="puzzle file (.json or .xmpuzzle)")
    src.add_argument("--example", metavar="NAME",
                     help="a puzzle shipped with forgeplan instead of PATH (see --list-examples)")
    src.add_argument("--list-examples", action="store_true", help="list the shipped example puzzles and exit")
    p.add_argument("--out", type=output_path, metavar="ASSEMBLY_FILE", help="assembly JSON to write (required to import)")
    p.add_argument("--solution", type=int, default=None, metavar="N",
                   help="which stored solution of a BurrTools problem to import (0-based; default 0)")
    p.add_argument("--problem", type=int, default=0, metavar="P", help="which BurrTools problem (0-based; default 0)")
    p.add_argument("--time-limit", type=seconds, metavar="S",
                   help="the partial-move verdict comes within S seconds of the command's start, 'undecided' "
                        "when the search needs longer (default 8; 'inf': no clock, a memory cap still holds)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.set_defaults(func=run)


def _list_examples(as_json: bool) -> int:
    import json

    from ..io.quoting import one_line
    from ..io.resources import example_names, example_path

    rows = []
    for name in example_names():
        doc = json.loads(example_path(name).read_text(encoding="utf-8"))
        rows.append({"name": name, "pieces": doc.get("piece_count"), "level": doc.get("level"),
                     "license": doc.get("license"), "source": doc.get("source")})
    if as_json:
        emit_json(rows)
    else:
        for r in rows:
            print(one_line(f"{r['name']}  {r['pieces']} pieces, level {r['level']}, {r['license']}, from {r['source']}"))
    return 0


def _source(args) -> Path:
    from ..model.errors import InputError
    from ..io.resources import example_names, example_path

    if args.example is None:
        return args.path
    try:
        return example_path(args.example)
    except KeyError:
        raise InputError(f"no such example; expected one of {', '.join(example_names())}",
                         field="--example") from None


def run(args) -> int:
    from ..io.catalog import save_assembly
    from ..model.errors import InputError
    from ..geometry.partial import CLI_POSITIONS, CLI_SECONDS, Budget, partial_verdict
    from . import STARTED
    from ..geometry.separation import disassembly_verdict
    from ..io.quoting import one_line
    from ..io.importers import read_puzzle

    if args.list_examples:
        return _list_examples(args.json)
    if args.out is None:
        raise InputError("missing; expected the assembly JSON file to write", field="--out")
    imported = read_puzzle(_source(args), solution=args.solution, problem=args.problem)
    asm = imported.assembly
    save_assembly(asm, args.out)
    verdict = disassembly_verdict(asm)
    budget = Budget(CLI_POSITIONS, args.time_limit or CLI_SECONDS, start=STARTED)
    partial = None if verdict["disassemblable"] else partial_verdict(asm, budget=budget)
    if args.json:
        emit_json({"assembly_id": asm.assembly_id, "out": str(args.out), "family": asm.family,
                   "parts": [{"part_id": p.part_id, "kind": p.kind, "source_name": imported.piece_names[p.part_id],
                              "voxels": len(p.voxels)} for p in asm.parts],
                   "mode": verdict["mode"], "verdict": verdict["verdict"],
                   "partial_moves": None if partial is None else {k: partial[k] for k in ("mode", "level", "verdict")}})
    else:
        print(f"wrote {one_line(args.out)} ({asm.assembly_id}, {len(asm.parts)} parts); {verdict['verdict']}")
        if partial is not None:
            print(partial["verdict"])
        if not verdict["disassemblable"]:   # the source's names are free text: quoted for the terminal
            print("the source names these parts: " + ", ".join(f"{p} = {one_line(n, 200)}" for p, n in imported.piece_names.items()))
        if partial is not None and partial["disassemblable"] is False:
            print("forgeplan cannot use this assembly: tasks and benchmarks need one that comes apart")
    return 0 if (partial or verdict)["disassemblable"] else EXIT_NEGATIVE

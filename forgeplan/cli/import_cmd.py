"""`forgeplan import PATH --out ASSEMBLY_FILE`: a real puzzle (data/burr JSON or BurrTools) as an assembly."""

from __future__ import annotations

from pathlib import Path

from . import emit_json


def register(sub) -> None:
    p = sub.add_parser("import", help="import a data/burr JSON puzzle or a BurrTools .xmpuzzle file")
    p.add_argument("path", metavar="PATH", type=Path, help="puzzle file (.json or .xmpuzzle)")
    p.add_argument("--out", required=True, type=Path, metavar="ASSEMBLY_FILE", help="assembly JSON to write")
    p.add_argument("--solution", type=int, default=None, metavar="N",
                   help="which stored solution of a BurrTools problem to import (0-based, default 0)")
    p.add_argument("--problem", type=int, default=0, metavar="P", help="which BurrTools problem (0-based, default 0)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..assembly import save_assembly
    from ..errors import InputError
    from ..groups import disassembly_verdict
    from ..importers import read_puzzle

    imported = read_puzzle(args.path, solution=args.solution, problem=args.problem)
    asm = imported.assembly
    try:
        save_assembly(asm, args.out)
    except OSError as exc:
        raise InputError(f"cannot write assembly: {exc.strerror or exc}", file=str(args.out), field="--out") from None
    verdict = disassembly_verdict(asm)
    if args.json:
        emit_json({"assembly_id": asm.assembly_id, "out": str(args.out), "family": asm.family,
                   "parts": [{"part_id": p.part_id, "kind": p.kind, "source_name": imported.piece_names[p.part_id],
                              "voxels": len(p.voxels)} for p in asm.parts],
                   "mode": verdict["mode"], "verdict": verdict["verdict"]})
    else:
        print(f"wrote {args.out} ({asm.assembly_id}, {len(asm.parts)} parts); {verdict['verdict']}")
    return 0

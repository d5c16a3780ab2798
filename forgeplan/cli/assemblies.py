"""`forgeplan assemblies`: list the built-in library (or check one assembly file)."""

from __future__ import annotations

from ..io.quoting import one_line
from . import emit_json, seconds


def register(sub) -> None:
    p = sub.add_parser(
        "assemblies", help="list the built-in assemblies",
        description="List the built-in assemblies (id, family, parts, locks, spares, blocking depth, whether "
                    "they come apart one part at a time or need group or partial moves, and their level), or with --check validate one "
                    "assembly and say how it comes apart: with straight moves, or else with partial moves "
                    "(its BurrTools level and a replayable plan). Exit 1 when some parts cannot be separated "
                    "by any sequence of moves or the search is undecided within its budget (--time-limit); 2 on "
                    "bad input.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--check", metavar="ASSEMBLY", help="validate one assembly (id, assembly JSON file, or a puzzle "
                                                       "file as `import` reads it) and report")
    p.add_argument("--time-limit", type=seconds, metavar="S",
                   help="--check: the verdict comes within S seconds of the command's start; a partial-move search "
                        "that needs longer (or more than its memory cap) gives 'undecided within the budget', exit 1 "
                        "(default 8; 'inf': no clock)")
    p.set_defaults(func=run)


def _row(asm) -> dict:
    """One listing row; `moves` says whether the assembly comes apart one part at a time (`single_part`),
    needs the group moves separate/join (`group_moves`) or partial moves (`partial_moves`, SEMANTICS
    §9), and `level` is its BurrTools level (1 with straight moves)."""
    from ..geometry.graphs import blocking_depth
    from ..geometry.partial import partial_verdict
    from ..geometry.separation import disassembly_verdict

    verdict = disassembly_verdict(asm)
    if not verdict["disassemblable"]:
        verdict = partial_verdict(asm)
    return {"assembly_id": asm.assembly_id, "family": asm.family, "parts": len(asm.parts),
            "locks": len(asm.locks), "spares": len(asm.spares), "blocking_depth": blocking_depth(asm),
            "moves": verdict["mode"], "level": verdict.get("level") or "1"}


def run(args) -> int:
    from ..io.catalog import load_assembly, load_checkable
    from ..geometry.partial import CLI_POSITIONS, CLI_SECONDS, Budget, partial_verdict
    from . import STARTED
    from ..geometry.separation import disassembly_verdict
    from ..library import BUILTIN
    from . import EXIT_NEGATIVE

    if args.check is not None:
        asm = load_checkable(args.check)
        straight = disassembly_verdict(asm)
        verdict = straight if straight["disassemblable"] else \
            partial_verdict(asm, budget=Budget(CLI_POSITIONS, args.time_limit or CLI_SECONDS, start=STARTED))
        row = {"assembly_id": asm.assembly_id, "family": asm.family, "parts": len(asm.parts),
               "locks": len(asm.locks), "spares": len(asm.spares), **verdict}
        if straight["disassemblable"]:   # straight moves separate every subset in one move: level 1
            row["level"] = "1"
            row["blocking_depth"] = _row(asm)["blocking_depth"]
        if args.json:
            emit_json(row)
        else:
            print(one_line(f"{asm.assembly_id}: {verdict['verdict']} ({row['parts']} parts)"))
        return 0 if verdict["disassemblable"] else EXIT_NEGATIVE
    rows = [_row(load_assembly(a)) for a in BUILTIN]
    if args.json:
        emit_json(rows)
        return 0
    cols = ("assembly_id", "family", "parts", "locks", "spares", "blocking_depth", "moves", "level")
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths)))
    return 0

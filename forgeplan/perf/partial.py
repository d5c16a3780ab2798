"""Partial-move disassembly of real puzzles: time per puzzle against its level, the plan replayed, the level compared with the file's."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from . import machine

NAME = "partial"


def add_arguments(p) -> None:
    p.add_argument("--data", type=Path, default=None,
                   help="folder of voxel JSON puzzles (default: the example burrs shipped with forgeplan)")
    p.add_argument("--runs", type=int, default=3, help="disassembly runs per puzzle (median reported)")


def _disassemble_fresh(asm):
    """One disassembly from cold caches, so every run pays for its gap computations."""
    from ..geometry.displacement import shapes
    from ..geometry.partial import disassemble_partial

    shapes.cache_clear()
    disassemble_partial.cache_clear()
    t0 = time.perf_counter()
    tree = disassemble_partial(asm)
    return tree, time.perf_counter() - t0


def _row(path: Path, runs: int) -> dict:
    from ..geometry.displacement import replay_moves
    from ..io.guarded import read_json
    from ..io.importers import import_puzzle

    asm = import_puzzle(path)
    recorded = str(read_json(path, "puzzle file").get("level", ""))
    times, tree = [], None
    for _ in range(max(1, runs)):
        tree, seconds = _disassemble_fresh(asm)
        times.append(seconds)
    steps = [m.to_json() for m in tree.steps()]
    level = tree.level() or None
    replay = replay_moves(asm, steps)
    together = sorted(sorted(c) for c in replay.components if len(c) > 1)
    return {"puzzle": path.name, "parts": len(asm.parts), "voxels": sum(len(p.voxels) for p in asm.parts),
            "level": level, "recorded_level": recorded or None,
            "first_separation_matches": level is not None and level.split(".")[0] == recorded.split(".")[0],
            "level_matches": level == recorded, "first_separation_moves": len(tree.moves),
            "moves": len(steps), "slides": sum(1 for s in steps if s["distance"] != "out"),
            "states_searched": tree.states(), "inseparable": [list(s) for s in tree.stuck_sets()],
            "replays": replay.executed == len(steps) and together == sorted(sorted(s) for s in tree.stuck_sets()), "seconds": round(statistics.median(times), 4),
            "seconds_all": [round(t, 4) for t in times]}


def run(args) -> dict:
    from ..io.resources import examples_dir

    folder = args.data or examples_dir()
    rows = [_row(p, args.runs) for p in sorted(Path(folder).glob("*.json"))]
    by_level = {}
    for r in rows:
        if r["level"] is not None and r["level"] != "1":
            by_level[r["puzzle"]] = {"first": r["first_separation_moves"], "seconds": r["seconds"]}
    return {"benchmark": "partial", "runs": args.runs, "puzzles": len(rows),
            "first_separation_matches": sum(r["first_separation_matches"] for r in rows),
            "level_matches": sum(r["level_matches"] for r in rows),
            "replayed": sum(r["replays"] for r in rows),
            "fully_disassembled": sum(not r["inseparable"] for r in rows),
            "seconds": "median wall time of geometry.partial.disassemble_partial from cold caches (the level, the "
                       "plan and every sub-assembly's search)",
            "time_vs_level": by_level, "rows": rows, **machine()}


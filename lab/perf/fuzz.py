"""Hostile-input fuzzing of every entry point (lab.fuzzing): cases per entry point, crashes, peak memory.

The figures behind docs/limits.md: how many mutated cases each entry point judged as a verdict, a
one-line error or a crash, the peak memory of the fuzz cases and of the large rejected inputs, the
time-limit overshoot of `solve`, and, per structure-aware hostile input (`fuzzing.hostile_inputs`) and
per misbehaviour of the hostile endpoint, the exit code, seconds and peak memory.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

from ..fuzzing import (ENDPOINT_BEHAVIOURS, ENTRY_POINTS, HostileEndpoint, Sandbox, _ok, fuzz_case, hostile_inputs,
                       large_inputs, peak_rss, run_cli)

NAME = "fuzz"


def add_arguments(p) -> None:
    p.add_argument("--cases", type=int, default=200, help="mutated cases per entry point (default 200)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the mutations (default 0); another seed explores new cases, and a crash is "
                        "reported with the seed that replays it")
    p.add_argument("--bench", type=Path, help="a benchmark folder to fuzz a copy of (default: build a 20-task one)")
    p.add_argument("--entry", choices=list(ENTRY_POINTS), action="append", help="only these entry points")
    p.add_argument("--runs", type=int, default=5, help="repetitions of each time-limit overshoot measurement")
    p.add_argument("--hostile-only", action="store_true",
                   help="only the structure-aware hostile inputs and the hostile endpoint (no mutated cases)")


def run(args) -> dict:
    from . import machine

    rng = random.Random(args.seed)
    report: dict = {"benchmark": "fuzz", "seed": args.seed, "cases_per_entry_point": args.cases, "entry_points": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench = None
        if args.bench is not None:
            bench = root / "bench"
            shutil.copytree(args.bench, bench)
        sb = Sandbox(root, bench)
        cwd = os.getcwd()
        os.chdir(root)  # a relative write would land in the sandbox and be seen
        try:
            for entry in [] if args.hostile_only else args.entry or ENTRY_POINTS:
                report["entry_points"][entry] = _fuzz_entry(sb, entry, args.cases, rng)
            report["hostile_endpoint"] = _endpoint(sb)
        finally:
            os.chdir(cwd)
        report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # of the fuzz cases
        report["hostile_inputs"] = _hostile(root / "hostile", sb.bench, sb.task)
        if not args.hostile_only:
            report["time_limit_overshoot_s"] = _overshoot(root, args.runs)
            report["large_rejected_inputs"] = {name: dict(zip(("exit", "peak_rss_mb"), peak_rss(argv)))
                                               for name, argv in large_inputs(root / "large", sb.task).items()}
    report["crashes"] = sum(e["crashes"] for e in report["entry_points"].values())
    # a hostile input answered with the wrong exit code, over 300 MB or (wall time, so the load counts) 10 s
    report["hostile_failures"] = sorted(name for part in ("hostile_inputs", "hostile_endpoint")
                                        for name, h in report[part].items() if not h["ok"])
    return {**report, **machine()}


def _hostile(folder: Path, bench: Path, task: Path) -> dict:
    """Each structure-aware hostile input in a fresh process: exit code, peak RSS, wall seconds, and
    whether that is a correct answer (an expected exit code, under 300 MB and 10 s)."""
    out = {}
    for name, (argv, codes) in hostile_inputs(folder, bench, task).items():
        t0 = time.perf_counter()
        code, mb = peak_rss(argv)
        seconds = round(time.perf_counter() - t0, 2)
        out[name] = {"exit": code, "peak_rss_mb": mb, "seconds": seconds,
                     "ok": code in codes and mb < 300 and seconds < 10}
    return out


def _endpoint(sb: Sandbox) -> dict:
    """`infer --endpoint` against each misbehaviour of the hostile server (in this process): exit code,
    seconds, and whether the answer is right (exit 2 with one error line; exit 1 for free text under a grammar)."""
    out = {}
    with HostileEndpoint(lifetime=600) as srv:
        for behaviour in ENDPOINT_BEHAVIOURS:
            t0 = time.perf_counter()
            o = run_cli(["infer", "--endpoint", srv.url(behaviour), "--bench", sb.bench, "--out", sb.out / "p.jsonl",
                         "--limit", "1", "--timeout", "2", "--retries", "1"])
            want = 1 if behaviour == "free-text" else 2
            last = o.err.rstrip("\n").split("\r")[-1].split("\n")[-1]
            out[behaviour] = {"exit": o.code, "seconds": round(time.perf_counter() - t0, 2),
                              "error": last[:160], "ok": o.code == want and last.startswith("forgeplan")}
    return out


def _overshoot(root: Path, runs: int) -> dict:
    """Median seconds past `solve --time-limit` on the built-in assembly with the longest grounding."""
    from forgeplan.planners.asp.solve import solve_task
    from forgeplan.io.task_files import load_task

    _ok(run_cli(["task", "make", "burr_6_split", "--out", root / "burr", "--fault", "missing_part"]))
    task = load_task(root / "burr")
    out = {}
    for limit in (1e-6, 0.05, 0.2):
        over = []
        for _ in range(runs):
            t0 = time.perf_counter()
            solve_task(task, time_limit=limit)
            over.append(time.perf_counter() - t0 - limit)
        out[f"{limit:g}"] = round(max(0.0, sorted(over)[len(over) // 2]), 3)
    return {"task": "burr_6_split missing_part", "median_by_limit": out, "runs": runs}


def _fuzz_entry(sb: Sandbox, entry: str, cases: int, rng: random.Random) -> dict:
    counts = {"cases": 0, "verdicts": 0, "clean_errors": 0, "crashes": 0}
    examples: list[str] = []
    t0 = time.perf_counter()
    for _ in range(cases):
        seed = rng.randrange(2**32)  # each case replays alone: tests/test_fuzz_inputs.py's REGRESSIONS take (entry, seed)
        o, crash = fuzz_case(sb, entry, random.Random(seed))
        counts["cases"] += 1
        if crash:
            counts["crashes"] += 1
            if len(examples) < 3:
                examples.append(f"seed {seed}: {crash[:300]}")
        else:
            counts["clean_errors" if o.code == 2 else "verdicts"] += 1
    return {**counts, "crash_examples": examples, "seconds": round(time.perf_counter() - t0, 2),
            "peak_rss_mb_so_far": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}

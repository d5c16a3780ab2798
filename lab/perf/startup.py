"""Start-up: wall and CPU time of short commands in a fresh interpreter, against `python -c pass`.

Each command runs `--runs` times as a new process of this interpreter, after one untimed run that
writes the bytecode cache (into a temporary folder, as an installed package has it). CPU time (user +
system of the child) is what a quiet machine would show as wall time; on a shared machine the wall time
includes waiting for a core.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import machine

NAME = "startup"
TARGETS = {"forgeplan --version": 0.3, "forgeplan verify --help": 0.3, "forgeplan verify TASK OUTPUT": 0.6}


def add_arguments(p) -> None:
    p.add_argument("--runs", type=int, default=10, help="timed runs per command (medians reported)")


def _timed(argv: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _row(label: str, argv: list[str], env: dict, cwd: Path, runs: int, base: float | None) -> dict:
    _timed(argv, env, cwd)  # writes the bytecode cache
    walls, cpus = zip(*(_timed(argv, env, cwd) for _ in range(runs)))
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    row = {"command": label, "wall_s_median": round(wall, 3), "cpu_s_median": round(cpu, 3),
           "wall_s_min": round(min(walls), 3)}
    if base is not None:
        row["cpu_s_over_python"] = round(cpu - base, 3)
    if label in TARGETS:
        row["target_s"] = TARGETS[label]
    return row


def _task(folder: Path, env: dict) -> tuple[Path, Path]:
    """A one-fault task of a built-in assembly and its proven plan, as `verify` reads them."""
    task, output = folder / "t1", folder / "output.json"
    fp = [sys.executable, "-m", "forgeplan"]
    subprocess.run([*fp, "task", "make", "bayonet_structure", "--out", str(task), "--no-proof",
                    "--fault", "missing_part:BayonetStructure_Part02_Pin"], env=env, check=True, capture_output=True)
    with output.open("w", encoding="utf-8") as f:
        subprocess.run([*fp, "solve", str(task), "--json"], env=env, check=True, stdout=f)
    return task, output


def run(args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        task, output = _task(folder, env)
        fp = [sys.executable, "-m", "forgeplan"]
        base = _row("python -c pass", [sys.executable, "-c", "pass"], env, folder, args.runs, None)
        rows = [base] + [_row(label, argv, env, folder, args.runs, base["cpu_s_median"]) for label, argv in (
            ("forgeplan --version", [*fp, "--version"]),
            ("forgeplan verify --help", [*fp, "verify", "--help"]),
            ("forgeplan solve --help", [*fp, "solve", "--help"]),
            ("forgeplan verify TASK OUTPUT", [*fp, "verify", str(task), str(output)]))]
    return {"benchmark": "startup", "runs": args.runs, "statistic": "median over runs, bytecode cached",
            "task": "bayonet_structure, missing_part:BayonetStructure_Part02_Pin; the plan of `solve --json`",
            "commands": rows, **machine()}

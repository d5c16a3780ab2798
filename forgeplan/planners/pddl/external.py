"""Run an installed PDDL planner (Fast Downward, pyperplan) on a task's export and read its plan back.

The planner sees exactly the files `forgeplan export-pddl --profile P` writes; its plan file is replayed in
that PDDL task and mapped back (`replay.Replay.read`), as `import-plan` reads a plan: a plan the task
refuses is an error, never a repair. The default profile and
configuration of each planner are ones it handles (domains/README.md has the table):

| planner | default profile | default configuration | optimal for |
|---|---|---|---|
| `fd` | `strips-costs` | `astar(lmcut())` | the profile's action costs |
| `pyperplan` | `strips` | `-s astar -H lmcut` | plan length |
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...model.actions import Action
from ...model.choices import PLANNERS
from ...model.errors import InputError
from ...semantics.grounded import plan_value
from ...semantics.task import Task
from .files import write_pddl
from .profiles import build_export


@dataclass
class ExternalResult:
    """An external planner's run on one export: its plan in forgeplan actions (None: no plan)."""

    planner: str
    profile: str
    config: str
    returncode: int | None            # None: killed at the time limit
    plan: tuple[Action, ...] | None
    cost: int | None                  # the plan's cost under the export's objective
    seconds: float


def fast_downward_script() -> Path:
    """The Fast Downward driver that up-fast-downward ships."""
    import up_fast_downward

    return Path(up_fast_downward.__file__).parent / "downward" / "fast-downward.py"


def _command(planner: str, config: str, domain: Path, problem: Path, plan_file: Path) -> list[str]:
    if planner == "fd":
        return [sys.executable, str(fast_downward_script()), "--plan-file", str(plan_file), str(domain), str(problem),
                "--search", config]
    return [sys.executable, "-m", "pyperplan", *config.split(), str(domain), str(problem)]


def run_planner(command: list[str], cwd: Path, time_limit: float | None) -> int | None:
    """Run `command` in its own process group; the whole group is killed at the time limit (None then)."""
    import signal

    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True) as proc:
        try:
            return proc.wait(timeout=time_limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None


def solve_files(planner: str, domain: Path, problem: Path, config: str | None = None,
                time_limit: float | None = None) -> tuple[int | None, str | None]:
    """Run `planner` on PDDL files in a scratch folder: (exit code, None at the time limit; plan text or None).

    The files are copied there first, since Fast Downward writes output.sas into its working folder
    and pyperplan writes its plan next to the problem file.
    """
    import shutil

    if planner not in PLANNERS:
        raise InputError(f"planner {planner!r} must be one of {list(PLANNERS)}", field="--planner")
    with tempfile.TemporaryDirectory(prefix=f"forgeplan-{planner}-") as tmp:
        folder = Path(tmp)
        d, p = folder / "domain.pddl", folder / "problem.pddl"
        shutil.copyfile(domain, d)
        shutil.copyfile(problem, p)
        plan_file = folder / ("sas_plan" if planner == "fd" else "problem.pddl.soln")
        code = run_planner(_command(planner, config or PLANNERS[planner][1], d, p, plan_file), folder, time_limit)
        text = plan_file.read_text(encoding="utf-8") if code is not None and plan_file.exists() else None
    return code, text


def plan_external(task: Task, planner: str = "fd", *, profile: str | None = None, config: str | None = None,
                  objective: str | None = None, grounded: bool = False, time_limit: float | None = None) -> ExternalResult:
    """Export `task` under `profile` (default: the planner's), run `planner` on it and import its plan.

    No plan (unsolvable, unsupported configuration, time limit) gives `plan=None` with the planner's
    exit code; a plan file that does not parse or names unknown actions raises InputError.
    """
    if planner not in PLANNERS:
        raise InputError(f"planner {planner!r} must be one of {list(PLANNERS)}", field="--planner")
    profile = profile or PLANNERS[planner][0]
    config = config or PLANNERS[planner][1]
    export = build_export(task, profile, objective, grounded=grounded)
    with tempfile.TemporaryDirectory(prefix="forgeplan-export-") as tmp:
        domain, problem, *_ = write_pddl(export, tmp)
        t0 = time.perf_counter()
        code, text = solve_files(planner, domain, problem, config, time_limit)
        seconds = time.perf_counter() - t0
    plan = None if text is None else _replayed(export, text, f"{planner} plan")
    cost = None if plan is None else plan_value(export.objective, plan, export.enc.weight)
    return ExternalResult(planner, profile, config, code, plan, cost, seconds)


def _replayed(export, text: str, file: str) -> tuple[Action, ...]:
    """The planner's plan, valid in the task it was given, as forgeplan actions (a refused plan is a bug of
    the planner or of the export: an internal error, never a repair)."""
    from .replay import Replay

    verdict, plan = Replay(export).read(text, file)
    if plan is None:
        raise RuntimeError(f"internal: {file} is {verdict.reason()}")
    return plan

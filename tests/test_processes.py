"""Processes that end: SIGTERM and SIGHUP end a command as Ctrl-C does (exit 130), and every process it
started ends with it, Fast Downward's own sessions included (docs/limits.md, "Signals")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from forgeplan.executors import run_batches

ROOT = Path(__file__).resolve().parents[1]


def _sleeper(seconds: float) -> int:
    """A batch that starts a process in a session of its own (as Fast Downward runs) and waits for it."""
    child = subprocess.Popen(["sleep", str(seconds)], start_new_session=True)
    child.wait()
    return child.pid


def _descendants() -> list[psutil.Process]:
    return psutil.Process().children(recursive=True)


def _sleeping(procs: list[psutil.Process]) -> int:
    """How many of `procs` are the sleepers' `sleep`."""
    n = 0
    for p in procs:
        try:
            n += p.name() == "sleep"
        except psutil.Error:
            continue
    return n


def test_an_interrupted_pool_ends_its_workers_and_what_they_started():
    """An exception while the pool waits (what SIGTERM raises in the command line) ends every worker and
    the session each started, at once, instead of waiting minutes for the running batches."""
    def interrupt_once_sleeping(signum, frame):
        if _sleeping(_descendants()) < 2:
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            return
        started.extend(_descendants())
        raise RuntimeError("interrupted")

    started: list[psutil.Process] = []
    old = signal.signal(signal.SIGALRM, interrupt_once_sleeping)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        with pytest.raises(RuntimeError, match="interrupted"):
            list(run_batches(_sleeper, [(120,), (120,), (120,)], jobs=2))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert len(started) == 4   # two workers, and the session each started
    _, alive = psutil.wait_procs(started, timeout=5)
    assert not alive, alive


def _run_until_busy(argv: list, busy: int) -> tuple[subprocess.Popen, list[psutil.Process]]:
    """`forgeplan ARGV` in a fresh process, once it has `busy` descendants (its workers)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "forgeplan", *map(str, argv)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    me, deadline = psutil.Process(proc.pid), time.monotonic() + 120
    while len(me.children(recursive=True)) < busy and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    return proc, me.children(recursive=True)


def _ends_cleanly(proc: subprocess.Popen, started: list[psutil.Process], sig: int) -> None:
    proc.send_signal(sig)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "forgeplan: interrupted", err[-500:]
    _, alive = psutil.wait_procs(started, timeout=5)
    assert not alive, [(p.pid, p.name()) for p in alive]


@pytest.mark.slow
def test_sigterm_ends_a_parallel_build_and_its_workers(tmp_path):
    out = tmp_path / "bench"
    proc, started = _run_until_busy(["bench", "build", "--out", out, "--tasks", "400", "--jobs", "2", "--quiet"], 2)
    _ends_cleanly(proc, started, signal.SIGTERM)
    assert (out / "build.json").is_file() and not (out / "manifest.json").exists() and not (out / ".partial").exists()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_ends_a_parallel_crosscheck_and_every_planner(small_bench, sig):
    proc, started = _run_until_busy(["crosscheck", small_bench / "tasks", "--jobs", "2"], 2)
    _ends_cleanly(proc, started, sig)


# ----------------------------------------------------------------------------- budgets

def _allocate(mb: int) -> int:
    block = bytearray(mb * 2 ** 20)
    time.sleep(60)
    return len(block)


def _refuse() -> None:
    from forgeplan.model.errors import InputError

    raise InputError("no such thing", file="f.json", field="x")


def test_a_bounded_call_stops_at_its_memory_or_time_budget():
    from forgeplan.executors import run_bounded
    from forgeplan.model.errors import InputError

    assert run_bounded(sum, ([1, 2, 3],), None, 500) == ("done", 6)
    assert run_bounded(_allocate, (300,), None, 100) == ("memory", None)
    assert run_bounded(time.sleep, (60,), 0.2, 500) == ("time", None)
    with pytest.raises(InputError, match="f.json: x: no such thing"):
        run_bounded(_refuse, (), None, 500)
    assert not _descendants()


@pytest.mark.slow
def test_extra_steps_stay_within_the_time_limit_grounding_included(tmp_path):
    """Forty extra steps ground for an hour and gigabytes on a level-4 burr; the time limit ends the
    checker (unknown), the maximum refuses more."""
    import json

    from lab.fuzzing import run_cli

    task = tmp_path / "t"
    assert run_cli(["task", "make", "burr_6_level4", "--out", task, "--fault", "misplacement", "--no-proof"]).code == 0
    o = run_cli(["crosscheck", task, "--extra-steps", "40", "--time-limit", "2", "--json"])
    checker = json.loads(o.out)["comparisons"][0]["checker"]
    assert o.code == 0 and checker["status"] == "timeout" and not checker["exhausted"]
    o = run_cli(["crosscheck", task, "--extra-steps", "51"])
    assert o.code == 2 and "--extra-steps" in o.err

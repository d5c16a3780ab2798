"""Processes that end: SIGTERM and SIGHUP end a command as Ctrl-C does (exit 128 + the signal: 143, 129,
130), and every process it started ends with it, Fast Downward's own sessions included, even when the
command itself is killed outright (docs/limits.md, "Signals")."""

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
    started = me.children(recursive=True)   # one look at the tree: a planner may end between two looks
    while len(started) < busy and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
        started = me.children(recursive=True)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    assert len(started) >= busy
    return proc, started


def _ended(procs: list[psutil.Process], timeout: float = 5) -> list[tuple[int, str]]:
    """Those of `procs` still running `timeout` seconds from now (a zombie that no one reaped has ended)."""
    deadline, alive = time.monotonic() + timeout, list(procs)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _running(p)]
    return [(p.pid, p.name()) for p in alive if _running(p)]


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _ends_cleanly(proc: subprocess.Popen, started: list[psutil.Process], sig: int) -> None:
    proc.send_signal(sig)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 128 + sig and err.strip().splitlines()[-1] == "forgeplan: interrupted", err[-500:]
    assert not _ended(started)


def _killed_outright(proc: subprocess.Popen, started: list[psutil.Process]) -> None:
    """SIGKILL, which no handler sees: the workers end by themselves, with what they started."""
    proc.kill()
    proc.wait(timeout=60)
    assert not _ended(started)


SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT, "SIGHUP": signal.SIGHUP}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGKILL"])
def test_a_signal_ends_a_parallel_build_and_its_workers(tmp_path, name):
    out = tmp_path / "bench"
    proc, started = _run_until_busy(["bench", "build", "--out", out, "--tasks", "400", "--jobs", "2", "--quiet"], 2)
    if name == "SIGKILL":
        _killed_outright(proc, started)
        return
    _ends_cleanly(proc, started, SIGNALS[name])
    assert (out / "build.json").is_file() and not (out / "manifest.json").exists() and not (out / ".partial").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGKILL"])
def test_a_signal_ends_a_parallel_crosscheck_and_every_planner(small_bench, name):
    # two workers and a planner running (Fast Downward's driver and its translator or search)
    proc, started = _run_until_busy(["crosscheck", small_bench / "tasks", "--jobs", "2"], 4)
    if name == "SIGKILL":
        _killed_outright(proc, started)
    else:
        _ends_cleanly(proc, started, SIGNALS[name])


POOL = """
import subprocess, sys, clingo
from forgeplan.executors import run_batches

def batch(kind):
    print(kind, flush=True)
    if kind == "session":   # a process in a session of its own, as Fast Downward runs
        subprocess.Popen(["sleep", "120"], start_new_session=True).wait()
    else:                   # minutes inside clingo's grounding, where no Python signal handler runs
        ctl = clingo.Control()
        ctl.add("base", [], "p(1..1000). :- p(X), p(Y), p(Z), X+Y+Z = -1.")
        ctl.ground([("base", [])])

list(run_batches(batch, [("session",), ("grounding",)], jobs=2))
"""


def test_workers_end_with_a_parent_killed_outright():
    """A pool's workers end when their parent is killed outright (the parent-death signal): one inside a
    C library, one waiting for a process in a session of its own, which ends with it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", POOL], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert sorted(proc.stdout.readline().strip() for _ in range(2)) == ["grounding", "session"]
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 30
    while _sleeping(me.children(recursive=True)) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    started = me.children(recursive=True)
    assert len(started) == 3
    proc.kill()
    proc.wait(timeout=60)
    assert not _ended(started)


def _files_up_to_16_kb() -> None:
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


@pytest.mark.slow
def test_a_parallel_build_that_fails_on_a_full_disk_exits(tmp_path):
    """The pool's workers are ended without reaping them behind its back: the pool's shutdown at exit
    would otherwise wait for ever for workers it cannot see end (this build hung after its error)."""
    out = tmp_path / "m"
    done = subprocess.run([sys.executable, "-m", "forgeplan", "bench", "build", "--profile", "magar", "--out", str(out),
                           "--tasks", "40", "--quiet", "--jobs", "2"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120, preexec_fn=_files_up_to_16_kb)
    assert done.returncode == 2 and "file too large" in done.stderr, done.stderr[-500:]
    assert not out.exists() and not list(tmp_path.iterdir())


def _worker(parent: int, ready) -> None:
    from forgeplan.executors import worker_signals

    worker_signals(parent)
    sleeper = subprocess.Popen(["sleep", "120"], start_new_session=True)
    import clingo

    ctl = clingo.Control()
    ctl.add("base", [], "p(1..1000). :- p(X), p(Y), p(Z), X+Y+Z = -1.")
    ready.send(sleeper.pid)
    ctl.ground([("base", [])])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_worker_sent_a_stop_signal_inside_a_c_library_ends_with_what_it_started(sig):
    """Exit 128 + the signal at once, although its main thread is in clingo's grounding, where no Python
    handler runs, and the process it started in its own session ends too."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    worker = ctx.Process(target=_worker, args=(os.getpid(), send))
    worker.start()
    sleeper = psutil.Process(receive.recv())
    time.sleep(0.3)   # into the grounding
    os.kill(worker.pid, sig)
    worker.join(30)
    assert worker.exitcode == 128 + sig
    assert not _ended([sleeper])

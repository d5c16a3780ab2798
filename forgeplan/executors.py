"""Where batches of work run: in this process, in local worker processes, or on a Ray cluster.

Each batch is one call `fn(*args)`; results come back in completion order (callers order them by
what they hold), so the output never depends on the executor. Ray is an optional extra
(`pip install forgeplan[distributed]`): without `address` it starts a local cluster of `jobs` CPUs,
with one it joins an existing cluster, on whose nodes forgeplan must be installed at the same version.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from .model.errors import ForgeplanError, InputError, Interrupted

EXECUTORS = ("local", "ray")


def run_batches(fn, batches: list[tuple], jobs: int = 1, executor: str = "local", address: str | None = None):
    """Yield `fn(*batch)` for every batch, in completion order."""
    if executor == "ray":
        yield from _ray(fn, batches, jobs, address)
    elif executor != "local":
        raise InputError(f"must be one of {list(EXECUTORS)}, got {executor!r}", field="--executor")
    elif jobs <= 1 or len(batches) <= 1:
        for batch in batches:
            _check_interrupt()
            yield fn(*batch)
    else:
        yield from _processes(fn, batches, jobs)


def release_freed_memory() -> None:
    """Return the heap's free pages to the system after a batch (glibc's `malloc_trim`; elsewhere a no-op).
    glibc keeps freed memory resident, so a worker would otherwise hold, batch after batch, the high-water
    mark of every clingo control it has freed, scattered through its heap."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):   # not glibc
        return
    trim(0)


def run_ordered(fn, batches: list[tuple], jobs: int = 1, executor: str = "local", address: str | None = None):
    """Yield `(batch, fn(*batch))` in batch order (each as soon as it and all before it are done)."""
    ready: dict[int, object] = {}
    nxt = 0
    for k, result in run_batches(_numbered, [(fn, k, b) for k, b in enumerate(batches)], jobs, executor, address):
        ready[k] = result
        while nxt in ready:
            yield batches[nxt], ready.pop(nxt)
            nxt += 1


def _numbered(fn, k: int, batch: tuple):
    return k, fn(*batch)


def _start_method() -> str:
    """fork, unless this process runs a Ray client: a fork copies its gRPC threads mid-call and the child
    can crash at its first step, so the workers start as fresh interpreters, children of this process (spawn)."""
    ray = sys.modules.get("ray")
    return "spawn" if ray is not None and ray.is_initialized() else "fork"


def _processes(fn, batches: list[tuple], jobs: int):
    # an executor (not multiprocessing.Pool) so that a worker that dies raises instead of hanging
    pool = ProcessPoolExecutor(min(jobs, len(batches)), mp_context=multiprocessing.get_context(_start_method()),
                               initializer=worker_signals, initargs=(os.getpid(),))
    finished = False
    try:
        pending = {pool.submit(fn, *batch) for batch in batches}
        while pending:
            done, pending = wait(pending, timeout=CHECK_SECONDS, return_when=FIRST_COMPLETED)
            _check_interrupt()
            for future in done:
                yield future.result()
        finished = True
    except BrokenProcessPool:
        raise ForgeplanError("a worker process died (killed from outside or out of memory)") from None
    finally:
        if not finished:   # interrupted, failed, or abandoned by the caller: do not wait for running batches
            end_processes(list(getattr(pool, "_processes", None) or {}), reap=False)
        pool.shutdown(wait=finished, cancel_futures=True)


class InterruptNote:
    """The stop signal the command line's handler noted (0: none), kept in case the KeyboardInterrupt it
    raised was swallowed where it landed (Python ignores an exception raised in a fork's callback)."""

    def __init__(self) -> None:
        self.signum = 0

    def set(self, signum: int) -> None:
        self.signum = signum

    def clear(self) -> None:
        self.signum = 0


INTERRUPT = InterruptNote()
CHECK_SECONDS = 0.5   # how often a wait for workers looks at it


def _check_interrupt() -> None:
    """Raise the interrupt that a signal noted."""
    if INTERRUPT.signum:
        raise Interrupted(INTERRUPT.signum)


def worker_signals(parent: int) -> None:
    """Set up a forked worker of process `parent`: it leaves Ctrl-C to its parent (which ends it); at
    SIGTERM or SIGHUP it ends every process it started and exits 128 + the signal; and it ends with its
    parent even when that is killed outright (Linux: the parent-death signal, SIGTERM; a parent that died
    before that was set is noticed here)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_at_stop_signals()
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (AttributeError, OSError, TypeError):   # not Linux
        pass
    if os.getppid() != parent:
        _end_worker(signal.SIGTERM)


def _end_at_stop_signals() -> None:
    """SIGTERM and SIGHUP end this worker at once, even while its main thread is inside a C library
    (clingo's grounding), where no Python signal handler runs: the signal's byte, written to a wake-up
    pipe, wakes a thread that ends the worker."""
    import psutil  # noqa: F401 - imported now, not inside a signal's handler

    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: _end_worker(signum))

    def watch() -> None:
        while True:
            for signum in os.read(read, 64):
                if signum in (signal.SIGTERM, signal.SIGHUP):
                    _end_worker(signum)

    threading.Thread(target=watch, name="forgeplan-stop-signals", daemon=True).start()


def _end_worker(signum: int) -> None:
    """End every process this worker started (Fast Downward in its own session), then the worker."""
    try:
        end_children(grace=1.0)
    finally:
        os._exit(128 + signum)


PR_SET_PDEATHSIG = 1
GRACE_SECONDS = 3.0   # a process asked to end (SIGTERM) gets this long before it is killed


def end_processes(pids: list[int], grace: float = GRACE_SECONDS, reap: bool = True) -> None:
    """End the processes `pids` and every process they started (Fast Downward runs in its own session,
    out of reach of a process-group signal): SIGTERM to all at once, SIGKILL to any still alive after
    `grace` seconds. `reap=False`: leave the exit status of `pids` to their owner (a process pool, whose
    shutdown waits for its workers to be seen ending and would otherwise wait for ever)."""
    import psutil

    procs = []
    for pid in pids:
        try:
            p = psutil.Process(pid)
            procs += [p, *p.children(recursive=True)]
        except psutil.Error:
            continue
    for p in procs:
        try:
            p.terminate()
        except psutil.Error:
            pass
    alive = _wait_ended(procs, grace, reap)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    _wait_ended(alive, grace, reap)


def _wait_ended(procs: list, grace: float, reap: bool) -> list:
    """Those of `procs` (psutil processes) still running after at most `grace` seconds; with `reap`, the
    ended children among them are reaped (psutil.wait_procs), else only watched."""
    import psutil

    if reap:
        return psutil.wait_procs(procs, timeout=grace)[1]

    def running(p) -> bool:
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    deadline, alive = time.monotonic() + grace, [p for p in procs if running(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        alive = [p for p in alive if running(p)]
    return alive


def end_children(grace: float = GRACE_SECONDS) -> None:
    """End every process this one started, and theirs (`end_processes`)."""
    import psutil

    end_processes([p.pid for p in psutil.Process().children()], grace)


def ray_module():
    """The `ray` package, or a clear error naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise InputError("the Ray executor needs the optional extra: pip install 'forgeplan[distributed]'",
                         field="--executor") from None
    return ray


def init_ray(jobs: int, address: str | None = None) -> None:
    """Join the Ray cluster at `address`, or start a local one with `jobs` CPUs whose workers import
    this very forgeplan, wherever it lies."""
    ray = ray_module()
    if address:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        return
    source = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p)
    ray.init(num_cpus=max(1, jobs), include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})


def _ray(fn, batches: list[tuple], jobs: int, address: str | None):
    """Batches as Ray tasks of one CPU each, on the running cluster (or one started for this call)."""
    ray = ray_module()
    started = not ray.is_initialized()
    if started:
        init_ray(jobs, address)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(fn)
        pending = [remote.remote(*batch) for batch in batches]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


# ----------------------------------------------------------------------------- one call under a budget

POLL_SECONDS = 0.05


def run_bounded(fn, args: tuple, seconds: float | None, max_mb: int):
    """`fn(*args)` in a child process (forked), stopped at `seconds` of wall time or at `max_mb` megabytes
    resident beyond what it inherits from this process, whichever comes first, with everything it started:
    ("done", value), ("time", None) or ("memory", None). A C library that cannot be interrupted (clingo's grounding) is bounded this way.
    The child's InputError is raised here as it was; any other exception is a RuntimeError naming it."""
    import psutil

    ctx = multiprocessing.get_context("fork")
    inherited = psutil.Process().memory_info().rss    # the child's pages are the parent's until it writes them
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_bounded_child, args=(send, fn, args, os.getpid()))
    proc.start()
    send.close()
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        watched = psutil.Process(proc.pid)
        while not receive.poll(POLL_SECONDS):
            if not proc.is_alive() and not receive.poll():
                raise ForgeplanError(f"the process computing {getattr(fn, '__name__', 'a result')} died "
                                     f"(exit {proc.exitcode}: killed from outside or out of memory)")
            if deadline is not None and time.monotonic() > deadline:
                return "time", None
            try:
                if watched.memory_info().rss - inherited > max_mb * 2 ** 20:
                    return "memory", None
            except psutil.Error:
                continue
        return _answer(receive.recv())
    finally:
        if proc.is_alive() and proc.pid is not None:
            end_processes([proc.pid], grace=1.0)
        proc.join()
        receive.close()


def _bounded_child(send, fn, args: tuple, parent: int) -> None:
    worker_signals(parent)
    try:
        send.send(("done", fn(*args)))
    except InputError as exc:
        send.send(("input", (exc.reason, exc.file, exc.field)))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
        send.send(("error", f"{type(exc).__name__}: {exc}"))


def _answer(message: tuple):
    kind, value = message
    if kind == "input":
        reason, file, field = value
        raise InputError(reason, file=file, field=field)
    if kind == "error":
        raise RuntimeError(value)
    return kind, value

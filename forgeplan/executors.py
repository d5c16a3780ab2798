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
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from .model.errors import ForgeplanError, InputError

EXECUTORS = ("local", "ray")


def run_batches(fn, batches: list[tuple], jobs: int = 1, executor: str = "local", address: str | None = None):
    """Yield `fn(*batch)` for every batch, in completion order."""
    if executor == "ray":
        yield from _ray(fn, batches, jobs, address)
    elif executor != "local":
        raise InputError(f"must be one of {list(EXECUTORS)}, got {executor!r}", field="--executor")
    elif jobs <= 1 or len(batches) <= 1:
        for batch in batches:
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


def _processes(fn, batches: list[tuple], jobs: int):
    # an executor (not multiprocessing.Pool) so that a worker that dies raises instead of hanging
    pool = ProcessPoolExecutor(min(jobs, len(batches)), mp_context=multiprocessing.get_context("fork"),
                               initializer=_worker_signals)
    finished = False
    try:
        for future in as_completed([pool.submit(fn, *batch) for batch in batches]):
            yield future.result()
        finished = True
    except BrokenProcessPool:
        raise ForgeplanError("a worker process died (killed from outside or out of memory)") from None
    finally:
        if not finished:   # interrupted, failed, or abandoned by the caller: do not wait for running batches
            end_processes(list(getattr(pool, "_processes", None) or {}))
        pool.shutdown(wait=finished, cancel_futures=True)


def _worker_signals() -> None:
    """A worker ends at SIGTERM and SIGHUP (the parent's handlers would turn them into an exception the
    pool hands back), leaves Ctrl-C to its parent, which ends it, and ends with its parent (Linux)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (AttributeError, OSError, TypeError):   # not Linux
        pass


PR_SET_PDEATHSIG = 1
GRACE_SECONDS = 3.0   # a process asked to end (SIGTERM) gets this long before it is killed


def end_processes(pids: list[int], grace: float = GRACE_SECONDS) -> None:
    """End the processes `pids` and every process they started (Fast Downward runs in its own session,
    out of reach of a process-group signal): SIGTERM to all at once, SIGKILL to any still alive after
    `grace` seconds."""
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
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=grace)


def end_children() -> None:
    """End every process this one started, and theirs (`end_processes`)."""
    import psutil

    end_processes([p.pid for p in psutil.Process().children()])


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

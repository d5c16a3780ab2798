"""Benchmarks behind `python -m lab`: each module has NAME, add_arguments(parser) and run(args) -> dict."""

import platform
import statistics
import time


def machine() -> dict:
    import os

    return {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine()}


def median_of(fn, runs: int) -> tuple[float, list[float]]:
    """Median wall time (s) of `fn()` over `runs` runs, and all the times."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times

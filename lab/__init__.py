"""forgeplan's laboratory, beside the package and not shipped with it: the benchmarks that measure the
figures of docs/performance.md (`perf/`, run as `python -m lab NAME`), the hostile-input fuzzer
(`fuzzing.py`) and a research planner of partial moves in clingo (`asp/`)."""

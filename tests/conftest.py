"""Shared fixtures and the two lanes of the suite.

`python -m pytest` runs the fast lane on two worker processes (pyproject.toml's addopts: `-n 2 --dist
loadscope`); `python -m pytest --run-slow` (README's test line, CI) runs every test, and `--run-slow -m
slow` the slow lane alone. The fast lane leaves out the tests marked `slow`, which are
- long runs of one behaviour: model training, the deepest ASP groundings, the Ray cluster, builds in
  fresh processes, hypothesis' deep fuzzing;
- most cases of a parameter sweep, of which the fast lane keeps a sample: `cases.lane` (every n-th case,
  so every assembly family stays in), or a named subset next to the sweep;
- any test on an input listed in SLOW_INPUTS below.
The fast lane keeps at least one test of every behaviour: the engine, ASP (solve, closure, checker,
shared groundings), PDDL and Fast Downward against the engine, the plan-case registry on every
implementation, the verifier, bench build, metrics and MAGAR scoring, grammars and decoding masks (one
real-model decoding run), and the CLI's exit codes and one-line errors. A new test that runs longer than
a second or so is marked slow, with a cheaper sample of it left in the fast lane. No test asserts timing.

Test modules import torch, transformers, xgrammar and llguidance inside the fixtures and tests that use
them, never at module level: every xdist worker collects every module, and collection stays light.

Expensive inputs are built once per run (`small_bench`, `bench_400`, `magar_bench`, `tiny_dir`; the xdist
workers share one copy, `shared`) and only read by the tests.

Every run draws the same cases: property tests run under hypothesis' `ci` profile (derandomised, no example
database), and the fuzz tests draw fixed seeds. `python -m pytest --hypothesis-profile explore` draws new
examples in every property test, and `python -m lab fuzz --seed N` new fuzz seeds; a crash either finds
becomes a fixed regression case (`REGRESSIONS` in tests/test_fuzz_inputs.py, or `@example` on the property).
"""

import gc
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# `ci`: the same examples on every run, nothing replayed from an earlier run's database; `explore`: new ones
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile("ci")

sys.path.insert(0, str(Path(__file__).parent))

# The suite holds a large, long-lived heap (the case registry, grammars, torch and unified-planning modules);
# the collector's default thresholds rescan it over and over. Collecting less often and freezing what exists
# once collection is done saves a few per cent of the suite's CPU time; no test depends on when garbage goes.
gc.set_threshold(50_000, 20, 20)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session):
    gc.unfreeze()  # the collection at exit must reach them: nanobind reports objects left over as leaks


# Inputs whose every test is a long search: Pelikan Burr's first separation takes 98 moves and Dracula's
# Dental Desaster has 1,336 voxels. Any test parametrised with one of them runs in the slow lane; the fast
# lane keeps the other real burrs (down to level 4.9.3 and 6) on the same tests.
SLOW_INPUTS = ("bt_PelikanBurr", "bt_DraculasDentalDesaster")


def pytest_configure(config):
    """Ctrl-C and hang-up as a terminal delivers them: a suite started in the background (`cmd &`) or under
    nohup inherits them ignored, and so would every command the signal tests start and stop."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true",
                     help="also run the tests marked slow (the full suite, as CI runs it); without it only the fast lane runs")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config, items):
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None and any(name in spec.id for name in SLOW_INPUTS):
            item.add_marker(pytest.mark.slow)
    if not config.getoption("--run-slow"):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """Tests keep forgeplan's on-disk decoding cache (vocabularies, DFAs) to themselves."""
    import os

    old = os.environ.get("FORGEPLAN_CACHE")
    os.environ["FORGEPLAN_CACHE"] = str(tmp_path_factory.mktemp("forgeplan-cache"))
    yield
    if old is None:
        os.environ.pop("FORGEPLAN_CACHE", None)
    else:
        os.environ["FORGEPLAN_CACHE"] = old


def shared(tmp_path_factory, name: str, build) -> Path:
    """The folder `name`, filled by `build(folder)` once per run: the xdist workers of one run share it (the
    first to ask builds it under a lock, the others wait and read), so no input is built once per worker."""
    import fcntl
    import os
    import shutil

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent   # the run's folder, above each worker's own
    out, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            build(out)
            done.touch()
    return out


SMALL_BENCH_TASKS = 40
# small, fast-to-solve assemblies of four families (the composition itself is tested on the full library)
SMALL_BENCH_ASSEMBLIES = ["bayonet_structure", "shaft_stack", "luban_lock_3", "burr_6_key", "mortise_frame", "dovetail_drawer_box"]


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory) -> Path:
    """A reduced benchmark (same proportions as the default), built once per test session."""
    from forgeplan.bench.store import build_bench

    return shared(tmp_path_factory, "small_bench", lambda out: build_bench(
        out / "b", tasks=SMALL_BENCH_TASKS, seed=42, jobs=2, assemblies=SMALL_BENCH_ASSEMBLIES)) / "b"


@pytest.fixture(scope="session")
def tiny_bench(small_bench, tmp_path_factory) -> Path:
    """The small benchmark cut to three train and two test tasks (same task folders, smaller manifest)."""
    import json
    import shutil

    from forgeplan.bench.digests import seal_folder

    out = tmp_path_factory.mktemp("tiny") / "b"
    manifest = json.loads((small_bench / "manifest.json").read_text(encoding="utf-8"))
    manifest["splits"] = {s: manifest["splits"][s][:n] for s, n in (("train", 3), ("test", 2))}
    kept = manifest["splits"]["train"] + manifest["splits"]["test"]
    manifest["records"] = [r for r in manifest["records"] if r["sample_id"] in kept]
    (out / "tasks").mkdir(parents=True)
    for sid in kept:
        shutil.copytree(small_bench / "tasks" / sid, out / "tasks" / sid)
    seal_folder(out, manifest)   # a benchmark of its own: its digests and manifest
    return out


@pytest.fixture(scope="session")
def pddl_suite(tiny_bench, tmp_path_factory) -> Path:
    """`bench export --format pddl` of `tiny_bench`, written once per test session."""
    from forgeplan.cli import main

    out = tmp_path_factory.mktemp("suite") / "s"
    assert main(["bench", "export", str(tiny_bench), "--format", "pddl", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def bench_400(tmp_path_factory) -> Path:
    """`bench build --tasks 400 --seed 11` (every built-in assembly, the expert tier included), built once
    per test session for the slow tests that check every reference."""
    from forgeplan.bench.store import build_bench

    return shared(tmp_path_factory, "bench400", lambda out: build_bench(out / "b", tasks=400, seed=11, jobs=2)) / "b"


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    """The default tiny model and tokenizer (forgeplan.llm.tiny.make_tiny), saved once per test session;
    tests load it read-only."""
    from forgeplan.llm.tiny import make_tiny

    return shared(tmp_path_factory, "tiny_model", make_tiny)


MAGAR_BENCH_TASKS = 24


@pytest.fixture(scope="session")
def magar_bench(tmp_path_factory) -> Path:
    """A reduced `--profile magar` benchmark (both families in both splits), built once per test session."""
    from forgeplan.bench.magar import build_magar_bench

    return shared(tmp_path_factory, "magar_bench", lambda out: build_magar_bench(
        out / "b", tasks=MAGAR_BENCH_TASKS, seed=7)) / "b"

"""Property-based fuzzing of every entry point: a verdict or a one-line exit-2 error, never a crash,
no control characters echoed, valid --json, nothing written outside the output folder.

The default lane runs a few dozen cases per entry point in this process; the slow lane runs many
more, and checks the memory of the large rejected inputs in a fresh process each. The cases are the same
on every run (hypothesis' `ci` profile, tests/conftest.py); `python -m lab fuzz --seed N` explores new
seeds, and each crash it finds is added to REGRESSIONS.
"""

import json
import os
import random
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.fuzzing import (CONTRACT_IF_MAPPED, ENTRY_POINTS, HOSTILE_JSON, JSON_VERDICT, Outcome, Sandbox, fuzz_case, judge,
                         large_inputs, peak_rss, run_cli, swapped)

FAST, DEEP = 20, 300
FAST_ENTRIES = ("task file", "assembly", "puzzle")   # the fast lane's sample; CI runs every entry point
FIXTURE = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def _sandbox(bench, tmp_path_factory) -> Sandbox:
    root = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(bench, root / "bench")
    return Sandbox(root, root / "bench")


@pytest.fixture(scope="module")
def sandbox(tiny_bench, tmp_path_factory):
    """Mutated cases run on a benchmark of two test tasks: `evaluate` scores every test task on each case,
    and more untouched ones would only repeat the same work."""
    sb = _sandbox(tiny_bench, tmp_path_factory)
    cwd = os.getcwd()
    os.chdir(sb.root)  # a stray relative write lands in the sandbox, where the snapshot sees it
    yield sb
    os.chdir(cwd)


@pytest.fixture(scope="module")
def regression_sandbox(small_bench, tmp_path_factory):
    """The sandbox of `python -m lab fuzz --bench SMALL_BENCH`, on which each seed of REGRESSIONS found its crash."""
    return _sandbox(small_bench, tmp_path_factory)


def _check(sb, entry, seed):
    o, crash = fuzz_case(sb, entry, random.Random(seed))
    assert crash is None, f"{entry} seed {seed}: {crash}"


@pytest.mark.parametrize("entry", [e if e in FAST_ENTRIES else pytest.param(e, marks=pytest.mark.slow) for e in ENTRY_POINTS])
@settings(max_examples=FAST, deadline=None, suppress_health_check=FIXTURE)
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_inputs_get_a_verdict_or_one_line_error(sandbox, entry, seed):
    _check(sandbox, entry, seed)


# Crashes the fuzzer once found, kept as fixed cases: (entry point, seed of fuzz_case's mutations).
REGRESSIONS = [
    ("bench file", 39723),   # reference.json whose "proof" is a string: evaluate crashed reading proof.optimal
    ("plan", 1),   # a truncated plan that the PDDL replay refuses: exit 1, nothing on stdout (no contract to print)
]


def test_import_plan_prints_the_contract_only_for_a_plan_it_mapped():
    """import-plan's stdout: the contract on exit 0; on exit 1 the contract, or nothing when the PDDL replay
    refused the plan before mapping it; --json commands print JSON on every verdict."""
    refused = "forgeplan: not a valid plan of that PDDL task: step 2 (remove_first p1) is not applicable"
    assert judge(Outcome(1, "", refused), CONTRACT_IF_MAPPED) is None
    assert judge(Outcome(1, '{"annotation": {}}', "forgeplan: the plan is illegal: ..."), CONTRACT_IF_MAPPED) is None
    assert judge(Outcome(1, "", "forgeplan: the plan is illegal: ..."), CONTRACT_IF_MAPPED) is not None
    assert judge(Outcome(0, "", ""), CONTRACT_IF_MAPPED) is not None
    assert judge(Outcome(1, "", refused), JSON_VERDICT) == "stdout is not JSON"


@pytest.mark.parametrize("entry, seed", REGRESSIONS)
def test_crashes_found_by_the_fuzzer_stay_fixed(regression_sandbox, entry, seed, monkeypatch):
    monkeypatch.chdir(regression_sandbox.root)
    _check(regression_sandbox, entry, seed)


@pytest.mark.slow
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@settings(max_examples=DEEP, deadline=None, suppress_health_check=FIXTURE)
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_inputs_deep(sandbox, entry, seed):
    _check(sandbox, entry, seed)


# any JSON value (and every hostile literal) at any place of a model output or of a task state
text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=["Cs"]), max_size=20)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | text,
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(text, c, max_size=3), max_leaves=8)
MARK = "@@VALUE@@"


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def _placed(doc, index: int, raw: str) -> str:
    """`doc` with the value at its index-th path replaced by the raw JSON text `raw`."""
    doc = json.loads(json.dumps(doc))
    paths = list(_paths(doc))[1:]
    path = paths[index % len(paths)]
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = MARK
    return json.dumps(doc).replace(json.dumps(MARK), raw, 1)


raw_values = json_values.map(lambda v: json.dumps(v, allow_nan=True)) | st.sampled_from(HOSTILE_JSON)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE)
@given(index=st.integers(0, 10_000), raw=raw_values, as_json=st.booleans())
def test_any_value_anywhere_in_an_output(sandbox, index, raw, as_json):
    f = sandbox.root / "case.json"
    f.write_text(_placed(sandbox.output, index, raw), encoding="utf-8", errors="surrogatepass")
    o = run_cli(["verify", sandbox.task, f] + (["--json"] if as_json else []))
    assert o.code in (0, 1) and judge(o, as_json) is None, (raw[:200], o.err[-300:])


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE)
@given(name=st.sampled_from(["actual_state.json", "target_state.json", "part_catalog.json", "blocking_graph.json"]),
       index=st.integers(0, 10_000), raw=raw_values)
def test_any_value_anywhere_in_a_task_file(sandbox, name, index, raw):
    path = sandbox.task / name
    data = _placed(json.loads(path.read_text()), index, raw).encode("utf-8", "surrogatepass")
    (sandbox.root / "output.json").write_text(json.dumps(sandbox.output))
    with swapped(path, data):
        o = run_cli(["verify", sandbox.task, sandbox.root / "output.json", "--json"])
    assert o.code in (0, 1, 2) and judge(o, True) is None, (name, raw[:200], o.err[-300:])


# ----------------------------------------------------------------------------- memory of large rejected inputs

@pytest.mark.slow
def test_large_rejected_inputs_stay_under_300_mb(sandbox, tmp_path):
    """Each in a fresh process: refused (exit 1 or 2) at a peak RSS under 300 MB, imports included."""
    for name, argv in large_inputs(tmp_path, sandbox.task).items():
        code, mb = peak_rss(argv)
        assert code in (1, 2) and mb < 300, f"{name}: exit {code}, peak {mb} MB"

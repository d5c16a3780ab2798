"""`verify --trace`: the state after each action, the engine's reason at the refused step, the divergence
from the task's reference, as text and as JSON; and the trace against the engine's own replay."""

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeplan.cli import main
from forgeplan.semantics.legal import legal_actions
from forgeplan.trace import divergence, state_changes, trace_plan
from cases import grounding

CAP, LOCK, PIN = "BayonetStructure_Part07_Cap", "BayonetStructure_Part01_Lock", "BayonetStructure_Part02_Pin"


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory):
    """A bayonet task (missing pin) with its reference, its proven plan, and the plan with steps 2 and 3 swapped."""
    d = tmp_path_factory.mktemp("trace")
    assert main(["task", "make", "bayonet_structure", "--out", str(d / "t"), "--fault", f"missing_part:{PIN}"]) == 0
    ref = json.loads((d / "t" / "reference.json").read_text())
    good = {"annotation": ref["annotation"], "rework_plan": ref["rework_plan"]}
    (d / "good.json").write_text(json.dumps(good))
    bad = json.loads(json.dumps(good))
    acts = bad["rework_plan"]["actions"]
    acts[1], acts[2] = acts[2], acts[1]      # remove the lock before unlocking it
    (d / "bad.json").write_text(json.dumps(bad))
    return d


def run(capsys, *argv):
    code = main(["verify", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_trace_text_shows_each_change_the_refusal_and_the_divergence(task_dir, capsys):
    code, out, _ = run(capsys, task_dir / "t", task_dir / "bad.json", "--trace")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("invalid [dependency_omission]: step 2 ")
    assert f"  1. remove({CAP})" in lines and f"     {CAP}: present -> absent" in lines
    assert f"  2. remove({LOCK})" in lines
    assert any(line.startswith("     refused [locked]: ") and "unlock it first" in line for line in lines)
    assert f"  3. " not in out, "the replay stops at the refused step"
    assert any(line.startswith(f"first divergence from the reference at step 2: plan remove({LOCK}), "
                               f"reference rotate_to_unlock({LOCK}") for line in lines)


def test_trace_text_of_the_reference_itself(task_dir, capsys):
    code, out, _ = run(capsys, task_dir / "t", task_dir / "good.json", "--trace")
    assert code == 0 and out.startswith("valid: 7 actions")
    assert f"     {LOCK}: lock engaged -> disengaged" in out and f"     {PIN}: absent -> present" in out
    assert out.rstrip().endswith("the plan is the reference's, action for action")


def test_trace_json_agrees_with_the_verdict(task_dir, capsys):
    code, out, _ = run(capsys, task_dir / "t", task_dir / "bad.json", "--trace", "--json")
    assert code == 1
    data = json.loads(out)
    tr = data["trace"]
    assert data["failing_step"] == tr["failing_step"] == 2 and data["category"] == "dependency_omission"
    assert [s["step"] for s in tr["steps"]] == [1, 2] and [s["legal"] for s in tr["steps"]] == [True, False]
    assert tr["steps"][0]["changes"] == [{"part_id": CAP, "what": "presence", "before": True, "after": False}]
    assert tr["steps"][1]["code"] == "locked" and tr["steps"][1]["action"] == {"action": "remove", "part_id": LOCK}
    div = tr["divergence"]
    assert div["step"] == 2 and div["refused"] and div["reference_action"]["action"] == "rotate_to_unlock"
    code, out, _ = run(capsys, task_dir / "t", task_dir / "good.json", "--trace", "--json")
    assert code == 0 and json.loads(out)["trace"]["divergence"]["step"] is None


def test_trace_of_an_unparseable_output_and_of_a_task_without_reference(task_dir, tmp_path, capsys):
    junk = tmp_path / "junk.json"
    junk.write_text("{")
    code, out, _ = run(capsys, task_dir / "t", junk, "--trace")
    assert code == 1 and "trace: none (the output does not parse into a plan)" in out
    code, out, _ = run(capsys, task_dir / "t", junk, "--trace", "--json")
    assert code == 1 and json.loads(out)["trace"] is None
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in (task_dir / "t").iterdir():
        if f.name != "reference.json":
            (bare / f.name).write_bytes(f.read_bytes())
    code, out, _ = run(capsys, bare, task_dir / "bad.json", "--trace")
    assert code == 1 and "reference: none beside the task" in out and "first divergence" not in out


def test_a_broken_reference_is_bad_input(task_dir, tmp_path, capsys):
    broken = tmp_path / "t"
    broken.mkdir()
    for f in (task_dir / "t").iterdir():
        broken.joinpath(f.name).write_bytes(f.read_bytes())
    (broken / "reference.json").write_text(json.dumps({"annotation": {}, "rework_plan": {}}))
    code, out, err = run(capsys, broken, task_dir / "good.json", "--trace")
    assert code == 2 and err.count("\n") == 1 and "reference.json" in err and out == ""


def test_without_trace_the_output_is_unchanged(task_dir, capsys):
    code, out, _ = run(capsys, task_dir / "t", task_dir / "bad.json")
    assert code == 1 and out.count("\n") == 1
    code, out, _ = run(capsys, task_dir / "t", task_dir / "bad.json", "--json")
    assert "trace" not in json.loads(out)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 8))
def test_the_trace_replays_as_the_engine_does(seed, n):
    """On random legal walks the trace's states are the engine's, and each step's changes are exactly the
    fields that differ; a divergence from a plan with itself does not exist, and from its prefix is where it ends."""
    from forgeplan.io.catalog import load_assembly
    from forgeplan.semantics.engine import World
    from forgeplan.model.state import Tolerances

    world = World(load_assembly("bayonet_structure"), Tolerances())
    rng, state, plan = random.Random(seed), world.target_state(), []
    for _ in range(n):
        options = legal_actions(grounding(world), state)
        if not options:
            break
        a = rng.choice(options)
        plan.append(a)
        state = world.apply(state, a)
    start = world.target_state()
    tr = trace_plan(world, start, plan)
    assert tr.failing_step is None and len(tr.steps) == len(plan) and tr.states[-1] == world.replay(start, plan).final
    for k, step in enumerate(tr.steps):
        assert step.changes == state_changes(world, tr.states[k], tr.states[k + 1])
        assert bool(step.changes) == (tr.states[k] != tr.states[k + 1])
    assert divergence(world, start, plan, plan).step is None
    if plan:
        d = divergence(world, start, plan, plan[:-1])
        assert d.step == len(plan) and d.reference_action is None and d.plan_action == plan[-1]

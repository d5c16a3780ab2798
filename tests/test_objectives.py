"""FORGE's objective beside MAGAR's: `bench build --objective forge` proves every reference in the fewest
actions (FORGE's c*), the default in the fewest moved parts first (MAGAR's J_move), then actions; the proof
object of each reference names its objective."""

from __future__ import annotations

import json
from collections import deque

import pytest

from forgeplan.cli import main
from forgeplan.planners.reference import reference_output
from forgeplan.planners.registry import solve
from forgeplan.semantics.faults import FaultSpec, make_task
from test_slide_engine import TUNNEL_FAULTS
from test_slide_search import _engine_candidates, _key, tunnel


def fewest_actions(task) -> int:
    """c* by a breadth-first search over every engine move of every slot inside the position bound."""
    w, actual, target = task.world, task.actual, task.target
    movable = list(range(len(w.ids)))
    seen, queue = {_key(actual): 0}, deque([actual])
    while queue:
        s = queue.popleft()
        if w.equivalent(s, target):
            return seen[_key(s)]
        bad = {i for i in movable if s.slots[i].present and w.pose_off(i, s.slots[i])}
        for a in _engine_candidates(w, s, movable, bad, actual):
            if w.check(s, a) is None:
                t = w.apply(s, a)
                if _key(t) not in seen:
                    seen[_key(t)] = seen[_key(s)] + 1
                    queue.append(t)
    raise AssertionError("no plan")


# each case is seconds of search on both sides: the fast lane keeps one, CI runs them all
@pytest.mark.parametrize("fault", [f if f == "misplacement:Shell" else pytest.param(f, marks=pytest.mark.slow)
                                   for f in TUNNEL_FAULTS])
def test_the_fewest_actions_with_partial_moves_are_a_brute_force_searchs(fault):
    """The moved-set search's `actions` optimum, proved over every plan the engine accepts, is the
    breadth-first search's over every engine move."""
    task = make_task(tunnel(), [FaultSpec.parse(fault)], seed=3)
    r = solve(task, objective="actions")
    assert r.optimal and r.proved == ("actions",) and r.objective == "actions"
    assert task.world.restoration(task.actual, r.plan, task.target).restored
    assert r.actions == fewest_actions(task)


def test_the_objectives_differ_where_the_fewest_actions_move_more_parts():
    """A misplaced core: MAGAR's optimum slides it out, resets it and slides it back (1 part, 3 actions);
    FORGE's takes the shell off with it and puts both back (2 parts, 2 actions). Each proof names its objective."""
    task = make_task(tunnel(), [FaultSpec.parse("misplacement:Core")], seed=0)
    forge, magar = solve(task, objective="actions"), solve(task)
    assert (forge.moved_parts, forge.actions) == (2, 2) and (magar.moved_parts, magar.actions) == (1, 3)
    assert forge.optimal and magar.optimal
    assert reference_output(task, forge)["proof"]["objective"] == "actions"
    assert reference_output(task, magar)["proof"]["objective"] == "moved-parts,actions"


def test_the_magar_profile_keeps_magars_objective(tmp_path, capsys):
    code = main(["bench", "build", "--profile", "magar", "--objective", "forge", "--out", str(tmp_path / "b"),
                 "--tasks", "20", "--quiet"])
    assert code == 2 and "--objective" in capsys.readouterr().err


def _build(tmp_path, name: str, *extra: str) -> dict:
    out = tmp_path / name
    assert main(["bench", "build", "--out", str(out), "--tasks", "40", "--seed", "42", "--jobs", "1", "--quiet",
                 *extra]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    return {r["sample_id"]: json.loads((out / "tasks" / r["sample_id"] / "reference.json").read_text())["proof"]
            for r in manifest["records"]} | {"": manifest["objective"]}


@pytest.mark.slow
def test_both_objectives_give_proven_references_on_a_small_build(tmp_path, capsys):
    """40 tasks, the expert tier included: under `forge` every reference is proved minimal in actions over
    every plan the engine accepts; under the default every one in moved parts, and in actions too or over
    the grounded universe (SEMANTICS §9 "One universe"); the same tasks, FORGE's never longer, MAGAR's never
    moving more parts, and some task where they differ both ways."""
    forge, magar = _build(tmp_path, "forge", "--objective", "forge"), _build(tmp_path, "magar")
    assert forge.pop("") == "actions" and magar.pop("") == "moved-parts,actions" and forge.keys() == magar.keys()
    assert all(p["optimal"] and p["objective"] == "actions" for p in forge.values())
    assert all(p["objective"] == "moved-parts,actions" and (p["optimal"] or p.get("grounded_optimal"))
               for p in magar.values())
    pairs = [(forge[s], magar[s]) for s in forge]
    assert all(f["actions"] <= m["actions"] and m["moved_parts"] <= f["moved_parts"] for f, m in pairs)
    assert any(f["actions"] < m["actions"] and f["moved_parts"] > m["moved_parts"] for f, m in pairs)

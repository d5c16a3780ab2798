"""The proving planner vs Fast Downward on real planners: agreement on every built-in assembly and fault type, the
verdict rules (a time limit is never agreement), and the crosscheck command's exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from concurrent.futures import ProcessPoolExecutor

import pytest

from cases import PARTIAL_MOVES, all_cases
from forgeplan.bench.burr_faults import fault_task
from forgeplan.cli import main
from forgeplan.io.importers import import_puzzle
from forgeplan.library import BUILTIN
from forgeplan.model.actions import Insert
from forgeplan.planners import crosscheck as cc
from forgeplan.semantics.diagnosis import MISTAKE_TYPES
from burrdata import burr
from forgeplan.io.task_files import write_task


def rotating_cases() -> list[str]:
    """One registry case per built-in assembly, its fault type rotating with the assembly's position, so
    that every fault type is checked on several assemblies (the full product is `forgeplan crosscheck`'s
    job on a benchmark folder: far over this suite's time budget). The two burrs that need group moves
    are among them."""
    names = [n for n, _ in all_cases()]
    out = []
    for k, asm_id in enumerate(a for a in BUILTIN if a not in PARTIAL_MOVES):
        singles = [n for n in names if n.startswith(asm_id + "/") and n.endswith("/0") and "/multi/" not in n]
        out.append(singles[k % len(singles)])
    return out


def _compare(name: str) -> tuple[str, str, str]:
    c = cc.compare_task(dict(all_cases())[name], time_limit=60)
    return name, c.verdict, c.reason


@pytest.mark.slow
def test_agreement_on_every_assembly_and_fault_type():
    names = rotating_cases()
    assert {n.split("/")[1] for n in names} == set(MISTAKE_TYPES)
    with ProcessPoolExecutor(max_workers=2) as pool:  # each comparison mostly waits on subprocesses
        results = list(pool.map(_compare, names))
    bad = [r for r in results if r[1] != "agree"]
    assert not bad, bad


def test_scaling_chain_agrees_with_the_closed_form():
    from forgeplan.bench.synthetic import chain_task

    c = cc.compare_task(chain_task(14, 4), time_limit=120)
    assert c.verdict == "agree", c.reason
    assert (c.checker.moved_parts, c.checker.actions) == (5, 9)  # missing bottom bar under 4: J = depth + 1, c = 2 depth + 1


@pytest.mark.slow
def test_an_imported_burr_that_needs_group_moves_agrees(tmp_path, capsys):
    """Both planners prove the same optimum with group moves on a real level-1 burr (command path)."""
    _, task = fault_task(import_puzzle(burr("mj_burr6_puzzle4")), "missing_part")
    assert task.world.moves.groups
    write_task(task, tmp_path / "burr")
    assert main(["crosscheck", str(tmp_path / "burr"), "--json", "--time-limit", "60"]) == 0
    c = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert c["verdict"] == "agree", c["reason"]
    assert (c["prover"]["planner"], c["checker"]["planner"]) == ("clingo", "fast-downward")
    for planner in ("prover", "checker"):
        assert c[planner]["optimal"] and c[planner]["valid"] and any("part_ids" in a for a in c[planner]["plan"])


# ----------------------------------------------------------------------------- verdict rules

def side(planner="clingo", status="optimal", optimal=True, plan=(), j=None, c=None, unsolvable=False, valid=True):
    plan = None if plan is None else tuple(plan)
    j = j if j is not None else (None if plan is None else len({p for a in plan for p in a.touched}))
    c = c if c is not None else (None if plan is None else len(plan))
    return cc.Side(planner, status, optimal, unsolvable, plan, j, c, 0.1, valid if plan is not None else None)


A, B = Insert("a"), Insert("b")


@pytest.mark.parametrize("clingo, fd, verdict", [
    (side(plan=[A]), side("fast-downward", plan=[B]), "agree"),
    (side(plan=[A]), side("fast-downward", plan=[A, B]), "disagree"),                      # optima differ
    (side(plan=[A]), side("fast-downward", "timeout", False, None), "unknown"),             # time limit
    (side("clingo", "timeout", False, None), side("fast-downward", plan=[A]), "unknown"),
    (side("clingo", "feasible", False, [A, B]), side("fast-downward", plan=[A]), "unknown"),
    (side("clingo", "feasible", False, [A]), side("fast-downward", plan=[A, B]), "disagree"),  # beats an "optimum"
    (side(plan=[A], valid=False), side("fast-downward", plan=[A]), "disagree"),            # engine rejects a plan
    (side("clingo", "unsolvable", False, None, unsolvable=True),
     side("fast-downward", "unsolvable_proven", False, None, unsolvable=True), "agree"),
    (side("clingo", "unsolvable", False, None, unsolvable=True), side("fast-downward", plan=[A]), "disagree"),
])
def test_verdict_rules(clingo, fd, verdict):
    assert cc.judge("moved-parts,actions", clingo, fd)[0] == verdict


def test_a_time_limited_planner_is_unknown_never_agreement():
    c = cc.compare_task(dict(all_cases())["shaft_stack/multi/0"], time_limit=0.001)
    assert c.verdict == "unknown", (c.reason, c.prover.status, c.checker.status)


# ----------------------------------------------------------------------------- the command

@pytest.fixture
def bench(tmp_path):
    cases = dict(all_cases())
    write_task(cases["bayonet_structure/wrong_part/0"], tmp_path / "bench" / "a" / "t1")
    write_task(cases["shaft_stack/interference_lock/1"], tmp_path / "bench" / "b" / "deeper" / "t2")
    return tmp_path / "bench"


def test_crosscheck_command_finds_tasks_at_any_depth(bench, capsys):
    assert main(["crosscheck", str(bench), "--json", "--time-limit", "120"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["agree"] == out["summary"]["tasks"] == 2
    assert sorted(Path(c["path"]).name for c in out["comparisons"]) == ["t1", "t2"]
    assert all(c["ratio"] > 0 for c in out["comparisons"])
    assert main(["crosscheck", str(bench), "--limit", "1"]) == 0
    assert "1 agree, 0 disagree, 0 unknown of 1 tasks" in capsys.readouterr().out
    assert main(["crosscheck", str(bench / "nothing-here")]) == 2


def test_crosscheck_command_exits_1_and_shows_both_plans_on_disagreement(bench, capsys, monkeypatch):
    real = cc.fd_side

    def fd_side_dropping_the_last_action(task, objective, time_limit):  # Fast Downward runs for real
        s = real(task, objective, time_limit)
        return cc._replayed(task, cc.Side(s.planner, s.status, s.optimal, s.unsolvable, s.plan[:-1],
                                          s.moved_parts, s.actions - 1, s.seconds))

    monkeypatch.setattr(cc, "fd_side", fd_side_dropping_the_last_action)
    assert main(["crosscheck", str(bench / "a")]) == 1
    out = capsys.readouterr().out
    assert "disagree" in out and "clingo [optimal" in out and "fast-downward [" in out


def test_symlinked_task_folders_are_found_once_and_verdicts_name_their_numbers(tmp_path, capsys):
    from forgeplan.planners.crosscheck import find_tasks

    real = tmp_path / "real"
    assert main(["task", "make", "bayonet_structure", "--out", str(real / "t"), "--fault", "missing_part"]) == 0
    top = tmp_path / "top"
    top.mkdir()
    (top / "link").symlink_to(real / "t", target_is_directory=True)
    (top / "loop").symlink_to(top, target_is_directory=True)
    assert find_tasks(top) == [top / "link"]
    capsys.readouterr()
    assert main(["crosscheck", str(top)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^agree +bayonet_structure_missing_part_0: same optimum \(\d+ moved parts, \d+ actions\)", out), out


# ----------------------------------------------------------------------------- partial moves

def test_a_partial_move_task_is_checked_by_the_moved_set_search_against_clingo():
    """The registry picks both sides by the task's kind; clingo's box and horizon hold the search's plan."""
    from cases import zigzag_puzzle
    from forgeplan.semantics.faults import FaultSpec, make_task

    c = cc.compare_task(make_task(zigzag_puzzle(), [FaultSpec("missing_part", "Cap")]), time_limit=60)
    assert (c.prover.planner, c.checker.planner) == ("moved-set-search", "clingo-partial")
    assert c.verdict == "agree" and c.checker.box == (1, 1, 1) and c.checker.horizon == 1, c.reason
    assert c.prover.optimal and c.checker.valid and (c.checker.moved_parts, c.checker.actions) == (1, 1)
    longer = cc.compare_task(make_task(zigzag_puzzle(), [FaultSpec("missing_part", "Cap")]), time_limit=60,
                             extra_steps=3)   # plans three steps longer are in the checker's universe too
    assert longer.verdict == "agree" and longer.checker.horizon == 4 and longer.checker.exhausted, longer.reason


def test_the_extra_steps_of_the_crosscheck_are_bounded(tmp_path, capsys):
    for bad in ("-1", "51"):
        assert main(["crosscheck", str(tmp_path), "--extra-steps", bad]) == 2
        assert "--extra-steps" in capsys.readouterr().err


@pytest.mark.slow
def test_the_crosscheck_command_reports_partial_move_tasks(tmp_path, capsys):
    from cases import zigzag_puzzle
    from forgeplan.semantics.faults import FaultSpec, make_task

    write_task(make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Core")]), tmp_path / "zigzag")
    assert main(["crosscheck", str(tmp_path / "zigzag"), "--json", "--time-limit", "60"]) == 0
    c = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert c["verdict"] == "agree" and c["prover"]["planner"] == "moved-set-search", c["reason"]
    assert c["checker"]["box"] == [1, 1, 1] and c["checker"]["valid"]

"""PDDL profiles and the planning suite: each profile solved by the real planner it targets (pyperplan for
`strips`, Fast Downward for the others), every plan replayed by the engine, every optimum equal to clingo's."""

from __future__ import annotations

import csv
import json
from functools import lru_cache
from pathlib import Path

import pytest

from cases import all_cases
from fixtures import fixture_assembly
from forgeplan.bench.pddl_suite import export_pddl_suite
from forgeplan.cli import main
from lab.cli import main as lab_main
from forgeplan.io.task_files import load_task
from forgeplan.model.errors import InputError
from forgeplan.planners.asp.solve import solve_task
from forgeplan.planners.pddl.external import plan_external, solve_files
from forgeplan.planners.pddl.files import pddl_writer, read_plan
from forgeplan.planners.pddl.profiles import build_export
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.grounded import DEFAULT_WEIGHT

DOMAINS = Path(__file__).resolve().parent.parent / "domains"
# spares and replace, coupled and rotating locks, orientation repairs, two faults, and group moves
CASE_NAMES = ["bayonet_structure/wrong_part/0", "bayonet_mount_3pin/interference_lock/1", "luban_lock_3/multi/0",
              "mortise_frame/wrong_orientation/0", "shaft_stack/misplacement/1", "burr_6_split/missing_part/0",
              "burr_6_split/multi/1"]


@lru_cache(maxsize=None)
def task_of(name: str):
    if name == "fixture":
        return make_task(fixture_assembly(), [FaultSpec("wrong_part"), FaultSpec("wrong_orientation")], seed=3)
    return dict(all_cases())[name]


@lru_cache(maxsize=None)
def clingo_optimum(name: str, objective: str) -> int:
    """clingo's proven optimum as the profile's total cost (W*J_move + c, or c)."""
    res = solve_task(task_of(name), objective)
    assert res.optimal
    return DEFAULT_WEIGHT * res.moved_parts + res.actions if objective != "actions" else res.actions


def replays(task, plan) -> bool:
    return task.world.restoration(task.actual, plan, task.target).restored


@pytest.mark.parametrize("name", ["fixture", *(pytest.param(n, marks=pytest.mark.slow) for n in CASE_NAMES)])
def test_pyperplan_solves_the_strips_profile_optimally(name):
    task = task_of(name)
    res = plan_external(task, "pyperplan", time_limit=120)
    assert res.returncode == 0 and res.plan is not None
    assert replays(task, res.plan)
    assert res.cost == len(res.plan) == clingo_optimum(name, "actions")


@pytest.mark.parametrize("name", ["fixture", *(pytest.param(n, marks=pytest.mark.slow) for n in CASE_NAMES)])
def test_fast_downward_lmcut_solves_strips_costs_at_the_certified_cost(name):
    task = task_of(name)
    res = plan_external(task, "fd", profile="strips-costs", config="astar(lmcut())", time_limit=120)
    assert res.returncode == 0 and res.plan is not None
    assert replays(task, res.plan)
    assert res.cost == clingo_optimum(name, "moved-parts,actions")


@pytest.mark.parametrize("grounded,config,solved", [(True, "astar(lmcut())", True), (False, "astar(blind())", True),
                                                    (False, "astar(lmcut())", False)])
def test_full_profile_configurations(grounded, config, solved):
    """The lifted export needs axioms (Fast Downward's lmcut exits 34 on it); blind search handles them."""
    name = "luban_lock_3/multi/0"
    res = plan_external(task_of(name), "fd", profile="full", grounded=grounded, config=config, time_limit=120)
    if not solved:
        assert res.returncode == 34 and res.plan is None
        return
    assert res.returncode == 0 and replays(task_of(name), res.plan)
    assert res.cost == clingo_optimum(name, "moved-parts,actions")


@pytest.mark.slow
def test_strips_profiles_use_only_strips_requirements(tmp_path):
    """The written files, read back by UP's PDDL reader: no negative conditions; `strips` has no costs at all."""
    from unified_planning.io import PDDLReader

    task = task_of("fixture")
    for profile in ("full", "strips", "strips-costs"):
        writer = pddl_writer(build_export(task, profile, grounded=True))
        (tmp_path / "d.pddl").write_text(writer.get_domain(), encoding="utf-8")
        (tmp_path / "p.pddl").write_text(writer.get_problem(), encoding="utf-8")
        kind = PDDLReader().parse_problem(str(tmp_path / "d.pddl"), str(tmp_path / "p.pddl")).kind
        assert kind.has_negative_conditions() == (profile == "full")
        assert kind.has_actions_cost() == (profile != "strips")
        requirements = writer.get_domain().split("(:requirements", 1)[1].split(")", 1)[0].split()
        assert set(requirements) <= {":strips", ":typing", ":action-costs", ":negative-preconditions"}
        assert (":action-costs" in requirements) == (profile != "strips")


def test_strips_costs_keep_every_action_cost():
    """unified-planning's remover drops the costs; the export copies each one over by action name."""
    exp = build_export(task_of("fixture"), "strips-costs")
    original, compiled = exp.enc.problem, exp.problem
    metric, source = compiled.quality_metrics[0], original.quality_metrics[0]
    assert len(compiled.actions) == len(original.actions)
    for a in compiled.actions:
        assert metric.get_action_cost(a) == source.get_action_cost(original.action(a.name))
    assert {str(metric.get_action_cost(a)) for a in compiled.actions} >= {"1", str(DEFAULT_WEIGHT + 1)}


def test_strips_profile_has_no_cost_objective():
    with pytest.raises(InputError, match="objective is 'actions'"):
        build_export(task_of("fixture"), "strips", "moved-parts,actions")


def test_a_plan_naming_an_action_outside_the_profile_is_refused():
    exp = build_export(task_of("fixture"), "strips")
    with pytest.raises(InputError, match="line 1"):
        read_plan(exp, "(no_such_action)\n", "plan.txt")


@pytest.fixture
def suite(pddl_suite) -> Path:
    return pddl_suite


@pytest.mark.slow
def test_suite_layout_and_costs_from_the_references(suite, tiny_bench):
    rows = list(csv.DictReader((suite / "costs.csv").open(encoding="utf-8")))
    assert [r["problem"] for r in rows] == ["p01", "p02", "p03", "p04", "p05"]
    for r in rows:
        proof = json.loads((tiny_bench / "tasks" / r["sample_id"] / "reference.json").read_text())["proof"]
        assert int(r["cost"]) == DEFAULT_WEIGHT * proof["moved_parts"] + proof["actions"]
        for folder in ("grounded", "strips-costs", "strips"):
            assert (suite / folder / f"{r['problem']}.pddl").is_file()
            assert (suite / folder / f"{r['problem']}-domain.pddl").is_file()
        assert (suite / "lifted" / f"{r['problem']}.pddl").is_file() == (r["lifted"] == "1")
    assert (suite / "lifted" / "domain.pddl").read_text(encoding="utf-8") == (DOMAINS / "rework.pddl").read_text(encoding="utf-8")
    assert "costs.csv" in (suite / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_suite_costs_agree_with_the_planners_on_the_files(suite, tiny_bench):
    """Fast Downward on strips-costs and pyperplan on strips, run on the suite's own files; every plan
    imports back through its profile and restores the task in the engine."""
    for r in csv.DictReader((suite / "costs.csv").open(encoding="utf-8")):
        task = load_task(tiny_bench / "tasks" / r["sample_id"])
        for folder, planner, column in (("strips-costs", "fd", "cost"), ("strips", "pyperplan", "length")):
            code, text = solve_files(planner, suite / folder / f"{r['problem']}-domain.pddl",
                                     suite / folder / f"{r['problem']}.pddl", time_limit=120)
            assert code == 0 and text is not None
            plan = read_plan(build_export(task, folder, grounded=True), text)
            assert replays(task, plan)
            if column == "length":
                assert len(plan) == int(r["length"])
            else:
                assert f"cost = {r['cost']} (general cost)" in text


@pytest.mark.slow
def test_suite_export_is_deterministic_and_refuses_a_used_folder(suite, tiny_bench, tmp_path):
    again = tmp_path / "again"
    export_pddl_suite(tiny_bench, again)
    files = sorted(p.relative_to(suite) for p in suite.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((suite / f).read_bytes() == (again / f).read_bytes() for f in files)
    assert main(["bench", "export", str(tiny_bench), "--format", "pddl", "--out", str(again)]) == 2


@pytest.mark.slow
def test_perf_pddl_suite_counts_solved_and_agreeing_problems(suite, capsys, tmp_path):
    assert lab_main(["pddl-suite", str(suite), "--limit", "2", "--configs", "fd-lmcut-strips-costs", "fd-lmcut-lifted"]) == 0
    out = json.loads(capsys.readouterr().out)["configs"]
    assert out["fd-lmcut-strips-costs"]["problems"] == out["fd-lmcut-strips-costs"]["agree_with_costs_csv"] == 2
    lifted = out["fd-lmcut-lifted"]
    assert lifted["solved"] == 0 and lifted["exit_codes"] == {"34": lifted["problems"]}
    assert lab_main(["pddl-suite", str(tmp_path)]) == 2
    assert "costs.csv" in capsys.readouterr().err


def test_export_pddl_profile_round_trip_through_the_cli(tmp_path, capsys):
    """export-pddl --profile strips, pyperplan on the files, import-plan --profile strips: exit 0."""
    from forgeplan.io.task_files import write_task

    task = task_of("luban_lock_3/multi/0")
    write_task(task, tmp_path / "task")
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "x"), "--profile", "strips"]) == 0
    code, text = solve_files("pyperplan", tmp_path / "x" / "domain.pddl", tmp_path / "x" / "problem.pddl")
    assert code == 0
    (tmp_path / "plan").write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["import-plan", str(tmp_path / "task"), str(tmp_path / "plan"), "--profile", "strips"]) == 0
    assert json.loads(capsys.readouterr().out)["rework_plan"]
    assert main(["export-pddl", str(tmp_path / "task"), "--out", str(tmp_path / "y"), "--profile", "strips",
                 "--objective", "moved-parts"]) == 2


def test_plan_external_runs_pyperplan_on_the_strips_export(tmp_path):
    """`plan-external --planner pyperplan` writes sas_plan; import-plan turns it into a valid repair."""
    task_dir, pddl = tmp_path / "t", tmp_path / "s"
    assert main(["task", "make", "luban_lock_3", "--out", str(task_dir), "--fault", "missing_part", "--no-proof"]) == 0
    assert main(["export-pddl", str(task_dir), "--out", str(pddl), "--profile", "strips"]) == 0
    assert main(["plan-external", str(pddl), "--planner", "pyperplan", "--time-limit", "120"]) == 0
    assert (pddl / "sas_plan").is_file()
    assert main(["import-plan", str(task_dir), str(pddl / "sas_plan"), "--profile", "strips"]) == 0
    full = tmp_path / "f"
    assert main(["export-pddl", str(task_dir), "--out", str(full)]) == 0
    assert main(["plan-external", str(full), "--planner", "pyperplan", "--time-limit", "120"]) == 1

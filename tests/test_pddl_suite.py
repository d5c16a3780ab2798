"""PDDL profiles and the planning suite: each profile solved by the real planner it targets (pyperplan for
`strips`, Fast Downward for the others), every plan replayed by the engine, every optimum equal to clingo's."""

from __future__ import annotations

import csv
import json
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

from cases import all_cases
from fixtures import fixture_assembly
from forgeplan.bench.digests import seal_folder
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
    records = json.loads((tiny_bench / "manifest.json").read_text(encoding="utf-8"))["records"]
    faulty = [r["sample_id"] for r in records if r["reference_actions"] and r["sample_id"] in
              {sid for split in json.loads((tiny_bench / "manifest.json").read_text())["splits"].values() for sid in split}]
    assert [r["sample_id"] for r in rows] == faulty            # no-fault tasks are left out, and counted
    assert [r["problem"] for r in rows] == [f"p{n:02d}" for n in range(1, len(rows) + 1)]
    readme = (suite / "README.md").read_text(encoding="utf-8")
    assert (f"left out: {5 - len(rows)} (no fault)" if len(rows) < 5 else "left out: none") in readme
    for r in rows:
        proof = json.loads((tiny_bench / "tasks" / r["sample_id"] / "reference.json").read_text())["proof"]
        assert int(r["cost"]) == DEFAULT_WEIGHT * proof["moved_parts"] + proof["actions"] and proof["actions"] > 0
        for folder in ("grounded", "strips-costs", "strips-table", "strips"):
            domain = (suite / folder / f"{r['problem']}-domain.pddl").read_text(encoding="utf-8")
            problem = (suite / folder / f"{r['problem']}.pddl").read_text(encoding="utf-8")
            assert domain.startswith(f"(define (domain {r['problem']}-domain)")     # IPC names, one domain each
            assert problem.startswith(f"(define (problem {r['problem']})\n (:domain {r['problem']}-domain)")
        assert (suite / "strips-table" / f"{r['problem']}-costs.json").is_file()
        assert (suite / "lifted" / f"{r['problem']}.pddl").is_file() == (r["lifted"] == "1")
    assert (suite / "lifted" / "domain.pddl").read_text(encoding="utf-8") == (DOMAINS / "rework.pddl").read_text(encoding="utf-8")


def fd_and_pyperplan_agree(suite: Path, bench: Path, rows: list[dict]) -> None:
    """Fast Downward's optimal configuration on strips-costs and grounded, pyperplan on strips, run on the
    suite's own files: costs.csv's figures; every plan imports back through its profile and restores the task."""
    for r in rows:
        task = load_task(bench / "tasks" / r["sample_id"])
        for folder, planner, column in (("strips-costs", "fd", "cost"), ("grounded", "fd", "cost"),
                                        ("strips", "pyperplan", "length")):
            code, text = solve_files(planner, suite / folder / f"{r['problem']}-domain.pddl",
                                     suite / folder / f"{r['problem']}.pddl", time_limit=120)
            assert code == 0 and text is not None
            profile = "full" if folder == "grounded" else folder
            plan = read_plan(build_export(task, profile, grounded=True), text)
            assert replays(task, plan)
            if column == "length":
                assert len(plan) == int(r["length"])
            else:
                assert f"cost = {r['cost']} (general cost)" in text


@pytest.mark.slow
def test_suite_costs_agree_with_the_planners_on_the_files(suite, tiny_bench):
    fd_and_pyperplan_agree(suite, tiny_bench, list(csv.DictReader((suite / "costs.csv").open(encoding="utf-8"))))


@pytest.fixture(scope="module")
def one_task_suite(small_bench, tmp_path_factory) -> tuple[Path, Path]:
    """The suite of a benchmark cut to one task with a fault (the fast lane's sample)."""
    out = tmp_path_factory.mktemp("one") / "b"
    manifest = json.loads((small_bench / "manifest.json").read_text(encoding="utf-8"))
    sid = next(r["sample_id"] for r in manifest["records"] if r["reference_actions"] and r["assembly_id"] == "luban_lock_3")
    manifest["splits"] = {"train": [sid], "test": []}
    manifest["records"] = [r for r in manifest["records"] if r["sample_id"] == sid]
    (out / "tasks").mkdir(parents=True)
    shutil.copytree(small_bench / "tasks" / sid, out / "tasks" / sid)
    seal_folder(out, manifest)   # a benchmark of its own: its digests and manifest
    export_pddl_suite(out, out.parent / "suite")
    return out, out.parent / "suite"


def test_a_suite_problems_costs_are_what_the_planners_find(one_task_suite):
    bench, suite = one_task_suite
    fd_and_pyperplan_agree(suite, bench, list(csv.DictReader((suite / "costs.csv").open(encoding="utf-8"))))


def table_optimum(domain: Path, problem: Path, costs: dict[str, int]) -> int:
    """Uniform-cost search over pyperplan's own parse and grounding of a problem, with the table's costs."""
    import heapq

    from pyperplan.grounding import ground
    from pyperplan.pddl.parser import Parser

    parser = Parser(str(domain), str(problem))
    task = ground(parser.parse_problem(parser.parse_domain()))
    frontier, seen, tie = [(0, 0, task.initial_state)], set(), 1
    while frontier:
        g, _, state = heapq.heappop(frontier)
        if task.goal_reached(state):
            return g
        if state in seen:
            continue
        seen.add(state)
        for op in task.operators:
            if op.applicable(state):
                heapq.heappush(frontier, (g + costs[op.name[1:-1]], tie, op.apply(state)))
                tie += 1
    raise AssertionError("no plan")


def test_pyperplan_reads_the_strips_table_profile(one_task_suite, tmp_path, capsys):
    """pyperplan parses and solves the strips-table files (no :functions); its plan imports back; and over
    pyperplan's own grounding the table's costs give costs.csv's optimum."""
    bench, suite = one_task_suite
    row = next(csv.DictReader((suite / "costs.csv").open(encoding="utf-8")))
    folder = suite / "strips-table"
    domain, problem = folder / f"{row['problem']}-domain.pddl", folder / f"{row['problem']}.pddl"
    assert ":functions" not in domain.read_text(encoding="utf-8") + problem.read_text(encoding="utf-8")
    code, text = solve_files("pyperplan", domain, problem, time_limit=120)
    assert code == 0 and text
    (tmp_path / "plan").write_text(text, encoding="utf-8")
    assert main(["import-plan", str(bench / "tasks" / row["sample_id"]), str(tmp_path / "plan"), "--profile",
                 "strips-table"]) == 0
    costs = json.loads((folder / f"{row['problem']}-costs.json").read_text(encoding="utf-8"))["costs"]
    assert table_optimum(domain, problem, costs) == int(row["cost"])


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


# ----------------------------------------------------------------------------- what the help and the suite claim

WORDS = {":typing": "typing", ":negative-preconditions": "negative preconditions", ":action-costs": "costs",
         ":conditional-effects": "conditional effects", ":derived-predicates": "derived predicates",
         ":quantified-preconditions": "quantified preconditions", ":existential-preconditions": "quantified preconditions",
         ":universal-preconditions": "quantified preconditions", ":strips": "STRIPS",
         ":disjunctive-preconditions": "disjunctive preconditions", ":equality": "equality"}


def used(domain: str) -> set[str]:
    """The requirements a domain's text needs, from what it contains."""
    out = {":conditional-effects"} if "(when " in domain else set()
    out |= {":derived-predicates"} if "(:derived " in domain else set()
    out |= {":action-costs"} if "total-cost" in domain else set()
    preconditions = [part.split(":effect", 1)[0] for part in domain.split(":precondition")[1:]]
    out |= {":negative-preconditions"} if any("(not " in p for p in preconditions) else set()
    return out | ({":quantified-preconditions"} if "(exists " in domain or "(forall " in domain else set())


def exports(tmp_path) -> dict[str, str]:
    """export-pddl's domains and printed requirements: lifted, grounded, strips-table, and a partial-move task."""
    from cases import zigzag_puzzle
    from forgeplan.io.task_files import write_task

    write_task(task_of("luban_lock_3/multi/0"), tmp_path / "task")
    write_task(make_task(zigzag_puzzle(), [FaultSpec("misplacement", "Cap")]), tmp_path / "zigzag")
    out = {}
    for name, task, flags in (("lifted", "task", []), ("grounded", "task", ["--grounded"]),
                              ("strips-table", "task", ["--profile", "strips-table"]),
                              ("partial", "zigzag", ["--grounded", "--radius", "1"])):
        assert main(["export-pddl", str(tmp_path / task), "--out", str(tmp_path / name), *flags]) == 0
        out[name] = (tmp_path / name / "domain.pddl").read_text(encoding="utf-8")
    return out


def test_exports_declare_what_they_use_and_the_help_says_so(tmp_path, capsys):
    """Every feature an export uses is in its :requirements and in export-pddl's printed line; what
    --grounded writes (conditional effects and derived predicates for partial moves) is in its help."""
    from forgeplan.planners.pddl.files import requirements

    domains = exports(tmp_path)
    printed = [line.split(": ", 1)[1].split() for line in capsys.readouterr().out.splitlines()
               if line.startswith("requirements: ")]
    assert printed == [requirements(d) for d in domains.values()]
    for name, domain in domains.items():
        declared = set(requirements(domain))
        assert used(domain) <= declared | ({":quantified-preconditions"} if ":existential-preconditions" in declared
                                           or ":universal-preconditions" in declared else set()), name
    assert used(domains["partial"]) >= {":conditional-effects", ":derived-predicates"}
    assert main(["export-pddl", "--help"]) == 0
    options = " ".join(capsys.readouterr().out.split()).split("options:", 1)[1]
    grounded_help = options.split("--grounded", 1)[1].split("--objective", 1)[0]
    for requirement in sorted(set().union(*(used(d) for k, d in domains.items() if k in ("grounded", "partial")))):
        assert WORDS[requirement] in grounded_help, requirement


def test_the_suite_readme_names_what_each_folder_uses(one_task_suite, tmp_path):
    """Each folder's row of the suite's README names every requirement its files declare (the partial
    folder's row against a partial-move export)."""
    from forgeplan.planners.pddl.files import requirements

    _, suite = one_task_suite
    rows = {line.split("|")[1].strip(" `"): line.split("|")[2] for line in (suite / "README.md").read_text().splitlines()
            if line.startswith("| `")}
    folders = {f.name: [p.read_text(encoding="utf-8") for p in f.glob("*domain.pddl")] for f in suite.iterdir() if f.is_dir()}
    folders["partial"] = [exports(tmp_path)["partial"]]
    assert set(folders) == set(rows)
    for folder, domains in folders.items():
        for domain in domains:
            for requirement in requirements(domain):
                assert WORDS[requirement] in rows[folder], (folder, requirement)

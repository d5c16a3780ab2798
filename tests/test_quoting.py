"""Untrusted text cannot change a program's meaning: every id field of a task holding each hostile class
of text, rendered by every renderer (ASP facts, PDDL, the four grammar formats, report.md, the terminal),
is either refused at load (exit 2, one line) or leaves the program's meaning unchanged (same solve
result, the grammars accept the same output). Also the quoting functions one by one, the path rules of
benchmark folders, the replay of references and the smaller drifts of the trust boundary."""

import json
import shutil
from pathlib import Path

import clingo
import pytest

from lab.fuzzing import judge, run_cli
from forgeplan.io.quoting import (asp_comment, asp_string, gbnf_string, json_text, lark_string, markdown_cell, one_line,
                                  portable_lark_string)
from forgeplan.model.names import name_problem

# each hostile class of text, inside an id
HOSTILE = {
    "newline": "a\nb", "cr": "a\rb", "asp_rule": "x\n:- 1 = 1.\n%", "asp_inline": 'x" :- 1 = 1. %', "percent": "a%b",
    "block_comment": "%* a *%", "dquote": 'a"b', "squote": "a'b", "backslash": "a\\b", "trailing_backslash": "a\\",
    "u2028": "a\u2028b", "u2029": "a\u2029b", "u202e": "a\u202eb", "u061c": "a\u061cb", "esc": "a\x1b[31mb",
    "nul": "a\x00b", "del": "a\x7fb", "tab": "a\tb", "bom": "\ufeffa", "zwsp": "a\u200bb", "nbsp": "a\u00a0b",
    "pddl": "(:goal (and))", "semicolon": "a;b", "lark": '"a" | /b/ %import', "gbnf": "a ::= b", "hash_slash": "#a/b",
    "markdown": "a|b*_`<x>[l](u)", "space": "a b", "non_ascii": "Teil_\u00e4\u4e2d", "astral": "a\U0001f600",
}
REFUSED = sorted(k for k, v in HOSTILE.items() if name_problem(v) is not None)
KEPT = sorted(k for k, v in HOSTILE.items() if name_problem(v) is None)
FIELDS = ("sample_id", "assembly_id", "part_id", "family")
KEY_PART = "LubanLock3_Part03_Key"


def test_the_classes_split_as_the_rules_say():
    assert set(REFUSED) == {"newline", "cr", "asp_rule", "u2028", "u2029", "u202e", "u061c", "esc", "nul", "del", "tab",
                            "bom", "zwsp", "nbsp"}


# ----------------------------------------------------------------------------- the quoting functions

@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_asp_string_is_the_text_itself(name):
    text = HOSTILE[name]
    if "\x00" in text:
        with pytest.raises(Exception, match="NUL"):
            asp_string(text)
        return
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], f"{asp_comment(text)}\nv({asp_string(text)}).\n{asp_comment(text)}\n")
    ctl.ground([("base", [])])
    atoms = [a.symbol for a in ctl.symbolic_atoms]
    assert [a.arguments[0].string for a in atoms] == [text]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_grammar_literals_match_exactly_the_text(name):
    from lark import Lark
    from xgrammar import Grammar
    from xgrammar.testing import _is_grammar_accept_string

    text = HOSTILE[name]
    for literal in (lark_string(text), portable_lark_string(text)):
        assert "\n" not in literal and literal.isprintable()
        parser = Lark(f"start: {literal}\n", parser="lalr")
        parser.parse(text)
        with pytest.raises(Exception):
            parser.parse(text + "x")
    if "\x00" in text:
        with pytest.raises(Exception, match="NUL"):
            gbnf_string(text)
        return
    gbnf = gbnf_string(text)
    assert gbnf.isprintable()
    grammar = Grammar.from_ebnf(f"root ::= {gbnf}", root_rule_name="root")
    assert _is_grammar_accept_string(grammar, text) and not _is_grammar_accept_string(grammar, text + "x")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_terminal_markdown_and_json_quoting(name):
    text = HOSTILE[name]
    assert one_line(text).isprintable() and one_line(text * 50, 30).isprintable()
    cell = markdown_cell(text)
    assert cell.isprintable() and "|" not in cell.replace("\\|", "")
    out = json_text({text: [text]})
    assert json.loads(out) == {text: [text]} and all(line.isprintable() for line in out.split("\n"))


# ----------------------------------------------------------------------------- every id field, every renderer

@pytest.fixture(scope="module")
def base_task(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quoting") / "task"
    o = run_cli(["task", "make", "luban_lock_3", "--out", folder, "--seed", "1", "--fault", "wrong_orientation",
                 "--no-proof"])
    assert o.code == 0, o.err
    return folder


def _renamed(data, old: str, new: str):
    if isinstance(data, dict):
        return {(new if k == old else k): _renamed(v, old, new) for k, v in data.items()}
    if isinstance(data, list):
        return [_renamed(v, old, new) for v in data]
    return new if data == old else data


def hostile_task(base: Path, out: Path, field: str, text: str) -> Path:
    """A copy of the base task whose `field` holds `text` in every file that names it."""
    shutil.copytree(base, out)
    for f in out.glob("*.json"):
        data = json.loads(f.read_text(encoding="utf-8"))
        if field == "sample_id" and "sample_id" in data:
            data["sample_id"] = text
        elif field in ("assembly_id", "family") and field in data:
            data[field] = text
        elif field == "part_id":
            data = _renamed(data, KEY_PART, text)
        f.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")
    return out


COMMANDS = (["solve"], ["facts"], ["grammar", "--format", "lark"], ["grammar", "--format", "lark-portable"],
            ["grammar", "--format", "gbnf"], ["grammar", "--format", "json-schema"], ["export-pddl"])


def _run(cmd: list[str], folder: Path):
    if cmd[0] == "export-pddl":
        return run_cli([cmd[0], folder, "--out", folder.parent / (folder.name + "_pddl")])
    return run_cli([cmd[0], folder, *cmd[1:]])


FAST_REFUSED = {("asp_rule", "sample_id"), ("u202e", "part_id"), ("u2028", "assembly_id"), ("esc", "family")}


@pytest.mark.parametrize("name,field", [(n, f) if (n, f) in FAST_REFUSED else pytest.param(n, f, marks=pytest.mark.slow)
                                        for n in REFUSED for f in FIELDS])
def test_a_non_printable_id_is_refused_at_load_by_every_renderer(base_task, tmp_path, field, name):
    folder = hostile_task(base_task, tmp_path / "t", field, HOSTILE[name])
    for cmd in COMMANDS:
        o = _run(cmd, folder)
        assert o.code == 2 and judge(o) is None, (cmd, o.err)
        assert ".json: " in o.err and "non-printable" in o.err, o.err


def _plan_ids(plan, text: str):
    return [str(a).replace(text, KEY_PART) for a in plan]


def _renders(task) -> dict:
    """What each renderer makes of a task: the solve result, the facts' shape, and whether the task grammar
    (Lark) and its JSON Schema accept the reference output; the GBNF and portable Lark texts are made
    from the Lark grammar by the quoting functions tested above, and must stay printable."""
    from forgeplan.io.contract import output_json
    from forgeplan.llm import exports
    from forgeplan.llm.grammar import lark_parser, specialise
    from forgeplan.llm.prompt import target_text
    from forgeplan.planners.asp.facts import task_facts
    from forgeplan.planners.asp.solve import solve_task
    from forgeplan.semantics.diagnosis import diagnose
    from jsonschema import validate

    result = solve_task(task)
    facts = task_facts(task).text
    out = output_json(task.sample_id, task.assembly.assembly_id, diagnose(task.world, task.actual, task.target), result.plan)
    target = target_text(out)
    grammar = specialise(task)
    lark_parser(grammar).parse(target)
    validate(json.loads(target), json.loads(json_text(exports.json_schema(task))))
    for text in (exports.portable_lark(grammar), exports.lark_to_gbnf(grammar)):
        assert all(line.isprintable() for line in text.split("\n"))
    return {"status": result.status.value, "actions": result.actions, "plan": list(map(str, result.plan)),
            "facts_lines": len(facts.splitlines()), "facts_comments": sum(x.startswith("%") for x in facts.splitlines()),
            "grammar_lines": len(grammar.splitlines()), "target": target}


@pytest.fixture(scope="module")
def base_renders(base_task):
    from forgeplan.io.task_files import load_task

    task = load_task(base_task)
    ids = {"sample_id": task.sample_id, "assembly_id": task.assembly.assembly_id, "part_id": KEY_PART,
           "family": task.assembly.family}
    return {**_renders(task), "ids": ids}


FAST_KEPT = {("asp_inline", "sample_id"), ("backslash", "part_id"), ("markdown", "assembly_id"), ("dquote", "family")}


@pytest.mark.parametrize("name,field", [(n, f) if (n, f) in FAST_KEPT else pytest.param(n, f, marks=pytest.mark.slow)
                                        for n in KEPT for f in FIELDS])
def test_a_printable_hostile_id_keeps_every_program_meaning(base_task, base_renders, tmp_path, field, name):
    from forgeplan.io.task_files import load_task

    text = HOSTILE[name]
    folder = hostile_task(base_task, tmp_path / "t", field, text)
    got = _renders(load_task(folder))
    if field == "part_id":
        got["plan"] = [p.replace(text, KEY_PART) for p in got["plan"]]
    got["target"] = got["target"].replace(json.dumps(text, ensure_ascii=False)[1:-1], base_renders["ids"][field])
    assert got == {k: v for k, v in base_renders.items() if k != "ids"}
    for cmd in COMMANDS:   # the terminal: a verdict or output, printable, as many lines as for the plain task
        o, plain = _run(cmd, folder), _run(cmd, base_task)
        assert o.code == plain.code == 0 and judge(o) is None, (cmd, o.err)
        if cmd[0] == "solve":
            assert len(o.out.splitlines()) == len(plain.out.splitlines())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["asp_inline", "pddl", "lark", "gbnf", "backslash", "space"])
def test_a_hostile_part_id_keeps_the_pddl_and_grammar_meaning(base_task, base_renders, tmp_path, name):
    """Fast Downward reads the PDDL that unified-planning writes (illegal names renamed): the same plan;
    xgrammar reads the GBNF and (through vLLM's conversion) the portable Lark export: both accept the
    reference output and refuse it cut short."""
    from xgrammar import Grammar
    from xgrammar.testing import _is_grammar_accept_string

    from forgeplan.io.task_files import load_task
    from forgeplan.llm.exports import lark_to_gbnf, portable_lark
    from forgeplan.llm.grammar import specialise
    from forgeplan.planners.pddl.fd import solve_fd

    text = HOSTILE[name]
    base = solve_fd(load_task(base_task))
    task = load_task(hostile_task(base_task, tmp_path / "t", "part_id", text))
    got = solve_fd(task)
    assert [str(a).replace(text, KEY_PART) for a in got.plan] == list(map(str, base.plan))
    target = base_renders["target"].replace(KEY_PART, json.dumps(text, ensure_ascii=False)[1:-1])
    gbnf = Grammar.from_ebnf(lark_to_gbnf(specialise(task)), root_rule_name="root")
    assert _is_grammar_accept_string(gbnf, target) and not _is_grammar_accept_string(gbnf, target[:-1])
    from test_exports import vllm_lark_to_ebnf   # vLLM's reading of portable Lark, as test_exports re-creates it

    portable = Grammar.from_ebnf(vllm_lark_to_ebnf(portable_lark(specialise(task))))
    assert _is_grammar_accept_string(portable, target) and not _is_grammar_accept_string(portable, target[:-1])


def test_report_md_keeps_its_tables_whatever_the_ids(tmp_path):
    from forgeplan.evaluation.evaluate import summarise
    from forgeplan.evaluation.report import write_report
    from forgeplan.evaluation.samples import SampleScore

    samples = [SampleScore(text, text, text, "wrong_orientation", text, True, "illegal_action", reason=text)
               for text in HOSTILE.values()]
    write_report(summarise(samples, "test"), tmp_path, name="a|b\nc")
    lines = (tmp_path / "report.md").read_text(encoding="utf-8").split("\n")
    assert all(line.isprintable() for line in lines)
    tables, current = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            current.append(line.replace("\\\\", "").replace("\\|", "").count("|"))
        elif current:
            tables, current = tables + [current], []
    assert len(tables) >= 4 and all(len(set(t)) == 1 for t in tables), tables


# ----------------------------------------------------------------------------- benchmark folders and references

SID = "luban_lock_3_wrong_orientation_1"


def _record() -> dict:
    return {"sample_id": SID, "assembly_id": "luban_lock_3", "family": "luban3", "condition": "single",
            "fault_types": ["wrong_orientation"], "difficulty": "easy", "split": "test", "hidden": True}


def _sample_folder(base: Path, folder: Path) -> dict:
    """The base task as a benchmark sample folder: its public files and reference, and the meta.json and
    minimal_rework.json a build derives from the reference; returns the manifest record."""
    from forgeplan.bench.labels import difficulty, fault_labels, minimal_rework
    from forgeplan.io.contract import parse_output

    shutil.copytree(base, folder)
    ref = json.loads((folder / "reference.json").read_text())
    plan = parse_output(json.dumps(ref), strict=False).actions
    mistakes = ref["annotation"]["mistakes"]
    meta = {**_record(), **fault_labels(mistakes), "difficulty": difficulty("single", len(plan), mistakes)}
    (folder / "meta.json").write_text(json.dumps(meta))
    rework = minimal_rework(SID, plan)
    (folder / "minimal_rework.json").write_text(json.dumps(rework))
    return {**meta, "reference_actions": len(plan), "reference_moved_parts": rework["moved_part_count"]}


def _bench(base: Path, root: Path) -> Path:
    from forgeplan.bench.digests import seal_folder

    bench = root / "bench"
    record = _sample_folder(base, bench / "tasks" / SID)
    head = {"schema_version": "1.0", "tasks": 1, "composition": {}}
    seal_folder(bench, {**head, "splits": {"train": [], "test": [SID]}, "records": [record]})
    return bench


def _shard(base: Path, root: Path, sample_id: str = SID) -> Path:
    from forgeplan.bench.digests import seal

    shard = root / "shard1"
    _sample_folder(base, shard / "tasks" / SID)
    head = {"schema_version": "1.0", "tasks": 1, "composition": {}}
    (shard / "shard.json").write_text(json.dumps({"head": head, "shard": [1, 1], "digests": seal(shard, [SID]),
                                                   "records": [[0, {**_record(), "sample_id": sample_id}]]}))
    return shard


def _snapshot(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")}


def test_bench_merge_joins_a_plain_shard(base_task, tmp_path):
    o = run_cli(["bench", "merge", _shard(base_task, tmp_path), "--out", tmp_path / "out"])
    assert o.code == 0 and judge(o) is None, o.err
    assert (tmp_path / "out" / "tasks" / SID / "actual_state.json").is_file()


@pytest.mark.parametrize("sample_id", ["../../x", "../x", "/tmp/x", ".hidden", "a/b", "x\n"])
def test_bench_merge_refuses_a_record_that_is_not_a_folder_name(base_task, tmp_path, sample_id):
    shard = _shard(base_task, tmp_path / "in", sample_id)
    (shard / "tasks" / SID).rename(shard / "tasks" / "x")
    before = _snapshot(tmp_path)
    o = run_cli(["bench", "merge", shard, "--out", tmp_path / "in" / "a" / "out"])
    assert o.code == 2 and judge(o) is None and "records.0.1.sample_id" in o.err, o.err
    assert _snapshot(tmp_path) == before


def test_bench_merge_refuses_symlinks_in_or_as_a_task_folder(base_task, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text("{}")
    shard = _shard(base_task, tmp_path)
    folder = shard / "tasks" / SID
    (folder / "meta.json").unlink()
    (folder / "meta.json").symlink_to(outside / "secret.json")
    o = run_cli(["bench", "merge", shard, "--out", tmp_path / "out1"])
    assert o.code == 2 and judge(o) is None and "meta.json" in o.err, o.err
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)
    o = run_cli(["bench", "merge", shard, "--out", tmp_path / "out2"])
    assert o.code == 2 and judge(o) is None and "symlink" in o.err, o.err
    assert not (tmp_path / "out2" / "tasks" / SID).exists() and list(outside.iterdir()) == [outside / "secret.json"]


def test_a_benchmark_task_folder_that_is_a_symlink_is_refused(base_task, tmp_path):
    bench = _bench(base_task, tmp_path)
    real = tmp_path / "elsewhere"
    (bench / "tasks" / SID).rename(real)
    (bench / "tasks" / SID).symlink_to(real, target_is_directory=True)
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"sample_id": SID, "raw_output": "{}"}) + "\n")
    o = run_cli(["evaluate", "--bench", bench, "--predictions", preds])
    assert o.code == 2 and judge(o) is None and "symlink" in o.err, o.err


def test_bench_export_refuses_a_split_name_that_is_not_a_file_name(base_task, tmp_path):
    bench = _bench(base_task, tmp_path)
    manifest = json.loads((bench / "manifest.json").read_text())
    manifest["splits"] = {"../../escaped": [SID]}
    (bench / "manifest.json").write_text(json.dumps(manifest))
    before = _snapshot(tmp_path)
    o = run_cli(["bench", "export", bench, "--out", tmp_path / "x" / "export"])
    assert o.code == 2 and judge(o) is None and "split name" in o.err, o.err
    assert not (tmp_path / "escaped.jsonl").exists() and not any(p.name == "escaped.jsonl" for p in tmp_path.rglob("*"))
    assert before <= _snapshot(tmp_path)


def _forge_digests(bench: Path) -> None:
    """Record the folder's present files as the build's (what an attacker who also rewrites SHA256SUMS does)."""
    from forgeplan.bench.digests import seal_folder

    seal_folder(bench, json.loads((bench / "manifest.json").read_text()))


def test_evaluate_replays_the_reference_it_scores_against(base_task, tmp_path):
    bench = _bench(base_task, tmp_path)
    ref_path = bench / "tasks" / SID / "reference.json"
    ref = json.loads(ref_path.read_text())
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"sample_id": SID, "raw_output": json.dumps(
        {"annotation": ref["annotation"], "rework_plan": {**ref["rework_plan"], "actions": []}})}) + "\n")
    o = run_cli(["evaluate", "--bench", bench, "--predictions", preds, "--json"])
    assert o.code == 0 and json.loads(o.out)["metrics"]["SSE"] == 0.0, o.err
    ref["rework_plan"]["actions"] = []    # the emptied reference would give the empty prediction full credit
    ref_path.write_text(json.dumps(ref))
    o = run_cli(["evaluate", "--bench", bench, "--predictions", preds])
    assert o.code == 2 and judge(o) is None and "reference.json: changed since the build (digest mismatch)" in o.err
    _forge_digests(bench)
    o = run_cli(["evaluate", "--bench", bench, "--predictions", preds])
    assert o.code == 2 and judge(o) is None, o.err
    assert f"sample {SID}: the reference plan does not restore the target" in o.err
    ref["rework_plan"]["actions"] = [{"action": "remove", "part_id": "LubanLock3_Part01_Beam"}]   # illegal: blocked
    ref_path.write_text(json.dumps(ref))
    _forge_digests(bench)
    o = run_cli(["evaluate", "--bench", bench, "--predictions", preds])
    assert o.code == 2 and "does not restore" in o.err and SID in o.err, o.err


# ----------------------------------------------------------------------------- the smaller drifts

@pytest.fixture(scope="module")
def assembly_json(tmp_path_factory) -> dict:
    from forgeplan.io.catalog import assembly_to_json
    from forgeplan.library import build

    return assembly_to_json(build("luban_lock_3"))


@pytest.mark.parametrize("field,value", [("part_id", "a\u202eb"), ("part_id", "a\x1bb"), ("family", "x\x1b[2Jy"),
                                         ("family", "f\u2028g"), ("assembly_id", "a\u061cb"), ("kind", "k\x00")])
def test_an_assembly_file_with_a_non_printable_name_is_refused(assembly_json, tmp_path, field, value):
    data = json.loads(json.dumps(assembly_json))
    if field in ("part_id", "kind"):
        old = data["parts"][0][field]
        data = _renamed(data, old, value) if field == "part_id" else data
        data["parts"][0][field] = value
    else:
        data[field] = value
    path = tmp_path / "asm.json"
    path.write_text(json.dumps(data))
    for argv in (["task", "make", path, "--out", tmp_path / "t"], ["bench", "build", "--assemblies", path, "--out",
                                                                      tmp_path / "b", "--tasks", "20", "--quiet"]):
        o = run_cli(argv)
        assert o.code == 2 and judge(o) is None and "non-printable" in o.err, (argv, o.err)
        assert not (tmp_path / "t").exists()


def _output(base: Path) -> dict:
    ref = json.loads((base / "reference.json").read_text())
    return {"annotation": ref["annotation"], "rework_plan": ref["rework_plan"]}


def test_a_bom_before_a_valid_output_is_ignored(base_task, tmp_path):
    out = tmp_path / "o.json"
    out.write_bytes(b"\xef\xbb\xbf" + json.dumps(_output(base_task)).encode())
    o = run_cli(["verify", base_task, out])
    assert o.code == 0 and o.out.startswith("valid"), (o.out, o.err)


@pytest.mark.parametrize("where", ["action", "mistake"])
def test_a_number_given_as_a_string_is_a_schema_failure(base_task, tmp_path, where):
    data = _output(base_task)
    if where == "action":
        data["rework_plan"]["actions"][1]["angle_deg"] = "-90"
    else:
        data["annotation"]["mistakes"][0]["angle_deg"] = "90"
    out = tmp_path / "o.json"
    out.write_text(json.dumps(data))
    o = run_cli(["verify", base_task, out, "--json"])
    assert o.code == 1 and json.loads(o.out)["category"] == "schema_failure", o.out


def test_a_tolerance_given_as_a_string_is_refused(base_task, tmp_path):
    folder = tmp_path / "t"
    shutil.copytree(base_task, folder)
    target = json.loads((folder / "target_state.json").read_text())
    target["tolerances"]["pos_tol"] = "0.05"
    (folder / "target_state.json").write_text(json.dumps(target))
    o = run_cli(["solve", folder])
    assert o.code == 2 and judge(o) is None and "tolerances.pos_tol" in o.err, o.err


def test_a_verdict_echoes_a_bidi_mark_escaped(base_task, tmp_path):
    data = _output(base_task)
    data["rework_plan"]["actions"][0]["part_id"] = "x\u061cy\u202ez"
    out = tmp_path / "o.json"
    out.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    o = run_cli(["verify", base_task, out])
    assert o.code == 1 and judge(o) is None and "\\u061c" in o.out and "\u061c" not in o.out, o.out


def _puzzle(pieces: list[tuple[str, list]]) -> str:
    return json.dumps({"name": "p", "pieces": [{"id": n, "voxels": v} for n, v in pieces]})


def test_a_puzzle_of_201_pieces_is_refused(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(_puzzle([(f"S{k}", [[2 * k, 0, 0]]) for k in range(201)]))
    o = run_cli(["import", path, "--out", tmp_path / "a.json"])
    assert o.code == 2 and judge(o) is None and "200" in o.err, o.err
    assert not (tmp_path / "a.json").exists()


def test_import_prints_source_piece_names_escaped(tmp_path):
    """A cube sealed in a hollow 3x3x3 shell: not taken apart, so the summary lists the source names."""
    shell = [[x, y, z] for x in range(3) for y in range(3) for z in range(3) if [x, y, z] != [1, 1, 1]]
    path = tmp_path / "p.json"
    path.write_text(_puzzle([("shell\x1b[31m\nvalid: 0 actions", shell), ("core\u202e\u2028", [[1, 1, 1]])]))
    for extra in ([], ["--json"]):
        o = run_cli(["import", path, "--out", tmp_path / "a.json", *extra])
        assert o.code == 1 and judge(o, bool(extra)) is None, o.out
        assert "\x1b" not in o.out and "\u202e" not in o.out and "\u2028" not in o.out
    assert "\\x1b[31m\\x0avalid: 0 actions" in run_cli(["import", path, "--out", tmp_path / "a.json"]).out


@pytest.mark.parametrize("spec", ["1/99999999999999999999", "1/100001", "0/3", "3/2", "1/2\n", "1/2/3", "-1/2"])
def test_a_shard_spec_out_of_range_is_refused(tmp_path, spec):
    o = run_cli(["bench", "build", "--out", tmp_path / "b", "--tasks", "20", "--shard", spec, "--quiet",
                 "--assemblies", "luban_lock_3"])
    assert o.code == 2 and judge(o) is None and "--shard" in o.err, o.err
    assert not (tmp_path / "b").exists()

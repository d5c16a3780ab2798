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

from forgeplan.fuzzing import judge, run_cli
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
def test_a_hostile_part_id_keeps_the_pddl_and_gbnf_meaning(base_task, base_renders, tmp_path, name):
    """Fast Downward reads the PDDL that unified-planning writes (illegal names renamed): the same plan;
    xgrammar reads the GBNF export: it accepts the reference output."""
    from xgrammar import Grammar
    from xgrammar.testing import _is_grammar_accept_string

    from forgeplan.io.task_files import load_task
    from forgeplan.llm.exports import lark_to_gbnf
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

"""`forgeplan grammar --format lark|lark-portable|gbnf|json-schema` in the real llguidance and xgrammar:
each task's proven reference is accepted, perturbed answers are rejected. vLLM itself needs a GPU to
install usefully, so its Lark-to-EBNF step on the xgrammar path is re-created here from its source
(line by line: `name: ...` -> `name ::= ...`, `root ::= <first rule>`, every reference outside "..."
must be a defined rule, quotes balanced per line) and its output loaded into xgrammar's EBNF reader."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import lru_cache

import pytest

from cases import all_cases
from forgeplan.cli import main
from forgeplan.io.task_files import write_task
from forgeplan.llm.exports import json_schema, lark_to_gbnf, portable_lark
from forgeplan.llm.grammar import specialise
from forgeplan.llm.prompt import target_text
from forgeplan.planners.reference import simple_reference

FORMATS = ("lark", "lark-portable", "gbnf", "json-schema")
# the fast lane runs the per-format tests on the two formats the engines read directly; vLLM's conversion
# and the GBNF classes keep their own fast tests below, and the slow lane runs every format
FORMAT_LANES = [f if f in ("lark", "json-schema") else pytest.param(f, marks=pytest.mark.slow) for f in FORMATS]


@lru_cache(maxsize=None)   # built by the first test that needs it, not when the suite is collected
def tasks() -> list:
    """One task with a proven plan per assembly family, and the plan's text."""
    out, seen = [], set()
    for name, task in all_cases():
        fam = task.assembly.family
        if fam in seen or "/multi/" in name or "nofault" in name or "boundary" in name:
            continue
        ref = simple_reference(task)
        if ref is not None and ref["rework_plan"]["actions"]:
            seen.add(fam)
            out.append((task, target_text(ref)))
    assert len(out) >= 5  # one task with a plan per assembly family
    return out


@pytest.fixture(scope="module")
def engines():
    """llguidance, xgrammar and transformers are imported by the tests that run, not when the suite is collected."""
    pytest.importorskip("llguidance")
    pytest.importorskip("transformers")
    xgr = pytest.importorskip("xgrammar")
    import llguidance.hf

    from forgeplan.llm.tiny import train_tokenizer

    tok = train_tokenizer([t for _, t in tasks()], 500)
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok))
    return tok, llguidance.hf.from_tokenizer(tok), xgr.GrammarCompiler(info)


def vllm_lark_to_ebnf(text: str) -> str:
    """vLLM's convert_lark_to_ebnf, re-created (see the module docstring)."""
    lines = [re.sub(r"(#|//).*$", "", line).strip() for line in text.split("\n")]
    defined, referenced, out, current, alts = set(), set(), [], None, []
    for line in lines:
        if line and not line.startswith("|") and ":" in line:
            defined.add(line.split(":", 1)[0].strip().strip("?"))
    first = "start" if "start" in defined else next(iter(defined))
    out.append(f"root ::= {first}")
    for line in lines:
        if not line:
            continue
        body = line[1:] if line.startswith("|") else line.split(":", 1)[1]
        if line.count('"') % 2 or line.count("'") % 2:
            raise ValueError(f"mismatched quotes: {line[:60]}")
        body = re.sub(r"'([^']*)'", r'"\1"', body)
        bare = re.sub(r"[+*?()|\[\]{}]", " ", re.sub(r'"[^"]*"', "", body))
        referenced |= set(re.findall(r"\b[a-zA-Z_][a-zA-Z0-9_]*\b", bare))
        if line.startswith("|"):
            alts.append(body.strip())
            continue
        if current:
            out.append(f"{current} ::= {' | '.join(alts)}")
        current, alts = line.split(":", 1)[0].strip().strip("?"), [body.strip()]
    out.append(f"{current} ::= {' | '.join(alts)}")
    if referenced - defined - {"root"}:
        raise ValueError(f"Referenced rules are not defined: {sorted(referenced - defined)}")
    return "\n".join(out)


def _export(task, fmt: str) -> str:
    lark = specialise(task)
    return {"lark": lambda: lark, "lark-portable": lambda: portable_lark(lark), "gbnf": lambda: lark_to_gbnf(lark),
            "json-schema": lambda: json.dumps(json_schema(task))}[fmt]()


def _llguidance_accepts(engines, fmt: str, grammar: str, text: str) -> bool:
    import llguidance

    tok, lltok, _ = engines
    if fmt == "json-schema":
        grm = llguidance.LLMatcher.grammar_from_json_schema(grammar)
    elif fmt == "gbnf":
        grm = llguidance.grammar_from("gbnf", grammar)
    else:
        grm = llguidance.LLMatcher.grammar_from_lark(grammar)
    m = llguidance.LLMatcher(lltok, grm)
    assert not m.is_error(), m.get_error()
    ids = tok(text, add_special_tokens=False)["input_ids"]
    return m.try_consume_tokens(ids) == len(ids) and m.is_accepting()


def _xgrammar_accepts(engines, fmt: str, grammar: str, text: str) -> bool:
    import xgrammar as xgr

    _, _, compiler = engines
    if fmt == "json-schema":
        compiled = compiler.compile_json_schema(grammar)
    elif fmt == "lark":
        compiled = compiler.compile_lark(grammar)
    elif fmt == "lark-portable":
        compiled = compiler.compile_grammar(vllm_lark_to_ebnf(grammar))
    else:
        compiled = compiler.compile_grammar(grammar)
    m = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return m.accept_string(text) and m.is_terminated()


def _perturbed(task, text: str, fmt: str) -> dict[str, str]:
    part = json.loads(text)["rework_plan"]["actions"][0].get("part_id") or task.assembly.part_ids[0]
    out = {"other sample id": text.replace(json.dumps(task.sample_id), json.dumps(task.sample_id + "x"), 1),
           "unknown part": text.replace(json.dumps(part), json.dumps(part + "_X")),
           "cut off": text[:-1]}
    if fmt != "json-schema":  # a schema cannot fix whitespace or key order (its description says so)
        out["pretty-printed"] = json.dumps(json.loads(text), indent=1)
        plan = json.loads(text)
        out["keys swapped"] = json.dumps({"rework_plan": plan["rework_plan"], "annotation": plan["annotation"]},
                                         separators=(",", ":"))
    return out


@pytest.mark.parametrize("fmt", FORMAT_LANES)
def test_exports_accept_the_reference_and_reject_perturbations(engines, fmt):
    for task, text in tasks():
        grammar = _export(task, fmt)
        for engine in (_llguidance_accepts, _xgrammar_accepts):
            assert engine(engines, fmt, grammar, text), (engine.__name__, fmt, task.sample_id)
            for what, bad in _perturbed(task, text, fmt).items():
                assert bad != text, what
                assert not engine(engines, fmt, grammar, bad), (engine.__name__, fmt, task.sample_id, what)


def test_gbnf_classes_escape_punctuation_as_hex():
    task, _ = tasks()[0]
    gbnf = lark_to_gbnf(specialise(task))
    classes = re.findall(r"\[[^\]]*\]", re.sub(r'"(?:[^"\\]|\\.)*"', '""', gbnf))
    assert classes and all(re.fullmatch(r"\[\^?(?:[A-Za-z0-9]|\\x[0-9a-f]{2}|-)+\]", c) for c in classes), classes
    assert "\\-" not in gbnf


def test_portable_lark_survives_vllms_conversion_and_the_generic_grammar_has_none(capsys):
    task, _ = tasks()[0]
    text = portable_lark(specialise(task))
    assert "/" not in re.sub(r'"[^"]*"', "", text) and "[" not in re.sub(r'"[^"]*"', "", text)
    assert vllm_lark_to_ebnf(text).startswith("root ::= start")
    with pytest.raises(ValueError, match="Referenced rules are not defined"):
        vllm_lark_to_ebnf(specialise(task))  # the plain Lark text: what fails on vLLM's xgrammar path
    assert main(["grammar", "--format", "lark-portable"]) == 2
    assert "no portable Lark form" in capsys.readouterr().err


def test_portable_lark_loads_in_xgrammars_lark_reader_plain_lark_and_llguidance(engines):
    import lark
    import xgrammar as xgr

    task, text = tasks()[0]
    portable = portable_lark(specialise(task))
    assert "\\x" not in portable  # xgrammar's Lark reader refuses \xNN escapes in literals
    compiled = engines[2].compile_grammar(xgr.Grammar.from_lark(portable))
    m = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    assert m.accept_string(text) and m.is_terminated()
    m = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    assert not m.accept_string(text.replace('"', "'", 1))
    assert _llguidance_accepts(engines, "lark-portable", portable, text)
    # every escaped character, in all three readers (plain Lark is slow on a whole task grammar)
    tricky = 'x"y\'z#w/v\\u'
    small = portable_lark(f"start: {json.dumps(tricky)}\n")
    assert lark.Lark(small, parser="lalr").parse(tricky)
    with pytest.raises(lark.exceptions.LarkError):
        lark.Lark(small, parser="lalr").parse(tricky[:-1])
    m = xgr.GrammarMatcher(engines[2].compile_grammar(xgr.Grammar.from_lark(small)), terminate_without_stop_token=True)
    assert m.accept_string(tricky) and m.is_terminated()
    assert _llguidance_accepts(engines, "lark-portable", small, tricky)


@pytest.mark.parametrize("fmt", FORMAT_LANES)
def test_cli_prints_each_format(tmp_path, capsys, fmt):
    task, _ = tasks()[1]
    task = replace(task, sample_id="cli_sample")
    write_task(task, tmp_path / "t")
    assert main(["grammar", str(tmp_path / "t"), "--format", fmt]) == 0
    out, err = capsys.readouterr()
    if fmt == "json-schema":
        assert json.loads(out)["$defs"]["AnnotationModel"]["properties"]["sample_id"] == {"const": "cli_sample"}
        assert "cannot say" in err
    else:
        assert out == _export(task, fmt)

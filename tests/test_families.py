"""Both MAGAR families through the model side: on a `--profile magar` build every Assembly Decision sample
gets the decision prompt and grammar (in-process masks, every server export, the SFT export) and every
rework sample the rework ones; the tiny model (in process) and a stand-in OpenAI-compatible server
(`infer --endpoint`) answer both, and `evaluate` scores both families from one predictions file."""

from __future__ import annotations

import functools
import json

import jsonschema
import pytest

from lark.exceptions import LarkError

from forgeplan.bench.magar import build_magar_bench
from forgeplan.cli import main
from forgeplan.evaluation.decision_baselines import magar_answer
from forgeplan.evaluation.decisions import parse_decision
from forgeplan.io.contract import parse_output
from forgeplan.llm.bench import split_ids
from forgeplan.llm.decision_grammar import decision_grammar, legal_decisions
from forgeplan.llm.decision_prompt import DECISION_SYSTEM
from forgeplan.llm.exports import lark_to_gbnf, portable_lark
from forgeplan.llm.families import DECISION, REWORK, grammar_for, read_sample
from forgeplan.llm.grammar import compact, lark_parser, specialise
from forgeplan.llm.prompt import SYSTEM, SYSTEM_COMPACT, target_text
from standin import serving


@pytest.fixture(scope="module")
def magar(tmp_path_factory):
    """20 samples, seed 7: both families in each split (the test split: 3 decisions, 1 rework sample)."""
    out = tmp_path_factory.mktemp("magar") / "bench"
    build_magar_bench(out, tasks=20, seed=7, jobs=1)
    return out


@pytest.fixture(scope="module")
def samples(magar):
    return {sid: read_sample(magar, sid) for split in ("train", "test") for sid in split_ids(magar, split)}


def _answer_text(sample) -> str:
    return compact(sample.answer) if sample.family == DECISION else target_text(sample.answer)


def test_samples_know_their_family(samples, magar):
    meta = {sid: json.loads((magar / "tasks" / sid / "meta.json").read_text())["task_family"] for sid in samples}
    assert {s.family for s in samples.values()} == {DECISION, REWORK}
    for sid, s in samples.items():
        assert s.family == {"assembly_decision": DECISION, "minimal_rework": REWORK}[meta[sid]]
        assert grammar_for(s).lark == (decision_grammar(s.task) if s.family == DECISION else specialise(s.task))
    for family in (DECISION, REWORK):   # each grammar takes its own family's answer, and not the other's
        s = next(x for x in samples.values() if x.family == family)
        other = next(x for x in samples.values() if x.family != family)
        parser = lark_parser(grammar_for(s).lark)
        parser.parse(_answer_text(s))
        with pytest.raises(LarkError):
            parser.parse(_answer_text(other))


def test_requests_send_each_sample_its_familys_prompt_and_grammar(magar, samples, tmp_path):
    fields = {"vllm": lambda b: b["structured_outputs"]["grammar"], "sglang": lambda b: b["ebnf"],
              "llama.cpp": lambda b: b["grammar"]}
    render = {"vllm": portable_lark, "sglang": lark_to_gbnf, "llama.cpp": lark_to_gbnf}
    for engine, field in fields.items():
        out = tmp_path / f"{engine}.jsonl"
        assert main(["requests", "--bench", str(magar), "--out", str(out), "--engine", engine]) == 0
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        assert [x["custom_id"] for x in lines] == split_ids(magar, "test")
        for line in lines:
            s = samples[line["custom_id"]]
            system = line["body"]["messages"][0]["content"]
            assert system == (DECISION_SYSTEM if s.family == DECISION else SYSTEM)
            assert field(line["body"]) == render[engine](grammar_for(s).lark)
    for s in samples.values():   # the schema flavour, for servers that take only schemas
        jsonschema.validate(json.loads(_answer_text(s)), grammar_for(s).json_schema())
    decision = next(s for s in samples.values() if s.family == DECISION)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**decision.answer, "involved_parts": ["NoSuchPart"]}, grammar_for(decision).json_schema())


def test_server_exports_of_the_decision_grammar_load_in_xgrammar_and_accept_the_reference(samples):
    xgr = pytest.importorskip("xgrammar")
    from forgeplan.llm.tiny import train_tokenizer

    decisions = [s for s in samples.values() if s.family == DECISION][:1]
    tok = train_tokenizer([_answer_text(s) for s in decisions], 400)
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok)))
    for s in decisions:
        text, g = _answer_text(s), grammar_for(s)
        for compiled in (compiler.compile_grammar(g.gbnf()), compiler.compile_json_schema(json.dumps(g.json_schema())),
                         compiler.compile_grammar(xgr.Grammar.from_lark(g.portable_lark()))):
            matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
            assert matcher.accept_string(text) and matcher.is_terminated(), s.sample_id
        wrong = compact({**s.answer, "operation": "Assemble"})
        assert not xgr.GrammarMatcher(compiler.compile_grammar(g.gbnf()), terminate_without_stop_token=True).accept_string(wrong)


@pytest.mark.parametrize("style", ["forge", "compact"])
def test_the_export_gives_decision_samples_the_decision_prompt_and_answer(magar, samples, tmp_path, style):
    assert main(["bench", "export", str(magar), "--out", str(tmp_path), "--prompt", style]) == 0
    rows = [json.loads(x) for split in ("train", "test") for x in (tmp_path / f"{split}.jsonl").read_text().splitlines()]
    assert {r["sample_id"] for r in rows} == set(samples)
    for r in rows:
        s = samples[r["sample_id"]]
        system, user = (m["content"] for m in r["prompt"])
        answer = r["completion"][0]["content"]
        assert answer == _answer_text(s)
        if s.family == DECISION:
            assert system == DECISION_SYSTEM and parse_decision(answer)[0] is not None
        else:
            assert system.startswith(SYSTEM if style == "forge" else SYSTEM_COMPACT) and parse_output(answer)
        assert user.startswith("{" if style == "forge" else '{"sample_id"')


# ----------------------------------------------------------------------------- the tiny model, both families

@pytest.fixture(scope="module")
def tiny(magar, tmp_path_factory):
    """A tiny model whose tokenizer trained on the build's compact prompts (the short ones: the model runs
    on CPU in the test)."""
    out = tmp_path_factory.mktemp("tiny-magar")
    assert main(["tiny-model", "--out", str(out), "--bench", str(magar), "--vocab-size", "600", "--hidden", "16",
                 "--layers", "1", "--prompt", "compact"]) == 0
    return out


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["grammar", "legal", "none"])
def test_the_tiny_model_answers_both_families_and_evaluate_scores_them(magar, samples, tiny, tmp_path, capsys, mode):
    preds = tmp_path / "p.jsonl"
    assert main(["infer", "--model", str(tiny), "--bench", str(magar), "--out", str(preds), "--constrained", mode,
                 "--prompt", "compact", "--max-new-tokens", "160", "--device", "cpu"]) == 0
    rows = {x["sample_id"]: x["raw_output"] for x in map(json.loads, preds.read_text().splitlines())}
    test = split_ids(magar, "test")
    assert list(rows) == test
    for sid, raw in rows.items():
        s = samples[sid]
        if mode == "none":
            continue
        if s.family == DECISION:   # the decision grammar (or the legal decisions), never the rework one
            got, why = parse_decision(raw)
            assert got is not None, (sid, why)
            if mode == "legal":
                assert json.loads(raw) in legal_decisions(s.task), sid
        else:
            assert parse_output(raw).sample_id == sid
    capsys.readouterr()
    assert main(["evaluate", "--bench", str(magar), "--predictions", str(preds), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    families = [samples[sid].family for sid in test]
    assert summary["assembly_decision_samples"] == families.count(DECISION) > 0
    assert summary["minimal_rework_samples"] == families.count(REWORK) > 0
    assert summary["answers"]["unanswered"] == 0
    if mode != "none":
        assert summary["metrics"]["valid_decisions"] == 100.0   # every decision answer is a valid structured decision


def test_a_decision_sample_is_decoded_under_its_own_grammar(magar, samples, tiny, tmp_path):
    """The fast lane's sample of the test above: the first test sample, a decision, in grammar mode."""
    sid = split_ids(magar, "test")[0]
    assert samples[sid].family == DECISION
    preds = tmp_path / "p.jsonl"
    assert main(["infer", "--model", str(tiny), "--bench", str(magar), "--out", str(preds), "--limit", "1",
                 "--prompt", "compact", "--max-new-tokens", "120", "--device", "cpu"]) == 0
    row = json.loads(preds.read_text())
    assert row["sample_id"] == sid and parse_decision(row["raw_output"])[0] is not None


# ----------------------------------------------------------------------------- a stand-in server, both families

KEY = "sk-stand-in"


def _oracle_checking_the_request(srv, sid: str, body: dict) -> str:
    """The sample's reference (the oracle), after checking that the request carries the sample's own family's
    prompt and, when it carries one, a grammar (vLLM's field) or a JSON Schema (OpenAI's response_format)
    that accepts the answer."""
    s, answer = srv.samples[sid], srv.answers[sid]
    system = body["messages"][0]["content"]
    assert system == (DECISION_SYSTEM if s.family == DECISION else SYSTEM), sid
    grammar = body.get("structured_outputs", {}).get("grammar")
    if grammar is not None:
        assert grammar == grammar_for(s).portable_lark()
        lark_parser(grammar_for(s).lark).parse(compact(json.loads(answer)))
        answer = compact(json.loads(answer))   # the grammar's one spelling
    schema = body.get("response_format", {}).get("json_schema")
    if schema is not None:
        assert schema["name"] == f"forgeplan_{s.family}"
        jsonschema.validate(json.loads(answer), schema["schema"])
    srv.seen.append((sid, s.family, grammar is not None, schema is not None))
    return answer


@pytest.fixture
def stand_in(magar, samples):
    """The keyed stand-in server (tests/standin.py) answering each sample with its reference."""
    with serving({sid: magar_answer("oracle", magar, sid) for sid in samples}, KEY) as srv:
        srv.samples, srv.seen = samples, []
        srv.respond = functools.partial(_oracle_checking_the_request, srv)
        yield srv


@pytest.mark.slow   # the fast lane's sample: test_requests_send_each_sample_its_familys_prompt_and_grammar
def test_a_served_model_answers_both_families_and_evaluate_scores_them(magar, stand_in, tmp_path, capsys,
                                                                     monkeypatch):
    url = stand_in.url
    test = split_ids(magar, "test")
    families = {stand_in.samples[sid].family for sid in test}
    assert families == {DECISION, REWORK}
    monkeypatch.setenv("STAND_IN_KEY", KEY)
    serve = ["infer", "--endpoint", url, "--api-key-env", "STAND_IN_KEY", "--bench", str(magar)]
    # under each engine's constraint (a grammar, OpenAI's JSON Schema): every answer is the sample's
    # reference, both families score 100
    for engine, sent in (("vllm", 2), ("openai", 3)):
        stand_in.seen.clear()
        preds = tmp_path / f"{engine}.jsonl"
        assert main([*serve, "--engine", engine, "--out", str(preds), "--concurrency", "2"]) == 0
        assert sorted(x[0] for x in stand_in.seen if x[sent]) == sorted(test)
        capsys.readouterr()
        assert main(["evaluate", "--bench", str(magar), "--predictions", str(preds), "--json"]) == 0
        m = json.loads(capsys.readouterr().out)["metrics"]
        assert m["Assembly Decision"] == m["Minimal Rework"] == m["Overall"] == 100.0
    # no constraint, and one answer of each family in a fence: strict scoring fails them, --extract-json reads them
    stand_in.fence = {next(sid for sid in test if stand_in.samples[sid].family == f) for f in families}
    preds = tmp_path / "free.jsonl"
    assert main([*serve, "--out", str(preds), "--constrained", "none"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--bench", str(magar), "--predictions", str(preds), "--json"]) == 0
    strict = json.loads(capsys.readouterr().out)
    assert strict["answers"]["needs_extraction"] == 2 and strict["metrics"]["Overall"] < 100.0
    assert strict["metrics"]["Assembly Decision"] < 100.0 and strict["metrics"]["Minimal Rework"] < 100.0
    assert main(["evaluate", "--bench", str(magar), "--predictions", str(preds), "--json", "--extract-json"]) == 0
    loose = json.loads(capsys.readouterr().out)
    assert loose["answers"]["extracted"] == 2 and loose["metrics"]["Overall"] == 100.0

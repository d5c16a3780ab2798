"""The tiny models in llama.cpp's GGUF format: the pre-tokenizer name its converter cannot find for a locally
trained vocabulary (by hash) is read from the tokenizer's split, with the byte tokens renamed where that
pre-tokenizer reads UTF-8, and a split llama.cpp lacks is refused. The conversion itself needs a llama.cpp
source tree (convert_hf_to_gguf.py; the llama-cpp-python sdist carries one): it runs when
FORGEPLAN_LLAMA_CPP names one; reading the GGUF back needs llama-cpp-python."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from forgeplan.cli import main
from lab.cli import main as lab_main
from forgeplan.llm.tiny import (
    llama_cpp_mismatches, llama_cpp_pre_tokenizer, llama_cpp_vocab, train_tokenizer)
from forgeplan.model.errors import InputError


@pytest.fixture(scope="module", autouse=True)
def llm_extra():
    """transformers is imported by the tests that run, not when the suite is collected."""
    pytest.importorskip("transformers", reason="the [llm] extra is required")


TEXTS = ['{"part_id":"Burr_Part01","action":"remove"}', "actual {\"offset\":[0,1,0]}", "no fault here"] * 5
LLAMA_CPP = os.environ.get("FORGEPLAN_LLAMA_CPP")


def test_the_byte_level_split_is_qwen2s_the_identifier_split_whitespaces_and_others_are_refused(tmp_path):
    train_tokenizer(TEXTS, 300, "byte-level").save_pretrained(tmp_path / "bl")
    assert llama_cpp_vocab(tmp_path / "bl") == ("qwen2", {})
    train_tokenizer(TEXTS, 300, "identifiers").save_pretrained(tmp_path / "id")
    assert llama_cpp_pre_tokenizer(tmp_path / "id") == "whitespace"
    train_tokenizer(TEXTS, 300, "sentencepiece").save_pretrained(tmp_path / "sp")
    with pytest.raises(InputError, match="no pre-tokenizer") as err:
        llama_cpp_pre_tokenizer(tmp_path / "sp")
    assert err.value.field == "pre_tokenizer" and "tokenizer.json" in str(err.value.file)


def test_an_identifier_vocabulary_names_its_byte_tokens_as_llama_cpp_reads_utf8(tmp_path):
    import json

    tok = train_tokenizer(TEXTS, 300, "identifiers")
    tok.save_pretrained(tmp_path / "id")
    pre, renames = llama_cpp_vocab(tmp_path / "id")
    vocab = tok.get_vocab()
    assert pre == "whitespace" and len(renames) == 256 - 94  # every byte but printable ASCII
    assert renames[vocab["Ġ"]] == (" ", "user_defined") and renames[vocab["Ċ"]] == ("<0x0A>", "byte")
    assert renames[vocab["Ã"]] == ("<0xC3>", "byte") and vocab['":'] not in renames
    path = tmp_path / "id" / "tokenizer.json"
    data = json.loads(path.read_text())
    data["model"]["vocab"]["ĠBurr"] = len(data["model"]["vocab"])   # a space inside a longer token
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="outside printable ASCII") as err:
        llama_cpp_vocab(tmp_path / "id")
    assert err.value.field == "model.vocab"


@pytest.mark.slow
@pytest.mark.skipif(not LLAMA_CPP, reason="FORGEPLAN_LLAMA_CPP names no llama.cpp source tree")
def test_the_default_tiny_model_converts_to_gguf_with_its_vocabulary(tmp_path, capsys):
    import json

    model = tmp_path / "tiny"
    assert main(["tiny-model", "--out", str(model), "--vocab-size", "512"]) == 0
    capsys.readouterr()
    assert lab_main(["serve", "--model", str(model), "--llama-cpp", LLAMA_CPP, "--convert-only",
                 "--gguf-out", str(tmp_path / "tiny.gguf")]) == 0
    conversion = json.loads(capsys.readouterr().out)["conversion"]
    assert conversion["pre_tokenizer"] == "qwen2" and conversion["bytes"] > 0
    sys.path.insert(0, str(Path(LLAMA_CPP) / "gguf-py"))
    try:
        from gguf import GGUFReader
    finally:
        sys.path.pop(0)
    from transformers import AutoTokenizer

    reader = GGUFReader(conversion["gguf"])
    field = reader.fields["tokenizer.ggml.pre"]
    assert bytes(field.parts[field.data[0]]).decode() == "qwen2"
    tokens = reader.fields["tokenizer.ggml.tokens"]
    vocab = [bytes(tokens.parts[k]).decode() for k in tokens.data]
    tok = AutoTokenizer.from_pretrained(model)
    assert all(vocab[i] == t for t, i in tok.get_vocab().items() if i < len(vocab))


@pytest.mark.slow
@pytest.mark.skipif(not LLAMA_CPP, reason="FORGEPLAN_LLAMA_CPP names no llama.cpp source tree")
def test_llama_cpp_reads_the_converted_identifier_tokenizer_token_for_token(tmp_path, capsys):
    import json

    pytest.importorskip("llama_cpp", reason="llama-cpp-python reads the GGUF")
    from forgeplan.llm.tiny import corpus

    model = tmp_path / "ref"
    assert main(["tiny-model", "--out", str(model), "--vocab-size", "1024", "--tokenizer", "identifiers",
                 "--arch", "llama", "--prompt", "compact"]) == 0
    capsys.readouterr()
    assert lab_main(["serve", "--model", str(model), "--llama-cpp", LLAMA_CPP, "--convert-only",
                 "--gguf-out", str(tmp_path / "ref.gguf")]) == 0
    assert json.loads(capsys.readouterr().out)["conversion"]["pre_tokenizer"] == "whitespace"
    texts = corpus(None, prompt="compact") + ["two  spaces\n\n\tand a tab", "  lead and trail  ", "Café 日本 ∑",
                                              "<|im_start|>user\nhi<|im_end|>", "<0x20> [PAD1030]"]
    check = llama_cpp_mismatches(model, tmp_path / "ref.gguf", texts)
    assert check == {"texts": len(texts), "texts_split_otherwise": [], "tokens_spelled_otherwise": []}
    # llama.cpp applies no Unicode normalisation: a decomposed accent is split otherwise, and the check says so
    assert llama_cpp_mismatches(model, tmp_path / "ref.gguf", ["cafe\u0301"])["texts_split_otherwise"] == ["cafe\u0301"]

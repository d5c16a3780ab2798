"""The tiny models in llama.cpp's GGUF format: the pre-tokenizer name its converter cannot find for a locally
trained vocabulary (by hash) is read from the tokenizer's split, and a split llama.cpp lacks is refused.
The conversion itself needs a llama.cpp source tree (convert_hf_to_gguf.py; the llama-cpp-python sdist
carries one): it runs when FORGEPLAN_LLAMA_CPP names one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="the [llm] extra is required")

from forgeplan.cli import main  # noqa: E402
from forgeplan.llm.tiny import llama_cpp_pre_tokenizer, train_tokenizer  # noqa: E402
from forgeplan.model.errors import InputError  # noqa: E402

TEXTS = ['{"part_id":"Burr_Part01","action":"remove"}', "actual {\"offset\":[0,1,0]}", "no fault here"] * 5
LLAMA_CPP = os.environ.get("FORGEPLAN_LLAMA_CPP")


def test_the_byte_level_split_is_qwen2s_and_the_identifier_split_is_refused(tmp_path):
    train_tokenizer(TEXTS, 300, "byte-level").save_pretrained(tmp_path / "bl")
    assert llama_cpp_pre_tokenizer(tmp_path / "bl") == "qwen2"
    train_tokenizer(TEXTS, 300, "identifiers").save_pretrained(tmp_path / "id")
    with pytest.raises(InputError, match="no pre-tokenizer") as err:
        llama_cpp_pre_tokenizer(tmp_path / "id")
    assert err.value.field == "pre_tokenizer" and "tokenizer.json" in str(err.value.file)


@pytest.mark.slow
@pytest.mark.skipif(not LLAMA_CPP, reason="FORGEPLAN_LLAMA_CPP names no llama.cpp source tree")
def test_the_default_tiny_model_converts_to_gguf_with_its_vocabulary(tmp_path, capsys):
    import json

    model = tmp_path / "tiny"
    assert main(["tiny-model", "--out", str(model), "--vocab-size", "512"]) == 0
    capsys.readouterr()
    assert main(["perf", "serve", "--model", str(model), "--llama-cpp", LLAMA_CPP, "--convert-only",
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

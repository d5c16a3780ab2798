"""A tiny causal LM and a locally trained tokenizer, so every model path runs without downloads.

The tokenizer is trained with the `tokenizers` library on benchmark text (prompts and answers): either
byte-level BPE (Qwen2 / GPT-2 style, the default) or SentencePiece-style BPE with '▁' spaces and
`<0xNN>` byte fallback (Llama 2 style). The model is a Qwen2- or Llama-style config with a few small
layers, randomly initialised, with its embedding matrix padded past the tokenizer (as real checkpoints
do), which the constrained decoder must tolerate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..io.output import new_folder
from ..model.choices import DEFAULT_PROMPT
from ..model.errors import InputError

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


# Qwen2's pre-tokenizer split, which transformers' Qwen2Tokenizer imposes on every qwen2-type model's tokenizer
# when it loads: a byte-level tokenizer for a qwen2 model is trained with it, or its merges would be dead
QWEN2_SPLIT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"""
               r"""|\s+(?!\S)|\s+""")
# identifier runs, punctuation runs and white space each stay whole: a frequent part id becomes one token
IDENTIFIER_SPLIT = r"\w+|[^\w\s]+|\s+"
KINDS = ("byte-level", "identifiers", "sentencepiece")
# llama.cpp's name (GGUF tokenizer.ggml.pre) for a pre-tokenizer whose chunks give the split's tokens: Qwen2's
# own; for the identifier split, "whitespace", which cuts only between white space and the rest and reads UTF-8
# text, not GPT-2's byte characters (see llama_cpp_vocab)
LLAMA_CPP_PRE = {QWEN2_SPLIT: "qwen2", IDENTIFIER_SPLIT: "whitespace"}
# printable ASCII: the bytes GPT-2's byte-level alphabet spells as themselves
PRINTABLE = range(0x21, 0x7F)
# the CPU reference model's tiny model (make_tiny keywords): part ids as single tokens, 128 wide, 4 layers
REFERENCE_SHAPE = {"vocab_size": 2048, "kind": "identifiers", "arch": "llama", "hidden": 128, "layers": 4}


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2048, kind: str = "byte-level"):
    """A tokenizer trained on `texts`, kind:

    byte-level     byte-level BPE pre-split as Qwen2 splits (digits alone, words, punctuation runs);
    identifiers    byte-level BPE that never splits inside an identifier (`\\w+`) or a punctuation run,
                   so a frequent part id is one token, the same in the prompt and in the answer;
    sentencepiece  Llama-2-style BPE with '▁' spaces and `<0xNN>` byte fallback.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: PLC0415
    from transformers import PreTrainedTokenizerFast  # noqa: PLC0415

    texts = list(texts)
    if kind in ("byte-level", "identifiers"):
        split = QWEN2_SPLIT if kind == "byte-level" else IDENTIFIER_SPLIT
        tok = Tokenizer(models.BPE())
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(split), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, max_token_length=48,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tok.train_from_iterator(texts, trainer)
    elif kind == "sentencepiece":
        tok = _sentencepiece_bpe(texts, vocab_size)
    else:
        raise ValueError(f"tokenizer kind {kind!r} must be one of {KINDS}")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token="<unk>" if kind == "sentencepiece" else None,
                                   additional_special_tokens=["<|im_start|>"])
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _sentencepiece_bpe(texts: list[str], vocab_size: int):
    """Llama-2-style BPE: Metaspace pre-tokenizer, byte fallback via <0xNN> pieces, '▁' decoded to space."""
    import json  # noqa: PLC0415

    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: PLC0415

    base = Tokenizer(models.BPE(unk_token="<unk>"))
    base.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=max(vocab_size - 256, 300), special_tokens=["<unk>", *SPECIALS],
                                  show_progress=False)
    base.train_from_iterator(texts, trainer)
    model = json.loads(base.to_str())["model"]
    vocab: dict[str, int] = {}
    for t in ["<unk>", *SPECIALS]:
        vocab[t] = len(vocab)
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for t in sorted(model["vocab"], key=model["vocab"].get):
        vocab.setdefault(t, len(vocab))
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens(["<unk>", *SPECIALS])
    return tok


def build_model(tokenizer, *, arch: str = "qwen2", hidden: int = 64, layers: int = 2, heads: int = 4,
                max_positions: int = 8192, pad_vocab_to: int = 64, seed: int = 0):
    """A randomly initialised causal LM for `tokenizer` (embedding rows padded to a multiple of pad_vocab_to)."""
    import torch  # noqa: PLC0415
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config  # noqa: PLC0415

    n = len(tokenizer)
    vocab = -(-(n + 1) // pad_vocab_to) * pad_vocab_to  # strictly larger than the tokenizer
    common = dict(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
                  num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                  max_position_embeddings=max_positions, tie_word_embeddings=True,
                  eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    config = Qwen2Config(**common) if arch == "qwen2" else LlamaConfig(**common)
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config)


def corpus(bench: Path | None, limit: int = 400, prompt: str = DEFAULT_PROMPT) -> list[str]:
    """Tokenizer training text: prompts and answers of a benchmark's train split (or built-in tasks)."""
    from .bench import split_ids  # noqa: PLC0415
    from .families import completion_for, prompt_for, read_sample  # noqa: PLC0415
    from .prompt import build_prompt, target_text  # noqa: PLC0415

    texts = []
    if bench is not None:
        for sid in split_ids(bench, "train")[:limit]:
            sample = read_sample(bench, sid)
            texts += [m["content"] for m in prompt_for(sample, prompt)[0]]
            if sample.answer is not None:
                texts.append(completion_for(sample)[0]["content"])
        return texts
    from ..semantics.faults import FaultSpec, candidates, make_task  # noqa: PLC0415
    from ..library import BUILTIN, build  # noqa: PLC0415
    from ..planners.reference import simple_reference  # noqa: PLC0415
    from ..semantics.engine import World  # noqa: PLC0415

    from ..semantics.diagnosis import MISTAKE_TYPES  # noqa: PLC0415
    from ..model.state import Tolerances  # noqa: PLC0415

    for aid in BUILTIN:
        asm = build(aid)
        world = World(asm, Tolerances())
        for ftype in ("", *MISTAKE_TYPES):
            if ftype and not candidates(world, ftype):
                continue
            task = make_task(asm, [FaultSpec(ftype)] if ftype else [], seed=0, world=world)
            ref = simple_reference(task)
            texts += [m["content"] for m in build_prompt(task, prompt)]
            if ref is not None:
                texts.append(target_text(ref))
    return texts


def make_tiny(out: Path, *, bench: Path | None = None, vocab_size: int = 2048, kind: str = "byte-level",
              arch: str = "qwen2", hidden: int = 64, layers: int = 2, seed: int = 0, prompt: str = DEFAULT_PROMPT) -> dict:
    """Train the tokenizer, build the model, save both with save_pretrained; returns a summary.

    transformers loads a qwen2 model's tokenizer as its Qwen2Tokenizer, which rebuilds the pre-tokenizer as
    Qwen2's; only the byte-level kind is trained that way, so a qwen2 model takes only that kind. A llama
    model's tokenizer loads as saved. Either way the saved folder is reloaded and must encode the training
    text exactly as the trained tokenizer does."""
    if arch == "qwen2" and kind != "byte-level":
        raise InputError(f"a qwen2 model loads its tokenizer as Qwen2's, which only the byte-level kind matches; "
                         f"use --arch llama for {kind!r}", field="--tokenizer")
    texts = corpus(bench, prompt=prompt)
    tok = train_tokenizer(texts, vocab_size, kind)
    model = build_model(tok, arch=arch, hidden=hidden, layers=layers, seed=seed)
    out = Path(out)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    with new_folder(out, merge=True) as folder:   # the model's files replace earlier ones together, or none do
        tok.save_pretrained(folder)
        model.save_pretrained(folder)
        check_reload(tok, folder, texts)
    return {"out": str(out), "tokenizer": kind, "tokenizer_size": len(tok), "model_vocab": model.config.vocab_size,
            "arch": arch, "prompt": prompt, "parameters": sum(p.numel() for p in model.parameters())}


def check_reload(trained, folder: Path, texts: list[str]) -> None:
    """Raise unless AutoTokenizer loads from `folder` a tokenizer that encodes `texts` as `trained` does."""
    from transformers import AutoTokenizer  # noqa: PLC0415

    loaded = AutoTokenizer.from_pretrained(folder)
    for text in texts:
        if loaded(text, add_special_tokens=False)["input_ids"] != trained(text, add_special_tokens=False)["input_ids"]:
            raise InputError(f"the saved tokenizer reloads as {type(loaded).__name__} and encodes differently from "
                             f"the trained one (e.g. {text[:40]!r})", file=str(folder))


def _tokenizer_json(folder: Path) -> tuple[Path, dict]:
    import json  # noqa: PLC0415

    path = Path(folder) / "tokenizer.json"
    try:
        return path, json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the tokenizer: {exc}", file=str(path)) from None


def llama_cpp_pre_tokenizer(folder: Path) -> str:
    """llama.cpp's name for the pre-tokenizer of the tokenizer saved in FOLDER (tokenizer.json), which its
    GGUF converter cannot recognise for a locally trained vocabulary; refuses a split llama.cpp lacks,
    whose prompts the server would read as other tokens."""
    path, data = _tokenizer_json(folder)
    spec = data.get("pre_tokenizer") or {}
    steps = spec.get("pretokenizers", [spec])
    regexes = [s.get("pattern", {}).get("Regex") for s in steps if s.get("type") == "Split"]
    if len(regexes) == 1 and regexes[0] in LLAMA_CPP_PRE:
        return LLAMA_CPP_PRE[regexes[0]]
    raise InputError(f"llama.cpp implements no pre-tokenizer that splits as this one does "
                     f"({regexes[:1] or spec.get('type')}); `tiny-model --tokenizer byte-level` (the default) or "
                     "`--tokenizer identifiers` split as llama.cpp can", file=str(path), field="pre_tokenizer")


def llama_cpp_vocab(folder: Path) -> tuple[str, dict[int, tuple[str, str]]]:
    """(llama.cpp's pre-tokenizer name, token id -> (the text the GGUF gives that token instead of its
    byte-level spelling, its GGUF token type)) for the tokenizer saved in FOLDER.

    Qwen2's split keeps every token as it is. Under the identifier split a token is a piece of one
    identifier run, one punctuation run or one byte, so no merge joins two runs and BPE over llama.cpp's
    "whitespace" chunks (runs of white space and runs of the rest, coarser) merges exactly the same pairs.
    That pre-tokenizer reads text as UTF-8 characters: a token of printable ASCII is spelled the same both
    ways; the space is a user-defined token (llama.cpp cuts those out of the text before BPE, whose merge
    table cannot hold a space, and no other token holds one); each other single-byte token (newline, tab, a
    byte of a non-ASCII character) is the byte token `<0xXX>` that llama.cpp falls back to for a character
    no token spells. A vocabulary with any other token (white space or a non-ASCII byte inside a longer
    token) is refused."""
    pre = llama_cpp_pre_tokenizer(folder)
    if pre != "whitespace":
        return pre, {}
    path, data = _tokenizer_json(folder)
    byte_of = {ch: b for b, ch in _byte_alphabet().items()}
    added = {t["content"] for t in data.get("added_tokens", [])}
    renames: dict[int, tuple[str, str]] = {}
    for token, i in data["model"]["vocab"].items():
        raw = bytes(byte_of[ch] for ch in token) if token not in added and all(c in byte_of for c in token) else None
        if raw is None or all(b in PRINTABLE for b in raw):
            continue
        if len(raw) > 1:
            raise InputError(f"token {i} ({raw!r}) holds a byte outside printable ASCII beside others, which "
                             "llama.cpp's UTF-8 reading would not rebuild", file=str(path), field="model.vocab")
        renames[i] = (" ", "user_defined") if raw == b" " else (f"<0x{raw[0]:02X}>", "byte")
    return pre, renames


def _byte_alphabet() -> dict[int, str]:
    """GPT-2's byte-level alphabet: byte -> the character that spells it."""
    from tokenizers import pre_tokenizers  # noqa: PLC0415

    chars = sorted(pre_tokenizers.ByteLevel.alphabet())
    printable = [b for b in range(256) if chr(b) in chars]
    others = [b for b in range(256) if chr(b) not in chars]
    return {**{b: chr(b) for b in printable}, **{b: chr(256 + k) for k, b in enumerate(others)}}


def llama_cpp_mismatches(folder: Path, gguf: Path, texts: Iterable[str], limit: int = 3) -> dict:
    """llama.cpp's tokenizer reading GGUF against the Hugging Face tokenizer in FOLDER: how many of TEXTS were
    compared, up to LIMIT of those split into other token ids (as a server splits a prompt: special tokens
    parsed, no BOS added), and the ids whose text llama.cpp spells otherwise. Needs llama-cpp-python."""
    import ctypes  # noqa: PLC0415

    import llama_cpp  # noqa: PLC0415
    from transformers import AutoTokenizer  # noqa: PLC0415

    hf = AutoTokenizer.from_pretrained(folder)
    gg = llama_cpp.Llama(str(gguf), vocab_only=True, verbose=False)
    compared, differ = 0, []
    for text in texts:
        compared += 1
        ids = hf(text, add_special_tokens=False)["input_ids"]
        if gg.tokenize(text.encode("utf-8"), add_bos=False, special=True) != ids:
            differ.append(text)
            if len(differ) >= limit:
                break
    byte_of = {ch: b for b, ch in _byte_alphabet().items()}
    buf = ctypes.create_string_buffer(1024)
    vocab = gg._model.vocab  # noqa: SLF001 - the C vocabulary handle, for pieces longer than the wrapper's buffer
    spelled = []
    for token, i in hf.get_vocab().items():
        n = llama_cpp.llama_token_to_piece(vocab, i, buf, len(buf), 0, True)
        want = bytes(byte_of[ch] for ch in token) if all(c in byte_of for c in token) else token.encode("utf-8")
        if buf.raw[:max(n, 0)] != want:
            spelled.append(i)
    return {"texts": compared, "texts_split_otherwise": differ, "tokens_spelled_otherwise": sorted(spelled)[:limit]}

"""The answer family of each benchmark sample, and per sample its prompt, its grammar and its masks.

A FORGE-profile benchmark holds rework samples (reference.json; the answer is the output contract,
grammars/rework_plan.lark). A `--profile magar` benchmark adds Assembly Decision samples (decision.json
beside the task; the answer is MAGAR's structured intent, grammars/assembly_decision.lark). `prompt_for`
is the one place that chooses a sample's messages and grammar: in-process decoding (`infer`), requests
to servers (`requests`, `infer --endpoint`) and training data (`prompt_completion_rows`, which `bench
export` and `train` take) all call it.
A sample's `Grammar` renders its task grammar in every flavour a decoder reads: Lark (forgeplan's masks,
llguidance, vLLM's guidance backend), portable Lark (vLLM's xgrammar path), GBNF (llama.cpp, SGLang)
and JSON Schema (servers that take only schemas); `mask_for` gives the in-process mask of a decoding mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..bench.folder import Bench, open_bench
from ..model.choices import DEFAULT_PROMPT, DEFAULT_TARGETS
from ..model.errors import InputError
from ..semantics.task import Task
from .bench import load_sample, split_ids, task_dir

REWORK, DECISION = "rework", "decision"


@dataclass(frozen=True)
class Sample:
    """One sample of a benchmark: its task, its answer family and its reference answer (None when the
    folder has none: a rework sample without reference.json)."""

    task: Task
    family: str = REWORK
    answer: dict | None = None

    @property
    def sample_id(self) -> str:
        return self.task.sample_id


def read_sample(bench: Path | Bench, sample_id: str) -> Sample:
    """A sample of a benchmark folder: a decision sample when its build wrote a decision.json."""
    bench = open_bench(bench)
    task, reference = load_sample(bench, sample_id)
    if reference is None and bench.is_decision(sample_id):
        return Sample(task, DECISION, bench.decision(sample_id)["reference"])
    return Sample(task, REWORK, reference)


def as_sample(item: Sample | Task) -> Sample:
    """A task on its own is a rework sample (the decoders take tasks or samples)."""
    return item if isinstance(item, Sample) else Sample(item)


@dataclass(frozen=True)
class Grammar:
    """A sample's task grammar, in every flavour (each rendered on first use)."""

    family: str
    task: Task

    @cached_property
    def lark(self) -> str:
        from .decision_grammar import decision_grammar  # noqa: PLC0415
        from .grammar import specialise  # noqa: PLC0415

        return decision_grammar(self.task) if self.family == DECISION else specialise(self.task)

    def portable_lark(self) -> str:
        from .exports import portable_lark  # noqa: PLC0415

        return portable_lark(self.lark)

    def gbnf(self) -> str:
        from .exports import lark_to_gbnf  # noqa: PLC0415

        return lark_to_gbnf(self.lark)

    def json_schema(self) -> dict:
        from .decision_grammar import decision_json_schema  # noqa: PLC0415
        from .exports import json_schema  # noqa: PLC0415

        return decision_json_schema(self.task) if self.family == DECISION else json_schema(self.task)


def grammar_for(sample: Sample | Task) -> Grammar:
    s = as_sample(sample)
    return Grammar(s.family, s.task)


def prompt_for(sample: Sample | Task, style: str = DEFAULT_PROMPT) -> tuple[list[dict], Grammar]:
    """The sample's chat messages in a prompt style, and its task grammar."""
    from .decision_prompt import decision_prompt  # noqa: PLC0415
    from .prompt import build_prompt  # noqa: PLC0415

    s = as_sample(sample)
    messages = decision_prompt(s.task, style) if s.family == DECISION else build_prompt(s.task, style)
    return messages, grammar_for(s)


def completion_for(sample: Sample, targets: str = DEFAULT_TARGETS) -> list[dict]:
    """The assistant turn of a training example: the sample's reference answer, a rework plan's actions in
    the order `targets` names (llm.targets; an Assembly Decision has no plan to order)."""
    from .decision_prompt import decision_completion  # noqa: PLC0415
    from .prompt import completion  # noqa: PLC0415
    from .targets import ordered  # noqa: PLC0415

    if sample.answer is None:
        raise ValueError(f"{sample.sample_id} has no reference answer")
    if sample.family == DECISION:
        return decision_completion(sample.answer)
    return completion(ordered(sample.task, sample.answer, targets))


def answer_pieces(sample: Sample, targets: str = DEFAULT_TARGETS, grounding: bool = False) -> list[tuple[str, bool]]:
    """The assistant turn as (text, is_state_rendering) pieces: one piece, or with `grounding` a rework
    answer cut by the engine's state renderings (llm.grounding)."""
    from .grounding import ground  # noqa: PLC0415

    text = completion_for(sample, targets)[0]["content"]
    return ground(sample.task, text) if grounding and sample.family == REWORK else [(text, False)]


def mask_for(sample: Sample | Task, mode: str, vocab):
    """The in-process mask of `--constrained MODE` (None for none): a rework sample's grammar or legal
    mask, or a decision sample's mask over its task grammar or over its legal decisions."""
    from .decision_grammar import DecisionMask, decision_grammar, legal_grammar  # noqa: PLC0415
    from .masking import make_mask  # noqa: PLC0415

    s = as_sample(sample)
    if s.family == REWORK or mode not in ("grammar", "legal"):
        return make_mask(mode, s.task, vocab)   # None for none; refuses an unknown mode
    return DecisionMask(legal_grammar(s.task) if mode == "legal" else decision_grammar(s.task), vocab)


def prompt_completion_rows(bench: Path | Bench, split: str, style: str = DEFAULT_PROMPT, *, limit: int = 0,
                           with_ids: bool = False, targets: str = DEFAULT_TARGETS) -> list[dict]:
    """Conversational prompt/completion rows (TRL's format) of a split, each sample with its family's
    prompt and answer; every sample needs its reference (the rows `bench export` writes and `train` reads)."""
    bench = open_bench(bench)
    rows = []
    for sid, sample in training_samples(bench, split, limit):
        row = {"sample_id": sid} if with_ids else {}
        rows.append({**row, "prompt": prompt_for(sample, style)[0], "completion": completion_for(sample, targets)})
    return rows


def training_samples(bench: Path | Bench, split: str, limit: int = 0) -> list[tuple[str, Sample]]:
    """(sample id, sample) of a split, each with its reference answer (refused without one)."""
    bench = open_bench(bench)
    out = []
    for sid in split_ids(bench, split)[: limit or None]:
        sample = read_sample(bench, sid)
        if sample.answer is None:
            raise InputError("reference.json is missing (needed for training data)", file=str(task_dir(bench, sid)))
        out.append((sid, sample))
    return out

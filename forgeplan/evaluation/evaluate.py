"""Score a predictions JSONL against a benchmark split."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bench.folder import Bench, open_bench
from ..io.guarded import LIMITS, read_jsonl, read_jsonl_line
from ..model.errors import ForgeplanError, InputError
from ..semantics.task import Task
from .metrics import breakdown, core_metrics, failure_breakdown
from .samples import REFERENCE_COSTS, SampleScore, score_sample

PAPER_SOLVE_SECONDS = 120.0


# For scoring only (`compact`): every output over the contract's byte limit gets the same verdict ("over
# the limit") whatever it holds, so all of them share this one string, and a non-ASCII output is kept as
# its UTF-8 bytes, which the contract reads as it reads the text. A string with one astral character is
# stored four bytes a character: 2 MB lines of it held as text take four times the file's size.
OVERSIZED = "x" * (LIMITS["output"] + 1)


# Outputs of at least this many bytes are not held while the file is read: a StoredOutput names where they
# are, and scoring reads each one back when it scores its sample, so memory holds one such output at a time.
STORED_BYTES = 65_536


@dataclass(frozen=True)
class StoredOutput:
    """A prediction's raw output left in the predictions file: line `line` at byte `offset`."""

    path: str
    offset: int
    line: int
    sample_id: str

    def load(self) -> str | bytes:
        """The output, compacted as `read_predictions` would; the line must still hold the same sample."""
        row = read_jsonl_line(self.path, self.offset, self.line, lone_surrogates=True)
        if not isinstance(row, dict) or row.get("sample_id") != self.sample_id or not isinstance(row.get("raw_output"), str):
            raise InputError("changed while it was being scored", file=self.path, field=f"line {self.line}")
        return _compact(row["raw_output"])


def _compact(raw: str) -> str | bytes:
    if len(raw) > LIMITS["output"]:
        return OVERSIZED
    if raw.isascii():
        return raw
    try:
        data = raw.encode("utf-8")
    except UnicodeEncodeError:   # a lone surrogate: the contract judges the text itself
        return raw
    return OVERSIZED if len(data) > LIMITS["output"] else data


def read_predictions(path: Path, compact: bool = False, stored: bool = False) -> dict[str, str]:
    """sample_id -> raw output; later lines for the same id are an error (one prediction each). With
    `compact`, outputs are stored for scoring (see OVERSIZED): the text of an output over the byte limit
    is not kept, and a non-ASCII one is kept as UTF-8 bytes. With `stored` too, an output of STORED_BYTES
    or more stays in the file as a StoredOutput (for scoring on this machine: a Ray cluster's nodes may
    not see the file)."""
    preds: dict = {}
    keep = _compact if compact else (lambda raw: raw)
    for n, offset, row in read_jsonl(path, "predictions", lone_surrogates=True, offsets=True):  # the contract judges raw outputs
        if not isinstance(row, dict) or not isinstance(row.get("sample_id"), str) or not isinstance(row.get("raw_output"), str):
            raise InputError('expected {"sample_id": str, "raw_output": str}', file=str(path), field=f"line {n}")
        if row["sample_id"] in preds:
            raise InputError(f"duplicate sample_id {row['sample_id'][:80]!r}", file=str(path), field=f"line {n}")
        kept = keep(row["raw_output"])
        big = compact and stored and kept is not OVERSIZED and len(kept) >= STORED_BYTES
        preds[row["sample_id"]] = StoredOutput(str(path), offset, n, row["sample_id"]) if big else kept
    return preds


SCORE_BATCH = 40


def scored_ids(bench: Bench, predictions: dict, split: str, only_predicted: bool = False) -> list[str]:
    """The split's sample ids in order (with `only_predicted`, those that have a prediction); refuses a
    split the manifest lacks and predictions for samples outside the split."""
    ids = bench.split(split)
    unknown = sorted(set(predictions) - set(ids))
    if unknown:
        raise InputError(f"{len(unknown)} predictions are not in split {split!r}, e.g. {unknown[:3]}", field="--predictions")
    return [sid for sid in ids if sid in predictions] if only_predicted else list(ids)


def score_split(bench: Path | Bench, predictions: dict[str, str], split: str = "test", progress=None,
                reference_cost: str = "forgeplan", jobs: int = 1, executor: str = "local",
                address: str | None = None, *, extract: bool = False, only_predicted: bool = False) -> list[SampleScore]:
    """Score every sample of the split (with `only_predicted`, those that have a prediction), in split
    order; `reference_cost` picks the reference (see paper_reference), `extract` takes the one JSON object
    out of fenced or chatty answers. Batches of consecutive samples run `jobs` at a time (`forgeplan.executors`)."""
    from ..executors import run_ordered

    if reference_cost not in REFERENCE_COSTS:
        raise InputError(f"must be one of {list(REFERENCE_COSTS)}, got {reference_cost!r}", field="--reference-cost")
    bench = open_bench(bench)
    ids = scored_ids(bench, predictions, split, only_predicted)
    batches = [(bench.part(ids[i:i + SCORE_BATCH]), {sid: predictions.get(sid) for sid in ids[i:i + SCORE_BATCH]},
                reference_cost, extract) for i in range(0, len(ids), SCORE_BATCH)]
    out: list[SampleScore] = []
    for _, scores in run_ordered(score_samples, batches, jobs, executor, address):
        out += scores
        if progress:
            progress(len(scores))
    return out


def score_samples(bench: Path | Bench, predictions: dict[str, str | None], reference_cost: str,
                  extract: bool = False) -> list[SampleScore]:
    """One batch of `score_split`: the score of each sample (in the dict's order)."""
    bench = open_bench(bench)
    out = []
    for sid, prediction in predictions.items():
        if isinstance(prediction, StoredOutput):
            prediction = prediction.load()
        sample = bench.rework(sid)   # every file checked: digests, ids, the reference replayed, labels derived
        reference = sample.reference
        if reference_cost == "paper" and reference["rework_plan"]["actions"]:
            reference = paper_reference(sample.task, reference)
        out.append(score_sample(sample.task, prediction, reference, sample.meta, sample.minimal_rework, reference_cost,
                                extract))
    return out


def paper_reference(task: Task, reference: dict) -> dict:
    """FORGE's reference for the rework metrics (B.3): "the number of executable actions in this verified
    reference sequence defines the reference cost c*", and the reference "uses the fewest executable
    actions". forgeplan's stored reference minimises distinct moved parts first; it is kept when no valid
    plan has fewer actions, else replaced by the registry's proven action-optimal plan (`actions`
    objective). Where that planner stops on a state budget (the moved-set search of partial moves,
    SEMANTICS §9) it runs without a clock, and where it does not prove the optimum over every plan the
    engine accepts, or no planner proves that objective, the stored reference stands (its `proof` says
    whether it is proved minimal)."""
    from ..planners.registry import Guarantee, planner_for
    from ..planners.result import Options
    from ..semantics.grounded import ground

    grounded = ground(task)
    try:
        planner = planner_for(grounded, Guarantee.PROVED_MINIMAL, "actions")
    except InputError:
        return reference
    result = planner(grounded, Options("actions", None if planner.deterministic else PAPER_SOLVE_SECONDS))
    if not result.optimal and planner.deterministic:
        return reference
    if not result.optimal:
        raise ForgeplanError(f"{task.sample_id}: the action-optimal reference was not proved within "
                             f"{PAPER_SOLVE_SECONDS:g} s ({result.status.value})")
    if result.actions >= len(reference["rework_plan"]["actions"]):
        return reference
    plan = {**reference["rework_plan"], "actions": [a.to_json() for a in result.plan]}
    return {**reference, "rework_plan": plan}


def summarise(samples: list[SampleScore], split: str, reference_cost: str = "forgeplan", answers: dict | None = None) -> dict:
    """The report's figures; `answers` (report.answer_counts) says how the answers were read."""
    rules = {"reference_cost": reference_cost, "magar_profile_samples": sum(s.magar_profile for s in samples if s.is_fault)}
    unproved = sum(s.is_fault and not s.reference_proved for s in samples)
    if unproved:   # expert-tier references (partial moves) not proved minimal over every plan the engine accepts
        rules["unproved_references"] = unproved
    return {
        "split": split, "samples": len(samples), "fault_samples": sum(s.is_fault for s in samples),
        **({"answers": answers} if answers is not None else {}),
        "rules": rules,
        "metrics": core_metrics(samples),
        "failures": failure_breakdown(samples),
        "per_assembly": breakdown(samples, lambda s: s.assembly_id),
        "per_fault_type": breakdown([s for s in samples if s.is_fault], lambda s: s.stratum),
        "per_difficulty": breakdown(samples, lambda s: s.difficulty),
    }

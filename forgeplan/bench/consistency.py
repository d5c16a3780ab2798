"""What a reader of a benchmark checks at every load because it costs nothing: ids against folders, the
reference replayed and its diagnosis derived again, the labels and minimal_rework.json derived from the
reference, the decision among its valid ones. Each refusal is an InputError naming the file and the
field (exit 2): a score against a file that contradicts its task would be false. `bench check` runs
these and, besides, what costs a solver (bench.check)."""

from __future__ import annotations

import json

from ..io.contract import ContractError, parse_output
from ..model.actions import Action, moved_parts
from ..model.errors import InputError
from ..semantics.diagnosis import diagnose
from ..semantics.task import Task
from .labels import difficulty, fault_labels, minimal_rework

REWORK_CONDITIONS = ("nofault", "boundary", "single", "multi")


def _same(want, got, what: str, file: str, field: str) -> None:
    if want != got:
        raise InputError(f"{what}: holds {_short(got)}, expected {_short(want)}", file=file, field=field)


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 120 else text[:117] + "..."


def _first_difference(want: dict, got: dict) -> str:
    """The first key (in `want`'s order, then `got`'s extra keys) where two objects differ."""
    return next((k for k in [*want, *got] if want.get(k, ...) != got.get(k, ...)), "(top level)")


def check_task(sample_id: str, task: Task, file: str) -> None:
    """The task's sample id (actual_state.json) names its folder."""
    _same(sample_id, task.sample_id, "the task is not the one its folder names", file, "sample_id")


def check_meta(sample_id: str, meta: dict, file: str, record: dict | None = None, manifest_file: str = "",
               derived: bool = False) -> None:
    """meta.json names its folder, and the manifest's record of the sample says what it says (but for the
    split, in a benchmark `derived` from another with splits of its own)."""
    _same(sample_id, meta["sample_id"], "names another sample than its folder", file, "sample_id")
    if record is None:
        return
    for key, value in record.items():
        if key in meta and meta[key] != value and not (derived and key == "split"):
            raise InputError(f"the manifest's record of {sample_id} says {_short(value)}, its meta.json "
                             f"{_short(meta[key])}", file=manifest_file, field=f"records.{sample_id}.{key}")


def check_assembly(meta: dict, task: Task, file: str) -> None:
    _same(task.assembly.assembly_id, meta["assembly_id"], "is not the task's assembly", file, "assembly_id")
    _same(task.assembly.family, meta["family"], "is not the task's assembly family", file, "family")


def check_reference(sample_id: str, reference: dict, task: Task, file: str) -> tuple[Action, ...]:
    """reference.json is the sample's, keeps the output contract, restores the target in the engine,
    diagnoses the actual state as SEMANTICS §7 does, and its proof's figures are its plan's; returns the plan."""
    plan = reference_plan(sample_id, reference, task, file)
    check_diagnosis(sample_id, reference, task, file)
    check_proof_figures(reference, plan, file)
    return plan


def reference_plan(sample_id: str, reference: dict, task: Task, file: str) -> tuple[Action, ...]:
    """The reference's plan, once its ids are the sample's and the plan restores the target in the engine."""
    annotation = reference["annotation"]
    for field, named in (("annotation.sample_id", annotation["sample_id"]), ("sample_id", reference.get("sample_id", sample_id))):
        if named != sample_id:
            raise InputError(f"sample {sample_id}: the reference names another sample", file=file, field=field)
    _same(task.assembly.assembly_id, annotation["assembly_id"], "is not the task's assembly", file, "annotation.assembly_id")
    try:
        actions = parse_output(json.dumps(reference), strict=False).actions
    except ContractError as exc:
        raise InputError(f"sample {sample_id}: the reference breaks the output contract ({exc.reason})", file=file,
                         field="rework_plan") from None
    r = task.world.restoration(task.actual, actions, task.target)
    if not r.restored:
        why = str(r.failure) if r.failure is not None else "; ".join(task.world.differences(r.final, task.target)[:2])
        raise InputError(f"sample {sample_id}: the reference plan does not restore the target ({why})", file=file,
                         field="rework_plan.actions")
    return actions


def check_diagnosis(sample_id: str, reference: dict, task: Task, file: str) -> None:
    """The reference's annotation is the task's expected one (SEMANTICS §7: mistakes, visibility, observations)."""
    annotation = reference["annotation"]
    expected = json.loads(json.dumps(diagnose(task.world, task.actual, task.target)))
    given = annotation["mistakes"]
    if given != expected:
        k = next((i for i, (a, b) in enumerate(zip(given, expected)) if a != b), min(len(given), len(expected)))
        raise InputError(f"sample {sample_id}: the diagnosis is not the task's (SEMANTICS §7): mistake {k} is "
                         f"{_short(given[k] if k < len(given) else None)}, expected "
                         f"{_short(expected[k] if k < len(expected) else None)}", file=file, field="annotation.mistakes")
    _same(not expected, annotation["pass"], "the diagnosis", file, "annotation.pass")


def check_proof_figures(reference: dict, plan: tuple[Action, ...], file: str) -> None:
    """The moved parts and actions the proof object reports are the plan's."""
    proof = reference.get("proof") or {}
    for key, value in (("moved_parts", len(moved_parts(plan))), ("actions", len(plan))):
        if key in proof and proof[key] != value:
            raise InputError(f"says {_short(proof[key])}, the reference plan {value}", file=file, field=f"proof.{key}")


FAULTS = {"nofault": range(0, 1), "boundary": range(0, 1), "single": range(1, 2), "multi": range(2, 1000)}


def check_labels(meta: dict, reference: dict, plan: tuple[Action, ...], file: str) -> None:
    """meta.json's fault labels and difficulty are those of the reference (a rework sample), and the
    number of mistakes the reference diagnoses is its condition's (none, one, several)."""
    mistakes = reference["annotation"]["mistakes"]
    for key, value in fault_labels(mistakes).items():
        if key in meta:
            _same(value, meta[key], "disagrees with the reference's diagnosis", file, key)
    allowed = FAULTS.get(meta["condition"])
    if allowed is not None and len(mistakes) not in allowed:
        raise InputError(f"a {meta['condition']} task, but the reference diagnoses {len(mistakes)} mistakes", file=file,
                         field="condition")
    if meta["condition"] in REWORK_CONDITIONS:
        _same(difficulty(meta["condition"], len(plan), mistakes), meta["difficulty"],
              "is not the difficulty of the reference plan", file, "difficulty")


def check_rework(sample_id: str, rework: dict, plan: tuple[Action, ...], file: str) -> None:
    """minimal_rework.json is the one the reference plan gives (bench.labels.minimal_rework)."""
    want = minimal_rework(sample_id, plan)
    if rework != want:
        key = _first_difference(want, rework)
        raise InputError(f"is not the reference plan's: holds {_short(rework.get(key))}, expected {_short(want.get(key))}",
                         file=file, field=key)


def check_record(sample_id: str, record: dict, plan: tuple[Action, ...], rework: dict, manifest_file: str) -> None:
    """The manifest's reference figures of a rework sample are its reference's."""
    for key, value in (("reference_actions", len(plan)), ("reference_moved_parts", rework["moved_part_count"])):
        if key in record and record[key] != value:
            raise InputError(f"says {_short(record[key])}, the reference {value}", file=manifest_file,
                             field=f"records.{sample_id}.{key}")


def check_decision(sample_id: str, decision: dict, meta: dict, file: str, meta_file: str) -> None:
    """decision.json is the sample's, its reference decision is among its valid ones and is the first step
    of its reference plan's decision class (meta.json's operation), and its optimum is that plan's length."""
    _same(sample_id, decision["sample_id"], "names another sample than its folder", file, "sample_id")
    if decision["reference"] not in decision["valid"]:
        raise InputError("the reference decision is not among the valid decisions", file=file, field="reference")
    if len(decision["valid"]) != len({json.dumps(v, sort_keys=True) for v in decision["valid"]}):
        raise InputError("names a valid decision twice", file=file, field="valid")
    _same(len(decision["reference_plan"]), decision["optimum"]["actions"], "is not the reference plan's length",
          file, "optimum.actions")
    if "operation" in meta:
        _same(decision["reference"]["operation"], meta["operation"], "is not the reference decision's operation",
              meta_file, "operation")

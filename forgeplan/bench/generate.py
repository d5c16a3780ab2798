"""Generate benchmark tasks from a composition plan, each with a proven-minimal, verified reference.

Every task is a pure function of (seed, slot, assembly): workers may run in any order and the output is
byte-identical whatever `--jobs` is. A task is kept only when clingo proved its reference optimal and
the verifier replays it as valid (closed loop); otherwise the next attempt seed is tried. On an assembly
that needs partial moves (the expert tier) the reference is the best `planners.reference` has, with its
proof status in `reference.json` (`proof.optimal`), and the closed loop still verifies it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import time
from dataclasses import dataclass

from ..executors import release_freed_memory
from ..io.output import json_text
from ..io.task_files import assembly_files, state_files
from ..model.actions import Action, moved_parts
from ..model.assembly import Assembly
from ..model.errors import ForgeplanError, InputError
from ..model.state import Tolerances
from ..semantics.assembly_grounding import AssemblyGrounding
from ..semantics.diagnosis import MISTAKE_TYPES, diagnose
from ..semantics.engine import World
from ..semantics.faults import FaultSpec, candidates, make_task
from ..semantics.grounded import GroundedTask, ground
from ..semantics.task import Task
from ..verify import verify
from .card import row_of
from .composition import Slot
from .digests import digest
from .labels import difficulty, fault_labels, minimal_rework
from .shards import record_of

MAX_ATTEMPTS = 25
SOLVE_TIME_LIMIT = 60.0


@dataclass
class Generated:
    slot: Slot
    sample_id: str
    files: dict[str, dict]      # file name -> JSON object, in writing order


@dataclass
class Rendered:
    """A generated task as the worker hands it back: its files' text and its manifest record."""

    slot: Slot
    sample_id: str
    texts: dict[str, str]       # file name -> the file's text, in writing order
    record: dict
    row: dict                   # the task's tasks.jsonl row (card.row_of)
    digests: dict[str, str]     # file name -> the SHA-256 of its text (the build's SHA256SUMS lines)
    cpu: float = 0.0            # the worker's CPU seconds for this task (the batch's shared grounding not counted)


FILES = "assembly files"   # the memo of `AssemblyGrounding` that keeps the assembly files and their text


def _assembly_files(shared: AssemblyGrounding) -> dict[str, dict]:
    """The five assembly files, made once per assembly grounding (the same for all its tasks)."""
    kept = shared.memo(FILES)
    if "files" not in kept:
        kept["files"] = assembly_files(shared.world.assembly)
    return kept["files"]


def _assembly_texts(shared: AssemblyGrounding) -> dict[str, str]:
    """Their text, written once per assembly grounding (most of their cost: only a batch renders them)."""
    kept = shared.memo(FILES)
    if "texts" not in kept:
        kept["texts"] = {n: json_text(d) for n, d in _assembly_files(shared).items()}
    return kept["texts"]


def render(g: Generated, shared: AssemblyGrounding) -> Rendered:
    """The worker's side of writing: every file as text (the assembly files kept on the batch's assembly
    grounding), the record, the card's row and the digests (read back from the texts, as a reader would)."""
    cached = _assembly_texts(shared)
    texts = {n: cached[n] if n in cached else json_text(d) for n, d in g.files.items()}
    row = row_of(g.sample_id, lambda name: json.loads(texts[name]))
    return Rendered(g.slot, g.sample_id, texts, record_of(g.files), row,
                    {n: digest(t.encode("utf-8")) for n, t in texts.items()})


def sample_id(slot: Slot) -> str:
    return f"{slot.assembly_id}_{slot.split}_{slot.index:06d}"


def _rng(seed: int, *key) -> random.Random:
    digest = hashlib.sha256(json.dumps([seed, *key]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _faults_for(slot: Slot, task_world, rng: random.Random) -> list[FaultSpec]:
    types = [t for t in MISTAKE_TYPES if candidates(task_world, t)]
    if slot.condition == "single":
        return [FaultSpec(types[(slot.index // 2) % len(types)])]
    k = 3 if rng.random() < 0.25 else 2
    chosen = rng.sample(types, k=min(k, len(types)))
    return [FaultSpec(t) for t in chosen]


def _attempts(slot: Slot, asm: Assembly, seed: int, tolerances: Tolerances, world: World | None = None):
    """Per attempt seed: (attempt, task, None) for a task worth solving, or (attempt, None, why not).
    `world`: `asm` compiled under `tolerances`, shared by the batch's tasks (else compiled here)."""
    world = world if world is not None else World(asm, tolerances)
    sid = sample_id(slot)
    want_hidden = slot.index % 2 == 0
    pair_seed = _rng(seed, "pair", slot.assembly_id, slot.pair).randrange(2**31) if slot.pair is not None else None
    for attempt in range(MAX_ATTEMPTS):
        task_seed = _rng(seed, "slot", slot.index, attempt).randrange(2**31)
        boundary = slot.condition == "boundary" or slot.pair_role == "fault"
        if slot.condition in ("nofault", "boundary"):
            yield attempt, make_task(asm, [], seed=task_seed, sample_id=sid, tolerances=tolerances, boundary=boundary,
                                     boundary_seed=pair_seed, world=world), None
            continue
        faults = _faults_for(slot, world, _rng(seed, "faults", slot.index, attempt))
        try:
            task = make_task(asm, faults, seed=task_seed, sample_id=sid, tolerances=tolerances, boundary=boundary,
                             boundary_seed=pair_seed, world=world)
        except ForgeplanError as exc:
            yield attempt, None, str(exc)
            continue
        hidden = any(not m["visible"] for m in diagnose(world, task.actual, task.target))
        if slot.condition == "single" and hidden != want_hidden and attempt < MAX_ATTEMPTS // 2:
            yield attempt, None, "visibility preference"
            continue
        yield attempt, task, None


def build_task(slot: Slot, asm: Assembly, seed: int, tolerances: Tolerances, attempts=None,
               shared: AssemblyGrounding | None = None,
               objective: str = "moved-parts,actions") -> tuple[Task, dict, tuple[Action, ...], int]:
    """The task of a slot, its reference (reference.json, proved minimal in `objective`) and plan; tries
    attempt seeds (`attempts`: the slot's `_attempts`, some maybe drawn already) until the closed loop
    holds. `shared`: the assembly grounding of the batch (the attempts' tasks are made on its world)."""
    from ..planners.reference import reference_output
    from ..planners.registry import planner_for
    from ..planners.result import Options

    shared = shared if shared is not None else AssemblyGrounding(World(asm, tolerances))
    last_error = "no attempt"
    for attempt, task, skipped in _attempts(slot, asm, seed, tolerances, shared.world) if attempts is None else attempts:
        if task is None:
            last_error = skipped
            continue
        grounded = ground(task, shared)
        planner = planner_for(grounded, objective=objective)
        if planner.deterministic:   # an unproved answer is the same on every run: it is the reference
            found = budgeted_reference(grounded, objective)
            if found is None:
                last_error = "no plan restores the target"
                continue
            return task, *found, attempt
        result = planner(grounded, Options(objective, SOLVE_TIME_LIMIT))
        if not result.optimal:
            last_error = f"reference not proved optimal ({result.status.name})"
            continue
        ref = reference_output(task, result)
        ref["proof"].pop("seconds", None)  # timings differ run to run; the benchmark must be byte-identical
        return task, ref, result.plan, attempt
    raise ForgeplanError(f"could not generate task {sample_id(slot)}: {last_error}")


def budgeted_reference(task: GroundedTask,
                       objective: str = "moved-parts,actions") -> tuple[dict, tuple[Action, ...]] | None:
    """The reference of a task whose proving planner stops on a state budget (the moved-set search of
    SEMANTICS §9) and its plan: what `planners.reference` gives (proved or not), else, for a task the
    planner refuses, the feasible planner's valid plan, marked `optimal: false` (the proof object says
    which; `generate`'s closed loop verifies either). None when no plan restores the target."""
    from ..io.contract import parse_output
    from ..planners.reference import proven_reference, simple_reference

    try:
        ref = proven_reference(task, SOLVE_TIME_LIMIT, objective)
    except InputError:   # the moved-set search refuses it (a spare in a slot, a lock, two repairs in one slot)
        ref = simple_reference(task)
    if ref is None:
        return None
    ref = {k: ref[k] for k in ("annotation", "rework_plan", "proof")}
    ref["proof"].pop("seconds", None)
    if objective != "moved-parts,actions":   # a feasible plan's proof names the build's objective too
        ref["proof"].setdefault("objective", objective)
    return ref, tuple(parse_output(json.dumps({k: ref[k] for k in ("annotation", "rework_plan")})).actions)


def generate_batch(slots: list[Slot], asm: Assembly, seed: int, tolerances: Tolerances,
                   objective: str = "moved-parts,actions") -> list[Rendered]:
    """The tasks of a batch of slots on one assembly, grounded on one assembly grounding (owned by the
    batch) and solved on one clingo grounding of it: that is made up front for the union of the batch's
    first attempts (a later attempt may widen it); both are dropped afterwards, with the memory they held."""
    from ..planners.asp.grounding import prepare

    shared = AssemblyGrounding(World(asm, tolerances))
    pending, firsts = [], []
    for slot in slots:
        attempts, drawn = _attempts(slot, asm, seed, tolerances, shared.world), []
        for item in attempts:
            drawn.append(item)
            if item[1] is not None:
                firsts.append(ground(item[1], shared))
                break
        pending.append(itertools.chain(drawn, attempts))
    prepare(firsts)   # clingo's grounding of the batch's tasks it grounds, kept on `shared`
    try:
        return [_timed(lambda: render(generate(slot, asm, seed, tolerances, attempts, shared, objective), shared))
                for slot, attempts in zip(slots, pending)]
    finally:
        # a later batch brings rotation values of its own (faults are drawn at random): its grounding would
        # not serve it, so it goes with `shared`
        del shared, pending, firsts
        release_freed_memory()


def _timed(make) -> Rendered:
    """`make()`, with the CPU seconds it took (what `python -m lab bench` reports per task)."""
    t0 = time.process_time()
    out = make()
    out.cpu = time.process_time() - t0
    return out


def generate(slot: Slot, asm: Assembly, seed: int, tolerances: Tolerances, attempts=None,
             shared: AssemblyGrounding | None = None, objective: str = "moved-parts,actions") -> Generated:
    """One task of the benchmark. `asm` is the loaded assembly itself (built-in or imported), so a
    worker process never has to find it again by id; `shared`, `objective` as in `build_task`."""
    shared = shared if shared is not None else AssemblyGrounding(World(asm, tolerances))
    task, ref, plan, attempt = build_task(slot, asm, seed, tolerances, attempts, shared, objective)
    out = {k: ref[k] for k in ("annotation", "rework_plan")}
    verdict = verify(task, json.dumps(out), route_hint=moved_parts(plan))   # the reference: no route to solve for
    if not verdict.valid:
        raise ForgeplanError(f"closed loop failed for {task.sample_id}: {verdict.reason}")
    mistakes = ref["annotation"]["mistakes"]
    meta = {
        "sample_id": task.sample_id, "assembly_id": task.assembly.assembly_id, "family": task.assembly.family,
        "split": slot.split, "condition": slot.condition, **fault_labels(mistakes),
        "difficulty": difficulty(slot.condition, len(plan), mistakes),
        "counterfactual_pair": slot.pair, "counterfactual_role": slot.pair_role, "attempt": attempt,
    }
    magar = minimal_rework(task.sample_id, plan)
    files = _assembly_files(shared) | state_files(task)
    files["reference.json"] = ref
    files["meta.json"] = meta
    files["minimal_rework.json"] = magar
    return Generated(slot, task.sample_id, files)

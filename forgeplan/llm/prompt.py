"""Prompt serialisation, shared by training, inference, serving and the benchmark's JSONL export.

Two styles, and in both the task's action vocabulary (`action_space`: every action its grammar admits,
with its parameters):

- `forge` (the default) follows FORGE's inference contract (C.2): the system turn declares the output
  (one JSON object with annotation and rework_plan, no prose), the user turn is the public task
  representation as one compact JSON object: the parts and their relations (blocking per removal
  direction, supports, contacts, symmetries, locks), the spares, the assembly sequence, the action space
  (one answer-shaped template per action, its placeholders' values) and the initial, actual (observed)
  and target states in full. Voxels are replaced by what they imply, so the prompt fits a small context.
- `compact`: the action signatures in the system turn and the task's state in a few lines
  (`compact_text`), for small models trained on the assembly (the CPU reference model).

The answer is the output contract as compact JSON (`target_text`), the exact text the grammar accepts.
No torch here: the benchmark's JSONL export imports this module.
"""

from __future__ import annotations

from ..io.task_files import public_files
from ..model.choices import DEFAULT_PROMPT, PROMPTS
from ..semantics.task import Task
from .action_space import signatures, templates, values
from .grammar import compact

SYSTEM = (
    "Return one JSON object with the declared annotation and rework_plan fields. Do not add explanatory prose.\n"
    "annotation: {\"sample_id\",\"assembly_id\",\"pass\",\"mistakes\"}: pass is true when the actual state needs "
    "no rework; mistakes lists one {\"type\",\"part_id\",\"visible\"} per fault, type one of missing_part, "
    "wrong_part, wrong_orientation, misplacement, under_insertion, interference_lock, visible true when the fault's "
    "direct repair is possible in the actual state; a mistake may add what is observed: observed_part_id "
    "(wrong_part), axis and angle_deg (wrong_orientation), offset [x,y,z] (misplacement), offset (under_insertion), "
    "locked (interference_lock).\n"
    "rework_plan: {\"objective\":\"restore_to_target_state\",\"actions\":[...]}: the actions, in order, that take "
    "the actual state to the target state, each written as one of the task's action_space templates.\n"
    "Write compact JSON (no spaces or line breaks), keys in the order given.")
SYSTEM_COMPACT = "Repair the assembly: one JSON object, annotation then rework_plan. Actions: "


def task_json(task: Task) -> dict:
    """The public task representation of the `forge` prompt (deterministic key order)."""
    files = public_files(task)
    cat, bg = files["part_catalog.json"], files["blocking_graph.json"]
    supports: dict[str, list[str]] = {}
    for s, p in files["assembly_graph.json"]["supports"]:
        supports.setdefault(p, []).append(s)
    parts = []
    for p in cat["parts"]:
        pid = p["part_id"]
        blocked = {d: [b for b, q in bg["edges"][d] if q == pid] for d in bg["removal_dirs"][pid]}
        entry = {"part_id": pid, "kind": p["kind"], "symmetries": len(p["symmetry"]), "supports": supports.get(pid, []),
                 "blocked_by": blocked}
        if p["lock"] is not None:
            entry["lock"] = p["lock"]
        parts.append(entry)
    return {
        "sample_id": task.sample_id,
        "assembly_id": task.assembly.assembly_id,
        "family": cat["family"],
        "parts": parts,
        "spare_parts": [{"part_id": w["part_id"], "variant_of": w["variant_of"], "difference": w["difference"]}
                        for w in cat["spare_parts"]],
        "contacts": files["contact_graph.json"]["edges"],
        "sequence": files["assembly_graph.json"]["sequence"],
        "action_space": {"templates": templates(task), "values": values(task)},
        "tolerances": files["target_state.json"].get("tolerances"),
        "initial_state": _round(files["initial_state.json"]["slots"]),
        "actual_state": _round(files["actual_state.json"]["slots"]),
        "target_state": _round(files["target_state.json"]["slots"]),
    }


def compact_text(task: Task) -> str:
    """The task's state in a few lines: the ids, then the actual state where it differs from the target state.

    Every line is compact JSON spelled as the answer spells it (`"sample_id":"…"`, `"assembly_id":"…"`,
    one object per deviating part led by `"part_id":"…"`): a small model fills in an id by copying the
    token that follows the same key in the prompt (the pattern an induction head learns) rather than by
    learning a mapping between two spellings, and every answer trains that copy several times. A position
    is given as its offset from the target position (`offset`, as a misplacement is annotated), so a small
    model sees a fault's size without having memorised every target position.

    It leaves out what a repair does not depend on (the state before the faulty operations) and the
    assembly's structure (parts, blocking, supports, contacts, locks, spares), which is the same for every
    task of an assembly: a model prompted this way must have trained on the assembly. It exists to train
    small models in distribution fast (the CPU reference model); the JSON prompt carries everything.
    """
    files = public_files(task)
    lines = [compact({"sample_id": task.sample_id, "assembly_id": task.assembly.assembly_id})]
    target = files["target_state.json"]["slots"]
    for pid, slot in files["actual_state.json"]["slots"].items():
        want = target.get(pid, {})
        diff = {k: v for k, v in slot.items() if want.get(k) != v}
        if "position" in diff and want.get("position") is not None and diff["position"] is not None:
            diff = {"offset" if k == "position" else k: v for k, v in diff.items()}
            diff["offset"] = [round(a - b, 6) for a, b in zip(slot["position"], want["position"])]
        if diff:
            lines.append("actual " + compact({"part_id": pid, **{k: _round(v) for k, v in diff.items()}}))
    return "\n".join(lines)


def _round(v):
    """Numbers to the 6 decimals the task files carry (float noise such as 0.8640000000000043 costs tokens)."""
    if isinstance(v, dict):
        return {k: _round(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_round(x) for x in v]
    return round(v, 6) if isinstance(v, float) else v


def check_style(style: str) -> str:
    if style not in PROMPTS:
        raise ValueError(f"prompt style {style!r} must be one of {PROMPTS}")
    return style


def user_turn(task: Task, style: str) -> str:
    """The task as the user turn of a prompt of this style (rework and decision prompts share it)."""
    return compact(task_json(task)) if check_style(style) == "forge" else compact_text(task)


def build_prompt(task: Task, style: str = DEFAULT_PROMPT) -> list[dict]:
    """Chat messages: the system turn and the task as the user turn."""
    system = SYSTEM if check_style(style) == "forge" else SYSTEM_COMPACT + signatures(task)
    return [{"role": "system", "content": system}, {"role": "user", "content": user_turn(task, style)}]


def completion(reference: dict) -> list[dict]:
    """The assistant turn of a conversational prompt/completion example."""
    return [{"role": "assistant", "content": target_text(reference)}]


def target_text(reference: dict) -> str:
    """The assistant turn: annotation and rework_plan of a reference (or any contract object), compact."""
    return compact({"annotation": reference["annotation"], "rework_plan": reference["rework_plan"]})


def render_plain(messages: list[dict]) -> str:
    """A chat rendering for tokenizers without a chat template."""
    return "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages) + "<|assistant|>\n"


def prompt_text(tokenizer, messages: list[dict]) -> str:
    """The model's own chat template when it has one (generation prompt added), else `render_plain`."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return render_plain(messages)

"""Prompt serialisation, shared by training, inference and the benchmark's JSONL export.

A prompt is a system line asking for one JSON object (and, where the assembly needs them, naming the
group moves separate/join) plus the task's public representation as the user turn; the answer is the
output contract as compact JSON (`target_text`), the exact text the grammar accepts. The
representation is derived from the eight public files (forgeplan.io.task_files.public_files), condensed to
fit a small context: voxels are replaced by what they imply (target position, blocking per removal
direction, contacts, symmetry count), the target state by what differs from "every part present at
its target position, unrotated, seated, locks engaged", and the actual state is given in full. No
torch here: the benchmark's JSONL export imports this module.
"""

from __future__ import annotations

from ..io.task_files import public_files
from ..semantics.task import Task
from .grammar import compact

SYSTEM = ("You repair faulty interlocking assemblies. Reply with exactly one JSON object with the keys "
          "\"annotation\" and \"rework_plan\" (compact JSON, no prose).")
SYSTEM_COMPACT = "Repair the assembly: one JSON object, annotation then rework_plan."
# added for assemblies that come apart only with group moves (SEMANTICS §5; elsewhere they are illegal)
SYSTEM_GROUPS = (" This assembly comes apart only when groups of parts slide out together: besides the nine "
                 "single-part actions, {\"action\":\"separate\",\"part_ids\":[...],\"direction\":\"+x\"} slides "
                 "a group out along a direction, and \"join\" (same fields) brings a pre-assembled group back in, "
                 "travelling opposite to that direction.")


def task_json(task: Task) -> dict:
    """The public task representation as a compact dict (deterministic key order)."""
    files = public_files(task)
    cat, bg = files["part_catalog.json"], files["blocking_graph.json"]
    target = files["target_state.json"]
    supports: dict[str, list[str]] = {}
    for s, p in files["assembly_graph.json"]["supports"]:
        supports.setdefault(p, []).append(s)
    parts = []
    for p in cat["parts"]:
        pid = p["part_id"]
        blocked = {d: [b for b, q in bg["edges"][d] if q == pid] for d in bg["removal_dirs"][pid]}
        entry = {"part_id": pid, "kind": p["kind"], "target_position": target["slots"][pid]["position"],
                 "symmetries": len(p["symmetry"]), "supports": supports.get(pid, []), "blocked_by": blocked}
        if p["lock"] is not None:
            entry["lock"] = p["lock"]
        parts.append(entry)
    return {
        "sample_id": task.sample_id,
        "assembly_id": task.assembly.assembly_id,
        "family": cat["family"],
        "group_moves": task.world.needs_groups,
        "tolerances": target.get("tolerances"),
        "parts": parts,
        "spare_parts": [{"part_id": w["part_id"], "variant_of": w["variant_of"], "difference": w["difference"]}
                        for w in cat["spare_parts"]],
        "contacts": files["contact_graph.json"]["edges"],
        "sequence": files["assembly_graph.json"]["sequence"],
        "actual_state": files["actual_state.json"]["slots"],
        "initial_state_present": [pid for pid, s in files["initial_state.json"]["slots"].items() if s["present"]],
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
    j = task_json(task)
    lines = [compact({"sample_id": j["sample_id"], "assembly_id": j["assembly_id"]})]
    target = files["target_state.json"]["slots"]
    for pid, slot in j["actual_state"].items():
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
    if isinstance(v, list):
        return [_round(x) for x in v]
    return round(v, 6) if isinstance(v, float) else v


PROMPT_STYLES = ("json", "compact")


def build_prompt(task: Task, style: str = "json") -> list[dict]:
    """Chat messages: the system line and the task as the user turn (FORGE's JSON, or `compact_text`)."""
    if style not in PROMPT_STYLES:
        raise ValueError(f"prompt style {style!r} must be one of {PROMPT_STYLES}")
    system = (SYSTEM if style == "json" else SYSTEM_COMPACT) + (SYSTEM_GROUPS if task.world.needs_groups else "")
    user = compact(task_json(task)) if style == "json" else compact_text(task)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


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

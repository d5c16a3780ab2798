"""Per-sample scoring: verify once, then every quantity the metrics aggregate (FORGE App. D, MAGAR C.3.3)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..actions import Action, moved_parts
from ..contract import ContractError, Output, parse_output
from ..engine import angle_diff
from ..grounding import slot_actions
from ..task import Task
from ..verify import verify_output

FAULT_CONDITIONS = ("single", "multi")


@dataclass
class SampleScore:
    sample_id: str
    assembly_id: str
    family: str
    stratum: str                 # the fault type, "multi_fault", or "no_fault"
    difficulty: str
    is_fault: bool
    category: str | None         # failure category (None = fully correct)
    reason: str = ""
    g: bool = False              # contract valid ∧ diagnosis exact ∧ legal replay ∧ restored
    sse: bool = False
    sse_any: bool = False
    p: float | None = None       # state-action parameter fidelity (None: no fields apply)
    vmre: float = 0.0
    mve: bool = False
    mve_any: bool = False
    hrq: float | None = None     # only hard/expert fault samples
    nofault_ok: bool | None = None
    mpa: bool = False
    rca: float = 0.0
    predicted_actions: int = 0
    reference_actions: int = 0
    extra: dict = field(default_factory=dict)


def identity(actions) -> list[tuple[str, str]]:
    """The ordered (action, part) identity sequence used by SSE, MVE and HRQ; a group move's part is
    its whole group (SEMANTICS §5), joined with "+"."""
    out = []
    for a in actions:
        if isinstance(a, dict):
            group = a.get("part_ids")
            out.append((a["action"], "+".join(group) if group is not None else a.get("part_id") or a.get("wrong_part_id")))
        else:
            out.append((a.name, "+".join(a.part_ids) if a.part_ids is not None else a.part_id))
    return out


def edit_distance(a: list, b: list) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _close(a, b, tol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isfinite(a) and abs(a - b) <= tol
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return all(_close(x, y, tol) for x, y in zip(a, b))
    return False


def state_fidelity(expected: list[dict], got: Output | None, pos_tol: float, rot_tol: float) -> list[float]:
    """One binary score per observable diagnosis field of the reference; missing fields score 0."""
    scores = []
    pred = {(m.type, m.part_id): dict(m.observed) for m in got.mistakes} if got else {}
    for m in expected:
        fields = {k: v for k, v in m.items() if k not in ("type", "part_id", "visible")}
        have = pred.get((m["type"], m["part_id"]), {})
        for k, v in fields.items():
            if k not in have:
                scores.append(0.0)
            elif k == "angle_deg":
                scores.append(float(isinstance(have[k], (int, float)) and angle_diff(have[k], v) <= rot_tol))
            else:
                scores.append(float(_close(have[k], v, pos_tol)))
    return scores


def action_fidelity(reference: list[dict], got: Output | None, pos_tol: float, rot_tol: float) -> list[float]:
    """One binary score per parameter of the reference actions, matched to the predicted action of the
    same (action, part) identity in order; unmatched parameters score 0."""
    scores = []
    pool = list(got.actions) if got else []
    for ra in reference:
        params = {k: v for k, v in ra.items() if k in ("axis", "angle_deg", "after_pose", "target_part_id", "direction")}
        if not params:
            continue
        rid = identity([ra])[0]
        match = next((a for a in pool if identity([a])[0] == rid), None)
        if match is not None:
            pool.remove(match)
        for k, v in params.items():
            if match is None:
                scores.append(0.0)
            elif k == "angle_deg":
                scores.append(float(match.angle_deg is not None and angle_diff(match.angle_deg, v) <= rot_tol))
            elif k == "after_pose":
                mp = match.after_pose
                scores.append(float(mp is not None and _close(list(mp.position), v["position"], pos_tol)
                                    and _close(list(mp.rotation), v["rotation"], rot_tol)))
            else:
                scores.append(float(getattr(match, k) == v))
    return scores


def score_sample(task: Task, raw: str | None, reference: dict, meta: dict, rework: dict) -> SampleScore:
    """Everything about one prediction; `raw` None means the prediction is missing."""
    cond = meta["condition"]
    is_fault = cond in FAULT_CONDITIONS
    stratum = ("multi_fault" if cond == "multi" else meta["fault_types"][0]) if is_fault else "no_fault"
    ref_actions = reference["rework_plan"]["actions"]
    s = SampleScore(meta["sample_id"], meta["assembly_id"], meta["family"], stratum, meta["difficulty"], is_fault,
                    None, reference_actions=len(ref_actions))
    out: Output | None = None
    if raw is None:
        s.category, s.reason = "schema_failure", "missing prediction"
    else:
        try:
            out = parse_output(raw)
        except ContractError as exc:
            s.category, s.reason = "schema_failure", exc.reason
    tol = task.tolerances
    if out is not None:
        v = verify_output(task, out)
        s.g = v.valid
        s.category, s.reason = (None, "") if v.valid else (v.category, v.reason)
        s.predicted_actions = len(out.actions)
    if not is_fault:
        s.nofault_ok = s.g
        return s
    pred_id = identity(out.actions) if out else []
    ref_id = identity(ref_actions)
    s.sse = out is not None and pred_id == ref_id
    ref_moved = rework["moved_part_count"]
    optimal_valid = s.g and len(out.actions) == len(ref_actions) and len(moved_parts(out.actions)) == ref_moved  # type: ignore[union-attr]
    s.sse_any = out is not None and (s.sse or optimal_valid or is_optimal_identity(task, out.actions, ref_moved, len(ref_actions)))
    fid = state_fidelity(reference["annotation"]["mistakes"], out, tol.pos_tol, tol.rot_tol)
    afid = action_fidelity(ref_actions, out, tol.pos_tol, tol.rot_tol)
    fams = [sum(x) / len(x) for x in (fid, afid) if x]
    s.p = sum(fams) / len(fams) if fams else None
    params_valid = s.p is None or s.p == 1.0
    c_star, c_hat = len(ref_actions), s.predicted_actions
    if s.g and params_valid and c_hat > 0:
        s.vmre = min(1.0, c_star / c_hat)
    s.mve = s.g and params_valid and pred_id == ref_id and c_hat <= c_star
    s.mve_any = s.g and params_valid and s.sse_any
    if meta["difficulty"] in ("hard", "expert"):
        if s.g:
            q = max(0.0, 1 - edit_distance(pred_id, ref_id) / max(len(pred_id), len(ref_id), 1))
            s.hrq = q if s.p is None else (q + s.p) / 2
        else:
            s.hrq = 0.0
    if s.g and s.category is None and (c_hat > c_star or len(moved_parts(out.actions)) > rework["moved_part_count"]):  # type: ignore[union-attr]
        s.category, s.reason = "over_disassembly", f"valid but {c_hat} actions / {len(moved_parts(out.actions))} moved parts, reference {c_star} / {rework['moved_part_count']}"  # type: ignore[union-attr]
    _magar(s, out, rework)
    return s


def is_optimal_identity(task: Task, actions, moved: int, length: int) -> bool:
    """Does this (action, part) sequence equal that of *some* optimal plan?

    The reference optimum (J*, c*) is proven, so a plan is optimal iff it is valid with exactly J*
    moved parts and c* actions. Parameters are not part of the identity: each action takes the
    grounded parameters (lock mechanism, repairing turn) in the state reached, then the plan replays.
    """
    if len(actions) != length or len(moved_parts(actions)) != moved:
        return False
    w = task.world
    state = task.actual
    for a in actions:
        i = w.index.get(a.part_id, w.spare_slot.get(a.part_id))
        if a.part_ids is not None:
            cand = [a]
        elif i is None:
            return False
        else:
            cand = [g for g in slot_actions(w, state, i) if (g.name, g.part_id) == (a.name, a.part_id)]
        legal = [g for g in cand if w.check(state, g) is None]
        if not legal:
            return False
        state = w.apply(state, legal[0])
    return w.equivalent(state, task.target)


def _magar(s: SampleScore, out: Output | None, rework: dict) -> None:
    """MPA and RCA from the predicted plan (its moved-part set, count, route and action ids)."""
    if out is None:
        return
    pred_set = sorted(moved_parts(out.actions))
    b_set = pred_set == rework["moved_parts"]
    b_count = len(pred_set) == rework["moved_part_count"]
    b_actions = [a.action_id for a in out.actions] == rework["action_ids"]
    b_route = b_actions  # the route id is a digest of the action-id sequence (minimal_rework.json)
    s.mpa = b_set and b_count
    s.rca = (b_set + b_count + b_route + b_actions) / 4


def actions_of(out: Output | None) -> list[Action]:
    return list(out.actions) if out else []

"""Per-sample scoring: verify once, then every quantity the metrics aggregate (FORGE App. D, MAGAR C.3.3).

Each per-sample metric is one function below whose docstring quotes the paper; metrics.py aggregates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..io.contract import ContractError, Output, parse_output
from ..model.actions import Action, GroupMove, Insert, Slide, moved_parts
from ..model.state import NO_OFFSET
from ..model.rotations import angle_diff
from ..semantics.legal import slot_actions
from ..semantics.task import Task
from ..verify import verify_output

FAULT_CONDITIONS = ("single", "multi")
REFERENCE_COSTS = ("forgeplan", "paper")
ACTION_PARAMETERS = ("axis", "angle_deg", "after_pose", "target_part_id", "direction", "distance", "offset", "offsets")


@dataclass
class SampleScore:
    sample_id: str
    assembly_id: str
    family: str
    stratum: str                 # the fault type, "multi_fault" (any sample with two or more faults), or "no_fault"
    difficulty: str
    is_fault: bool
    category: str | None         # failure category (None = fully correct)
    reason: str = ""
    failing_step: int | None = None  # the verifier's first illegal step (1-based), if any
    g: bool = False              # contract valid ∧ diagnosis exact ∧ legal replay ∧ restored
    v: bool = False              # FORGE's v_i: complete parameter validity (parameter_validity)
    sse: bool = False
    sse_any: bool = False
    p: float | None = None       # state-action parameter fidelity (None: no fields apply)
    vmre: float = 0.0
    mve: bool = False
    mve_any: bool = False
    hrq: float | None = None     # only hard/expert fault samples
    nofault_ok: bool | None = None   # contract valid ∧ empty program (no-fault samples only)
    mpa: bool = False
    rca: float = 0.0
    magar_profile: bool = False      # the prediction carried MAGAR's minimal_rework fields
    predicted_actions: int = 0
    reference_actions: int = 0
    reference_proved: bool = True    # reference.json's proof: proved minimal, or only valid
    extracted: bool = False          # the object was taken out of a fence or surrounding text (--extract-json)


def identity(actions) -> list[tuple[str, str | None]]:
    """The ordered (action, part) identity sequence used by SSE, MVE and HRQ; a group move's part is
    its whole group (SEMANTICS §5), joined with "+"."""
    out: list[tuple[str, str | None]] = []
    for a in actions:
        if isinstance(a, dict):
            group = a.get("part_ids")
            out.append((a["action"], "+".join(group) if group is not None else a.get("part_id") or a.get("wrong_part_id")))
        else:
            out.append((a.name, "+".join(a.part_ids) if isinstance(a, (GroupMove, Slide)) else a.part_id))
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
    same (action, part) identity in order; unmatched parameters score 0. The parameters: a turn's axis and
    angle, a posed move's pose, a replacement's target part, a group move's or slide's direction, a slide's
    distance and the offsets an insertion or a join places its parts at (SEMANTICS §9; written only when
    non-zero, so a reference insertion at the target position has none)."""
    scores = []
    pool = list(got.actions) if got else []
    for ra in reference:
        params = {k: v for k, v in ra.items() if k in ACTION_PARAMETERS}
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
                scores.append(float(angle_diff(getattr(match, k), v) <= rot_tol))
            elif k == "after_pose":
                mp = getattr(match, k)
                scores.append(float(mp is not None and _close(list(mp.position), v["position"], pos_tol)
                                    and _close(list(mp.rotation), v["rotation"], rot_tol)))
            elif k in ("offset", "offsets"):
                scores.append(float(_as_lists(getattr(match, k, None)) == v))
            else:
                scores.append(float(getattr(match, k, None) == v))
    return scores


def _as_lists(value):
    """An offset (a tuple) or a join's offsets (a tuple of them) in the JSON form (lists)."""
    return [_as_lists(x) for x in value] if isinstance(value, tuple) else value



def plan_cost(moved: int, actions: int, reference_cost: str) -> tuple[int, ...]:
    """The cost a reference is minimal in, compared lexicographically. forgeplan: (J_move, c), distinct
    moved parts then actions. paper: FORGE B.3's c alone, "the number of executable actions"."""
    return (actions,) if reference_cost == "paper" else (moved, actions)


def sse_i(pred_id: list, ref_id: list) -> bool:
    """FORGE D.2 eq. 11: SSE_i = 1[Â_i = A*_i], "whether the predicted ordered (action, part) sequence
    matches the verified reference sequence exactly"; parameters are left to SAPF."""
    return pred_id == ref_id


def sapf_i(state: list[float], action: list[float]) -> float | None:
    """FORGE D.2 eq. 12: p_i = ½(s_i + a_i), "the mean state and action parameter fidelity"; "Missing fields
    receive zero credit. [...] If one family has no applicable fields for a sample, only the supported family
    contributes". With neither family applicable p_i is unsupported (None; eq. 17 names that case) and the
    sample is left out of SAPF whatever the output: applicability is a property of the reference."""
    fams = [sum(x) / len(x) for x in (state, action) if x]
    return sum(fams) / len(fams) if fams else None


def parameter_validity(g: bool, state: list[float]) -> bool:
    """FORGE D.3's v_i, "complete parameter validity": credit only "when its diagnosis, execution, and
    required state and action parameters are valid". forgeplan's reading: the required diagnostic-state
    fields are within tolerance of the observed state (every state-fidelity score is 1), and the action
    parameters are valid because the verified replay accepted them and reached the target (g_i). They need
    not equal the reference's: "a verified repair that matches or improves on the reference cost receives
    full credit", so rotate(x, 180) repairs as well as rotate(y, 90) on a symmetric part (SAPF still
    scores the mismatch)."""
    return g and all(x == 1.0 for x in state)


def vmre_i(g: bool, v: bool, c_hat: int, c_star: int) -> float:
    """FORGE D.3 eq. 14: VMRE_i = min(1, c*_i / ĉ_i) if g_i = 1, v_i = 1, ĉ_i > 0, else 0."""
    return min(1.0, c_star / c_hat) if g and v and c_hat > 0 else 0.0


def mve_i(g: bool, v: bool, same_sequence: bool, c_hat: int, c_star: int) -> bool:
    """FORGE D.3 eq. 15: m_i = 1[g_i ∧ v_i ∧ (Â_i = A*_i) ∧ (ĉ_i ≤ c*_i)]."""
    return g and v and same_sequence and c_hat <= c_star


def hrq_i(g: bool, pred_id: list, ref_id: list, p: float | None) -> float:
    """FORGE D.4 eqs. 16-17 on a hard/expert sample: q_i = max(0, 1 - d_i / max(|Â_i|, |A*_i|, 1)) with d_i
    the unit-cost edit distance of the action-identity sequences; HRQ_i = q_i when p_i is unsupported,
    (q_i + p_i) / 2 when supported, and 0 unless g_i = 1."""
    if not g:
        return 0.0
    q = max(0.0, 1 - edit_distance(pred_id, ref_id) / max(len(pred_id), len(ref_id), 1))
    return q if p is None else (q + p) / 2


def mpa_rca(out: Output | None, rework: dict) -> tuple[bool, float]:
    """MAGAR C.3.3 eq. 12: MPA_i = 1[b_P ∧ b_n ∧ |P̂_m| = n̂_m], RCA_i = (b_P + b_n + b_R + b_A) / 4, with
    "binary correctness indicators for the moved-part set, moved-part count, recovery route ID, and
    corrective action-ID sequence"; "Part IDs are compared as normalized sets".

    MAGAR profile (the output carries `minimal_rework`): exactly that, A from the plan's action ids.
    FORGE-shaped output (no `minimal_rework`): P̂ is the plan's moved-part set and n̂ = |P̂|, so the
    consistency clause holds and MPA = b_P; no route is predicted, so RCA = (b_P + b_n + b_A) / 3 over
    the three fields the plan determines. A contract-invalid output scores 0 on both."""
    if out is None:
        return False, 0.0
    b_a = [a.action_id for a in out.actions] == rework["action_ids"]
    mr = out.minimal_rework
    if mr is None:
        moved = sorted(moved_parts(out.actions))
        b_p, b_n = moved == sorted(rework["moved_parts"]), len(moved) == rework["moved_part_count"]
        return b_p and b_n, (b_p + b_n + b_a) / 3
    b_p = sorted(set(mr.moved_parts)) == sorted(rework["moved_parts"])
    b_n = mr.moved_part_count == rework["moved_part_count"]
    b_r = mr.route_id == rework["route_id"]
    return b_p and b_n and len(set(mr.moved_parts)) == mr.moved_part_count, (b_p + b_n + b_r + b_a) / 4


def score_sample(task: Task, raw: str | None, reference: dict, meta: dict, rework: dict,
                 reference_cost: str = "forgeplan", extract: bool = False) -> SampleScore:
    """Everything about one prediction; `raw` None means the prediction is missing; `extract` takes the
    one JSON object out of a fenced or chatty answer (io.contract.answer_json).

    One rule for contract failures (FORGE's C_i = 0: unparseable, missing, or answering another task):
    zero credit on every metric, and the sample stays in every denominator.
    """
    cond = meta["condition"]
    is_fault = cond in FAULT_CONDITIONS
    stratum = ("multi_fault" if cond == "multi" else meta["fault_types"][0]) if is_fault else "no_fault"
    ref_actions = reference["rework_plan"]["actions"]
    s = SampleScore(meta["sample_id"], meta["assembly_id"], meta["family"], stratum, meta["difficulty"], is_fault,
                    None, reference_actions=len(ref_actions),
                    reference_proved=(reference.get("proof") or {}).get("optimal", True) is not False)
    hint = reference_parts(ref_actions) if s.reference_proved else ()
    out = _contract_valid_output(task, raw, s, reference_cost, hint, extract)
    if not is_fault:
        s.nofault_ok = out is not None and not out.actions
        return s
    tol = task.tolerances
    pred_id, ref_id = identity(actions_of(out)), identity(ref_actions)
    state = state_fidelity(reference["annotation"]["mistakes"], out, tol.pos_tol, tol.rot_tol)
    s.p = sapf_i(state, action_fidelity(ref_actions, out, tol.pos_tol, tol.rot_tol))
    s.v = parameter_validity(s.g, state)
    s.sse = out is not None and sse_i(pred_id, ref_id)
    ref_cost = plan_cost(rework["moved_part_count"], len(ref_actions), reference_cost)
    optimal = s.g and plan_cost(len(moved_parts(actions_of(out))), s.predicted_actions, reference_cost) <= ref_cost
    s.sse_any = out is not None and (s.sse or optimal or is_optimal_identity(task, out.actions, ref_cost, reference_cost))
    s.vmre = vmre_i(s.g, s.v, s.predicted_actions, len(ref_actions))
    s.mve = mve_i(s.g, s.v, s.sse, s.predicted_actions, len(ref_actions))
    s.mve_any = s.g and s.v and optimal
    if meta["difficulty"] in ("hard", "expert"):
        s.hrq = hrq_i(s.g, pred_id, ref_id, s.p)
    s.mpa, s.rca = mpa_rca(out, rework)
    s.magar_profile = out is not None and out.minimal_rework is not None
    return s


def reference_parts(actions: list[dict]) -> set[str]:
    """The parts a reference plan (its JSON actions) moves."""
    out: set[str] = set()
    for a in actions:
        out.update(a.get("part_ids") or ())
        out.update(a[k] for k in ("part_id", "wrong_part_id", "target_part_id") if isinstance(a.get(k), str))
    return out


def _contract_valid_output(task: Task, raw: str | None, s: SampleScore, reference_cost: str = "forgeplan",
                           route_hint=(), extract: bool = False) -> Output | None:
    """Parse and verify once (over-disassembly judged under `reference_cost`); fills the verdict fields of
    `s`. None when C_i = 0."""
    if raw is None:
        s.category, s.reason = "schema_failure", "missing prediction"
        return None
    try:
        out = parse_output(raw, extract=extract)
    except ContractError as exc:
        s.category, s.reason = "schema_failure", exc.reason
        return None
    s.extracted = out.extracted
    v = verify_output(task, out, reference_cost, route_hint)
    s.category, s.reason = (None, "") if v.category is None else (v.category, v.reason)
    s.failing_step = v.failing_step
    if not v.contract_valid:
        return None
    s.g, s.predicted_actions = v.valid, len(out.actions)
    return out


def is_optimal_identity(task: Task, actions, ref_cost: tuple[int, ...], reference_cost: str) -> bool:
    """Does this (action, part) sequence equal that of *some* optimal plan?

    The reference optimum is proven, so a plan is optimal iff it is valid at the reference's cost.
    Parameters are not part of the identity: each action takes the grounded parameters (lock mechanism,
    repairing turn) in the state reached, then the plan replays.
    """
    if plan_cost(len(moved_parts(actions)), len(actions), reference_cost) != ref_cost:
        return False
    w = task.world
    state = task.actual
    for a in actions:
        cand: list[Action]
        if isinstance(a, (GroupMove, Slide)) or (isinstance(a, Insert) and a.offset != NO_OFFSET):
            cand = [a]   # a group, a slide's distance or an insertion's offset is part of what it does
        else:
            i = w._slot_of(a.part_id)
            if i is None:
                return False
            cand = [g for g in slot_actions(w, state, i) if g.name == a.name and g.touched[0] == a.part_id]
        legal = [g for g in cand if w.check(state, g) is None]
        if not legal:
            return False
        state = w.apply(state, legal[0])
    return w.equivalent(state, task.target)


def actions_of(out: Output | None) -> list[Action]:
    return list(out.actions) if out else []

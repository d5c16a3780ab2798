"""Engine legality per action (positive and negative), transitions, equivalence, and properties."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from cases import all_cases, grounding
from fixtures import BASE, BENT, CLIP, COVER, KEY, LATCH, PIN, fixture_assembly
from forgeplan.model.actions import (Insert, Join, Remove, Replace, ResetPose, Rotate, RotateToLock, RotateToUnlock,
                                     RotateTranslateToUnlock, Separate, TranslateRotateToLock)
from forgeplan.model.assembly import Pose
from forgeplan.model.rotations import axis_matrix, matrix_to_euler
from forgeplan.semantics.engine import World
from forgeplan.semantics.legal import legal_actions

W = World(fixture_assembly())
T = W.target_state()
I = W.index
# the fixture comes apart one part at a time; this world puts group moves in play to test their rules
WG = World(fixture_assembly(), group_moves=True)


def code(state, action, world=W):
    r = world.check(state, action)
    return None if r is None else r.code


def run(state, *actions, world=W):
    for a in actions:
        state = world.step(state, a)
    return state


UNLATCH = RotateToUnlock(LATCH, axis="x", angle_deg=90)
RELATCH = RotateToLock(LATCH, axis="x", angle_deg=-90)
UNCLIP = RotateTranslateToUnlock(CLIP, after_pose=W.unlocked[I[CLIP]])
RECLIP = TranslateRotateToLock(CLIP, after_pose=Pose(W.target_position[I[CLIP]]))


def test_remove_needs_lock_release_and_clearance():
    assert code(T, Remove(COVER)) == "held"
    assert code(T, Remove(LATCH)) == "locked"
    s = run(T, UNLATCH)
    assert code(s, Remove(COVER)) is None
    assert code(s, Remove(PIN)) == "held"          # the clip still holds it
    s = run(s, UNCLIP)
    assert code(s, Remove(PIN)) == "blocked"       # the cover is above it
    s = run(s, Remove(COVER))
    assert code(s, Remove(PIN)) is None
    assert code(s, Remove("Nope")) == "unknown_part"


def test_insert_needs_empty_slot_supports_and_a_free_path():
    assert code(T, Insert(PIN)) == "already_present"
    s = run(T, UNLATCH, UNCLIP, Remove(COVER), Remove(PIN), Remove(BASE))
    assert code(s, Insert(PIN)) == "supports_missing"
    s = run(s, Insert(BASE))
    assert code(s, Insert(PIN)) is None
    s2 = run(s, Insert(COVER))
    assert code(s2, Insert(PIN)) == "blocked"
    assert code(s, RECLIP) == "holds_not_restored"      # cannot lock over a missing pin
    c = I[CLIP]
    s3 = s.replace(c, W.target_slot(c))                 # ...but an actual state may have it engaged
    assert code(s3, Insert(PIN)) == "held"
    assert code(s, Insert(BENT)) == "not_applicable"
    assert code(T, Remove(BENT)) == "not_present"


def test_rotate_lock_parameters_are_checked():
    assert code(T, RotateToUnlock(LATCH, axis="y", angle_deg=90)) == "bad_axis"
    assert code(T, RotateToUnlock(LATCH, axis="x", angle_deg=45)) == "bad_angle"
    assert code(T, RotateToUnlock(LATCH, axis="x", angle_deg=91.5)) is None  # within rot_tol
    assert code(T, RotateToUnlock(LATCH, axis="x", angle_deg=-270)) is None  # same angle mod 360
    assert code(T, RELATCH) == "already_locked"
    assert code(T, RotateToUnlock(COVER, axis="x", angle_deg=90)) == "not_applicable"
    s = run(T, UNLATCH)
    assert code(s, UNLATCH) == "already_unlocked"
    assert code(s, RotateToLock(LATCH, axis="x", angle_deg=90)) == "bad_angle"
    assert run(s, RELATCH) == T


def test_locking_needs_every_held_part_restored():
    s = run(T, UNLATCH)
    i = I[COVER]
    moved = s.replace(i, s.slots[i]._replace(position=(1.5, 2.9, 0.5)))
    assert code(moved, RELATCH) == "holds_not_restored"
    fixed = run(moved, ResetPose(COVER))
    assert code(fixed, RELATCH) is None
    gone = run(s, Remove(COVER))
    assert code(gone, RELATCH) == "holds_not_restored"


def test_restoration_needs_every_step_legal_and_the_target_at_the_end():
    i = I[COVER]
    moved = T.replace(i, T.slots[i]._replace(position=(1.5, 2.9, 0.5)))
    fixed = W.restoration(moved, [UNLATCH, ResetPose(COVER), RELATCH], T)
    assert fixed.restored and fixed.failure is None and fixed.final == T
    stuck = W.restoration(moved, [UNLATCH, Remove(PIN), ResetPose(COVER), RELATCH], T)
    assert not stuck.restored and stuck.failure.step == 1 and stuck.failure.reason.code == "held"
    assert stuck.final == run(moved, UNLATCH)          # the state before the illegal step
    open_latch = W.restoration(moved, [UNLATCH, ResetPose(COVER)], T)   # legal, but the latch stays open
    assert not open_latch.restored and open_latch.failure is None
    assert W.differences(open_latch.final, T) == [f"{LATCH}: disengaged, target engaged"]
    assert W.restoration(T, [], T).restored and not W.restoration(moved, [], T).restored
    refused = W.restoration(T, [Remove(PIN)], T)      # stopped at the target, yet the plan is illegal
    assert refused.final == T and refused.failure is not None and not refused.restored


def test_coupled_lock_moves_to_its_unlocked_pose_and_back():
    s = run(T, UNCLIP)
    slot = s.slots[I[CLIP]]
    assert slot.locked is False and slot.position == W.unlocked[I[CLIP]].position
    assert code(s, TranslateRotateToLock(CLIP, after_pose=W.unlocked[I[CLIP]])) == "bad_after_pose"
    assert code(T, RotateTranslateToUnlock(CLIP, after_pose=Pose((0.0, 0.0, 0.0)))) == "bad_after_pose"
    assert run(s, RECLIP) == T


def test_replace_swaps_a_wrong_part_when_the_slot_is_clear():
    i = I[PIN]
    wrong = T.replace(i, T.slots[i]._replace(occupant=BENT))
    act = Replace(BENT, target_part_id=PIN)
    assert code(wrong, act) == "held"
    s = run(wrong, UNLATCH, UNCLIP, Remove(COVER))
    assert code(s, Remove(PIN)) == "not_present"   # the part there is the spare
    assert code(s, Replace(BENT, target_part_id=COVER)) == "not_applicable"
    s = run(s, act)
    assert s.slots[i].occupant == PIN
    assert code(s, act) == "not_present"


def test_rotate_changes_orientation_and_symmetric_turns_are_equivalent():
    k = I[KEY]
    assert code(T, Rotate(KEY, axis="w", angle_deg=90)) == "bad_axis"
    assert code(T, Rotate(KEY, axis="x", angle_deg=math.nan)) == "bad_angle"
    s = run(T, Rotate(KEY, axis="y", angle_deg=90))
    assert W.rot_off(k, s.slots[k])
    assert W.equivalent(run(s, Rotate(KEY, axis="y", angle_deg=-90)), T)
    base = I[BASE]
    flipped = T.replace(base, T.slots[base]._replace(rotation=(0.0, 180.0, 0.0)))
    assert W.equivalent(flipped, T)                      # a bar turned end for end is the same bar
    quarter = T.replace(base, T.slots[base]._replace(rotation=(0.0, 90.0, 0.0)))
    assert not W.equivalent(quarter, T)


@pytest.mark.parametrize("offset,ok", [(0.049, True), (0.051, False)])
def test_position_tolerance_boundary(offset, ok):
    i = I[COVER]
    p = W.target_position[i]
    s = T.replace(i, T.slots[i]._replace(position=(p[0] + offset, p[1], p[2])))
    assert W.equivalent(s, T) is ok
    s = T.replace(i, T.slots[i]._replace(seated=offset))
    assert W.equivalent(s, T) is ok


@pytest.mark.parametrize("angle,ok", [(1.9, True), (2.1, False)])
def test_rotation_tolerance_boundary(angle, ok):
    k = I[KEY]
    s = T.replace(k, T.slots[k]._replace(rotation=matrix_to_euler(axis_matrix("z", angle))))
    assert W.equivalent(s, T) is ok


CASES = all_cases()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(CASES))), st.lists(st.integers(0, 10_000), max_size=25),
       st.floats(-720, 720, allow_nan=False))
def test_random_legal_walks_never_crash_and_replay_agrees(case, picks, angle):
    task = CASES[case][1]
    w, s = task.world, task.actual
    plan = []
    for n in picks:
        acts = legal_actions(grounding(w), s)
        present = [x for x in s.slots if x.present]
        if n % 7 == 0 and present:  # sometimes an arbitrary turn: any angle is legal when clear
            occ = present[n % len(present)].occupant
            a = Rotate(occ, axis="xyz"[n % 3], angle_deg=angle)
            if w.check(s, a) is not None:
                continue
        elif not acts:
            break
        else:
            a = acts[n % len(acts)]
        plan.append(a)
        s = w.step(s, a)
    r = w.replay(task.actual, plan)
    assert r.failure is None and r.final == s


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(CASES))), st.lists(st.integers(0, 10_000), max_size=15), st.integers(0, 10_000))
def test_remove_then_insert_restores_the_slot(case, picks, which):
    task = CASES[case][1]
    w, s = task.world, task.actual
    for n in picks:
        acts = legal_actions(grounding(w), s)
        if not acts:
            break
        s = w.apply(s, acts[n % len(acts)])
    removable = [a for a in legal_actions(grounding(w), s) if a.name == "remove" and a.part_id in w.index]
    if not removable:
        return
    a = removable[which % len(removable)]
    i = w.index[a.part_id]
    after = w.apply(s, a)
    if w.check(after, Insert(a.part_id)) is None:
        back = w.apply(after, Insert(a.part_id))
        t = w.target_slot(i)
        assert back.slots[i] == t._replace(locked=False if t.locked is not None else None)
        assert all(back.slots[j] == s.slots[j] for j in range(len(w.ids)) if j != i)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(range(len(CASES))), st.integers(0, 1000), st.floats(0, 1), st.sampled_from("xyz"))
def test_equivalence_respects_symmetry_and_tolerance(case, pick, frac, axis):
    task = CASES[case][1]
    w = task.world
    t = w.target_state()
    i = pick % len(w.ids)
    g = w.symmetry[i][pick % len(w.symmetry[i])]
    inside = matrix_to_euler(axis_matrix(axis, 0.95 * frac * w.tol.rot_tol))
    from forgeplan.model.rotations import matmul
    rot = matrix_to_euler(matmul(g, axis_matrix(axis, 0.95 * frac * w.tol.rot_tol)))
    s = t.replace(i, t.slots[i]._replace(rotation=rot))
    assert w.equivalent(s, t)
    assert w.equivalent(t.replace(i, t.slots[i]._replace(rotation=inside)), t)
    outside = matrix_to_euler(axis_matrix(axis, w.tol.rot_tol * (1.05 + frac)))
    assert not w.equivalent(t.replace(i, t.slots[i]._replace(rotation=outside)), t)


SEP = Separate([COVER, PIN], "+y")
JOIN = Join([COVER, PIN], "+y")


def gcode(state, action):
    return code(state, action, WG)


def grun(state, *actions):
    return run(state, *actions, world=WG)


def test_group_moves_are_illegal_where_the_assembly_needs_none():
    s = run(T, UNLATCH, UNCLIP)
    assert W.moves.groups is False and code(s, SEP) == "not_applicable" and gcode(s, SEP) is None
    assert "one part at a time" in W.check(s, SEP).message


def test_group_moves_need_released_locks_and_a_clear_direction():
    assert gcode(T, SEP) == "held"
    s = grun(T, UNLATCH, UNCLIP)
    assert gcode(s, Separate([COVER, PIN], "+x")) == "bad_direction"
    assert gcode(s, Separate([PIN, BASE], "+y")) == "blocked"       # the cover is above them
    assert gcode(s, Separate([COVER], "+y")) == "not_applicable"   # one part: use remove
    assert gcode(s, Separate([COVER, "Nope"], "+y")) == "unknown_part"
    assert gcode(s, Separate([COVER, PIN], "up")) == "bad_direction"
    out = grun(s, SEP)
    assert not out.slots[I[COVER]].present and not out.slots[I[PIN]].present
    assert gcode(out, SEP) == "not_present"
    assert gcode(out, JOIN) is None
    assert grun(out, JOIN, RELATCH, RECLIP) == T


def test_join_checks_supports_locks_and_paths():
    s = grun(T, UNLATCH, UNCLIP, SEP)
    assert gcode(s, Join([COVER, BENT], "+y")) == "not_applicable"
    c = I[CLIP]
    held = s.replace(c, WG.target_slot(c))
    assert gcode(held, JOIN) == "held"
    gone = grun(s, Remove(BASE))
    assert gcode(gone, JOIN) == "supports_missing"
    assert gcode(s, Join([BASE, PIN], "+y")) == "already_present"

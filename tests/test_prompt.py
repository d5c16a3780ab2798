"""The two prompt styles: each carries the task's action vocabulary, exactly the actions its grammar admits,
and the `forge` prompt FORGE's contract with the whole public task (C.2)."""

from __future__ import annotations

import json
import re

import pytest

from forgeplan.io.task_files import public_files
from forgeplan.library import build
from forgeplan.llm.action_space import FIXED
from forgeplan.llm.grammar import admitted_actions
from forgeplan.llm.prompt import SYSTEM, build_prompt
from forgeplan.model.choices import PROMPTS
from forgeplan.planners.reference import simple_reference
from forgeplan.semantics.diagnosis import MISTAKE_TYPES
from forgeplan.semantics.faults import FaultSpec, make_task
from forgeplan.semantics.grounded import kind_of

# one task per kind of moves, each with a reference that uses that kind's own actions: lock turns (straight
# moves; a rotating lock, and a coupled lock with a spare replaced), separate and join (group moves), slides
# and offset inserts (partial)
TASKS = {"bayonet_structure": ("missing_part", "BayonetStructure_Part02_Pin"),
         "drawer_cabinet_2": ("wrong_part", None),
         "burr_6_split": ("missing_part", None),
         "burr_6_level5": ("wrong_orientation", "Burr6Level5_Part05_Stick")}


@pytest.fixture(scope="module")
def references():
    out = {}
    for aid, (ftype, part) in TASKS.items():
        task = make_task(build(aid), [FaultSpec(ftype, part)])
        out[aid] = (task, simple_reference(task)["rework_plan"]["actions"])
    return out


def _forge_space(task) -> dict:
    return json.loads(build_prompt(task, "forge")[1]["content"])["action_space"]


def _signatures(task) -> dict[str, set[str]]:
    """name -> the parameter names the compact prompt's system turn lists for it."""
    line = build_prompt(task, "compact")[0]["content"].split("Actions: ", 1)[1]
    return {m[0]: set(re.findall(r"[a-z_]+", m[1])) for m in re.findall(r"([a-z_]+)\(([^)]*)\)", line)}


def test_the_tasks_cover_every_kind_of_moves(references):
    kinds = {kind_of(task).name for task, _ in references.values()}
    assert kinds == {"STRAIGHT", "GROUPS", "PARTIAL"}
    used = {a["action"] for _, plan in references.values() for a in plan}
    assert {"rotate_to_unlock", "rotate_translate_to_unlock", "replace", "separate", "join", "slide"} <= used
    # burr_6_level5's reference inserts at an offset: the prompt must say that insert takes one
    assert any(a["action"] == "insert" and "offset" in a for a in references["burr_6_level5"][1])


@pytest.mark.parametrize("aid", TASKS)
def test_every_reference_action_is_in_both_prompts_with_its_parameters(references, aid):
    task, plan = references[aid]
    space, sigs = _forge_space(task), _signatures(task)
    for action in plan:
        name, fields = action["action"], set(action) - {"action"}
        assert fields <= sigs[name], (name, sigs.get(name))
        forms = [t for t in space["templates"] if t["action"] == name]
        if name in FIXED:   # the grammar fixes the parameters: the template is the action itself
            assert action in forms, name
        else:
            assert any(set(t) == set(action) for t in forms), (name, forms)


@pytest.mark.parametrize("aid", TASKS)
def test_the_prompts_name_exactly_the_actions_the_grammar_admits(references, aid):
    task, _ = references[aid]
    admitted = admitted_actions(task)
    sigs = _signatures(task)
    assert list(sigs) == list(admitted)
    for name, (params, optional) in admitted.items():
        assert sigs[name] == set(params) | set(optional)
    assert {t["action"] for t in _forge_space(task)["templates"]} == set(admitted)
    grouped = "separate" in admitted
    assert grouped == task.world.moves.groups   # group moves are named only where the assembly needs them


@pytest.mark.parametrize("aid", TASKS)
def test_the_values_cover_the_reference(references, aid):
    """Every value the reference writes in place of a placeholder is among the values the prompt gives it."""
    task, plan = references[aid]
    values = _forge_space(task)["values"]
    for a in plan:
        if a["action"] in FIXED:
            continue
        parts = a.get("part_ids", [a.get("part_id")] if "part_id" in a else [])
        assert set(parts) <= set(values["<slot>" if a["action"] in ("insert", "join") else "<part>"]), a
        if "direction" in a:
            assert a["direction"] in values["<direction>"]
        if "distance" in a:
            low, high = (int(x) for x in re.findall(r"\d+", values["<distance>"]))
            assert low <= a["distance"] <= high
        for offset in a.get("offsets", [a["offset"]] if "offset" in a else []):
            bounds = [tuple(int(x) for x in m) for m in re.findall(r"[xyz] (-?\d+) to (-?\d+)", values["<offset>"])]
            assert all(lo <= k <= hi for k, (lo, hi) in zip(offset, bounds)), (a, bounds)


def test_the_forge_prompt_is_forges_contract_with_the_whole_public_task(references):
    task, _ = references["bayonet_structure"]
    system, user = build_prompt(task, "forge")
    assert system["content"] == SYSTEM and SYSTEM.startswith("Return one JSON object with the declared annotation "
                                                             "and rework_plan fields. Do not add explanatory prose.")
    assert all(t in SYSTEM for t in MISTAKE_TYPES)
    rep = json.loads(user["content"])
    files = public_files(task)
    for state in ("initial_state", "actual_state", "target_state"):   # in full, every field of every slot
        assert rep[state] == files[f"{state}.json"]["slots"], state
    assert rep["sample_id"] == task.sample_id and "voxels" not in user["content"]
    assert [p["part_id"] for p in rep["parts"]] == list(task.assembly.part_ids)


def test_prompts_are_deterministic_and_the_styles_are_the_documented_ones(references):
    task, _ = references["burr_6_level5"]
    assert PROMPTS == ("forge", "compact")
    for style in PROMPTS:
        assert build_prompt(task, style) == build_prompt(make_task(build("burr_6_level5"), [
            FaultSpec("wrong_orientation", "Burr6Level5_Part05_Stick")]), style)
    with pytest.raises(ValueError):
        build_prompt(task, "json")

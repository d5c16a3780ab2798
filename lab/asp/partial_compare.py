"""clingo's minimal rework with partial moves (`partial_asp`) against the moved-set search
(`planners.moved_set.search`): how two results on one task compare, given what each one proved."""

from __future__ import annotations


def verdict(asp, search, search_radius: int, radius: int | None) -> str:
    """`agree`: the same (J, c). `disagree`: one side beats a value the other proved (the search's proof
    covers its whole universe; clingo's covers its radius box, so it counts only against a search plan
    that stays in the box). Otherwise which side found the better plan, unproved."""
    if asp.moved is None or search.plan is None:
        return "asp-none" if asp.moved is None and search.plan is not None else (
            "search-none" if asp.moved is not None else "both-none")
    a, s = (asp.moved, asp.actions), (search.moved, search.actions)
    if a == s:
        return "agree"
    in_box = radius is None or search_radius <= radius
    if a < s and search.optimal or s < a and in_box and (asp.optimal or len(search.plan) <= asp.horizon):
        return "disagree"
    return "asp-better" if a < s else "search-better"


def plan_radius(task, plan) -> int:
    """The largest |offset| per axis any state of the plan visits."""
    state, far = task.actual, 0
    for a in plan:
        state = task.world.apply(state, a)
        far = max([far] + [max(map(abs, s.offset)) for s in state.slots if s.present])
    return far

"""`forgeplan perf tier`: the expert tier's references of a build, timed apart from the rest."""

from __future__ import annotations

import json

from forgeplan.cli import main
from forgeplan.library import PARTIAL_MOVES
from forgeplan.perf.tier import tier_slots


def test_perf_tier_makes_every_tier_reference_of_the_plan(capsys):
    assert main(["perf", "tier", "--tasks", "100", "--runs", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    slots = tier_slots(100, 42)
    assert out["tier_tasks"] == len(slots) > 0
    assert {a.assembly_id for _, a in slots} <= PARTIAL_MOVES
    assert sum(out["methods"].values()) == out["tier_tasks"] and 0 <= out["proved"] <= out["tier_tasks"]
    assert set(out["methods"]) <= {"moved-set-search", "repair-search", "None"}
    assert out["cpu_seconds_median"] > 0

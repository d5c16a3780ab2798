"""`python -m lab tier`: the expert tier's references of a build, timed apart from the rest."""

from __future__ import annotations

import json

from forgeplan.bench.composition import plan_composition
from forgeplan.bench.sources import load_sources
from lab.cli import main
from forgeplan.geometry.separation import needs_group_moves
from cases import PARTIAL_MOVES



def test_perf_tier_makes_every_tier_reference_of_the_plan(capsys):
    assert main(["tier", "--tasks", "100", "--runs", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    sources = load_sources(None)
    families = {a: s.assembly.family for a, s in sources.items()}
    group = frozenset(a for a, s in sources.items() if needs_group_moves(s.assembly))
    slots = [s for s in plan_composition(families, 100, 42, group, PARTIAL_MOVES) if s.assembly_id in PARTIAL_MOVES]
    assert out["tier_tasks"] == len(slots) > 0
    assert sum(out["methods"].values()) == out["tier_tasks"] and 0 <= out["proved"] <= out["tier_tasks"]
    assert set(out["methods"]) <= {"moved-set-search", "repair-search"}
    assert out["cpu_seconds_median"] > 0

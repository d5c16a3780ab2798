"""Actions replayed per second by the engine on the largest built-in assembly."""

from __future__ import annotations

import random

from . import machine, median_of

NAME = "verify"


def add_arguments(p) -> None:
    p.add_argument("--runs", type=int, default=5, help="repetitions (median reported)")
    p.add_argument("--actions", type=int, default=200_000, help="actions replayed per run")
    p.add_argument("--seed", type=int, default=0, help="seed of the random action sequences")


def run(args) -> dict:
    from forgeplan.io.catalog import load_assembly
    from forgeplan.semantics.assembly_grounding import AssemblyGrounding
    from forgeplan.semantics.legal import legal_actions
    from forgeplan.library import BUILTIN
    from forgeplan.model.state import Tolerances
    from forgeplan.semantics.engine import World

    asm = max((load_assembly(a) for a in BUILTIN), key=lambda a: (len(a.parts), a.assembly_id))
    world = World(asm, Tolerances())
    offers = AssemblyGrounding(world)
    # a long random legal walk, recorded once, replayed by the engine (check + apply per action)
    rng = random.Random(args.seed)
    state = world.target_state()
    walk: list = []
    while len(walk) < min(args.actions, 20_000):
        acts = legal_actions(offers, state)
        a = rng.choice(acts)
        walk.append(a)
        state = world.apply(state, a)
    repeats = max(1, args.actions // len(walk))
    start = world.target_state()

    def replay_walks():
        for _ in range(repeats):
            r = world.replay(start, walk)
            assert r.failure is None, r.failure

    med, times = median_of(replay_walks, args.runs)
    total = repeats * len(walk)
    return {"benchmark": "verify", "assembly": asm.assembly_id, "parts": len(asm.parts),
            "actions_per_run": total, "runs": args.runs,
            "actions_per_second_median": round(total / med), "seconds_median": round(med, 4),
            "seconds_all": [round(t, 4) for t in times], "target_actions_per_second": 50_000, **machine()}

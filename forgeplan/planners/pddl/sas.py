"""A grounded partial-move problem (`slides.SlideProblem`) as Fast Downward's own input, output.sas.

Fast Downward's translator parses, normalises and instantiates PDDL before it searches; on a six-piece
burr's grounded problem (tens of megabytes of literals over constant atoms) that takes longer than the
search itself. The problem is already grounded, so it is written here directly in the translator's
output format (version 3): one binary variable per atom (value 0 true, 1 false), derived atoms as
derived variables with one axiom rule per body (layered by dependency), operators with prevail
conditions, effects and effect conditions, the metric on. STRIPS semantics carry over: an atom that
a step both deletes and adds ends true; a conditional effect reads the state before the step.
"""

from __future__ import annotations

from .slides import Atom, SlideProblem


def _layers(sp: SlideProblem) -> dict[Atom, int]:
    """Axiom layer of each derived atom: one more than the highest derived atom its rules read (0: basic only)."""
    layer: dict[Atom, int] = {}

    def of(a: Atom) -> int:
        if a not in sp.derived:
            return -1
        if a not in layer:
            layer[a] = 1 + max((of(b) for body in sp.derived[a] for b, _ in body), default=-1)
        return layer[a]

    for a in sp.derived:
        of(a)
    return layer


def sas_text(sp: SlideProblem) -> str:
    """The problem as output.sas text (operator names are the steps' names, so plans decode as usual)."""
    layer = _layers(sp)
    atoms = sorted({a for st in sp.steps for a, _ in (*st.pre, *st.eff, *(x for c, e in st.when for x in (*c, *e)))}
                   | sp.init | {a for a, _ in sp.goal} | set(sp.derived)
                   | {a for body in sp.derived.values() for b in body for a, _ in b})
    var = {a: i for i, a in enumerate(atoms)}

    def val(lit) -> str:
        return f"{var[lit[0]]} {0 if lit[1] else 1}"

    out = ["begin_version", "3", "end_version", "begin_metric", "1", "end_metric", str(len(atoms))]
    for i, a in enumerate(atoms):
        out += ["begin_variable", f"var{i}", str(layer.get(a, -1)), "2", f"Atom {a[1:-1]}", f"NegatedAtom {a[1:-1]}",
                "end_variable"]
    out += ["0", "begin_state", *("0" if a in sp.init else "1" for a in atoms), "end_state",
            "begin_goal", str(len(sp.goal)), *(val(g) for g in sp.goal), "end_goal", str(len(sp.steps))]
    for st in sp.steps:
        out += _operator(st, var)
    rules = [(a, body) for a in sorted(sp.derived) for body in sp.derived[a]]
    out.append(str(len(rules)))
    for a, body in rules:
        out += ["begin_rule", str(len(body)), *(val(b) for b in body), f"{var[a]} 1 0", "end_rule"]
    return "\n".join(out) + "\n"


def _operator(st, var: dict[Atom, int]) -> list[str]:
    pre = {var[a]: 0 if v else 1 for a, v in st.pre}
    effects: dict[int, int] = {}
    for a, v in st.eff:                       # deletes first, then adds: an atom deleted and added ends true
        if not v:
            effects[var[a]] = 1
    for a, v in st.eff:
        if v:
            effects[var[a]] = 0
    lines = [f"{x} {pre.get(x, -1)} {post}" for x, post in effects.items()]
    cond_lines = []       # a conditional effect's variable carries no precondition value: it stays in prevail
    for cond, eff in st.when:
        conds = " ".join(f"{var[a]} {0 if v else 1}" for a, v in cond)
        for a, v in eff:
            if var[a] not in effects:
                cond_lines.append(f"{len(cond)} {conds} {var[a]} -1 {0 if v else 1}")
    prevail = [f"{x} {p}" for x, p in pre.items() if x not in effects]
    effect_lines = [f"0 {e}" for e in lines] + cond_lines
    return ["begin_operator", st.name, str(len(prevail)), *prevail, str(len(effect_lines)), *effect_lines,
            str(st.cost), "end_operator"]

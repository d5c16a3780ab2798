"""The map is code: ARCHITECTURE.md names every module, and only the grounded task and the planner
registry ask which kind of moves (straight, groups, partial) a task has."""

from __future__ import annotations

import ast
from pathlib import Path

import forgeplan

ROOT = Path(forgeplan.__file__).resolve().parent
MAP = ROOT.parent / "ARCHITECTURE.md"

# where the kind of a task is decided: the grounded task owns it, the registry chooses planners by it
KIND_OWNERS = {"semantics/grounded.py", "planners/registry.py",
               "semantics/moves.py",              # the grounded task's move model per kind, below the engine that holds it
               "semantics/partial_universe.py"}   # the grounded task's universe of partial moves
# modules that still ask, each with why; the list only shrinks. Empty: the engine and the offer of a state
# call the world's move model (`World.moves`), and the benchmark takes its expert tier and its train/test
# assemblies from `semantics.grounded.assemblies_by_kind`
KIND_ALLOWED: dict[str, str] = {}


def modules() -> list[str]:
    """Every module of the package, as its path below forgeplan/ (packages by their folder, `planners/asp/`)."""
    out = []
    for p in sorted(ROOT.rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        if p.name == "__init__.py":
            continue
        out.append(rel)
    return out


def kind_questions(tree: ast.AST) -> list[int]:
    """Lines that ask a task's kind: `world.partial` (any `X.world.partial`, `w.partial`, `self.partial`),
    `needs_partial_moves(...)`, or a use of `MoveKind` / `kind_of` / `move_kind`."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "partial":
            base = node.value
            name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
            if name in ("world", "w", "self"):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if fname == "needs_partial_moves":
                lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id in ("MoveKind", "kind_of", "move_kind"):
            lines.append(node.lineno)
    return lines


def test_only_the_grounded_task_and_the_registry_ask_which_kind_a_task_is():
    found = {}
    for rel in modules():
        if rel in KIND_OWNERS or rel in KIND_ALLOWED or rel.startswith("geometry/"):   # geometry defines the level
            continue
        lines = kind_questions(ast.parse((ROOT / rel).read_text(encoding="utf-8")))
        if lines:
            found[rel] = lines
    assert not found, f"ask planners.registry or semantics.grounded instead: {found}"


def test_the_allowed_modules_still_ask_so_the_list_stays_tight():
    stale = [rel for rel in KIND_ALLOWED
             if not kind_questions(ast.parse((ROOT / rel).read_text(encoding="utf-8")))]
    assert not stale, f"no longer ask the kind, drop them from KIND_ALLOWED: {stale}"


def test_the_counter_sees_a_kind_branch():
    tree = ast.parse("if task.world.partial:\n    pass\nx = needs_partial_moves(a)\ny = w.partial\nz = err.partial\n")
    assert sorted(kind_questions(tree)) == [1, 3, 4]


def test_architecture_names_every_module():
    text = MAP.read_text(encoding="utf-8")
    missing = [rel for rel in modules() if f"`{rel}`" not in text]
    assert not missing, f"ARCHITECTURE.md does not name: {missing}"


def test_architecture_names_every_module_of_the_laboratory():
    lab = ROOT.parent / "lab"
    text = MAP.read_text(encoding="utf-8")
    files = [p.relative_to(ROOT.parent).as_posix() for p in sorted(lab.rglob("*")) if p.suffix in (".py", ".lp")
             and p.name != "__init__.py" and "__pycache__" not in p.parts]
    missing = [rel for rel in files if f"`{rel}`" not in text]
    assert files and not missing, f"ARCHITECTURE.md does not name: {missing}"


def test_architecture_names_no_module_that_is_gone():
    import re

    text = MAP.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", text))
    have = set(modules())
    gone = sorted(n for n in named if n not in have and not (ROOT / n).exists() and not (ROOT.parent / n).exists())
    assert not gone, f"ARCHITECTURE.md names modules that do not exist: {gone}"

"""The map is code: ARCHITECTURE.md names every module, only the grounded task and the planner registry
ask which kind of moves (straight, groups, partial) a task has (everything else asks its capabilities),
and no module keeps answers about a world (they live on the grounded task and its assembly grounding)."""

from __future__ import annotations

import ast
from pathlib import Path

import forgeplan
from forgeplan.planners.registry import REGISTRY

ROOT = Path(forgeplan.__file__).resolve().parent
MAP = ROOT.parent / "ARCHITECTURE.md"

# where the kind of a task is decided: the grounded task owns it (with its move model, which decides it per
# assembly), the registry chooses planners by capability and objective; everything else asks a grounded
# task's capabilities (`has_groups`, `has_slides`, `has_offsets`, `Capability`)
KIND_OWNERS = {"semantics/grounded.py", "semantics/moves.py", "planners/registry.py"}
# modules that still ask, each with why; the list only shrinks
KIND_ALLOWED: dict[str, str] = {}
KIND_CALLS = {"needs_partial_moves", "needs_group_moves", "is_level1", "assembly_kind", "kind_of", "move_kind"}
KIND_NAMES = {"MoveKind", "kind_of", "move_kind", "assembly_kind", "PARTIAL_MOVES"}
PLANNER_NAMES = frozenset(REGISTRY)
MODEL_QUESTIONS = {"kind", "groups", "offers", "slides_refused", "offsets_refused"}   # asked of `X.moves`

# module-level state (an empty container, a module's own object made at import), each with why it keeps no
# answer about a world; the list only shrinks. Answers about a task or an assembly live on its
# `GroundedTask` and the `AssemblyGrounding` its caller owns.
MODULE_STATE = {
    "executors.py:INTERRUPT": "the note printed on Ctrl-C, not a cache",
    "library/__init__.py:BUILTIN": "the built-in assemblies' builders by id, filled at import",
    "llm/processor.py:_SHIFTS": "a torch constant per device",
    "semantics/intents.py:INSPECT": "a constant decision",
    "io/task_files.py:_ASSEMBLIES": "parsed assembly files by the digest of their bytes: no world, no answer about one",
    "bench/folder.py:_OPEN": "the last open benchmarks (manifest, digests) by their files' stamps: no world, no answer about one",
}
CONTAINERS = {"dict", "set", "list", "OrderedDict", "defaultdict", "Counter", "deque", "WeakKeyDictionary",
              "WeakValueDictionary", "WeakSet"}
WORLDISH = {"World", "Task", "GroundedTask", "AssemblyGrounding"}


def modules() -> list[str]:
    """Every module of the package, as its path below forgeplan/ (packages by their folder, `planners/asp/`)."""
    out = []
    for p in sorted(ROOT.rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        if p.name == "__init__.py":
            continue
        out.append(rel)
    return out


def _name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def kind_questions(tree: ast.AST, semantics: bool = False) -> list[int]:
    """Lines that ask a task's kind instead of its capabilities: `world.partial` (any `X.world.partial`,
    `w.partial`, `self.partial`), `X.needs_groups`, a call of the geometry's or the move model's kind
    deciders (`needs_partial_moves`, `needs_group_moves`, `is_level1`, `assembly_kind`, `kind_of`,
    `move_kind`), a use of `MoveKind` or of a fixed list of kinds (`PARTIAL_MOVES`), the move model made or
    asked (`move_model(...)`, `X.moves.kind`, `.groups`, ...) outside `semantics/` (`semantics`: the module
    is inside it, where the engine and the offers hold the model), a planner taken by name as a kind test
    (`accepted("clingo", ...)`, `planner.name == "..."`)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "partial" and _name(node.value) in ("world", "w", "self"):
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "needs_groups":
            lines.append(node.lineno)
        elif not semantics and (isinstance(node, ast.Attribute) and node.attr in MODEL_QUESTIONS and _name(node.value) == "moves"
                                or isinstance(node, ast.Call) and _name(node.func) == "move_model"):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and (_name(node.func) in KIND_CALLS or _name(node.func) == "accepted" and node.args
                                             and isinstance(node.args[0], ast.Constant)):
            lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id in KIND_NAMES or isinstance(node, ast.ImportFrom) and any(
                a.name in KIND_NAMES for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(
                isinstance(x, ast.Attribute) and x.attr == "name" for x in (node.left, *node.comparators)) and any(
                isinstance(x, ast.Constant) and x.value in PLANNER_NAMES for x in (node.left, *node.comparators)):
            lines.append(node.lineno)
    return sorted(set(lines))


def test_only_the_grounded_task_and_the_registry_ask_which_kind_a_task_is():
    found = {}
    for rel in modules():
        if rel in KIND_OWNERS or rel in KIND_ALLOWED or rel.startswith("geometry/"):   # geometry defines the level
            continue
        lines = kind_questions(ast.parse((ROOT / rel).read_text(encoding="utf-8")), rel.startswith("semantics/"))
        if lines:
            found[rel] = lines
    assert not found, f"ask planners.registry or semantics.grounded instead: {found}"


def test_the_allowed_modules_still_ask_so_the_list_stays_tight():
    stale = [rel for rel in KIND_ALLOWED
             if not kind_questions(ast.parse((ROOT / rel).read_text(encoding="utf-8")))]
    assert not stale, f"no longer ask the kind, drop them from KIND_ALLOWED: {stale}"


def test_the_counter_sees_every_form_of_a_kind_question():
    asked = ["if task.world.partial: pass", "y = w.partial", "x = needs_partial_moves(a)", "x = needs_group_moves(a)",
             "x = is_level1(a)", "x = assembly_kind(a)", "x = move_model(a)", "x = kind_of(t)", "x = move_kind(w)",
             "x = task.world.needs_groups", "from forgeplan.library import PARTIAL_MOVES",
             "x = [a for a in BUILTIN if a not in PARTIAL_MOVES]", "x = k is MoveKind.PARTIAL",
             "x = world.moves.kind", "x = task.world.moves.groups", "x = w.moves.slides_refused()", "m = move_model(a)",
             "x = accepted('clingo', tasks)", "x = planner_for(t).name == 'fast-downward'",
             "if name.name != 'clingo': pass"]
    fine = ["z = err.partial", "x = grounded.has_groups", "x = Capability.SLIDES in caps", "x = accepted(name, tasks)",
            "x = proof.get('method') == 'clingo'", "x = ab.groups.moves"]
    tree = ast.parse("\n".join(asked + fine))
    assert sorted(kind_questions(tree)) == list(range(1, len(asked) + 1))
    inside = ast.parse("x = world.moves.groups\nm = move_model(asm)\ny = world.needs_groups")
    assert kind_questions(inside, semantics=True) == [3]


def module_state(tree: ast.Module) -> list[str]:
    """What a module keeps across calls: top-level names bound to an empty container or to an object of a
    class the module defines (a cache object), and functions memoised (`lru_cache`, `cache`) on a world,
    a task, a grounded task or an assembly grounding (by annotation or by the name `world`, `task`,
    `grounded`)."""
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            v = node.value
            empty = (isinstance(v, ast.Dict) and not v.keys or isinstance(v, (ast.Set, ast.List)) and not v.elts
                     or isinstance(v, ast.Call) and (_name(v.func) in CONTAINERS and not v.args or _name(v.func) in classes))
            if empty:
                out += [_name(t) for t in (node.targets if isinstance(node, ast.Assign) else [node.target])]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_name(d.func if isinstance(d, ast.Call) else d) in ("lru_cache", "cache")
                                                     for d in node.decorator_list):
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            if any(a.arg in ("world", "task", "grounded") or a.annotation is not None and any(
                    _name(x) in WORLDISH for x in ast.walk(a.annotation)) for a in args):
                out.append(node.name)
    return out


def test_no_module_keeps_answers_about_a_world():
    found = sorted(f"{p.relative_to(ROOT).as_posix()}:{name}" for p in ROOT.rglob("*.py")
                   for name in module_state(ast.parse(p.read_text(encoding="utf-8"))))
    unknown = [k for k in found if k not in MODULE_STATE]
    assert not unknown, f"keep these on the GroundedTask or its AssemblyGrounding (or say in MODULE_STATE why not): {unknown}"
    stale = [k for k in MODULE_STATE if k not in found]
    assert not stale, f"gone, drop them from MODULE_STATE: {stale}"


def test_the_state_counter_sees_every_form_of_a_module_cache():
    kept = ["class Groundings:\n    pass\nGROUNDINGS = Groundings()", "_CACHE: dict = {}", "_SEEN = set()",
            "_BY = OrderedDict()", "_W = weakref.WeakKeyDictionary()", "_L = []",
            "@lru_cache(maxsize=8)\ndef offers(world):\n    pass", "@functools.cache\ndef f(a, g: GroundedTask):\n    pass",
            "@lru_cache\ndef h(ag: AssemblyGrounding | None):\n    pass"]
    fine = ["LIMITS = {'a': 1}", "NAMES = ('x',)", "P = Path('x')", "@lru_cache\ndef shapes(asm: Assembly):\n    pass",
            "def f(world):\n    kept = {}"]
    assert module_state(ast.parse("\n".join(kept + fine))) == ["GROUNDINGS", "_CACHE", "_SEEN", "_BY", "_W", "_L",
                                                                  "offers", "f", "h"]


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

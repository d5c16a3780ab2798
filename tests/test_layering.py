"""The package imports downward only: model -> geometry -> library -> semantics -> io -> planners -> apps -> cli.

Every import of every module (module level and inside functions) is read with `ast`; an import of a
higher layer, or any import cycle between modules, fails. Modules of one layer may import each other
as long as no cycle forms. ARCHITECTURE.md explains the layers.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import forgeplan

ROOT = Path(forgeplan.__file__).resolve().parent

# first component below forgeplan -> layer; a higher number may import a lower or equal one
LAYERS = {
    "model": 0,
    "geometry": 1,
    "library": 2,
    "semantics": 3,
    "io": 4, "executors": 4,
    "planners": 5,
    "verify": 6, "trace": 6, "bench": 6, "evaluation": 6, "llm": 6, "render": 6, "pictures": 6, "viewer": 6, "demo": 6,
    "cli": 7,
    "__main__": 8,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@lru_cache(maxsize=None)   # parsed once per session; the tests only read it
def modules() -> dict[str, tuple[ast.AST, bool]]:
    return {module_name(p): (ast.parse(p.read_text(encoding="utf-8")), p.name == "__init__.py")
            for p in sorted(ROOT.rglob("*.py"))}


def imported(tree: ast.AST, mod: str, is_pkg: bool, known: set[str]) -> set[str]:
    """The forgeplan modules `mod` imports (a `from pkg import name` of a submodule counts as that module)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out |= {f"{target}.{a.name}" for a in node.names}
    return {t for t in out if t in known and t != mod}


def layer(mod: str) -> int | None:
    parts = mod.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


@lru_cache(maxsize=None)
def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    g = {m: imported(tree, m, is_pkg, known) for m, (tree, is_pkg) in mods.items()}
    # a package's __init__ that names its own submodules (library's builders) is not a dependency edge
    return {m: {t for t in ts if not (mods[m][1] and t.startswith(m + "."))} for m, ts in g.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in modules() if m != "forgeplan" and layer(m) is None)
    assert not unplaced, f"modules outside every layer (add them to LAYERS and ARCHITECTURE.md): {unplaced}"


def test_imports_go_downward_only():
    upward = sorted(f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
                    for m, ts in graph().items() for t in ts
                    if layer(m) is not None and layer(t) is not None and layer(t) > layer(m))
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_the_checks_catch_an_upward_import_and_a_cycle():
    g = {"forgeplan.model.a": {"forgeplan.planners.b"}, "forgeplan.planners.b": {"forgeplan.model.a"}}
    assert cycles(g) == [["forgeplan.model.a", "forgeplan.planners.b"]]
    assert layer("forgeplan.planners.b") > layer("forgeplan.model.a")
    tree = ast.parse("def f():\n    from ..planners.asp import solve\n")
    assert imported(tree, "forgeplan.model.a", False, {"forgeplan.planners.asp.solve"}) == {"forgeplan.planners.asp.solve"}


def absolute_imports(tree: ast.AST) -> list[str]:
    """Every module name an `import` or a `from ... import` without dots names."""
    return [name for node in ast.walk(tree)
            for name in ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                         else [a.name for a in node.names] if isinstance(node, ast.Import) else [])]


def test_the_package_never_imports_the_laboratory():
    """lab/ (benchmarks, fuzzer, research planners) is not shipped: a wheel without it must still work."""
    offenders = sorted(f"{m}: {n}" for m, (tree, _) in modules().items() for n in absolute_imports(tree)
                       if n == "lab" or n.startswith("lab."))
    assert not offenders, offenders


def test_the_laboratory_check_sees_an_import():
    tree = ast.parse("def f():\n    from lab.perf import bench\nimport lab\nfrom . import x\n")
    assert sorted(absolute_imports(tree)) == ["lab", "lab.perf"]


def test_tests_do_not_import_benchmarks():
    here = Path(__file__).resolve().parent
    offenders = []
    for p in sorted(here.glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{p.name}: {n}" for n in names if n == "lab.perf" or n.startswith("lab.perf.")]
    assert not offenders, offenders


# what a test module may not import when it is collected: every xdist worker collects every module
HEAVY_AT_COLLECTION = ("torch", "transformers", "xgrammar", "llguidance", "trl", "peft", "forgeplan.llm.processor")


def collection_imports(tree: ast.Module) -> list[str]:
    """Modules a test file imports when it is collected: its module-level and class-level imports and
    `pytest.importorskip(NAME)` calls outside functions."""
    out, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.ClassDef):
            todo += node.body
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out += absolute_imports(node)
        else:
            out += [c.args[0].value for c in ast.walk(node) if isinstance(c, ast.Call) and c.args
                    and isinstance(c.func, ast.Attribute) and c.func.attr == "importorskip"
                    and isinstance(c.args[0], ast.Constant)]
    return out


def test_collecting_the_tests_imports_no_heavy_library():
    here = Path(__file__).resolve().parent
    offenders = [f"{p.name}: {n}" for p in sorted(here.glob("*.py"))
                 for n in collection_imports(ast.parse(p.read_text(encoding="utf-8")))
                 if any(n == h or n.startswith(h + ".") for h in HEAVY_AT_COLLECTION)]
    assert not offenders, f"import these inside the fixtures or tests that use them: {offenders}"


def test_the_collection_check_sees_heavy_imports():
    tree = ast.parse("import torch\nx = pytest.importorskip('xgrammar')\nclass A:\n    import trl\n"
                     "def f():\n    import peft\n")
    assert sorted(collection_imports(tree)) == ["torch", "trl", "xgrammar"]


def test_every_type_ignore_names_its_error_code_and_its_reason():
    """mypy runs in CI (README's test line); what it is told to ignore says which error and why."""
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "forgeplan"
    bare = [f"{path.relative_to(package.parent)}:{n}" for path in sorted(package.rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if "type: ignore" in line and not re.search(r"# type: ignore\[[a-z-]+(, ?[a-z-]+)*\]  # \S", line)]
    assert bare == []

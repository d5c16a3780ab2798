"""A regular (non-editable) install carries the top-level resource directories.

The wheel is built from a copy of the project's files (so the repository gets no build/ directory), with
`pip wheel --no-deps --no-build-isolation`; it must hold every file of encodings/, domains/, grammars/
and models/ under forgeplan/_resources/, and every module of the package, and nothing of the laboratory
(lab/: benchmarks, fuzzer, research planners), which runs from a checkout only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from forgeplan.io import resources

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ("encodings", "domains", "grammars", "models")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")


def _files(folder: Path) -> dict[str, bytes]:
    """Relative POSIX path -> content of every file under folder (caches and hidden files left out)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and "__pycache__" not in rel.parts and not any(p.startswith(".") for p in rel.parts) \
                and path.suffix != ".pyc":
            out[rel.as_posix()] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("forgeplan", "lab", *RESOURCES):   # the laboratory beside the package, as in the repository
        shutil.copytree(ROOT / name, src / name, ignore=IGNORE)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (whl,) = out.glob("forgeplan-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_carries_the_resource_directories(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for name in RESOURCES:
            repo = _files(ROOT / name)
            assert repo, f"{name}/ is empty"
            for rel, data in repo.items():
                member = f"forgeplan/_resources/{name}/{rel}"
                assert member in names, f"the wheel lacks {member}"
                assert zf.read(member) == data, f"{member} differs from {name}/{rel}"


@pytest.mark.slow
def test_wheel_carries_every_module(wheel):
    """pyproject.toml lists the packages explicitly: a new subpackage must be added there."""
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    missing = [f"forgeplan/{rel}" for rel in _files(ROOT / "forgeplan") if rel.endswith(".py")
               and f"forgeplan/{rel}" not in names]
    assert not missing, f"not in the wheel (add the package to pyproject.toml [tool.setuptools] packages): {missing}"


# what the package shipped before the laboratory moved out, named so that it cannot come back unnoticed
LABORATORY = ("lab/", "forgeplan/perf/", "forgeplan/fuzzing.py", "forgeplan/cli/perf_cmd.py",
              "forgeplan/planners/asp/partial_asp.py", "forgeplan/planners/asp/partial_facts.py",
              "forgeplan/planners/asp/partial_bound.py", "forgeplan/planners/asp/partial_compare.py",
              "forgeplan/_resources/encodings/partial.lp")


@pytest.mark.slow
def test_wheel_holds_no_laboratory(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    shipped = [n for n in names if n.startswith(LABORATORY)]
    assert not shipped, f"the laboratory is in the wheel: {shipped}"
    assert "forgeplan/planners/asp/partial_check.py" in names   # the cross-check's planner is the product's


def test_the_package_list_is_the_package_and_nothing_else():
    """pyproject.toml names every subpackage of forgeplan/ (a missing one would leave modules out of the
    wheel) and nothing else: the laboratory beside it is not shipped."""
    import tomllib

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "forgeplan").rglob("__init__.py")}
    assert {p for p in listed if not p.startswith("forgeplan._resources.")} == on_disk
    assert (ROOT / "lab" / "__init__.py").is_file() and not [p for p in listed if p.split(".")[0] != "forgeplan"]
    back = [n for n in LABORATORY[1:] if (ROOT / n).is_file() or any((ROOT / n).glob("*.py"))]
    assert not back, f"laboratory modules in the package: {back}"


@pytest.mark.slow
def test_installed_layout_finds_its_resources(wheel, tmp_path):
    """The wheel's own forgeplan (unpacked, first on the path) uses forgeplan/_resources, not the repository."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    code = (
        "import forgeplan, json\n"
        "from forgeplan.io import resources as r\n"
        "from forgeplan.planners.asp.solve import ENCODINGS\n"
        "from forgeplan.llm.grammar import base_grammar\n"
        "from forgeplan.llm.config import DEFAULT_CONFIG\n"
        "assert base_grammar()\n"
        "print(json.dumps([forgeplan.__file__, str(ENCODINGS), str(DEFAULT_CONFIG)]"
        " + [str(f()) for f in (r.encodings_dir, r.domains_dir, r.grammars_dir, r.models_dir)]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    init, encodings, default_config, *dirs = json.loads(proc.stdout.strip().splitlines()[-1])
    installed = site / "forgeplan"
    assert Path(init).resolve() == (installed / "__init__.py").resolve()
    assert Path(encodings).resolve() == (installed / "_resources" / "encodings").resolve()
    assert Path(default_config).is_file()
    for name, folder in zip(RESOURCES, dirs):
        assert Path(folder).resolve() == (installed / "_resources" / name).resolve()


def test_resource_functions_return_existing_directories():
    for name, func in zip(RESOURCES, (resources.encodings_dir, resources.domains_dir, resources.grammars_dir,
                                      resources.models_dir)):
        folder = func()
        assert folder.is_dir(), folder
        assert folder.name == name
        assert _files(folder) == _files(ROOT / name)  # the repository's copy, or an installed one equal to it
    assert (resources.encodings_dir() / "plan.lp").is_file()
    assert (resources.domains_dir() / "rework.pddl").is_file()
    assert (resources.grammars_dir() / "rework_plan.lark").is_file()
    assert (resources.models_dir() / "tiny-cpu.toml").is_file()


@pytest.mark.slow
def test_wheel_carries_the_example_puzzles_with_their_licence(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    shipped = _files(resources.examples_dir())
    assert {"LICENSE", "README.md"} <= set(shipped) and len([n for n in shipped if n.endswith(".json")]) == 5
    missing = [n for n in shipped if f"forgeplan/examples/{n}" not in names]
    assert not missing, f"not in the wheel (pyproject.toml [tool.setuptools.package-data]): {missing}"


def test_the_test_line_installs_the_locked_versions_of_every_extra():
    """README's test line installs under .ci/constraints.txt, which pins every package the test, LLM and Ray
    extras name, so that a new release upstream cannot change what CI tests."""
    import re
    import tomllib

    root = Path(__file__).resolve().parents[1]
    test_line = next(line for line in (root / "README.md").read_text().splitlines() if line.endswith("# tests"))
    assert "-c .ci/constraints.txt" in test_line
    pins = {}
    for line in (root / ".ci" / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", req).group()).lower()
             for extra in ("llm", "test", "distributed") for req in extras[extra]}
    assert named - pins.keys() == set()
    assert pins["torch"].startswith("2.13.0")   # the CPU build the machine carries

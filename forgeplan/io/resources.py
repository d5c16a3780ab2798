"""Where the resource directories are: encodings/, domains/, grammars/ and models/.

They live at the top level of the repository. A wheel (`pip install .`) carries them as package data in
forgeplan/_resources/NAME/ (pyproject.toml maps each directory onto a data-only package
forgeplan._resources.NAME). Each function returns that installed copy when it exists, else the
repository's directory, which is what a source checkout and an editable install (`pip install -e .`)
use. The lookup goes through the forgeplan package's own directory, not through an import of
forgeplan._resources.NAME: setuptools' editable finder cannot import a data-only package mapped from
outside the package tree (pypa/setuptools#4943).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

_PACKAGE = Path(str(files("forgeplan"))).resolve()  # .../forgeplan (site-packages or repo)
_INSTALLED = _PACKAGE / "_resources"
_REPOSITORY = _PACKAGE.parent


def _directory(name: str) -> Path:
    installed = _INSTALLED / name
    return installed if installed.is_dir() else _REPOSITORY / name


def encodings_dir() -> Path:
    """The clingo programs (*.lp) with README.md and SEMANTICS.md."""
    return _directory("encodings")


def domains_dir() -> Path:
    """The lifted PDDL domain (rework.pddl) with its README.md."""
    return _directory("domains")


def grammars_dir() -> Path:
    """The Lark grammar of the output contract (rework_plan.lark)."""
    return _directory("grammars")


def models_dir() -> Path:
    """The training configurations (NAME.toml)."""
    return _directory("models")


def examples_dir() -> Path:
    """The example puzzles shipped inside the package (forgeplan/examples/: MIT-licensed burrs, LICENSE, README.md)."""
    return _PACKAGE / "examples"


def example_names() -> list[str]:
    """Names accepted by `forgeplan import --example` (file stems, sorted)."""
    return sorted(p.stem for p in examples_dir().glob("*.json"))


def example_path(name: str) -> Path:
    """The shipped puzzle file called NAME (with or without `.json`); KeyError if there is none."""
    stem = name.removesuffix(".json")
    if stem not in example_names():
        raise KeyError(name)
    return examples_dir() / f"{stem}.json"

"""Real burr puzzles for the tests.

The MIT-licensed matajoh burrs ship with forgeplan (forgeplan/examples/) and are always there. The
BurrTools-derived puzzles (GPL, each design owned by its designer) are not part of the repository: they
are read from the sibling folder ../shared/data/burr when it exists (CI has it), and the tests that need
them are skipped with `needs_shared` otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forgeplan.io.resources import examples_dir

EXAMPLES = examples_dir()
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "burr"
HAVE_SHARED = SHARED.is_dir()
needs_shared = pytest.mark.skipif(
    not HAVE_SHARED, reason=f"needs the BurrTools-derived puzzles of ../shared/data/burr ({SHARED} is absent; "
                            "they are GPL and not shipped)")


def burr(name: str) -> Path:
    """The puzzle file NAME (`.json` optional): the shipped copy for mj_*, else the one in ../shared/data/burr."""
    stem = name.removesuffix(".json")
    return (EXAMPLES if stem.startswith("mj_") else SHARED) / f"{stem}.json"


def shared_files() -> list[Path]:
    """Every puzzle of ../shared/data/burr (empty when the folder is absent)."""
    return sorted(SHARED.glob("*.json")) if HAVE_SHARED else []


def level1(folder: Path) -> list[str]:
    """Names of the puzzles in `folder` marked level1_disassembly (empty when the folder is absent)."""
    return sorted(p.name for p in Path(folder).glob("*.json")
                  if json.loads(p.read_text(encoding="utf-8")).get("level1_disassembly"))


# every real burr available here: ../shared/data/burr (which holds the mj_ files too) or the shipped examples
FOLDER = SHARED if HAVE_SHARED else EXAMPLES


def param(name: str):
    """A pytest parameter NAME, skipped (needs_shared) unless the puzzle is available here."""
    return pytest.param(name, marks=needs_shared) if not Path(name).name.startswith("mj_") else name

"""The command line starts without the heavy libraries: building the parser imports none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("unified_planning", "clingo", "torch", "transformers", "matplotlib")


def imported_after(code: str) -> list[str]:
    """The HEAVY modules a fresh interpreter holds after running `code`."""
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_building_the_parser_imports_no_heavy_library():
    assert imported_after("from forgeplan.cli import build_parser; build_parser()") == []


def test_the_probe_sees_a_heavy_import():
    assert imported_after("import clingo") == ["clingo"]

"""README.md's "Command line" block runs as written: every line, in order, in an empty folder, except a line
whose comment begins `needs a server` (`infer --endpoint`: tests/test_research_loop.py runs that loop against a
stand-in server); that line is parsed like the others.

The full run takes a few minutes (a 400-task benchmark, a tiny model trained and decoded), so it is marked
slow; a fast test checks that every line parses with forgeplan's own argument parser.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from forgeplan.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


SHOWN_ONLY = "needs a server"


def readme_lines() -> list[tuple[str, str]]:
    """The lines of the first ```bash block after '## Command line': (command, its trailing comment)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Command line"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    split = [re.match(r"(.*?)(?:\s+#\s(.*))?$", line.strip()).groups() for line in block.splitlines()]
    return [(command.strip(), comment or "") for command, comment in split if command.strip()]


COMMANDS = [command for command, _ in readme_lines()]
RUN = [command for command, comment in readme_lines() if not comment.startswith(SHOWN_ONLY)]


def as_python(line: str) -> str:
    """`forgeplan ...` -> `python -m forgeplan ...` (this interpreter, so this checkout's code runs)."""
    return re.sub(r"(^|&&\s*)forgeplan ", lambda m: f"{m.group(1)}{shlex.quote(sys.executable)} -m forgeplan ", line)


def test_the_block_is_there_and_every_line_parses():
    assert len(COMMANDS) >= 20 and all(c.startswith("forgeplan ") for c in COMMANDS)
    shown = [c for c in COMMANDS if c not in RUN]
    assert len(shown) == 1 and shown[0].startswith("forgeplan infer --endpoint ")   # the one line not run
    parser = build_parser()
    for line in COMMANDS:
        for part in line.split("&&"):
            words = shlex.split(part.split(">")[0])
            assert words[0] == "forgeplan", line
            parser.parse_args(words[1:])   # exits 2 on a wrong option, which fails the test


@pytest.mark.slow
def test_every_readme_command_runs_in_order(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    for line in RUN:
        proc = subprocess.run(as_python(line), shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900, executable="/bin/bash")
        assert proc.returncode == 0, f"{line}\nexit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert (tmp_path / "hub.png").stat().st_size > 10_000
    assert (tmp_path / "t1-pddl" / "sas_plan").is_file() and (tmp_path / "report" / "report.md").is_file()
    assert (tmp_path / "p.jsonl").read_text().count("\n") == 4

"""An evaluate run directory for the view tests, made by `forgeplan evaluate --out`."""

from __future__ import annotations

import json
from pathlib import Path

HOSTILE = '</script><img src=x onerror="document.title=\'pwned\'"><!-- \u2028 & <b>bold</b>'


def make_run(d: Path) -> Path:
    """A 20-task benchmark, local-repair predictions (some fail at a step), one of them a hostile raw output
    (HOSTILE before its JSON), scored into d/run."""
    from forgeplan.cli import main

    assert main(["bench", "build", "--out", str(d / "bench"), "--tasks", "20", "--seed", "3", "--quiet",
                 "--assemblies", "bayonet_structure", "luban_lock_3"]) == 0
    assert main(["baseline", "local-repair", "--bench", str(d / "bench"), "--out", str(d / "preds.jsonl")]) == 0
    lines = (d / "preds.jsonl").read_text().splitlines()
    k = next(k for k, line in enumerate(lines) if '"actions": [{' in json.loads(line)["raw_output"])
    hostile = json.loads(lines[k])
    hostile["raw_output"] = HOSTILE + hostile["raw_output"]
    lines[k] = json.dumps(hostile)
    (d / "preds.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["evaluate", "--bench", str(d / "bench"), "--predictions", str(d / "preds.jsonl"), "--extract-json",
                 "--out", str(d / "run")]) == 0
    return d / "run"

"""A finished `forgeplan reference-model --ablation --out DIR` run (FORGE's Table 3 on the CPU reference
model), kept for the docs: its figures (DIR/ablation.json) as the stored result, and with --store the
table beside it (NAME.md, as the run printed it). The training runs in forgeplan; this only reads its folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from forgeplan.model.errors import InputError

NAME = "reference-ablation"


def add_arguments(p) -> None:
    p.add_argument("--run", type=Path, required=True, metavar="DIR",
                   help="a `forgeplan reference-model --ablation --out` folder")


def run(args) -> dict:
    path = args.run / "ablation.json"
    if not path.is_file():
        raise InputError(f"{path}: no ablation.json; expected the --out folder of a finished "
                         "`forgeplan reference-model --ablation` run", field="--run")
    return json.loads(path.read_text(encoding="utf-8"))


def keep(result: dict, folder: Path) -> None:
    from forgeplan.llm.ablation import summary

    (folder / f"{NAME}.md").write_text(summary(result) + "\n", encoding="utf-8")

"""A finished `forgeplan reference-model --out DIR` run, kept for the docs: its figures (DIR/reference.json)
as the stored result, and with --store the table beside it (NAME.md, as the run printed it) and the first
seed's loss curve (NAME-loss-seedN.png). The training runs in forgeplan; this only reads its folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from forgeplan.model.errors import InputError

NAME = "reference-model"


def add_arguments(p) -> None:
    p.add_argument("--run", type=Path, required=True, metavar="DIR", help="a `forgeplan reference-model --out` folder")


def run(args) -> dict:
    path = args.run / "reference.json"
    if not path.is_file():
        raise InputError(f"{path}: no reference.json; expected the --out folder of a finished "
                         "`forgeplan reference-model` run", field="--run")
    return json.loads(path.read_text(encoding="utf-8"))


def keep(result: dict, folder: Path) -> None:
    from forgeplan.llm.reference import summary

    (folder / f"{NAME}.md").write_text(summary(result) + "\n", encoding="utf-8")
    curve = Path(result["loss_curves"][0])
    if curve.is_file():
        shutil.copyfile(curve, folder / f"{NAME}-loss-seed{result['seeds'][0]}.png")

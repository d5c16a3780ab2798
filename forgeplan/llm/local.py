"""Local Hugging Face folders only: forgeplan never downloads a model.

transformers reads a name that is not a folder as a Hub repository id and goes to the network for it;
`model_folder` refuses such a name first, with one line, and `offline` makes the Hugging Face libraries
refuse the network for the rest of the process (their switches are read when they are imported).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..model.errors import InputError

OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def offline() -> None:
    """Switch the Hugging Face libraries to offline mode (before they are imported)."""
    for name in OFFLINE:
        os.environ[name] = "1"


def model_folder(path: Path | str, flag: str = "--model", adapter: bool = False) -> Path:
    """`path` as a local model folder (config.json), or with `adapter` a LoRA adapter folder
    (adapter_config.json) or a full fine-tune's (config.json); InputError naming `flag` otherwise."""
    path = Path(path)
    what = "adapter" if adapter else "model"
    if not path.is_dir():
        raise InputError(f"no such {what} folder: {path} (forgeplan never downloads; pass a local Hugging Face "
                         "folder)", field=flag)
    marks = ("adapter_config.json", "config.json") if adapter else ("config.json",)
    if not any((path / m).is_file() for m in marks):
        raise InputError(f"is not a Hugging Face {what} folder: it has no {' or '.join(marks)}", file=str(path),
                         field=flag)
    return path

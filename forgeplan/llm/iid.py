"""An in-distribution view of a benchmark: train and test tasks from the same assemblies, disjoint ids.

The benchmark's own split holds whole assemblies out (generalisation to unseen geometry). To check that
the training chain learns at all, the reference model is scored on tasks of assemblies it has trained
on: the source train split is divided by a seeded shuffle into `train` and `test`, and the source test
split becomes `heldout`, so both figures come from one folder. The new folder's task files are hard
links to the source's (copies where the file system refuses links): regular files inside the folder, as
the benchmark readers require.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

from ..bench.store import MANIFEST, load_manifest, sample_folder
from ..model.errors import InputError


def iid_split(source: Path, out: Path, test_fraction: float = 0.2, seed: int = 0, heldout_limit: int = 0) -> dict:
    """Write OUT/manifest.json (splits train, test, heldout) and OUT/tasks/ (linked files); returns counts.

    `heldout_limit` keeps a seeded sample of that many source test tasks (0 = all), for quick scoring.
    """
    if not 0 < test_fraction < 1:
        raise InputError(f"must be in (0, 1), got {test_fraction}", field="--test-fraction")
    manifest = load_manifest(source)
    ids = list(manifest["splits"]["train"])
    random.Random(seed).shuffle(ids)
    n_test = max(1, round(test_fraction * len(ids)))
    test = set(ids[:n_test])
    heldout = list(manifest["splits"]["test"])
    if heldout_limit:
        keep = set(random.Random(seed).sample(heldout, min(heldout_limit, len(heldout))))
        heldout = [s for s in heldout if s in keep]
    splits = {"train": [s for s in manifest["splits"]["train"] if s not in test],
              "test": [s for s in manifest["splits"]["train"] if s in test], "heldout": heldout}
    which = {sid: name for name, members in splits.items() for sid in members}
    # a record's split is train or test (the manifest schema): held-out-assembly tasks are test tasks too
    records = [{**r, "split": "train" if which[r["sample_id"]] == "train" else "test"}
               for r in manifest["records"] if r["sample_id"] in which]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    derived = {**manifest, "splits": splits, "records": records,
               "split_mode": {"kind": "iid", "source": str(Path(source).resolve()), "test_fraction": test_fraction,
                              "seed": seed, "heldout_limit": heldout_limit}}
    (out / MANIFEST).write_text(json.dumps(derived, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for sid in which:
        if not (out / "tasks" / sid).is_dir():
            # a symlinked sample folder is refused, a symlink inside one stays a symlink (never followed)
            shutil.copytree(sample_folder(Path(source), sid), out / "tasks" / sid, symlinks=True,
                            copy_function=_link_or_copy)
    return {name: len(members) for name, members in splits.items()}


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)

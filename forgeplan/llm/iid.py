"""An in-distribution view of a benchmark: train and test tasks from the same assemblies, nothing shared.

The benchmark's own split holds whole assemblies out (generalisation to unseen geometry). To check that
the training chain learns at all, the reference model is scored on tasks of assemblies it has trained
on: the source train split is divided into `train` and `test`, and the source test split becomes
`heldout`, so both figures come from one folder.

Different sample ids are not different tasks: a benchmark draws the same fault on the same part more than
once. So the split is made over *leak groups*, never over single tasks: two tasks are in one group when
they have the same assembly and actual state, or (fault tasks) the same answer text up to the sample id;
the groups are the connected components of that relation. A seeded shuffle orders the groups, and a
group goes to `test` while it fits the test share, so no (assembly, actual state) pair and no fault
answer is on both sides (`leaks` counts what is). All no-fault tasks of an assembly share its target
state and so form one group.

The new folder's task files are hard links to the source's (copies where the file system refuses links):
regular files inside the folder, as the benchmark readers require.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

from ..bench.digests import DIGESTS, digest, sums_text
from ..bench.folder import MANIFEST, Bench, open_bench
from ..io.output import new_folder, write_text
from ..model.errors import InputError


def iid_split(source: Path, out: Path, test_fraction: float = 0.2, seed: int = 0, heldout_limit: int = 0) -> dict:
    """Write OUT/manifest.json (splits train, test, heldout) and OUT/tasks/ (linked files); returns counts.

    `heldout_limit` keeps a seeded sample of that many source test tasks (0 = all), for quick scoring.
    """
    if not 0 < test_fraction < 1:
        raise InputError(f"must be in (0, 1), got {test_fraction}", field="--test-fraction")
    bench = open_bench(source)
    manifest = bench.manifest
    groups = leak_groups(bench, list(manifest["splits"]["train"]))
    random.Random(seed).shuffle(groups)
    n_test = max(1, round(test_fraction * sum(map(len, groups))))
    test: set[str] = set()
    for group in groups:
        if len(test) + len(group) <= n_test:
            test.update(group)
    heldout = list(manifest["splits"]["test"])
    if heldout_limit:
        keep = set(random.Random(seed).sample(heldout, min(heldout_limit, len(heldout))))
        heldout = [s for s in heldout if s in keep]
    splits = {"train": [s for s in manifest["splits"]["train"] if s not in test],
              "test": [s for s in manifest["splits"]["train"] if s in test], "heldout": heldout}
    which = {sid: name for name, members in splits.items() for sid in members}
    # a record's split is train or test (the manifest schema): held-out-assembly tasks are test tasks too
    records = [{**r, "split": "train" if which[r["sample_id"]] == "train" else "test"}
               for r in manifest.get("records", []) if r["sample_id"] in which]
    out = Path(out)
    for sid in which:   # each folder whole (built beside and renamed), the manifest last
        if not (out / "tasks" / sid).is_dir():
            with new_folder(out / "tasks" / sid) as folder:
                # a symlinked sample folder is refused, a symlink inside one stays a symlink (never followed)
                shutil.copytree(bench.folder(sid), folder, symlinks=True, copy_function=_link_or_copy,
                                dirs_exist_ok=True)
    derived = {**manifest, "splits": splits, "records": records,
               "split_mode": {"kind": "iid", "source": str(Path(source).resolve()), "test_fraction": test_fraction,
                              "seed": seed, "heldout_limit": heldout_limit, "grouping": "assembly+actual_state, answer",
                              "leak_groups": len(groups)}}
    # the files are the source's: their digests are those its build recorded; the manifest last
    sums = sums_text({p: d for p, d in bench.digests.items() if p.startswith("tasks/") and p.split("/")[1] in which})
    derived["digests"] = {"file": DIGESTS, "sha256": digest(sums.encode("utf-8")), "files": sums.count("\n")}
    for name, text in ((DIGESTS, sums), (MANIFEST, json.dumps(derived, indent=1, sort_keys=True) + "\n")):
        if not (out / name).is_file() or (out / name).read_text(encoding="utf-8") != text:  # a rerun's is unchanged
            write_text(out / name, text)
    return {name: len(members) for name, members in splits.items()}


def leak_keys(bench: Path | Bench, sample_id: str) -> list[str]:
    """What a task must not share with a task on the other side: its assembly and actual state, and for a
    fault task its answer (annotation and plan) with the sample id left out."""
    bench = open_bench(bench)
    actual = bench.raw(sample_id, "actual_state.json")
    keys = ["state " + json.dumps([actual["assembly_id"], actual["slots"]], sort_keys=True)]  # not its sample_id
    if bench.has(sample_id, "reference.json"):
        ref = bench.raw(sample_id, "reference.json")
        annotation = {k: v for k, v in ref["annotation"].items() if k != "sample_id"}
        if not annotation.get("pass", True):
            keys.append("answer " + json.dumps([annotation, ref["rework_plan"]], sort_keys=True))
    return keys


def leak_groups(bench: Path | Bench, ids: list[str]) -> list[list[str]]:
    """The connected components of "shares a leak key", each in `ids` order, ordered by first member."""
    parent = {sid: sid for sid in ids}

    def root(sid: str) -> str:
        while parent[sid] != sid:
            parent[sid] = parent[parent[sid]]
            sid = parent[sid]
        return sid

    owner: dict[str, str] = {}
    for sid in ids:
        for key in leak_keys(bench, sid):
            parent[root(sid)] = root(owner.setdefault(key, sid))
    groups: dict[str, list[str]] = {}
    for sid in ids:
        groups.setdefault(root(sid), []).append(sid)
    return list(groups.values())


def leaks(bench: Path | Bench, train: list[str], test: list[str]) -> list[str]:
    """Test sample ids that share a leak key with a training task (empty for a split made here)."""
    seen = {key for sid in train for key in leak_keys(bench, sid)}
    return [sid for sid in test if any(key in seen for key in leak_keys(bench, sid))]


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)

"""`bench build` with imported assemblies: real level-1 burrs shipped with forgeplan next to built-ins.

The two burrs come apart one part at a time (no group moves), so clingo proves their references in
about 0.1 s each and the whole mixed build takes a few seconds.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
from pathlib import Path

import pytest

from burrdata import EXAMPLES
from forgeplan.bench.composition import split_assemblies
from forgeplan.bench.sources import load_sources
from forgeplan.bench.store import load_manifest
from forgeplan.cli import main
from forgeplan.io.catalog import save_assembly
from forgeplan.io.importers import import_puzzle
from forgeplan.io.task_files import load_task
from forgeplan.verify import verify

DATA = EXAMPLES
BURRS = ("mj_burr6_puzzle2", "mj_burr6_puzzle0")      # level 1, single-part removals
BUILTINS = ["bayonet_structure", "luban_lock_3"]
TASKS = 24


@pytest.fixture(scope="module")
def burr_files(tmp_path_factory) -> dict[str, Path]:
    """The burrs as `forgeplan import` writes them (assembly id -> assembly JSON file)."""
    folder = tmp_path_factory.mktemp("imported")
    out = {}
    for name in BURRS:
        assert main(["import", str(DATA / f"{name}.json"), "--out", str(folder / f"{name}.json")]) == 0
        out[name] = folder / f"{name}.json"
    return out


def build(out: Path, items: list, jobs: int) -> int:
    return main(["bench", "build", "--out", str(out), "--tasks", str(TASKS), "--jobs", str(jobs), "--quiet",
                 "--assemblies", *map(str, items)])


@pytest.fixture(scope="module")
def mixed_bench(tmp_path_factory, burr_files) -> Path:
    out = tmp_path_factory.mktemp("mixed") / "b"
    assert build(out, BUILTINS + list(burr_files.values()), jobs=2) == 0
    return out


def test_imported_assemblies_get_tasks_whose_references_verify(mixed_bench):
    m = load_manifest(mixed_bench)
    assert m["library"] == sorted(BUILTINS + list(BURRS))
    imported = [r for r in m["records"] if r["assembly_id"] in BURRS]
    assert {r["assembly_id"] for r in imported} == set(BURRS) and all(r["family"] == "burr6" for r in imported)
    for r in imported:
        folder = mixed_bench / "tasks" / r["sample_id"]
        task = load_task(folder)
        assert task.assembly.assembly_id == r["assembly_id"] and len(task.assembly.parts) == 6
        ref = json.loads((folder / "reference.json").read_text())
        assert ref["proof"]["optimal"] is True
        verdict = verify(task, json.dumps({k: ref[k] for k in ("annotation", "rework_plan")}))
        assert verdict.valid, (r["sample_id"], verdict.reason)
    assert not set(m["assemblies"]["train"]) & set(m["assemblies"]["test"])


def test_manifest_records_where_every_assembly_came_from(mixed_bench, burr_files):
    sources = load_manifest(mixed_bench)["sources"]
    assert list(sources) == sorted(sources)
    for name, path in burr_files.items():
        assert sources[name] == {"assembly_id": name, "family": "burr6", "origin": "file", "path": str(path),
                                 "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    for name in BUILTINS:
        assert sources[name]["origin"] == "built-in" and "path" not in sources[name]


def test_stats_and_export_include_the_imported_tasks(mixed_bench, tmp_path, capsys):
    assert main(["bench", "stats", str(mixed_bench), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    counted = {a for split in table["assembly_id"].values() for a in split}
    assert set(BURRS) <= counted and table["sources"][BURRS[0]]["origin"] == "file"
    assert main(["bench", "stats", str(mixed_bench)]) == 0
    assert "imported assembly" in capsys.readouterr().out
    assert main(["bench", "export", str(mixed_bench), "--out", str(tmp_path)]) == 0
    rows = [json.loads(line) for split in ("train", "test") for line in (tmp_path / f"{split}.jsonl").open()]
    assert len(rows) == TASKS and any(r["sample_id"].startswith(BURRS[1]) for r in rows)


@pytest.mark.slow
def test_same_bytes_whatever_the_jobs_and_the_order_of_assemblies(mixed_bench, burr_files, tmp_path):
    other = tmp_path / "b1"
    assert build(other, list(burr_files.values())[::-1] + BUILTINS[::-1], jobs=1) == 0
    cmp = filecmp.dircmp(mixed_bench, other)
    assert not cmp.left_only and not cmp.right_only and not cmp.diff_files
    files = sorted(p.relative_to(mixed_bench) for p in mixed_bench.rglob("*.json"))
    assert files == sorted(p.relative_to(other) for p in other.rglob("*.json"))
    assert all((mixed_bench / p).read_bytes() == (other / p).read_bytes() for p in files)


def test_split_groups_imports_by_the_family_in_their_file(burr_files, tmp_path):
    items = ["luban_lock_3", "luban_lock_3_offset", "burr_6_key", "burr_6_split", str(burr_files[BURRS[0]])]
    families = {a: s.assembly.family for a, s in load_sources(items).items()}
    train, test = split_assemblies(families, 42)
    assert families[BURRS[0]] == "burr6" and {families[a] for a in test} <= {families[a] for a in train}
    assert (train, test) == split_assemblies(dict(reversed(families.items())), 42)
    renamed = tmp_path / "renamed.json"
    renamed.write_text(burr_files[BURRS[0]].read_text().replace('"family": "burr6"', '"family": "other_burr"'))
    families = {a: s.assembly.family for a, s in load_sources(items[:-1] + [str(renamed)]).items()}
    assert split_assemblies(families, 42)[1] == [BURRS[0]]     # a family of its own: held out, unseen


# ----------------------------------------------------------------------------- bad input: exit 2, one line

def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def folder(path: Path) -> Path:
    path.mkdir()
    return path


def edited(path: Path, **changes) -> dict:
    return json.loads(path.read_text()) | changes


def without(path: Path, key: str) -> dict:
    return {k: v for k, v in json.loads(path.read_text()).items() if k != key}


L = "luban_lock_3"
# case -> (the --assemblies items, from the tmp folder f, one imported burr b and both burrs bb; the error)
BAD = {
    "missing file": (lambda f, b, bb: [L, f / "nope.json"], "nope.json: --assemblies: no such assembly file"),
    "folder": (lambda f, b, bb: [L, folder(f / "sub")], ": --assemblies: no such assembly file"),   # not around --out
    "malformed JSON": (lambda f, b, bb: [L, write(f, "bad.json", '{"parts": [')], "bad.json: malformed JSON"),
    "puzzle, not imported": (lambda f, b, bb: [L, DATA / f"{BURRS[0]}.json"],
                             f"{BURRS[0]}.json: parts: a puzzle file, not an assembly file"),
    "missing field": (lambda f, b, bb: [L, write(f, "nofam.json", without(b, "family"))],
                      "nofam.json: family: Field required"),
    "unsafe id": (lambda f, b, bb: [L, write(f, "up.json", edited(b, assembly_id="../up"))],
                  "up.json: assembly_id: '../up'"),
    "empty family": (lambda f, b, bb: [L, write(f, "fam.json", edited(b, family=""))],
                     "fam.json: family: must not be empty"),
    "same file twice": (lambda f, b, bb: [L, b, b],
                        f"{BURRS[0]}.json: assembly_id: assembly id '{BURRS[0]}' is given twice"),
    "id of a built-in": (lambda f, b, bb: [L, write(f, "lock.json", edited(b, assembly_id=L))],
                         f"lock.json: assembly_id: assembly id '{L}' is given twice"),
    "built-in twice": (lambda f, b, bb: [L, L, b], f"--assemblies: assembly id '{L}' is given twice"),
    "one assembly": (lambda f, b, bb: [b], "--assemblies: need two or more assemblies of two or more families"),
    "one family": (lambda f, b, bb: bb, f"have {min(BURRS)} (burr6), {max(BURRS)} (burr6)"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_assemblies_exit_2_naming_file_and_field(case, burr_files, tmp_path, capsys):
    items, message = BAD[case]
    assert build(tmp_path / "out", items(tmp_path, burr_files[BURRS[0]], list(burr_files.values())), jobs=1) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def test_an_interlocked_import_is_refused_before_anything_is_built(tmp_path, capsys):
    """mj_burr6_puzzle3 is level 6: no straight move separates its sticks."""
    path = tmp_path / "level6.json"
    save_assembly(import_puzzle(DATA / "mj_burr6_puzzle3.json"), path)
    assert build(tmp_path / "out", ["luban_lock_3", path], jobs=1) == 2
    err = capsys.readouterr().err
    assert f"{path}: parts: not disassemblable with straight moves" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()

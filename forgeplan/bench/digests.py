"""The digests of a benchmark's files: SHA256SUMS, named and digested by manifest.json.

A build ends by sealing its folder: the SHA-256 of every file a reader may read (the task folders'
files, README.md, tasks.jsonl) goes into SHA256SUMS, one `HEX  PATH` line per file in path order (the
format `sha256sum -c` reads), and the manifest, written last, records that file's own digest. A reader
checks each file it reads against its line, so a file changed after the build is refused by name. The
text is a function of the files alone: reruns, `--jobs`, shards and `bench merge` write it byte for byte.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..io.guarded import decode, read_bytes
from ..io.output import write_json, write_text
from ..model.errors import InputError
from ..model.names import sample_id_problem

DIGESTS = "SHA256SUMS"
CARD_FILES = ("README.md", "tasks.jsonl")   # the top-level files a build writes besides the manifest
_LINE = re.compile(r"([0-9a-f]{64})  (\S+)")
_FILE_NAME = re.compile(r"[a-z_]+\.(json|jsonl|md)")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def path_problem(rel: str) -> str | None:
    """Why `rel` is not the path of a benchmark file (README.md, tasks.jsonl, tasks/<sample_id>/<name>)."""
    parts = rel.split("/")
    if len(parts) == 1:
        return None if rel in CARD_FILES else f"{rel[:80]!r} is not a file of a benchmark"
    if len(parts) != 3 or parts[0] != "tasks" or sample_id_problem(parts[1]) or not _FILE_NAME.fullmatch(parts[2]):
        return f"{rel[:80]!r} is not tasks/<sample_id>/<file>.json"
    return None


def sums_text(digests: dict[str, str]) -> str:
    return "".join(f"{digests[p]}  {p}\n" for p in sorted(digests))


def parse_sums(data: bytes, file: str) -> dict[str, str]:
    """SHA256SUMS -> {path: hex digest}; every line `HEX  PATH` with a benchmark path, each path once."""
    out: dict[str, str] = {}
    for n, line in enumerate(decode(data, file, "digest file").splitlines(), 1):
        m = _LINE.fullmatch(line)
        if m is None:
            raise InputError("expected '<64 hex digits>  <path>'", file=file, field=f"line {n}")
        why = path_problem(m.group(2))
        if why is None and m.group(2) in out:
            why = f"names {m.group(2)!r} twice"
        if why is not None:
            raise InputError(why, file=file, field=f"line {n}")
        out[m.group(2)] = m.group(1)
    return out


def sample_files(root: Path, sample_id: str) -> list[str]:
    """The paths (relative to `root`) of the files of one task folder, sorted; the folder holds regular files only."""
    folder = Path(root) / "tasks" / sample_id
    names = []
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink() or not entry.is_file():
            raise InputError("is not a regular file (a symlink, folder or device)", file=str(entry))
        names.append(f"tasks/{sample_id}/{entry.name}")
    return names


def file_digests(root: Path, paths: list[str]) -> dict[str, str]:
    """{path: digest} of files inside `root`, read through the guarded reader."""
    return {p: digest(read_bytes(Path(root) / p, "bench file", root=Path(root))) for p in paths}


def seal(root: Path, sample_ids: list[str], card: dict[str, str] | None = None,
         known: dict[str, dict[str, str]] | None = None) -> dict:
    """Write ROOT/SHA256SUMS over the card files (`card`: their texts, when they are being written; else
    those on disk) and every file of the given task folders (`known`: sample id -> {file name: digest} of
    the folders this process wrote, the rest read); returns the manifest's `digests` entry (the file's
    name, its own digest and how many files it covers)."""
    root = Path(root)
    written = {n: digest(t.encode("utf-8")) for n, t in (card or {}).items()}
    known = known or {}
    written |= {f"tasks/{sid}/{name}": d for sid in sample_ids for name, d in known.get(sid, {}).items()}
    paths = [n for n in CARD_FILES if n not in written and (root / n).is_file()]
    paths += [p for sid in sample_ids if sid not in known for p in sample_files(root, sid)]
    digests = file_digests(root, paths) | written
    text = sums_text(digests)
    write_text(root / DIGESTS, text)
    return {"file": DIGESTS, "sha256": digest(text.encode("utf-8")), "files": len(digests)}


def seal_folder(root: Path, manifest: dict) -> dict:
    """Seal a benchmark folder made outside `bench build` (a derived or hand-made one): SHA256SUMS over the
    card files and the task folders of every split, then manifest.json with its `digests`; returns it."""
    ids = [sid for split in manifest["splits"].values() for sid in split]
    manifest = {**manifest, "digests": seal(root, ids)}
    write_json(Path(root) / "manifest.json", manifest)
    return manifest


def read_sums(root: Path, entry: dict, manifest_file: str) -> dict[str, str]:
    """The digests of a sealed benchmark: SHA256SUMS, checked against the manifest's `digests` entry."""
    path = Path(root) / entry["file"]
    data = read_bytes(path, "digest file", root=Path(root))
    if digest(data) != entry["sha256"]:
        raise InputError(f"changed since the build (its digest is not the one {manifest_file} records); rebuild, "
                         f"or run `forgeplan bench check {root}`", file=str(path))
    sums = parse_sums(data, str(path))
    if len(sums) != entry["files"]:
        raise InputError(f"lists {len(sums)} files, the manifest {entry['files']}", file=str(path))
    return sums

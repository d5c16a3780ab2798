"""The one writer of every command's output: never over an input, never half a file.

* A place to write is refused, before any work, when it cannot take a file or folder (a FIFO, a device,
  a socket, no write permission: `check_output`), when it is a symbolic link, and when it is an input of
  the running command: the same file, or inside a folder the command reads (a benchmark, a task folder),
  also when a symlink in its parent path leads there. The command line states the inputs once
  (`protect`); every write below checks against them.
* A file is written to a temporary file in the same folder, flushed to disk and renamed over the target
  (`write_file`, `write_text`, `write_json`): a crash, a full disk or an interrupt leaves the previous
  file or nothing, never a truncated file.
* The files of one output folder (`staged`) are all written to temporary files first and renamed into
  place together at the end, so a failure leaves the folder's previous files, never a mix of new complete
  files and missing or truncated ones; a folder written by a library that takes a folder name
  (`new_folder`) is built beside its target and renamed into place.
* A full disk, an exceeded quota or a read-only file system is one `OutputError` naming the file (exit 2).
"""

from __future__ import annotations

import argparse
import errno
import functools
import json
import os
import re
import shutil
import stat
import tempfile
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path, PosixPath
from typing import IO, Callable, Iterator

from ..model.errors import InputError

# the write errors the environment causes, by what a person should be told
FULL = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded", errno.EROFS: "read-only file system",
        errno.EFBIG: "file too large for the file system"}
TEMP_SUFFIX = ".forgeplan-part"   # the temporary files beside a target (a killed process may leave one)


class OutputError(InputError):
    """Writing an output failed for a reason of the environment (a full disk, a quota, a read-only file
    system) or was refused (an input, a symlink); exit 2 like bad input."""


class OutPath(PosixPath):
    """A path given to an output option (`output_path`): the command line tells outputs from inputs by it."""


def output_path(text: str) -> Path:
    """The argparse type of every option that names a file or folder to write (`--out`, `--report`, `--store`)."""
    if not text:
        raise argparse.ArgumentTypeError("expected a file or folder name to write, got an empty string")
    return OutPath(text)


def environment_fault(exc: OSError, path) -> OutputError | None:
    """The one-line error of a write that the environment made fail, or None for any other OSError."""
    what = FULL.get(exc.errno or 0)
    return None if what is None else OutputError(f"{what} while writing {path}")


# ----------------------------------------------------------------------------- the command's inputs

def _real(path) -> str:
    """The path with every symlink of its folders resolved, the last component kept as it is (a rename
    replaces a link, it does not write through it)."""
    path = Path(path)
    return os.path.join(os.path.realpath(path.parent), path.name)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Inputs:
    """The files and folders a command reads; `allow`: places inside them that the command writes by
    design (`bench export`'s DIR/export, `plan-external`'s DIR/sas_plan)."""

    files: frozenset[str] = frozenset()
    inodes: frozenset[tuple[int, int]] = frozenset()
    folders: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()

    @classmethod
    def of(cls, paths, allow_names=()) -> "Inputs":
        """The existing ones of `paths`; `allow_names`: names inside each input folder that may be written."""
        files, inodes, folders = set(), set(), []
        for p in paths:
            try:
                info = os.stat(p)
            except (OSError, ValueError):
                continue
            if stat.S_ISDIR(info.st_mode):
                folders.append(os.path.realpath(p))
            else:
                files.add(os.path.realpath(p))
                inodes.add((info.st_dev, info.st_ino))
        allow = tuple(os.path.join(f, n) for f in folders for n in allow_names)
        return cls(frozenset(files), frozenset(inodes), tuple(folders), allow)

    def problem(self, target) -> str | None:
        """Why writing `target` would touch an input, or None."""
        real = _real(target)
        if real in self.files or os.path.realpath(target) in self.files:
            return "is an input of this command; refusing to overwrite it"
        try:
            info = os.stat(target)
        except OSError:
            info = None
        if info is not None and (info.st_dev, info.st_ino) in self.inodes:
            return "is an input of this command (the same file under another name); refusing to overwrite it"
        for folder in self.folders:
            if _within(real, folder) and not any(_within(real, a) for a in self.allow):
                return f"lies inside {folder!r}, which this command reads; write somewhere else"
        return None


PROTECTED: ContextVar[Inputs] = ContextVar("forgeplan_protected_inputs", default=Inputs())


@contextmanager
def protect(inputs: Inputs) -> Iterator[None]:
    """Every write inside this block is checked against `inputs` (the command line states a command's inputs)."""
    token = PROTECTED.set(inputs)
    try:
        yield
    finally:
        PROTECTED.reset(token)


def check_target(path, flag: str = "--out") -> Path:
    """Refuse a symbolic link and an input of the running command as a place to write."""
    path = Path(path)
    if path.is_symlink():
        raise OutputError("is a symbolic link; forgeplan writes to a plain file or folder name, never through a link",
                          file=str(path), field=flag)
    why = PROTECTED.get().problem(path)
    if why is not None:
        raise OutputError(why, file=str(path), field=flag)
    return path


# ----------------------------------------------------------------------------- places

def check_output(path, flag: str = "--out") -> Path:
    """Refuse, before anything runs, an output place that cannot take a file or folder: a FIFO (opening
    it would wait for a reader), a device (`/dev/full`, `/dev/null`), a socket, an existing file or folder
    without write permission, or a new name under a folder that cannot be written; and a symbolic link or
    an input (`check_target`). Whether a file or a folder is wanted, and whether it may exist, is the
    command's own check."""
    return _check_place(check_target(path, flag), flag)


def _check_place(path: Path, flag: str) -> Path:
    """`check_output` without the symlink and input checks (for the folder that holds an output)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise InputError(f"cannot use this output place: {exc.strerror or exc}", file=str(path), field=flag) from None
    if info is not None:
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            raise InputError("is not a regular file or folder (a FIFO, device or socket); expected a file or "
                             "folder to write", file=str(path), field=flag)
        if not os.access(path, os.W_OK | (os.X_OK if stat.S_ISDIR(info.st_mode) else 0)):
            raise InputError("is not writable", file=str(path), field=flag)
        return path
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"cannot be created: {str(parent)!r} is not a folder", file=str(path), field=flag)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"cannot be created: the folder {str(parent)!r} is not writable", file=str(path), field=flag)
    return path


def output_folder(path, flag: str = "--out", create: bool = True, holder: bool = False) -> Path:
    """The folder to write into, created if needed; a one-line error when it cannot be (a file is
    in the way, no permission). `create=False` checks only what can be checked without creating;
    `holder`: the folder only holds the output (it may be a link, or an input folder)."""
    path = Path(path)
    _check_place(path, flag) if holder else check_output(path, flag)
    if path.exists() and not path.is_dir():
        raise InputError("exists and is not a folder", file=str(path), field=flag)
    if not create:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fault(exc, path) or InputError(f"cannot create the folder: {exc.strerror or exc}", file=str(path),
                                              field=flag) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError("the folder is not writable", file=str(path), field=flag)
    return path


def _fault(exc: BaseException, path) -> OutputError | None:
    """The one-line error of a write the environment made fail: an OSError, or a library's own exception
    that names the system's error number (the Rust of `tokenizers` and `safetensors`: '... (os error 28)')."""
    if isinstance(exc, OSError):
        return environment_fault(exc, path)
    found = OS_ERROR.search(str(exc)) if isinstance(exc, Exception) else None
    return None if found is None else environment_fault(OSError(int(found.group(1)), str(exc)), path)


OS_ERROR = re.compile(r"\(os error (\d+)\)")


def _created_folders(folder: Path) -> list[Path]:
    """The folders that `mkdir(parents=True)` of `folder` would create, innermost first."""
    out = []
    while not folder.exists() and folder != folder.parent:
        out.append(folder)
        folder = folder.parent
    return out


def _remove_empty(folders: list[Path]) -> None:
    for f in folders:
        try:
            f.rmdir()
        except OSError:
            return


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _temp(folder: Path, name: str) -> tuple[int, str]:
    """A new temporary file beside `folder/name`, with the permissions a new file there would get."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name[:80]}.", suffix=TEMP_SUFFIX, dir=folder)
    os.fchmod(fd, 0o666 & ~_umask())
    return fd, tmp


# ----------------------------------------------------------------------------- commits

class Commit:
    """Complete temporary files waiting to be renamed over their targets, and the folders made for them."""

    def __init__(self) -> None:
        self.moves: list[tuple[str, Path]] = []
        self.created: list[Path] = []
        self.leftovers: list[Path] = []   # temporary folders emptied by the moves

    def absorb(self, other: "Commit") -> None:
        self.moves += other.moves
        self.created = other.created + self.created
        self.leftovers += other.leftovers
        other.moves, other.created, other.leftovers = [], [], []

    def run(self) -> None:
        """Rename every file into place (renames do not take space, so a full disk cannot stop them half-way)."""
        folders = sorted({t.absolute().parent for _, t in self.moves})
        while self.moves:
            tmp, target = self.moves.pop(0)
            try:
                os.replace(tmp, target)
            except OSError as exc:
                self.moves.insert(0, (tmp, target))
                self.undo()
                raise _fault(exc, target) or OutputError(f"cannot write: {exc.strerror or exc}", file=str(target)) from None
        for folder in folders:
            _sync_folder(folder)
        self._drop_leftovers()

    def _drop_leftovers(self) -> None:
        for folder in self.leftovers:
            shutil.rmtree(folder, ignore_errors=True)
        self.leftovers = []

    def undo(self) -> None:
        for tmp, _ in self.moves:
            if os.path.isdir(tmp) and not os.path.islink(tmp):
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            try:
                os.unlink(tmp)
            except OSError:
                pass
        self.moves = []
        self._drop_leftovers()
        _remove_empty(self.created)


TOGETHER: ContextVar[Commit | None] = ContextVar("forgeplan_pending_outputs", default=None)


@contextmanager
def together() -> Iterator[None]:
    """Every file written in this block appears when the block ends without error, all of them at once;
    on any error none of them (a command with several outputs: a predictions file and a report)."""
    commit = Commit()
    token = TOGETHER.set(commit)
    try:
        yield
    except BaseException:
        commit.undo()
        raise
    finally:
        TOGETHER.reset(token)
    commit.run()


@contextmanager
def _committing(created: list[Path]) -> Iterator[Commit]:
    """A commit for one write: run when the block ends (or handed to an enclosing `together`), undone on error."""
    commit = Commit()
    commit.created = created
    try:
        yield commit
    except BaseException as exc:
        target = commit.moves[0][1] if commit.moves else "the output"
        commit.undo()
        fault = _fault(exc, target)
        if fault is not None:
            raise fault from None
        raise
    outer = TOGETHER.get()
    if outer is not None:
        outer.absorb(commit)
    else:
        commit.run()


# ----------------------------------------------------------------------------- files

@contextmanager
def _temp_file(target: Path, mode: str, sync: bool) -> Iterator[tuple[IO, str]]:
    """A file object on a new temporary file beside `target`, flushed (and synced) when the block ends;
    removed again if the block fails, whose OSError of a full disk becomes an OutputError naming `target`."""
    fd, tmp = _temp(target.parent, target.name)
    try:
        fh: IO = os.fdopen(fd, mode) if "b" in mode else os.fdopen(fd, mode, encoding="utf-8", newline="")
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    try:
        with fh:
            yield fh, tmp
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fault = _fault(exc, target)
        if fault is not None:
            raise fault from None
        raise


@contextmanager
def write_file(path, mode: str = "w", flag: str = "--out", sync: bool = True) -> Iterator[IO]:
    """A file object whose content replaces `path` when the block ends without error (`mode` "w" text
    UTF-8, "wb" bytes). On any error the previous file stays as it was (and a folder created for it goes)."""
    path = check_output(Path(path), flag)
    if path.is_dir():
        raise InputError("is a folder, expected a file name", file=str(path), field=flag)
    with _committing(_created_folders(path.absolute().parent)) as commit:
        output_folder(path.parent, flag, holder=True)
        with _temp_file(path, mode, sync) as (fh, tmp):
            yield fh
        commit.moves.append((tmp, path))


def write_text(path, text: str, flag: str = "--out") -> Path:
    with write_file(path, "w", flag) as fh:
        fh.write(text)
    return Path(path)


def write_bytes(path, data: bytes, flag: str = "--out") -> Path:
    with write_file(path, "wb", flag) as fh:
        fh.write(data)
    return Path(path)


def json_text(data) -> str:
    """A JSON file's text as forgeplan writes it (indent 1, UTF-8 kept, final newline)."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def write_json(path, data, flag: str = "--out") -> Path:
    return write_text(path, json_text(data), flag)


# ----------------------------------------------------------------------------- folders

class Staged:
    """The files of one output folder, each written to a temporary file beside its target and renamed
    into place only when every one is complete (`staged`)."""

    def __init__(self, root: Path, flag: str, commit: Commit):
        self.root, self.flag, self._commit = root, flag, commit

    def path(self, name: str) -> Path:
        return self.root / name

    @contextmanager
    def open(self, name: str, mode: str = "w") -> Iterator[IO]:
        """A file object for ROOT/name (subfolders are created), renamed into place with the others."""
        target = check_target(self.root / name, self.flag)
        if target.is_dir():
            raise OutputError("is a folder, expected a file name", file=str(target), field=self.flag)
        self._commit.created[:0] = _created_folders(target.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        with _temp_file(target, mode, sync=True) as (fh, tmp):
            yield fh
        self._commit.moves.append((tmp, target))

    def write_text(self, name: str, text: str) -> Path:
        with self.open(name) as fh:
            fh.write(text)
        return self.root / name

    def write_bytes(self, name: str, data: bytes) -> Path:
        with self.open(name, "wb") as fh:
            fh.write(data)
        return self.root / name

    def write_json(self, name: str, data) -> Path:
        return self.write_text(name, json_text(data))


@contextmanager
def staged(path, flag: str = "--out") -> Iterator[Staged]:
    """Write the files of the output folder `path` (created if needed) through the yielded `Staged`; they
    replace their earlier versions together when the block ends without error. On any error the folder
    keeps its earlier files (and a folder created for the block goes again)."""
    path = Path(path)
    with _committing(_created_folders(path.absolute())) as commit:
        output_folder(path, flag)
        yield Staged(path, flag, commit)


def staging(fn: Callable) -> Callable:
    """Let `fn(data, out, ...)`, which writes an output folder through the `Staged` `out`, also take the
    folder's path as `out`: its files are then staged for that one call."""
    @functools.wraps(fn)
    def call(data, out, *args, **kwargs):
        if isinstance(out, Staged):
            return fn(data, out, *args, **kwargs)
        with staged(out) as folder:
            return fn(data, folder, *args, **kwargs)
    return call


@contextmanager
def new_folder(path, flag: str = "--out", merge: bool = False) -> Iterator[Path]:
    """A temporary folder beside `path` for a writer that takes a folder name (save_pretrained), renamed to
    `path` when the block ends without error; `path` must not exist or be an empty folder. `merge`: `path`
    may hold other files (a training run's checkpoints); the new files replace their namesakes there, together."""
    path = check_output(Path(path), flag)
    if path.exists() and (not path.is_dir() or (any(path.iterdir()) and not merge)):
        raise OutputError("exists and is not an empty folder", file=str(path), field=flag)
    with _committing(_created_folders(path.absolute().parent)) as commit:
        output_folder(path.parent, flag, holder=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name[:80]}.", suffix=TEMP_SUFFIX, dir=path.parent))
        commit.moves.append((str(tmp), path))
        os.chmod(tmp, 0o777 & ~_umask())
        yield tmp
        os.sync()   # every file of the folder on disk before a rename publishes it
        if path.is_dir() and any(path.iterdir()):
            _merge_moves(commit, tmp, path, flag)


def _merge_moves(commit: Commit, tmp: Path, path: Path, flag: str) -> None:
    """Instead of renaming `tmp` to `path`: each of its files renamed onto its namesake in `path` (folders
    made as needed), `tmp` removed afterwards."""
    commit.moves = [m for m in commit.moves if m[0] != str(tmp)]
    commit.leftovers.append(tmp)
    for file in sorted(p for p in tmp.rglob("*") if not p.is_dir()):
        target = check_target(path / file.relative_to(tmp), flag)
        commit.created[:0] = _created_folders(target.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        commit.moves.append((str(file), target))

"""Faults of the environment, not of forgeplan: closed standard input or output, standard output on a full
device, an output encoding that cannot hold an id, a camera angle that is not a number, a plan file that is
a folder. Each is one line and exit 2, or escaped output; never exit 3 (docs/limits.md, "Environment")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab.fuzzing import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def task(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("env") / "t"
    assert run_cli(["task", "make", "luban_lock_3", "--out", folder, "--fault", "missing_part"]).code == 0
    return folder


@pytest.fixture(scope="module")
def foreign_task(task) -> Path:
    """The task with a part whose id is not ASCII."""
    folder = task.parent / "foreign"
    shutil.copytree(task, folder)
    for file in folder.glob("*.json"):
        file.write_text(file.read_text(encoding="utf-8").replace("LubanLock3_Part02_Bar", "Bär_零"), encoding="utf-8")
    return folder


def _forgeplan(argv: list, close: int | None = None, env: dict | None = None, **streams) -> subprocess.CompletedProcess:
    """`forgeplan ARGV` in a process of its own, with file descriptor `close` closed."""
    streams.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "forgeplan", *map(str, argv)],
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, stderr=subprocess.PIPE,
                          preexec_fn=None if close is None else (lambda: os.close(close)), timeout=120, **streams)


def _one_line(done: subprocess.CompletedProcess, says: str) -> None:
    err = done.stderr.decode()
    assert done.returncode == 2 and err.count("\n") == 1 and err.startswith("forgeplan: error:"), (done.returncode, err)
    assert says in err, err


def test_closed_standard_input(task):
    done = _forgeplan(["verify", task, "-"], close=0, stdin=subprocess.DEVNULL)
    _one_line(done, "<stdin>: standard input is closed")


def test_standard_output_on_a_full_device(task):
    with open("/dev/full", "wb") as full:
        done = _forgeplan(["closure", task], stdout=full)
    _one_line(done, "disk full while writing standard output")


def test_a_reader_that_stopped_reading(task):
    proc = subprocess.Popen([sys.executable, "-m", "forgeplan", "facts", str(task)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    proc.stdout.close()   # before the command writes anything
    _, err = proc.communicate(timeout=120)
    _one_line(subprocess.CompletedProcess(proc.args, proc.returncode, None, err), "output closed (broken pipe)")


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["closure"], ["solve", "--json"]], ids=["closure", "solve --json"])
def test_closed_standard_output(task, argv):
    done = _forgeplan([argv[0], task, *argv[1:]], close=1, stdout=subprocess.DEVNULL)
    _one_line(done, "standard output: closed")


@pytest.mark.slow
def test_an_encoding_that_cannot_hold_an_id_gets_escapes(foreign_task):
    done = _forgeplan(["closure", foreign_task], env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and done.stdout.decode("ascii").splitlines()[0] == r"B\xe4r_\u96f6", done.stderr
    done = _forgeplan(["solve", foreign_task, "--json"], env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and r'"B\u00e4r_\u96f6"' in done.stdout.decode("ascii"), done.stderr


def test_camera_angles_must_be_finite_numbers(tmp_path):
    for flag in ("--elev", "--azim"):
        for value in ("nan", "inf", "-inf", "1e400", "1e7"):
            o = run_cli(["show", "luban_lock_3", "--out", tmp_path / "a.png", f"{flag}={value}"])
            assert o.code == 2 and flag in o.err and "finite number of degrees" in o.err, o.err
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_a_plan_file_that_is_a_folder(task, tmp_path):
    export = tmp_path / "pddl"
    assert run_cli(["export-pddl", task, "--out", export]).code == 0
    (export / "sas_plan").mkdir()
    o = run_cli(["plan-external", export])
    assert o.code == 2 and "sas_plan: is a folder" in o.err, o.err
    o = run_cli(["import-plan", task, export / "sas_plan"])
    assert o.code == 2 and "sas_plan: plan file is not a regular file" in o.err, o.err


def _no_file_may_grow() -> None:
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


@pytest.mark.slow
def test_no_folder_for_temporary_files(task, tmp_path):
    """Every candidate of TMPDIR refused (here: no file may grow) is one line, exit 2, and DIR unchanged."""
    export = tmp_path / "pddl"
    assert run_cli(["export-pddl", task, "--out", export]).code == 0
    before = sorted(export.iterdir())
    done = subprocess.run([sys.executable, "-m", "forgeplan", "plan-external", str(export)], capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_no_file_may_grow, timeout=120)
    _one_line(done, "no folder for temporary files can be written")
    assert sorted(export.iterdir()) == before

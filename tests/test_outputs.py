"""The one writer (forgeplan.io.output): no output over an input, through a link or at an empty name, and
on a full disk the previous file or nothing, with one line and exit 2.

The full disk is a small tmpfs where the machine lets the tests mount one (root, as CI runs), else a
file-size limit (RLIMIT_FSIZE) that makes the kernel refuse the same writes (EFBIG instead of ENOSPC)."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from lab.fuzzing import judge, run_cli
from forgeplan.io import output
from forgeplan.model.errors import InputError


def _one_line_error(o, code=2) -> str:
    last = o.err.rstrip("\n").split("\r")[-1].split("\n")[-1]
    assert o.code == code and judge(type(o)(o.code, o.out, last + "\n")) is None, (o.code, o.err[-600:])
    assert o.err.count(": error:") == 1, o.err[-600:]
    return last


def _files(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` by its relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- the writer itself

def test_a_file_is_replaced_whole_or_not_at_all(tmp_path):
    target = tmp_path / "out.json"
    output.write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    with pytest.raises(RuntimeError):
        with output.write_file(target) as fh:
            fh.write('{"a": 2, "half')
            raise RuntimeError("stopped half-way")
    assert json.loads(target.read_text()) == {"a": 1} and os.listdir(tmp_path) == ["out.json"]
    output.write_text(target, "new\n")
    assert target.read_text() == "new\n" and os.stat(target).st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_staged_folder_changes_only_when_every_file_is_complete(tmp_path):
    out = tmp_path / "report"
    with output.staged(out) as folder:
        folder.write_text("a.txt", "a1")
        folder.write_json("sub/b.json", [1])
    assert _files(out) == {"a.txt": b"a1", "sub/b.json": b"[\n 1\n]\n"}
    with pytest.raises(KeyboardInterrupt):
        with output.staged(out) as folder:
            folder.write_text("a.txt", "a2")
            folder.write_text("c.txt", "c2")
            raise KeyboardInterrupt
    assert _files(out) == {"a.txt": b"a1", "sub/b.json": b"[\n 1\n]\n"}
    with pytest.raises(ValueError):
        with output.staged(tmp_path / "new" / "deeper") as folder:
            folder.write_text("x/y.txt", "y")
            raise ValueError
    assert not (tmp_path / "new").exists()


def test_a_new_folder_appears_whole(tmp_path):
    with pytest.raises(ValueError):
        with output.new_folder(tmp_path / "model") as tmp:
            (tmp / "weights").write_bytes(b"w" * 100)
            raise ValueError
    assert os.listdir(tmp_path) == []
    with output.new_folder(tmp_path / "model") as tmp:
        (tmp / "weights").write_bytes(b"w")
    assert _files(tmp_path) == {"model/weights": b"w"}
    with pytest.raises(InputError, match="not an empty folder"):
        with output.new_folder(tmp_path / "model"):
            pass


def test_inputs_are_protected_by_path_by_link_and_by_inode(tmp_path):
    bench = tmp_path / "bench"
    (bench / "tasks").mkdir(parents=True)
    (bench / "manifest.json").write_text("{}")
    preds = tmp_path / "preds.jsonl"
    preds.write_text("")
    (tmp_path / "hard.jsonl").hardlink_to(preds)
    (tmp_path / "via").symlink_to(bench)
    inputs = output.Inputs.of([bench, preds, tmp_path / "missing"], allow_names=("export",))
    assert inputs.problem(bench / "manifest.json") and inputs.problem(bench / "new.json")
    assert inputs.problem(tmp_path / "via" / "tasks" / "x.json")
    assert inputs.problem(preds) and inputs.problem(tmp_path / "hard.jsonl")
    assert inputs.problem(bench / "export" / "train.jsonl") is None and inputs.problem(tmp_path / "other") is None
    with output.protect(inputs):
        with pytest.raises(output.OutputError, match="which this command reads"):
            output.write_text(bench / "manifest.json", "x")
    assert (bench / "manifest.json").read_text() == "{}"


def test_write_errors_of_the_environment_are_named():
    exc = output.environment_fault(OSError(errno.ENOSPC, "No space left on device"), "a/b.json")
    assert str(exc) == "disk full while writing a/b.json"
    assert output.environment_fault(OSError(errno.EACCES, "Permission denied"), "x") is None


def test_a_library_that_names_the_error_number_is_understood(tmp_path):
    """tokenizers and safetensors (Rust) raise a plain Exception '... (os error 28)' on a full disk."""
    with pytest.raises(InputError, match="disk full while writing .*tok"):
        with output.new_folder(tmp_path / "tok"):
            raise Exception("No space left on device (os error 28)")
    assert not list(tmp_path.iterdir())
    with pytest.raises(Exception, match="os error 13"):
        with output.new_folder(tmp_path / "tok"):
            raise Exception("Permission denied (os error 13)")


# ----------------------------------------------------------------------------- refusals on the command line

@pytest.fixture
def bench(small_bench, tmp_path) -> Path:
    """A private copy of the session's small benchmark (a refusal that failed would destroy it)."""
    copy = tmp_path / "bench"
    shutil.copytree(small_bench, copy, symlinks=True)
    return copy


def test_an_output_onto_a_benchmark_it_reads_is_refused(bench, tmp_path):
    before = _files(bench)
    sid = json.loads((bench / "manifest.json").read_text())["splits"]["test"][0]
    for argv in (["baseline", "oracle", "--bench", bench, "--out", bench / "manifest.json"],
                 ["requests", "--bench", bench, "--out", bench / "tasks" / sid / "reference.json"],
                 ["baseline", "no-op", "--bench", bench, "--out", bench / "preds.jsonl"],
                 ["bench", "export", bench, "--out", bench / "tasks"]):
        err = _one_line_error(run_cli(argv))
        assert "which this command reads" in err and "--out" in err
    assert _files(bench) == before


def test_an_output_through_a_link_onto_an_input_is_refused(bench, tmp_path):
    before = _files(bench)
    (tmp_path / "link.jsonl").symlink_to(bench / "manifest.json")
    (tmp_path / "dir").symlink_to(bench)
    err = _one_line_error(run_cli(["baseline", "oracle", "--bench", bench, "--out", tmp_path / "link.jsonl"]))
    assert "symbolic link" in err
    err = _one_line_error(run_cli(["baseline", "oracle", "--bench", bench, "--out", tmp_path / "dir" / "manifest.json"]))
    assert "which this command reads" in err
    preds = tmp_path / "p.jsonl"
    assert run_cli(["baseline", "no-op", "--bench", bench, "--out", preds]).code == 0
    text = preds.read_text()
    err = _one_line_error(run_cli(["intervene", "--bench", bench, "--predictions", preds, "--out", preds,
                                   "--mode", "plan-from-diagnosis"]))
    assert "is an input of this command" in err and preds.read_text() == text
    assert _files(bench) == before


def test_an_output_inside_what_an_id_or_path_argument_names_is_refused(bench, tmp_path):
    """`show ASSEMBLY_ID|TASK` and `task make ASSEMBLY_ID` read a path when one is given."""
    before = _files(bench)
    sid = json.loads((bench / "manifest.json").read_text())["splits"]["test"][0]
    task = bench / "tasks" / sid
    err = _one_line_error(run_cli(["show", task, "--out", task / "x.png"]))
    assert "which this command reads" in err
    err = _one_line_error(run_cli(["show", task, task / "reference.json", "--steps", "--out", task / "reference.json"]))
    assert "is an input of this command" in err or "which this command reads" in err
    assert _files(bench) == before
    assembly = tmp_path / "a.json"
    assert run_cli(["import", "--example", "mj_burr6_puzzle0", "--out", assembly]).code == 0
    text = assembly.read_text()
    for argv in (["task", "make", assembly, "--out", assembly], ["show", assembly, "--out", assembly]):
        assert "is an input of this command" in _one_line_error(run_cli(argv))
    assert assembly.read_text() == text


def test_the_default_export_folder_inside_the_benchmark_is_allowed(bench):
    o = run_cli(["bench", "export", bench])
    assert o.code == 0 and {"export/train.jsonl", "export/test.jsonl"} <= set(_files(bench))


def test_an_empty_output_name_is_refused(bench, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["baseline", "oracle", "--bench", bench, "--out", ""],
                 ["bench", "export", bench, "--out", ""],
                 ["evaluate", "--bench", bench, "--predictions", "p.jsonl", "--out", ""],
                 ["show", "luban_lock_3", "--out", ""]):
        assert "empty string" in _one_line_error(run_cli(argv))
    assert sorted(os.listdir(tmp_path)) == ["bench"]


# ----------------------------------------------------------------------------- a full disk

class Disk:
    """A folder whose file system can be made full: a small tmpfs when it can be mounted, else a
    file-size limit on this process (each file then holds at most `free` bytes)."""

    def __init__(self, root: Path, mounted: bool):
        self.root, self.mounted = root, mounted

    @contextmanager
    def full(self, free: int = 4096):
        """The file system with `free` bytes left (tmpfs), or files limited to `free` bytes."""
        if not self.mounted:
            old = resource.getrlimit(resource.RLIMIT_FSIZE)
            handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (free, old[1]))
            try:
                yield
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, old)
                signal.signal(signal.SIGXFSZ, handler)
            return
        ballast = self.root / ".ballast"
        fd = os.open(ballast, os.O_WRONLY | os.O_CREAT)
        try:
            for chunk in (b"\0" * 65536, b"\0" * 4096):
                try:
                    while True:
                        os.write(fd, chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
            os.ftruncate(fd, max(0, os.fstat(fd).st_size - free))
        finally:
            os.close(fd)
        try:
            yield
        finally:
            ballast.unlink()


@pytest.fixture
def disk(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    mounted = hasattr(os, "geteuid") and os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)], capture_output=True).returncode == 0
    yield Disk(mnt, mounted)
    if mounted:
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def _full_disk_error(o) -> str:
    err = _one_line_error(o)
    assert "disk full while writing" in err or "file too large" in err, err
    return err


def _no_temporary_files(folder: Path) -> None:
    assert not [p for p in folder.rglob("*") if output.TEMP_SUFFIX in p.name], list(folder.rglob("*"))


@pytest.fixture(scope="module")
def task(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("task") / "t1"
    assert run_cli(["task", "make", "luban_lock_3", "--out", folder, "--fault", "missing_part"]).code == 0
    return folder


def _on_full_disk(disk: Disk, argv_of, previous: dict[str, bytes] | None = None, free: int = 4096) -> str:
    """Run the command whose argv `argv_of(place)` writes to `place` on the disk, full: one line, exit 2,
    and the disk holds what it held before (the previous output, or nothing), no temporary file."""
    place = disk.root / "out"
    shutil.rmtree(place, ignore_errors=True)
    place.mkdir()
    for name, data in (previous or {}).items():
        (place / name).parent.mkdir(parents=True, exist_ok=True)
        (place / name).write_bytes(data)
    with disk.full(free):
        o = run_cli(argv_of(place))
    err = _full_disk_error(o)
    _no_temporary_files(disk.root)
    left = _files(place) if place.is_dir() else {}
    assert left == (previous or {}), sorted(left)
    return err


def test_full_disk_task_make_and_pddl_export(disk, task):
    _on_full_disk(disk, lambda d: ["task", "make", "luban_lock_3", "--out", d / "t", "--fault", "missing_part"])
    _on_full_disk(disk, lambda d: ["export-pddl", task, "--out", d, "--grounded"],
                  previous={"domain.pddl": b"old domain", "problem.pddl": b"old problem"})


def test_full_disk_picture_and_assembly_import(disk):
    _on_full_disk(disk, lambda d: ["show", "luban_lock_3", "--out", d / "a.png"], previous={"a.png": b"old"})
    name = run_cli(["import", "--list-examples", "--json"])
    example = json.loads(name.out)[0]["name"]
    _on_full_disk(disk, lambda d: ["import", "--example", example, "--out", d / "a.json"], previous={"a.json": b"{}"})


def test_full_disk_predictions_and_requests(disk, small_bench, tmp_path):
    _on_full_disk(disk, lambda d: ["baseline", "oracle", "--bench", small_bench, "--out", d / "p.jsonl"],
                  previous={"p.jsonl": b"old\n"})
    _on_full_disk(disk, lambda d: ["requests", "--bench", small_bench, "--out", d / "r.jsonl"])
    preds = tmp_path / "p.jsonl"
    assert run_cli(["baseline", "oracle", "--bench", small_bench, "--out", preds]).code == 0
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps({"custom_id": json.loads(x)["sample_id"], "response": {"body": {
        "choices": [{"message": {"content": json.loads(x)["raw_output"]}, "finish_reason": "stop"}]}}}) + "\n"
        for x in preds.read_text().splitlines()))
    _on_full_disk(disk, lambda d: ["import-answers", batch, "--out", d / "a.jsonl"])


def test_full_disk_reports(disk, small_bench, tmp_path):
    preds = tmp_path / "p.jsonl"
    assert run_cli(["baseline", "no-op", "--bench", small_bench, "--out", preds]).code == 0
    _on_full_disk(disk, lambda d: ["evaluate", "--bench", small_bench, "--predictions", preds, "--out", d],
                  previous={"metrics.json": b"{}", "report.md": b"old report"})
    _on_full_disk(disk, lambda d: ["intervene", "--bench", small_bench, "--predictions", preds, "--out", d / "i.jsonl",
                                   "--mode", "plan-from-diagnosis", "--report", d / "r"], previous={"i.jsonl": b"old\n"},
                  free=512)


def test_full_disk_plan_picture_and_planner_output(disk, task, tmp_path):
    _on_full_disk(disk, lambda d: ["show", task, "--out", d / "t.png"])
    assert run_cli(["solve", task, "--json"]).code == 0
    (tmp_path / "plan.json").write_text(run_cli(["solve", task, "--json"]).out)
    _on_full_disk(disk, lambda d: ["show", task, tmp_path / "plan.json", "--steps", "--out", d / "s.gif", "--gif"])
    pddl = disk.root / "out"
    assert run_cli(["export-pddl", task, "--out", pddl, "--grounded"]).code == 0
    before = _files(pddl)
    with disk.full(0):
        err = _full_disk_error(run_cli(["plan-external", pddl]))
    # a file-size limit stops the copy into the planner's scratch folder already; a full tmpfs the plan file
    assert ("sas_plan" in err or not disk.mounted) and _files(pddl) == before
    _no_temporary_files(disk.root)


def test_full_disk_benchmark_build_leaves_nothing_that_looks_complete(disk):
    out = disk.root / "bench"
    with disk.full(64 * 1024 if disk.mounted else 2048):
        err = _full_disk_error(run_cli(["bench", "build", "--out", out, "--tasks", "20", "--quiet",
                                        "--assemblies", "luban_lock_3", "bayonet_structure"]))
    assert "bench" in err and not (out / "manifest.json").exists() and not (out / ".partial").exists()
    _no_temporary_files(disk.root)
    done = list((out / "tasks").iterdir()) if (out / "tasks").is_dir() else []
    assert all(len(list(p.iterdir())) == len(list(done[0].iterdir())) for p in done)   # every task folder whole


def test_full_disk_benchmark_merge_and_exports(disk, small_bench, tmp_path):
    halves = [tmp_path / "h1", tmp_path / "h2"]
    for k, h in enumerate(halves, 1):
        assert run_cli(["bench", "build", "--out", h, "--tasks", "20", "--shard", f"{k}/2", "--quiet",
                        "--assemblies", "luban_lock_3", "bayonet_structure"]).code == 0
    _on_full_disk(disk, lambda d: ["bench", "merge", *halves, "--out", d / "joined"], free=16 * 1024)
    _on_full_disk(disk, lambda d: ["bench", "export", small_bench, "--out", d],
                  previous={"train.jsonl": b"old\n", "test.jsonl": b"old\n"}, free=16 * 1024)
    _on_full_disk(disk, lambda d: ["bench", "export", small_bench, "--format", "pddl", "--out", d / "suite"],
                  free=16 * 1024)


@pytest.mark.slow
def test_full_disk_tiny_model(disk):
    _on_full_disk(disk, lambda d: ["tiny-model", "--out", d / "tm"], free=16 * 1024)


def test_full_disk_run_views(disk, tmp_path):
    from runs import make_run

    run = make_run(tmp_path)
    _on_full_disk(disk, lambda d: ["view", run, "--out", d / "v.html"], free=16 * 1024)
    _on_full_disk(disk, lambda d: ["compare", run, run, "--names", "a", "b", "--out", d])


# ----------------------------------------------------------------------------- a full disk: the main job and the model commands

ENV = "FORGEPLAN_TEST_KEY"


def test_full_disk_demo(disk):
    err = _on_full_disk(disk, lambda d: ["demo", "--out", d / "demo", "--tasks", "20", "--crosscheck", "1",
                                         "--jobs", "1"], free=16 * 1024)
    assert str(disk.root / "out" / "demo") in err


@pytest.mark.slow
def test_full_disk_reference_model(disk):
    """The first stage (the benchmark build) meets the full disk: one line, and nothing that looks complete
    (the build's resume record may stay, as a plain `bench build` leaves it; no later stage starts)."""
    out = disk.root / "ref"
    with disk.full(16 * 1024):
        err = _full_disk_error(run_cli(["reference-model", "--out", out, "--tasks", "20", "--max-steps", "1",
                                        "--jobs", "1"]))
    assert str(out) in err and not (out / "bench" / "manifest.json").exists()
    assert sorted(p.name for p in out.iterdir()) == ["bench"]
    _no_temporary_files(disk.root)


def _test_answers(bench: Path) -> dict[str, str]:
    from forgeplan.llm.prompt import target_text

    test = json.loads((bench / "manifest.json").read_text())["splits"]["test"]
    return {sid: target_text(json.loads((bench / "tasks" / sid / "reference.json").read_text())) for sid in test}


def test_full_disk_infer_endpoint(disk, small_bench, tmp_path, monkeypatch):
    """A run on a free disk first fills the answer cache (off the disk, given again: a cache folder of an
    earlier run is an output, not an input), so that the full disk fails the predictions file only."""
    from standin import KEY, serving

    monkeypatch.setenv(ENV, KEY)
    with serving(_test_answers(small_bench)) as server:
        infer = ["infer", "--endpoint", server.url, "--bench", small_bench, "--api-key-env", ENV,
                 "--served-model", "hosted", "--constrained", "none", "--cache", tmp_path / "c", "--out"]
        assert run_cli([*infer, tmp_path / "warm.jsonl"]).code == 0
        err = _on_full_disk(disk, lambda d: [*infer, d / "p.jsonl"], previous={"p.jsonl": b"old\n"}, free=512)
    assert err.endswith(str(disk.root / "out" / "p.jsonl"))


def test_full_disk_judge(disk, magar_bench, tmp_path, monkeypatch):
    """As `infer --endpoint`: the answers cached first, then judge.jsonl and judge.json replaced together or not."""
    from standin import KEY, serving

    monkeypatch.setenv(ENV, KEY)
    test = json.loads((magar_bench / "manifest.json").read_text())["splits"]["test"]
    preds = tmp_path / "magar.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": sid, "raw_output": "{}"}) + "\n" for sid in test))
    with serving({sid: '{"score": 1, "reason": "r"}' for sid in test}) as server:
        judge_ = ["judge", "--endpoint", server.url, "--served-model", "j", "--api-key-env", ENV,
                  "--predictions", preds, "--bench", magar_bench, "--cache", tmp_path / "c", "--out"]
        assert run_cli([*judge_, tmp_path / "warm"]).code == 0
        err = _on_full_disk(disk, lambda d: [*judge_, d], previous={"judge.jsonl": b"old\n", "judge.json": b"{}"},
                            free=512)
    assert str(disk.root / "out" / "judge.json") in err


@pytest.mark.slow
def test_full_disk_infer_model(disk, tiny_dir, small_bench):
    err = _on_full_disk(disk, lambda d: ["infer", "--model", tiny_dir, "--bench", small_bench, "--out", d / "p.jsonl",
                                         "--limit", "2", "--max-new-tokens", "64", "--constrained", "none",
                                         "--device", "cpu"], previous={"p.jsonl": b"old\n"}, free=64)
    assert err.endswith(str(disk.root / "out" / "p.jsonl"))


TRAIN_CONFIG = """
[run]
name = "full-disk"
eval_fraction = 0.0
dtype = "float32"
device = "cpu"

[lora]
r = 2
lora_alpha = 4
target_modules = "all-linear"

[trainer]
max_steps = 1
per_device_train_batch_size = 1
max_length = 4096
save_strategy = "no"
disable_tqdm = true
"""


@pytest.fixture
def train_args(tiny_dir, small_bench, tmp_path) -> list:
    pytest.importorskip("trl", reason="the [llm] extra (torch, transformers, peft, trl) is required")
    config = tmp_path / "config.toml"
    config.write_text(TRAIN_CONFIG, encoding="utf-8")
    return ["train", "--model", tiny_dir, "--bench", small_bench, "--config", config, "--limit", "2", "--threads", "1"]


@pytest.mark.slow
def test_full_disk_train(disk, train_args):
    err = _on_full_disk(disk, lambda d: [*train_args, "--out", d / "run"], free=16 * 1024)
    assert str(disk.root / "out" / "run") in err


@pytest.mark.slow
def test_full_disk_merge_adapter(disk, train_args, tiny_dir, tmp_path):
    assert run_cli([*train_args, "--out", tmp_path / "run"]).code == 0
    err = _on_full_disk(disk, lambda d: ["merge-adapter", "--model", tiny_dir, "--adapter", tmp_path / "run",
                                         "--out", d / "merged"], free=16 * 1024)
    assert str(disk.root / "out" / "merged") in err

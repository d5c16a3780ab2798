"""Hostile-input fuzzing of every entry point: verdict or one-line error, never a crash.

Each case mutates one valid input (a model output, a task file, a benchmark file, predictions, an
assembly, a .xmpuzzle, a PDDL plan), runs the command line in this process and judges the outcome:
exit 0/1 is a verdict, exit 2 must be one line "forgeplan: error: ...", anything else (exit 3, a
traceback, a second stderr line, control characters or invalid --json on stdout, a file written
outside the output folder) is a crash. `forgeplan perf fuzz` and the tests (tests/test_fuzz_*.py) use
the same cases and the same judge.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path


# raw JSON texts that stand in for one value: limits, overflow, spoofing, injection, wrong types
HOSTILE_JSON = (
    "9" * 5000, "-" + "9" * 30, "1e400", "-1e308", "1e200", "NaN", "Infinity", "[" * 100_000, "[" * 70 + "]" * 70,
    '"\\ud800"', '"\\udc00x"', '"\\u0000"', '"X\\nvalid: 3 actions, 2 moved parts"', '"\\u001b[31mred\\u001b[0m"',
    '"X |\\n\\n# ALL TESTS PASSED"', '"P\\nforgeplan: all checks passed"', '"../../../etc/passwd"', '""',
    '"' + "A" * 100_000 + '"', "null", "true", "[]", "{}", "0", "-1", "3.5", '"3"', "[1e200, 4, 3.5]",
    '{"a": 1, "a": 2}', "[[0, 0, 0]]", '"\\u202eevil"', "1e-320",
)
SEED_XMPUZZLE = """<?xml version="1.0"?>
<puzzle version="2"><gridType type="0"/><colors/><shapes>
<voxel x="1" y="1" z="2" name="Bar" type="0">##</voxel>
<voxel x="2" y="1" z="2" type="0">####</voxel>
</shapes><problems><problem name="two bars"><shapes><shape id="0" count="2"/></shapes><result id="1"/>
<solutions><solution asmNum="1"><assembly>0 0 0 0 1 0 0 0</assembly></solution></solutions></problem></problems>
</puzzle>
"""
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def run_cli(argv: list[str]) -> Outcome:
    """`forgeplan ARGV` in this process, stdout and stderr captured."""
    from .cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return Outcome(code, out.getvalue(), err.getvalue())


def judge(o: Outcome, json_out: bool = False) -> str | None:
    """None when the outcome is a verdict (exit 0/1) or a clean one-line error (exit 2); else why not."""
    if o.code not in (0, 1, 2):
        return f"exit {o.code}: {o.err.strip()[-300:]}"
    if "Traceback" in o.err or "Traceback" in o.out:
        return "traceback"
    lines = o.err.strip().splitlines()
    if o.code == 2 and (len(lines) != 1 or not lines[0].startswith("forgeplan")):
        return f"exit 2 without exactly one error line: {o.err[:300]!r}"
    if _CONTROL.search(o.out) or _CONTROL.search(o.err):
        return "control characters echoed"
    if json_out and o.code in (0, 1):
        try:
            json.loads(o.out)
        except ValueError:
            return "--json output is not JSON"
    return None


# ----------------------------------------------------------------------------- mutations

def _paths(obj, prefix=()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:50]):
            out += _paths(v, (*prefix, i))
    return out


def mutate_json(data, rng: random.Random) -> str:
    """One structural mutation of `data`: a value replaced by a hostile raw text, a key dropped or
    added, or a duplicate key; returned as JSON text."""
    data = json.loads(json.dumps(data))
    path = rng.choice(_paths(data)[1:] or [()])
    hostile = rng.choice(HOSTILE_JSON)
    marker = "@@HOSTILE@@"
    kind = rng.random()
    if not path:
        return hostile
    parent = data
    for k in path[:-1]:
        parent = parent[k]
    if kind < 0.15 and isinstance(parent, dict):
        del parent[path[-1]]
        return json.dumps(data)
    if kind < 0.3 and isinstance(parent, dict):
        parent[rng.choice(["extra", "x\ny", path[-1] + "\u202e"])] = marker
    else:
        parent[path[-1]] = marker
    text = json.dumps(data).replace(json.dumps(marker), hostile, 1)
    if kind > 0.9:  # a duplicate key at the top level
        text = text.replace("{", '{"' + str(path[0]) + '": 0, ', 1)
    return text


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One byte-level mutation: truncation, an invalid UTF-8 byte, a BOM, UTF-16, emptiness, a flip."""
    k = rng.randrange(7)
    at = rng.randrange(len(data) + 1)
    if k == 0:
        return data[:at]
    if k == 1:
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + data[at:]
    if k == 2:
        return b"\xef\xbb\xbf" + data
    if k == 3:
        return data.decode("utf-8", "replace").encode("utf-16")
    if k == 4:
        return b""
    if k == 5 and data:
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
    return data * rng.randint(2, 4)


def mutated(data, rng: random.Random) -> bytes:
    """A structural mutation most of the time, else a byte-level one of the valid file."""
    if rng.random() < 0.75:
        return mutate_json(data, rng).encode("utf-8", "surrogatepass")
    return mutate_bytes(json.dumps(data, indent=1).encode(), rng)


def mutate_xml(text: str, rng: random.Random) -> bytes:
    """A .xmpuzzle mutation: a hostile attribute or grid, a DTD/entity, UTF-16, gzip, or bytes."""
    k = rng.randrange(7)
    if k == 6:  # the valid seed, gzip-compressed as BurrTools writes it
        return gzip.compress(text.encode(), mtime=0)
    if k == 0:
        attrs = re.findall(r'(\w+)="([^"]*)"', text)
        name, value = rng.choice(attrs)
        bad = rng.choice(["100000000", "-5", "9" * 5000, "1e3", "", "x", "126", "47", "48"])
        text = text.replace(f'{name}="{value}"', f'{name}="{bad}"', 1)
    elif k == 1:
        n = rng.choice([126, 200, 1000])
        text = text.replace('x="2" y="1" z="2" type="0">####', f'x="{n}" y="{n}" z="{n}" type="0">' + "#" * min(n ** 3, 2_000_000))
    elif k == 2:
        text = text.replace("<puzzle", '<!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><puzzle', 1)
        text = text.replace("two bars", "&b;")
    elif k == 3:
        return text.replace('encoding="UTF-8"', "").encode("utf-16")
    elif k == 4:
        return gzip.compress(mutate_bytes(text.encode(), rng), mtime=0)
    else:
        return mutate_bytes(text.encode(), rng)
    return gzip.compress(text.encode(), mtime=0) if rng.random() < 0.5 else text.encode()


# ----------------------------------------------------------------------------- the sandbox

class Sandbox:
    """Valid seed inputs for every entry point in a scratch folder; cases swap one file at a time."""

    def __init__(self, root: Path, bench: Path | None = None):
        from .io.catalog import load_assembly, save_assembly

        self.root, self.out = root, root / "out"
        self.task = root / "task"
        _ok(run_cli(["task", "make", "luban_lock_3", "--out", self.task, "--fault", "missing_part"]))
        ref = json.loads((self.task / "reference.json").read_text())
        self.output = {k: ref[k] for k in ("annotation", "rework_plan")}
        save_assembly(load_assembly("luban_lock_3"), root / "assembly.json")
        self.bench = bench or root / "bench"
        if bench is None:
            _ok(run_cli(["bench", "build", "--out", self.bench, "--tasks", "20", "--jobs", "1", "--quiet",
                         "--assemblies", "luban_lock_3", "shaft_stack", "bayonet_structure"]))
        manifest = json.loads((self.bench / "manifest.json").read_text())
        self.test_ids = manifest["splits"]["test"]
        self.predictions = [{"sample_id": s, "raw_output": _reference_output(self.bench, s)} for s in self.test_ids]
        self.plan = _seed_plan(self.task)

    def snapshot(self) -> dict:
        """Every file outside the output folder, with its size and modification time."""
        out = {}
        for dirpath, dirs, files in os.walk(self.root):
            if Path(dirpath) == self.root and "out" in dirs:
                dirs.remove("out")
            for f in files:
                p = Path(dirpath) / f
                st = p.lstat()
                out[str(p)] = (st.st_size, st.st_mtime_ns)
        return out


def _ok(o: Outcome) -> None:
    if o.code != 0:
        raise RuntimeError(f"fuzz seed failed: {o.err.strip()}")


def _reference_output(bench: Path, sid: str) -> str:
    ref = json.loads((bench / "tasks" / sid / "reference.json").read_text())
    return json.dumps({k: ref[k] for k in ("annotation", "rework_plan")})


def _seed_plan(task_dir: Path) -> str:
    """Plan lines naming the export's objects (mutations start from a plan-shaped text)."""
    from .planners.pddl.files import pddl_writer
    from .planners.pddl.problem import build_problem
    from .io.task_files import load_task

    task = load_task(task_dir)
    enc = build_problem(task)
    names = pddl_writer(enc)
    pids = [names.get_pddl_name(enc.objects[p]) for p in task.world.ids]
    return "".join(f"(remove_first {p} {p})\n" for p in pids[:2]) + "; cost = 2 (general cost)\n"


@contextlib.contextmanager
def swapped(path: Path, data: bytes):
    """`path` holds `data` for the duration (then its old bytes, or nothing, again)."""
    old = path.read_bytes() if path.exists() else None
    path.write_bytes(data)
    try:
        yield path
    finally:
        if old is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(old)


# ----------------------------------------------------------------------------- entry points

def case_output(sb: Sandbox, rng: random.Random):
    json_out = rng.random() < 0.5
    return sb.root / "case.json", mutated(sb.output, rng), ["verify", sb.task, sb.root / "case.json"] + (["--json"] if json_out else []), json_out


def case_task_file(sb: Sandbox, rng: random.Random):
    from .io.task_files import PUBLIC_FILES

    path = sb.task / rng.choice(PUBLIC_FILES)
    cmd = rng.choice([["verify", sb.task, sb.root / "output.json", "--json"], ["closure", sb.task, "--json"],
                      ["solve", sb.task, "--time-limit", "5"], ["export-pddl", sb.task, "--out", sb.out / "pddl"]])
    (sb.root / "output.json").write_text(json.dumps(sb.output))
    return path, mutated(json.loads(path.read_text()), rng), cmd, "--json" in cmd


def case_bench_file(sb: Sandbox, rng: random.Random):
    sid = rng.choice(sb.test_ids)
    name = rng.choice(["manifest.json", "meta.json", "reference.json", "minimal_rework.json", "actual_state.json"])
    path = sb.bench / name if name == "manifest.json" else sb.bench / "tasks" / sid / name
    preds = sb.root / "preds.jsonl"
    preds.write_text("".join(json.dumps(p) + "\n" for p in sb.predictions))
    cmd = ["evaluate", "--bench", sb.bench, "--predictions", preds, "--out", sb.out / "report", "--json"]
    return path, mutated(json.loads(path.read_text()), rng), cmd, True


def case_predictions(sb: Sandbox, rng: random.Random):
    rows = [json.dumps(p).encode() for p in sb.predictions]
    k = rng.randrange(len(rows))
    inner = json.loads(sb.predictions[k]["raw_output"])
    if rng.random() < 0.5:
        rows[k] = json.dumps({"sample_id": sb.predictions[k]["sample_id"], "raw_output": mutate_json(inner, rng)}).encode()
    else:
        rows[k] = mutated(sb.predictions[k], rng).replace(b"\n", b" ")
    cmd = ["evaluate", "--bench", sb.bench, "--predictions", sb.root / "case.jsonl", "--json"]
    return sb.root / "case.jsonl", b"\n".join(rows) + b"\n", cmd, True


def case_assembly(sb: Sandbox, rng: random.Random):
    cmd = rng.choice([["assemblies", "--check", sb.root / "case_asm.json", "--json"],
                      ["assemblies", "--check", sb.root / "case_asm.json"],
                      ["task", "make", sb.root / "case_asm.json", "--out", sb.out / "made"]])
    return sb.root / "case_asm.json", mutated(json.loads((sb.root / "assembly.json").read_text()), rng), cmd, "--json" in cmd


def case_puzzle(sb: Sandbox, rng: random.Random):
    path = sb.root / "case.xmpuzzle"
    return path, mutate_xml(SEED_XMPUZZLE, rng), ["import", path, "--out", sb.out / "imported.json", "--json"], True


def case_plan(sb: Sandbox, rng: random.Random):
    data = mutate_bytes(sb.plan.encode(), rng) if rng.random() < 0.6 else \
        sb.plan.replace("remove_first", rng.choice(["x" * 100_000, "insert_first\n(", "(((", "remove_first\x1b[2J"])).encode()
    return sb.root / "case.plan", data, ["import-plan", sb.task, sb.root / "case.plan"], True


ENTRY_POINTS = {"output": case_output, "task file": case_task_file, "bench file": case_bench_file,
                "predictions": case_predictions, "assembly": case_assembly, "puzzle": case_puzzle, "plan": case_plan}


def fuzz_case(sb: Sandbox, entry: str, rng: random.Random) -> tuple[Outcome, str | None]:
    """Run one mutated case of `entry`; (outcome, None) or (outcome, why it is a crash)."""
    path, data, argv, json_out = ENTRY_POINTS[entry](sb, rng)
    with swapped(path, data):
        before = sb.snapshot()
        o = run_cli(argv)
        after = sb.snapshot()
    shutil.rmtree(sb.out, ignore_errors=True)
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))[:3]
        return o, f"wrote outside the output folder: {changed}"
    return o, judge(o, json_out)


# ----------------------------------------------------------------------------- `forgeplan perf fuzz`

def large_inputs(folder: Path, task: Path) -> dict[str, list]:
    """Command lines on large inputs that the limits reject, their files written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    grid = b'<puzzle version="2"><shapes><voxel x="126" y="126" z="126" type="0">' + b"#" * 126 ** 3
    (folder / "grid.xmpuzzle").write_bytes(gzip.compress(grid + b"</voxel></shapes></puzzle>", mtime=0))
    voxels = [[x, y, z] for x in range(10) for y in range(10) for z in range(7000)]
    (folder / "voxels.json").write_text(json.dumps({"schema_version": "1.0", "assembly_id": "big", "family": "f",
                                                    "parts": [{"part_id": "A", "kind": "k", "voxels": voxels}]},
                                                   separators=(",", ":")))
    with (folder / "plan").open("wb") as fh:
        fh.write(b"(")
        for _ in range(50):
            fh.write(b"a" * 1_000_000)
        fh.write(b")")
    (folder / "digits.json").write_bytes(b"[" + b",".join([b"9" * 5000] * 190) + b"]")
    return {"126^3 .xmpuzzle grid": ["import", folder / "grid.xmpuzzle", "--out", folder / "a.json"],
            "8 MB of voxels": ["assemblies", "--check", folder / "voxels.json"],
            "50 MB plan": ["import-plan", task, folder / "plan"],
            "1 MB output of 5000-digit numbers": ["verify", task, folder / "digits.json"]}


def peak_rss(argv: list) -> tuple[int, int]:
    """(exit code, peak RSS in MB) of `forgeplan ARGV` in a fresh process, imports included (Linux VmHWM:
    ru_maxrss would carry over the parent's peak across fork and exec)."""
    import subprocess
    import sys

    code = ("import re, sys; from forgeplan.cli import main; c = main(sys.argv[1:]); "
            "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1), file=sys.stderr); sys.exit(c)")
    # the child imports this very forgeplan (not whichever one its working directory would give)
    here = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (here, os.environ.get("PYTHONPATH"))))}
    p = subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True, env=env)
    lines = p.stderr.strip().splitlines()
    if not lines or not lines[-1].isdigit():
        raise RuntimeError(f"no peak reported: {p.stderr[-300:]}")
    return p.returncode, int(lines[-1]) // 1024

"""Hostile-input fuzzing of every entry point: verdict or one-line error, never a crash.

Each case mutates one valid input (a model output, a task file, a benchmark file, predictions, an
assembly, a .xmpuzzle, a PDDL plan), runs the command line in this process and judges the outcome:
exit 0/1 is a verdict, exit 2 must be one line "forgeplan: error: ...", anything else (exit 3, a
traceback, a second stderr line, control characters, stdout that is not JSON where it must be, a file written
outside the output folder) is a crash. `python -m lab fuzz` and the tests (tests/test_fuzz_*.py) use
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
import time
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


def run_cli(argv: list) -> Outcome:
    """`forgeplan ARGV` in this process, stdout and stderr captured."""
    from forgeplan.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return Outcome(code, out.getvalue(), err.getvalue())


# what stdout must hold on a verdict (exit 0/1): JSON (a command given --json), or the output contract
# printed only for a plan that is valid where it came from (import-plan: JSON on exit 0; on exit 1 JSON
# when the engine refused the mapped plan, nothing when the PDDL replay refused it before mapping)
JSON_VERDICT, CONTRACT_IF_MAPPED = "json", "contract if mapped"


def judge(o: Outcome, stdout: bool | str | None = None) -> str | None:
    """None when the outcome is a verdict (exit 0/1) or a clean one-line error (exit 2); else why not.
    `stdout`, what it must hold on a verdict: anything (None, False), JSON (True, JSON_VERDICT) or
    CONTRACT_IF_MAPPED."""
    if o.code not in (0, 1, 2):
        return f"exit {o.code}: {o.err.strip()[-300:]}"
    if "Traceback" in o.err or "Traceback" in o.out:
        return "traceback"
    lines = o.err.strip().splitlines()
    if o.code == 2 and (len(lines) != 1 or not lines[0].startswith("forgeplan")):
        return f"exit 2 without exactly one error line: {o.err[:300]!r}"
    if _CONTROL.search(o.out) or _CONTROL.search(o.err):
        return "control characters echoed"
    if stdout == CONTRACT_IF_MAPPED and o.code in (0, 1) and not o.out:
        return None if o.code == 1 and "not a valid plan of that PDDL task" in o.err else \
            f"exit {o.code} without the output contract on stdout: {o.err[:300]!r}"
    if stdout and o.code in (0, 1):
        try:
            json.loads(o.out)
        except ValueError:
            return "stdout is not JSON"
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
        from forgeplan.io.catalog import load_assembly, save_assembly

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
    from forgeplan.planners.pddl.files import pddl_writer
    from forgeplan.planners.pddl.problem import build_problem
    from forgeplan.io.task_files import load_task

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


@contextlib.contextmanager
def sealed(bench: Path):
    """The benchmark's digests recording its files as they are for the duration, so that a mutated file
    passes its digest check and reaches the parser and the checks behind it; the build's digests after."""
    from forgeplan.bench.digests import DIGESTS, seal_folder

    saved = {n: (bench / n).read_bytes() for n in ("manifest.json", DIGESTS)}
    seal_folder(bench, json.loads(saved["manifest.json"]))
    try:
        yield bench
    finally:
        for name, data in saved.items():
            (bench / name).write_bytes(data)


# ----------------------------------------------------------------------------- entry points

def _json_if_asked(argv: list) -> str | None:
    return JSON_VERDICT if "--json" in argv else None


def case_output(sb: Sandbox, rng: random.Random):
    argv = ["verify", sb.task, sb.root / "case.json"] + (["--json"] if rng.random() < 0.5 else [])
    return sb.root / "case.json", mutated(sb.output, rng), argv, _json_if_asked(argv)


def case_task_file(sb: Sandbox, rng: random.Random):
    from forgeplan.io.task_files import PUBLIC_FILES

    path = sb.task / rng.choice(PUBLIC_FILES)
    cmd = rng.choice([["verify", sb.task, sb.root / "output.json", "--json"], ["closure", sb.task, "--json"],
                      ["solve", sb.task, "--time-limit", "5"], ["export-pddl", sb.task, "--out", sb.out / "pddl"]])
    (sb.root / "output.json").write_text(json.dumps(sb.output))
    return path, mutated(json.loads(path.read_text()), rng), cmd, _json_if_asked(cmd)


def case_bench_file(sb: Sandbox, rng: random.Random):
    sid = rng.choice(sb.test_ids)
    name = rng.choice(["manifest.json", "meta.json", "reference.json", "minimal_rework.json", "actual_state.json"])
    path = sb.bench / name if name == "manifest.json" else sb.bench / "tasks" / sid / name
    preds = sb.root / "preds.jsonl"
    preds.write_text("".join(json.dumps(p) + "\n" for p in sb.predictions))
    cmd = ["evaluate", "--bench", sb.bench, "--predictions", preds, "--out", sb.out / "report", "--json"]
    return path, mutated(json.loads(path.read_text()), rng), cmd, JSON_VERDICT


def case_predictions(sb: Sandbox, rng: random.Random):
    rows = [json.dumps(p).encode() for p in sb.predictions]
    k = rng.randrange(len(rows))
    inner = json.loads(sb.predictions[k]["raw_output"])
    if rng.random() < 0.5:
        rows[k] = json.dumps({"sample_id": sb.predictions[k]["sample_id"], "raw_output": mutate_json(inner, rng)}).encode()
    else:
        rows[k] = mutated(sb.predictions[k], rng).replace(b"\n", b" ")
    cmd = ["evaluate", "--bench", sb.bench, "--predictions", sb.root / "case.jsonl", "--json"]
    return sb.root / "case.jsonl", b"\n".join(rows) + b"\n", cmd, JSON_VERDICT


def case_assembly(sb: Sandbox, rng: random.Random):
    cmd = rng.choice([["assemblies", "--check", sb.root / "case_asm.json", "--json"],
                      ["assemblies", "--check", sb.root / "case_asm.json"],
                      ["task", "make", sb.root / "case_asm.json", "--out", sb.out / "made"]])
    return sb.root / "case_asm.json", mutated(json.loads((sb.root / "assembly.json").read_text()), rng), cmd, _json_if_asked(cmd)


def case_puzzle(sb: Sandbox, rng: random.Random):
    path = sb.root / "case.xmpuzzle"
    return path, mutate_xml(SEED_XMPUZZLE, rng), ["import", path, "--out", sb.out / "imported.json", "--json"], JSON_VERDICT


def case_plan(sb: Sandbox, rng: random.Random):
    data = mutate_bytes(sb.plan.encode(), rng) if rng.random() < 0.6 else \
        sb.plan.replace("remove_first", rng.choice(["x" * 100_000, "insert_first\n(", "(((", "remove_first\x1b[2J"])).encode()
    return sb.root / "case.plan", data, ["import-plan", sb.task, sb.root / "case.plan"], CONTRACT_IF_MAPPED


ENTRY_POINTS = {"output": case_output, "task file": case_task_file, "bench file": case_bench_file,
                "predictions": case_predictions, "assembly": case_assembly, "puzzle": case_puzzle, "plan": case_plan}


def fuzz_case(sb: Sandbox, entry: str, rng: random.Random) -> tuple[Outcome, str | None]:
    """Run one mutated case of `entry`; (outcome, None) or (outcome, why it is a crash)."""
    path, data, argv, stdout = ENTRY_POINTS[entry](sb, rng)
    forged = entry == "bench file" and path.name != "manifest.json"   # the manifest is parsed before any digest
    with swapped(path, data), (sealed(sb.bench) if forged else contextlib.nullcontext()):
        before = sb.snapshot()
        o = run_cli(argv)
        after = sb.snapshot()
    shutil.rmtree(sb.out, ignore_errors=True)
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))[:3]
        return o, f"wrote outside the output folder: {changed}"
    return o, judge(o, stdout)


# ----------------------------------------------------------------------------- `python -m lab fuzz`

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
    here = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (here, os.environ.get("PYTHONPATH"))))}
    p = subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True, env=env)
    lines = p.stderr.strip().splitlines()
    if not lines or not lines[-1].isdigit():
        raise RuntimeError(f"no peak reported: {p.stderr[-300:]}")
    return p.returncode, int(lines[-1]) // 1024


# ----------------------------------------------------------------------------- a hostile endpoint

# what the hostile server does, chosen by the first path segment of the request
# (`http://127.0.0.1:PORT/BEHAVIOUR/v1` as the client's --endpoint)
ENDPOINT_BEHAVIOURS = ("trickle", "slow-headers", "huge", "not-utf8", "truncated", "deep", "content-list",
                       "usage-string", "not-object", "status-500", "redirect-file", "free-text")


def _completion(content, usage=None) -> bytes:
    body = {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
                                                                 "message": {"role": "assistant", "content": content}}]}
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body).encode()


class HostileEndpoint:
    """An OpenAI-style server on 127.0.0.1 that misbehaves in one way per request path (see
    ENDPOINT_BEHAVIOURS). Threads, at most `max_clients` connections at once, each handled for at most
    `per_client` seconds, and the whole server stops by itself after `lifetime` seconds. A context
    manager: `with HostileEndpoint() as srv: srv.url("trickle")`."""

    def __init__(self, max_clients: int = 8, per_client: float = 20.0, lifetime: float = 300.0):
        import socketserver
        import threading

        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                if not outer.slots.acquire(blocking=False):
                    return
                try:
                    self.request.settimeout(per_client)
                    outer.serve(self.request, time.monotonic() + per_client)
                except OSError:
                    pass
                finally:
                    outer.slots.release()

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.slots = threading.BoundedSemaphore(max_clients)
        self.requests: list[str] = []
        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.stopper = threading.Timer(lifetime, self.stop)
        self.stopper.daemon = True

    def url(self, behaviour: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{behaviour}/v1"

    def __enter__(self) -> "HostileEndpoint":
        self.thread.start()
        self.stopper.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self.stopper.cancel()
        self.server.shutdown()
        self.server.server_close()

    def serve(self, sock, deadline: float) -> None:
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 65_536:
            chunk = sock.recv(4096)
            if not chunk:
                return
            head += chunk
        path = head.split(b" ", 2)[1].decode("latin-1") if head.count(b" ") >= 2 else "/"
        behaviour = path.strip("/").split("/")[0]
        self.requests.append(behaviour)
        declared = re.search(rb"(?i)content-length:\s*(\d+)", head)
        length = int(declared.group(1)) if declared else 0
        got = len(head.split(b"\r\n\r\n", 1)[1])
        while got < min(length, 10_000_000):
            chunk = sock.recv(65_536)
            if not chunk:
                return
            got += len(chunk)

        def reply(body: bytes, status: str = "200 OK", extra: str = "") -> None:
            sock.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                         f"{extra}Connection: close\r\n\r\n".encode() + body)

        if behaviour in ("trickle", "slow-headers"):
            first = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" if behaviour == "trickle" else b""
            sock.sendall(first)
            while time.monotonic() < deadline:   # a byte every 0.1 s, never the whole response
                sock.sendall(b" " if behaviour == "trickle" else b"X")
                time.sleep(0.1)
        elif behaviour == "huge":   # 800 MB announced and streamed until the client hangs up
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 800000000\r\n\r\n" + b'{"a": "')
            block = b"x" * 65_536
            while time.monotonic() < deadline:
                sock.sendall(block)
        elif behaviour == "truncated":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + _completion("x")[:20])
        else:
            body = {"not-utf8": b'{"choices": "\xff\xfe"}', "deep": b"[" * 200_000 + b"]" * 200_000,
                    "content-list": _completion([1, 2]), "usage-string": _completion("{}", usage="many"),
                    "not-object": b"[1, 2, 3]", "status-500": b'{"error": "overloaded"}',
                    "redirect-file": b"", "free-text": _completion("Remove the key piece first, then the rest.")
                    }.get(behaviour, _completion("{}"))
            status = {"status-500": "500 Internal Server Error", "redirect-file": "302 Found"}.get(behaviour, "200 OK")
            reply(body, status, "Location: file:///dev/zero\r\n" if behaviour == "redirect-file" else "")


# ----------------------------------------------------------------------------- structure-aware hostile inputs

def interlocked_shell(size: int, loose: int) -> dict:
    """A data/burr JSON puzzle: a hollow `size`³ cube and `loose` one-voxel cubes rattling inside it, two
    apart. Nothing ever separates, and the partial-move search's state space grows as the cavity's volume
    to the power `loose`: the input that makes an unbounded search hang."""
    shell = [[x, y, z] for x in range(size) for y in range(size) for z in range(size)
             if min(x, y, z) == 0 or max(x, y, z) == size - 1]
    side = max(1, (size - 2) // 2)
    cubes = [[1 + 2 * (k % side), 1 + 2 * ((k // side) % side), 1 + 2 * (k // side ** 2)] for k in range(loose)]
    return {"name": f"{size}^3 shell", "pieces": [{"id": "shell", "voxels": shell},
                                                  *({"id": f"cube{k}", "voxels": [c]} for k, c in enumerate(cubes))]}


def element_bomb(elements: int) -> bytes:
    """A gzip .xmpuzzle that inflates to `elements` empty elements (20 MB for 5 million)."""
    return gzip.compress(b"<puzzle>" + b"<a/>" * elements + b"</puzzle>", mtime=0)


def corrupt_deflate() -> bytes:
    """A gzip file whose deflate stream is broken right after the header (zlib's 'invalid block type')."""
    good = gzip.compress(SEED_XMPUZZLE.encode(), mtime=0)
    return good[:10] + b"\xff\xff\xff\xff" + good[14:]


def many_values(opener: str, count: int, item: str = "{}") -> str:
    """JSON text of `count` tiny values inside `opener` ('[' or a prefix such as '{"pieces": ['): few
    bytes, millions of objects once parsed."""
    closer = "]" + "}" * opener.count("{")
    return opener + ",".join([item] * count) + closer


def hostile_inputs(folder: Path, bench: Path | None = None,
                   task: Path | None = None) -> dict[str, tuple[list, tuple[int, ...]]]:
    """One command line per class of hostile input, its files written into `folder` (with `bench` / `task`:
    copies of them with one file replaced): name -> (argv, the exit codes that are a correct answer).
    Each must answer within 10 s under 300 MB."""
    folder.mkdir(parents=True, exist_ok=True)
    w = folder.joinpath
    w("shell12.json").write_text(json.dumps(interlocked_shell(12, 2)))
    w("shell30.json").write_text(json.dumps(interlocked_shell(30, 3)))
    w("shell30x20.json").write_text(json.dumps(interlocked_shell(30, 20)))
    w("bomb.xmpuzzle").write_bytes(element_bomb(5_000_000))
    w("deflate.xmpuzzle").write_bytes(corrupt_deflate())
    w("encoding.xmpuzzle").write_bytes(b'<?xml version="1.0" encoding="x-unknown"?><puzzle/>')
    w("dicts.json").write_text(many_values("[", 2_600_000))                       # 7.8 MB
    w("lists.json").write_text(many_values('{"pieces": [', 6_600_000, "[]"))      # 19.8 MB
    fifo = w("fifo")
    if not fifo.exists():
        os.mkfifo(fifo)
    cases: dict[str, tuple[list, tuple[int, ...]]] = {
        "12^3 shell, 2 loose cubes: import": (["import", w("shell12.json"), "--out", w("o1.json")], (1,)),
        "30^3 shell, 3 loose cubes: assemblies --check": (["assemblies", "--check", w("shell30.json")], (1,)),
        "30^3 shell, 20 loose cubes: assemblies --check": (["assemblies", "--check", w("shell30x20.json")], (1,)),
        "xmpuzzle inflating to 20 MB of <a/>": (["import", w("bomb.xmpuzzle"), "--out", w("o3.json")], (2,)),
        "xmpuzzle with a corrupt deflate stream": (["import", w("deflate.xmpuzzle"), "--out", w("o4.json")], (2,)),
        "xmpuzzle in an unknown encoding": (["import", w("encoding.xmpuzzle"), "--out", w("o5.json")], (2,)),
        "7.8 MB assembly file of [{},...]": (["assemblies", "--check", w("dicts.json")], (2,)),
        "19.8 MB JSON puzzle of [] pieces": (["import", w("lists.json"), "--out", w("o6.json")], (2,)),
        "import --time-limit 0.5": (["import", w("shell12.json"), "--out", w("o2.json"), "--time-limit", "0.5"], (1,)),
        "--out a FIFO (import)": (["import", w("shell12.json"), "--out", fifo], (2,)),
        "--out /dev/full (import)": (["import", w("shell12.json"), "--out", "/dev/full"], (2,)),
        "import-answers from a FIFO": (["import-answers", fifo, "--out", w("o7.jsonl")], (2,)),
        "import-answers from /dev/zero": (["import-answers", "/dev/zero", "--out", w("o8.jsonl")], (2,)),
        "--endpoint file:///dev/zero": (["infer", "--endpoint", "file:///dev/zero", "--bench", folder,
                                         "--out", w("o9.jsonl")], (2,)),
        "--retries 40": (["infer", "--endpoint", "http://127.0.0.1:9/v1", "--bench", folder, "--retries", "40",
                          "--out", w("o10.jsonl")], (2,)),
        "--timeout nan": (["infer", "--endpoint", "http://127.0.0.1:9/v1", "--bench", folder, "--timeout", "nan",
                           "--out", w("o11.jsonl")], (2,)),
    }
    if task is not None:
        cases.update(_hostile_task_inputs(folder, task))
    if bench is not None:
        cases.update(_hostile_bench_inputs(folder, bench, fifo))
    return cases


def _hostile_task_inputs(folder: Path, task: Path) -> dict[str, tuple[list, tuple[int, ...]]]:
    """`hostile_inputs`' case on a task folder: a copy whose actual state is millions of JSON values."""
    w = folder.joinpath
    shutil.copytree(task, w("task"), dirs_exist_ok=True)
    w("task", "actual_state.json").write_text(many_values("[", 2_600_000))     # 7.8 MB
    w("output.json").write_text(json.dumps({"annotation": {}, "rework_plan": {"actions": []}}))
    return {"7.8 MB task file of [{},...]: verify": (["verify", w("task"), w("output.json")], (2,))}


def _hostile_bench_inputs(folder: Path, bench: Path, fifo: Path) -> dict[str, tuple[list, tuple[int, ...]]]:
    """`hostile_inputs`' cases on a benchmark: huge benchmark files, a huge predictions file, FIFO outputs."""
    w = folder.joinpath
    cases: dict[str, tuple[list, tuple[int, ...]]] = {}
    sid = json.loads((bench / "manifest.json").read_text())["splits"]["test"][0]
    for name in ("manifest.json", "reference.json"):
        copy = w(f"bench_{name}")
        shutil.copytree(bench, copy, dirs_exist_ok=True)
        target = copy / name if name == "manifest.json" else copy / "tasks" / sid / name
        target.write_text(many_values("[", 16_000_000))                        # 48 MB
        w(f"preds_{name}.jsonl").write_text(json.dumps({"sample_id": sid, "raw_output": "{}"}) + "\n")
        cases[f"48 MB {name} of [{{}},...]: evaluate"] = (
            ["evaluate", "--bench", copy, "--predictions", w(f"preds_{name}.jsonl")], (2,))
    with w("astral.jsonl").open("w", encoding="utf-8") as fh:   # 247 MB: 130 lines of 1.9 MB
        for k in range(130):
            fh.write(json.dumps({"sample_id": f"s{k}", "raw_output": "\U0001F600" + "a" * 1_900_000},
                                ensure_ascii=False) + "\n")
    cases["247 MB predictions, ASCII with one astral character a line: evaluate"] = (
        ["evaluate", "--bench", bench, "--predictions", w("astral.jsonl")], (2,))
    cases["--out a FIFO (requests)"] = (["requests", "--bench", bench, "--out", fifo], (2,))
    cases["--out a FIFO (baseline)"] = (["baseline", "no-op", "--bench", bench, "--out", fifo], (2,))
    return cases

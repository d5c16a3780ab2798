"""`forgeplan bench build|merge|check|stats|export`: the FORGE-Bench-shaped benchmark."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..io.quoting import one_line
from ..io.output import output_path
from ..model.choices import DEFAULT_PROMPT, DEFAULT_TARGETS, OBJECTIVES, PAPER_OBJECTIVES, PROMPTS, TARGETS
from . import emit_json


def register(sub) -> None:
    p = sub.add_parser("bench", help="build, summarise and export the benchmark",
                       description="Build a FORGE-Bench-shaped benchmark of rework tasks, print its composition, "
                                   "or export it as prompt/target pairs for fine-tuning.")
    bsub = p.add_subparsers(dest="bench_command", metavar="ACTION")
    bsub.required = True
    _add_build(bsub)
    m = bsub.add_parser("merge", help="join the shard folders of a sharded build",
                        description="Join the folders written by `bench build --shard K/N` (all N of one build) into "
                                    "one benchmark, byte-identical to a single build with the same options.")
    m.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR", help="the shard folders, 1/N to N/N")
    m.add_argument("--out", required=True, type=output_path, metavar="DIR", help="benchmark folder to write (must not exist)")
    m.set_defaults(func=run_merge)
    _add_check(bsub)
    s = bsub.add_parser("stats", help="print the composition tables",
                        description="Print how a benchmark is composed: tasks per split, condition, fault type, "
                                    "difficulty and assembly, and where each imported assembly came from.")
    s.add_argument("bench", type=Path, metavar="DIR", help="benchmark folder")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=run_stats)
    _add_export(bsub)


def _add_build(bsub) -> None:
    b = bsub.add_parser(
        "build", help="generate tasks with proven-minimal references",
        description="Generate a benchmark folder: tasks over the assemblies in the FORGE-Bench proportions "
                    "(conditions, fault types, difficulty), an assembly-disjoint train/test split, and for each task "
                    "a reference plan that clingo proved minimal and the verifier replayed. The same seed gives "
                    "byte-identical files whatever --jobs is.")
    b.add_argument("--out", required=True, type=output_path, metavar="DIR", help="benchmark folder to write (must not exist)")
    b.add_argument("--tasks", type=int, help="number of tasks, 20 to 100,000; --profile magar: 1574 unless given (default: 4000)")
    b.add_argument("--seed", type=int, default=42, help="seed of the whole build")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default and upper bound: the number of CPUs)")
    b.add_argument("--assemblies", nargs="+", metavar="ID|FILE",
                   help="the library: built-in ids and/or assembly JSON files written by `forgeplan import` "
                        "(default: every built-in). A built-in id wins over a same-named file (write ./NAME for the "
                        "file). Imported assemblies keep the `family` of their file, which the train/test split "
                        "groups by; they must come apart with straight moves, and every id must be unique")
    b.add_argument("--objective", default="moved-parts,actions", choices=[*OBJECTIVES, *PAPER_OBJECTIVES],
                   metavar="OBJECTIVE", help="what every reference is proved minimal in: moved-parts,actions "
                   "(default: fewest moved parts, then actions, MAGAR's J_move first; also `magar`), actions or "
                   "`forge` (fewest actions, FORGE's c*), moved-parts; the proof object of each reference names it")
    b.add_argument("--profile", choices=["forge", "magar"], default="forge",
                   help="forge: FORGE-Bench's composition; magar: MAGAR-Bench's Assembly Decision and Minimal Rework "
                        "families (974 : 600, scaled) with a family-disjoint split")
    b.add_argument("--shard", metavar="K/N", help="build only shard K of N (every N-th batch of one assembly's "
                   "slots); `bench merge` joins the N shard folders into the benchmark a single build writes")
    b.add_argument("--resume", action="store_true",
                   help="finish an interrupted build in --out: keep its complete tasks, build the rest")
    add_executor_arguments(b)
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(func=run_build, reads=("assemblies",))


def _add_export(bsub) -> None:
    e = bsub.add_parser("export", help="write each split as JSONL for SFT (TRL's prompt/completion rows), or a PDDL suite",
                        description="Write each split of a benchmark as JSONL for supervised fine-tuning: one line "
                                    "per task with the prompt and the reference output as the completion; or, with "
                                    "--format pddl, every task that needs repair as an IPC-style planning suite with a "
                                    "costs.csv of proven optimal costs (docs/pddl-suite.md).")
    e.add_argument("bench", type=Path, metavar="DIR", help="benchmark folder")
    e.add_argument("--format", choices=["prompt-completion", "messages", "pddl"], default="prompt-completion",
                   help="prompt-completion: TRL's conversational {prompt, completion} rows (datasets/SFTTrainer read "
                        "them as they are); messages: {sample_id, messages, target}; pddl: an IPC-style suite with "
                        "proven optimal costs (costs.csv)")
    e.add_argument("--prompt", choices=PROMPTS, default=DEFAULT_PROMPT,
                   help="forge: FORGE's prompt contract with the whole public task (default); compact: the action "
                        "signatures and the task's state as short lines (docs/training.md)")
    e.add_argument("--targets", choices=TARGETS, default=DEFAULT_TARGETS,
                   help="order of each reference's actions in the completions: reference (as stored, default); "
                        "structured (disassembly from the outermost layer of the faults' dependency closure in, the "
                        "fixes, reassembly from the innermost layer out: FORGE's Rework Structuring); plain (the same "
                        "actions in a fixed order that ignores the layers). Each is replayed; docs/training.md")
    e.add_argument("--out", type=output_path, help="folder to write into (default DIR/export, or DIR/pddl for --format pddl)")
    e.set_defaults(func=run_export, writes_inside=("export", "pddl"))


def _add_check(bsub) -> None:
    c = bsub.add_parser("check", help="derive again everything a reader trusts; list what is wrong",
                        description="Check a benchmark folder as a reader cannot afford to: every file against the "
                                    "digest its build recorded (SHA256SUMS, named by manifest.json), the manifest, "
                                    "README.md and tasks.jsonl against the task folders, every sample's ids against its "
                                    "folder, every reference replayed, its diagnosis against the task and its fault, "
                                    "its labels and minimal_rework.json derived again, its optimality proved again at "
                                    "the level it claims (optimal, grounded_optimal, or valid), and every Assembly "
                                    "Decision's optimal plans and valid decisions derived again. One line per finding; "
                                    "exit 0 when everything holds, 1 when anything is wrong, 2 when DIR is no benchmark.")
    c.add_argument("bench", type=Path, metavar="DIR", help="benchmark folder")
    c.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default and upper bound: the number of CPUs)")
    c.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                   help="seconds for clingo to prove each optimum again (default 60, what bench build gives it)")
    c.add_argument("--json", action="store_true", help="the findings as one JSON object")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.set_defaults(func=run_check)


def add_executor_arguments(p) -> None:
    """--executor and --address, shared by the commands that run many tasks."""
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local: --jobs worker processes on this machine; ray: Ray tasks, one per batch of an "
                        "assembly's tasks (needs the [distributed] extra); the output is the same")
    p.add_argument("--address", metavar="ADDR",
                   help="with --executor ray: join this running Ray cluster (e.g. ray://head:10001 or auto) "
                        "instead of starting a local one with --jobs CPUs")


def run_build(args) -> int:
    from tqdm import tqdm

    from ..bench.shards import parse_shard
    from ..bench.store import build_bench, stats
    from ..model.errors import InputError

    if args.jobs < 1:
        raise InputError(f"must be at least 1, got {args.jobs}", field="--jobs")
    objective = PAPER_OBJECTIVES.get(args.objective, args.objective)
    if args.profile == "magar":
        if args.shard or args.resume or args.executor != "local":
            raise InputError("--shard, --resume and --executor ray build the forge profile only", field="--profile")
        if objective != "moved-parts,actions":
            raise InputError("the magar profile's references are MAGAR's (fewest moved parts, then actions)",
                             field="--objective")
        return _run_magar_build(args)
    args.tasks = 4000 if args.tasks is None else args.tasks
    shard = parse_shard(args.shard) if args.shard else None
    jobs = args.jobs if args.executor == "ray" else min(args.jobs, os.cpu_count() or 1)
    # drawn from the first finished task on (delay), so that bad input prints only its error line
    with tqdm(total=None if shard else args.tasks, desc="bench build", unit="task", disable=args.quiet,
              file=sys.stderr, delay=1e-6) as bar:
        manifest = build_bench(args.out, args.tasks, args.seed, jobs, progress=bar.update, assemblies=args.assemblies,
                               shard=shard, resume=args.resume, executor=args.executor, address=args.address,
                               objective=objective)
    _print_table(stats(manifest))
    print(f"wrote {len(manifest['records'])} tasks to {one_line(args.out)}" + (f" (shard {args.shard})" if shard else ""))
    return 0


def run_merge(args) -> int:
    from ..bench.shards import merge
    from ..bench.store import stats

    manifest = merge(args.out, args.shards)
    _print_table(stats(manifest))
    print(f"wrote {len(manifest['records'])} tasks to {one_line(args.out)}")
    return 0


def _run_magar_build(args) -> int:
    from tqdm import tqdm

    from ..bench.magar import DEFAULT_TASKS, build_magar_bench

    tasks = DEFAULT_TASKS if args.tasks is None else args.tasks
    with tqdm(total=tasks, desc="bench build (magar)", unit="task", disable=args.quiet, file=sys.stderr, delay=1e-6) as bar:
        manifest = build_magar_bench(args.out, tasks, args.seed, min(args.jobs, os.cpu_count() or 1),
                                     progress=bar.update, assemblies=args.assemblies)
    print(one_line("composition: " + ", ".join(f"{k}={v}" for k, v in manifest["composition"].items())))
    print(one_line(f"split: {manifest['split_rule']}; test families {', '.join(manifest['families']['test'])}"))
    print(f"wrote {tasks} tasks to {one_line(args.out)}")
    return 0


def run_check(args) -> int:
    import math

    from tqdm import tqdm

    from ..bench.check import check_bench, to_json
    from ..model.errors import InputError

    if args.jobs < 1:
        raise InputError(f"must be at least 1, got {args.jobs}", field="--jobs")
    if not (math.isfinite(args.time_limit) and args.time_limit > 0):
        raise InputError(f"must be a positive number of seconds, got {args.time_limit}", field="--time-limit")
    with tqdm(desc="bench check", unit="task", disable=args.quiet, file=sys.stderr, delay=1e-6) as bar:
        findings, samples = check_bench(args.bench, min(args.jobs, os.cpu_count() or 1), bar.update, args.time_limit,
                                        total=lambda n: setattr(bar, "total", n))
    if args.json:
        emit_json(to_json(findings, samples))
    else:
        for f in findings:
            print(one_line(f.line()))
        print(f"{len(findings)} findings in {len({f.file for f in findings})} files" if findings else
              f"all holds: {samples} tasks, every file the one its build wrote")
    return 1 if findings else 0


def run_stats(args) -> int:
    from ..bench.folder import open_bench
    from ..bench.store import stats

    table = stats(open_bench(args.bench, full=True).manifest)
    if args.json:
        emit_json(table)
    else:
        _print_table(table)
    return 0


def run_export(args) -> int:
    from tqdm import tqdm

    from ..bench.export import export_jsonl
    from ..io.output import output_folder
    from ..bench.folder import open_bench

    total = sum(len(v) for v in open_bench(args.bench).manifest["splits"].values())
    if args.format == "pddl":
        return _export_pddl(args, total)
    out = output_folder(args.out or args.bench / "export", create=False)
    with tqdm(total=total, desc="export", unit="task", file=sys.stderr, delay=1e-6) as bar:
        counts = export_jsonl(args.bench, out, progress=bar.update, fmt=args.format, prompt=args.prompt,
                              targets=args.targets)
    print(one_line(f"wrote {', '.join(f'{out / k}.jsonl ({v})' for k, v in counts.items())}"))
    return 0


def _export_pddl(args, total: int) -> int:
    from tqdm import tqdm

    from ..bench.pddl_suite import export_pddl_suite

    out = args.out or args.bench / "pddl"
    with tqdm(total=total, desc="export pddl", unit="task", file=sys.stderr, delay=1e-6) as bar:
        rows = export_pddl_suite(args.bench, out, progress=bar.update)
    from ..bench.pddl_suite import FOLDERS, PARTIAL

    print(f"wrote {len(rows)} problems to {one_line(out)} (folders {', '.join([*FOLDERS, PARTIAL])}; costs.csv, README.md)")
    return 0


def _print_table(table: dict) -> None:
    comp = table["composition"]
    print(one_line("composition: " + ", ".join(f"{k}={v}" for k, v in comp.items())))
    _print_imported(table)
    for key in ("condition", "fault_type", "difficulty", "family"):
        rows = sorted(set(table[key]["train"]) | set(table[key]["test"]))
        print(f"\n{key:<22} {'train':>7} {'test':>7}")
        for r in rows:
            print(f"{one_line(r):<22} {table[key]['train'].get(r, 0):>7} {table[key]['test'].get(r, 0):>7}")
    print(f"\n{'hidden faults':<22} {table['hidden']['train']:>7} {table['hidden']['test']:>7}")


def _print_imported(table: dict) -> None:
    """Where each imported assembly came from, so that the build can be reproduced."""
    files = {a: o for a, o in table["sources"].items() if isinstance(o, dict) and o.get("origin") == "file"}
    if files:
        print(f"\n{'imported assembly':<22} {'train':>7} {'test':>7}  sha256        file")
    for a, o in files.items():
        n = [table["assembly_id"][s].get(a, 0) for s in ("train", "test")]
        print(f"{one_line(a):<22} {n[0]:>7} {n[1]:>7}  {one_line(str(o.get('sha256'))[:12])}  {one_line(o.get('path'))}")

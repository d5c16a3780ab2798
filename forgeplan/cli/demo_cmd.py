"""`forgeplan demo`: the main job on the built-in assemblies (README's first command)."""

from __future__ import annotations

import os
import sys

from ..io.output import output_path


def register(sub) -> None:
    p = sub.add_parser(
        "demo", help="build a benchmark, cross-check it, run the baselines, evaluate, report",
        description="The main job: build a reduced benchmark (400 tasks; --full for 4,000) with proven-minimal "
                    "references, cross-check a sample of test tasks with Fast Downward, run the four baselines, "
                    "score them and write a report (report.md, metrics, plots). Rerunning into the same folder "
                    "replaces the demo's earlier output. Exit 1 when the cross-check finds a disagreement.")
    p.add_argument("--out", type=output_path, default="runs/demo", help="output folder")
    p.add_argument("--full", action="store_true", help="the full 4,000-task benchmark instead of the reduced one")
    p.add_argument("--tasks", type=int, help="benchmark size (default 400, or 4000 with --full)")
    p.add_argument("--seed", type=int, default=42, help="seed of the benchmark build")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: the number of CPUs)")
    p.add_argument("--crosscheck", type=int, default=12, metavar="N", help="test tasks to cross-check with Fast Downward")
    p.add_argument("--force", action="store_true", help="replace an existing output folder even when it holds something other than an earlier demo")
    p.set_defaults(func=run)


def run(args) -> int:
    import shutil

    from tqdm import tqdm

    from ..demo import REDUCED_TASKS, Stage, run_demo
    from ..model.errors import InputError
    from ..io.output import output_folder

    from ..bench.store import check_task_count

    tasks = args.tasks if args.tasks is not None else (4000 if args.full else REDUCED_TASKS)
    check_task_count(tasks)   # before an earlier demo is replaced
    if output_folder(args.out, create=False).exists() and any(args.out.iterdir()):
        earlier_demo = (args.out / "summary.md").is_file() and (args.out / "bench" / "manifest.json").is_file()
        if not (args.force or earlier_demo):
            raise InputError("output folder exists, is not empty and holds no earlier demo (use --force to replace it)",
                             file=str(args.out))
        shutil.rmtree(args.out)
    bar = {}

    def start(name, total):
        bar["b"] = tqdm(total=total, desc=name, unit="task", file=sys.stderr, leave=False)

    def done(message):
        name = bar["b"].desc
        bar["b"].close()
        print(f"[{name}] {message}", flush=True)

    existed = args.out.is_dir()
    try:
        result = run_demo(args.out, tasks=tasks, seed=args.seed, jobs=max(1, args.jobs),
                          crosscheck_sample=args.crosscheck, stage=Stage(start, lambda n: bar["b"].update(n), done))
    except BaseException:
        # a demo that did not finish (full disk, interrupt) leaves nothing that looks like one
        shutil.rmtree(args.out, ignore_errors=True)
        if existed:
            args.out.mkdir()
        raise
    finally:
        if "b" in bar:
            bar["b"].close()   # before the error line, not after it
    print(f"report: {result['report']}")
    return 1 if result["crosscheck"]["disagree"] else 0

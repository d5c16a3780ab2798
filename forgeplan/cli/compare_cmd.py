"""`forgeplan compare RUN_DIR...`: evaluation runs side by side, with intervals and paired tests."""

from __future__ import annotations

from pathlib import Path

from ..io.output import output_path


def register(sub) -> None:
    p = sub.add_parser(
        "compare", help="compare evaluation runs: intervals and paired tests, per stratum",
        description="Compare the run folders `evaluate --out` wrote (their samples.jsonl) on the samples they "
                    "share: per metric, each run's n, figure and 95 %% percentile bootstrap interval, and for each "
                    "pair of runs the difference with a paired bootstrap interval and a sign-flip permutation "
                    "test's p-value; the same per fault type, difficulty and assembly (docs/metrics.md). Prints "
                    "markdown or JSON, or with --out writes compare.md, compare.json and compare.png.")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="folders written by `evaluate --out`")
    p.add_argument("--names", nargs="+", metavar="NAME", help="a name per run (default: the folder names)")
    p.add_argument("--out", type=output_path, metavar="DIR", help="write compare.md, compare.json and compare.png here")
    p.add_argument("--format", choices=["markdown", "json"], default="markdown", help="what to print on stdout (without --out)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..evaluation.compare import compare_runs, load_runs
    from ..evaluation.compare_report import compare_markdown, write_compare
    from ..io.output import output_folder
    from ..io.quoting import json_text

    if args.out:
        output_folder(args.out, create=False)
    result = compare_runs(load_runs(args.runs, args.names))
    if args.out:
        files = write_compare(result, args.out)
        print(f"wrote {', '.join(str(f) for f in files)} ({result['shared_samples']} shared samples)")
    else:
        print(json_text(result) if args.format == "json" else compare_markdown(result))
    return 0

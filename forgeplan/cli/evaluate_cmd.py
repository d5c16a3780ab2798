"""`forgeplan evaluate` and `forgeplan baseline`: score predictions; produce baseline predictions."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..io.output import output_path


class _Once(argparse.Action):
    """An option that may be given once: a repeat is refused (argparse would keep the last silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} is given more than once: evaluate scores one predictions file (evaluate "
                         "each file into its own --out folder)")
        setattr(namespace, self.dest, values)


def register(sub) -> None:
    from .bench_cmd import add_executor_arguments

    e = sub.add_parser(
        "evaluate", help="score a predictions JSONL on a benchmark split",
        description="Verify every prediction of a split against its task and score them with the FORGE metrics "
                    "(SSE, SAPF, VMRE, DGTR, MVE, HRQ, Overall-Core), the MAGAR metrics (MPA, RCA) and the "
                    "ambiguity-aware SSE-any/MVE-any (a --profile magar benchmark: both families from one file, "
                    "OPG, OBA, SGF, IBC on the Assembly Decision samples); --out writes metrics.json, report.md (with a glossary), plots, and the run: run.json and samples.jsonl (one row per "
                    "sample with its verdict, every metric and the raw output; samples.parquet too when pyarrow is installed).")
    e.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark folder")
    e.add_argument("--predictions", required=True, type=Path, metavar="FILE.jsonl", action=_Once,
                   help="one {\"sample_id\", \"raw_output\"} object per line (as `baseline` and `infer` write); "
                        "given once")
    e.add_argument("--extract-json", action="store_true",
                   help="take the one JSON object out of an answer wrapped in a ``` fence or in text (refused when it "
                        "holds several); the report counts them. Default: strict, as FORGE scores raw JSON")
    e.add_argument("--only-predicted", action="store_true",
                   help="score only the samples that have a prediction (default: every sample of the split, a missing "
                        "prediction scoring as a schema failure); the report says how many")
    e.add_argument("--split", default="test", help="benchmark split to score (train or test)")
    e.add_argument("--out", type=output_path, metavar="REPORT_DIR", help="write metrics.json, report.md, plots, run.json and samples.jsonl here")
    e.add_argument("--json", action="store_true", help="print the full metrics JSON")
    e.add_argument("--reference-cost", choices=["forgeplan", "paper"], default="forgeplan",
                   help="forgeplan: the proven (moved parts, actions) optimum; paper: FORGE's c*, the fewest actions "
                        "(solved with clingo per fault sample; every other rule is the paper's either way)")
    e.add_argument("--jobs", type=int, default=1, help="samples scored at a time (worker processes or Ray CPUs)")
    add_executor_arguments(e)
    e.set_defaults(func=run_evaluate)
    b = sub.add_parser(
        "baseline", help="write a baseline's predictions JSONL",
        description="Write the predictions of a non-learned baseline for every task of a split. oracle: the "
                    "reference itself (the ceiling); local-repair: the correct diagnosis, then only each faulty "
                    "part's direct repair, ignoring blockers and locks; greedy-legal: the correct diagnosis, then "
                    "repeatedly the first legal action that brings the state closer to the target; no-op: reports "
                    "no fault and an empty plan (the floor).")
    b.add_argument("name", choices=["oracle", "local-repair", "greedy-legal", "local-heuristic", "no-op"],
                   help="which baseline (a --profile magar benchmark takes oracle, local-heuristic or no-op)")
    b.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark folder")
    b.add_argument("--split", default="test", help="benchmark split (train or test)")
    b.add_argument("--out", required=True, type=output_path, metavar="PREDS.jsonl", help="predictions file to write")
    b.set_defaults(func=run_baseline)


def run_evaluate(args) -> int:
    from tqdm import tqdm

    from ..io.output import together

    from ..evaluation.evaluate import read_predictions, score_split, scored_ids, summarise
    from ..evaluation.report import answer_counts, fmt as _fmt, write_report
    from ..bench.folder import open_bench

    from ..io.output import output_folder
    from ..model.errors import InputError

    if args.jobs < 1:
        raise InputError(f"must be at least 1, got {args.jobs}", field="--jobs")
    if args.out:
        output_folder(args.out, create=False)
    bench = open_bench(args.bench)
    magar = bench.profile == "magar"
    # compact: only the contract reads them; large ones are read back per sample, except on a Ray cluster
    preds = read_predictions(args.predictions, compact=not magar, stored=args.executor != "ray")
    n = len(scored_ids(bench, preds, args.split))
    count = {"split_samples": n, "answered": len(preds), "extract": args.extract_json, "only_predicted": args.only_predicted}
    if magar:
        return _evaluate_magar(args, preds, count)
    with tqdm(total=len(preds) if args.only_predicted else n, desc="evaluate", unit="sample", file=sys.stderr,
              disable=n < 200) as bar:
        samples = score_split(bench, preds, args.split, progress=bar.update, reference_cost=args.reference_cost,
                              jobs=args.jobs, executor=args.executor, address=args.address, extract=args.extract_json,
                              only_predicted=args.only_predicted)
    _warn_missing(n, len(preds), args.only_predicted)
    summary = summarise(samples, args.split, args.reference_cost, answer_counts(samples, **count))
    rows = _with_intervals(args, summary, samples, preds, "forge")
    if args.out:
        with together():   # the report and the run's rows appear together, or neither
            files = write_report(summary, args.out, args.predictions.stem)
            _write_run(args, rows)
        print(f"report: {files[1]}", file=sys.stderr if args.json else sys.stdout)  # --json: stdout is JSON only
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        m = summary["metrics"]
        print("  ".join(f"{k} {_fmt(m[k])}" for k in ("SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ", "Overall-Core")))
        print("  ".join(f"{k} {_fmt(m[k])}" for k in ("SSE-any", "MVE-any", "NoFault-Compliance", "MPA", "RCA")))
    return 0


def _warn_missing(samples: int, answered: int, only_predicted: bool) -> None:
    """Say on stderr how many samples of the split have no prediction, and what becomes of them."""
    missing = samples - answered
    if not missing:
        return
    only = f"--only-predicted scores only the {answered} answered"
    fate = only if only_predicted else "they are scored as schema failures" + (f"; {only}" if answered else "")
    print(f"forgeplan: {missing} of {samples} samples have no prediction; {fate}", file=sys.stderr)


def _evaluate_magar(args, preds, count: dict) -> int:
    from ..io.output import together
    from ..evaluation.magar_eval import magar_summary, print_line, score_magar_split, write_magar_report
    from ..evaluation.report import answer_counts
    from ..model.errors import InputError

    if args.reference_cost != "forgeplan":
        raise InputError("a magar-profile benchmark keeps MAGAR's moved-part-minimal reference; "
                         "--reference-cost applies to FORGE-profile benchmarks", field="--reference-cost")
    samples = score_magar_split(args.bench, preds, args.split, extract=args.extract_json,
                                only_predicted=args.only_predicted)
    _warn_missing(count["split_samples"], count["answered"], args.only_predicted)
    summary = magar_summary(samples, args.split, answer_counts(samples, **count))
    rows = _with_intervals(args, summary, samples, preds, "magar")
    if args.out:
        with together():   # the report and the run's rows appear together, or neither
            files = write_magar_report(summary, args.out, args.predictions.stem)
            _write_run(args, rows)
        print(f"report: {files[1]}", file=sys.stderr if args.json else sys.stdout)
    print(json.dumps(summary, indent=1) if args.json else print_line(summary))
    return 0


def _with_intervals(args, summary: dict, samples: list, preds: dict, profile: str) -> list[dict]:
    """The rows of samples.jsonl; adds each figure's n and bootstrap interval to the summary."""
    from ..evaluation.figures import columns_of
    from ..evaluation.resampling import summary_intervals
    from ..evaluation.rows import FORGE_COLUMNS, MAGAR_COLUMNS, sample_rows

    columns = FORGE_COLUMNS if profile == "forge" else MAGAR_COLUMNS
    rows = sample_rows(args.bench, samples, preds, args.split, columns)
    summary["intervals"] = summary_intervals(columns_of(rows, list(columns)))
    return rows


def _write_run(args, rows: list[dict]) -> None:
    """run.json, samples.jsonl and samples.parquet beside the report."""
    from ..evaluation.run_dir import run_info, write_run

    options = {"reference_cost": args.reference_cost, "extract_json": args.extract_json,
               "only_predicted": args.only_predicted, "jobs": args.jobs, "executor": args.executor}
    write_run(run_info(args.bench, args.predictions, args.split, options, rows), args.out, rows, args.predictions)


def run_baseline(args) -> int:
    from ..bench.folder import open_bench
    from ..io.output import write_file

    bench = open_bench(args.bench)
    ids = bench.split(args.split)
    answer = _baseline_answer(args.name, bench)
    with write_file(args.out) as fh:
        for sid in ids:
            raw = answer(sid)
            fh.write(json.dumps({"sample_id": sid, "raw_output": raw}) + "\n")
    print(f"wrote {len(ids)} predictions to {args.out}")
    return 0


def _baseline_answer(name: str, bench):
    """sample id -> raw output of the baseline; the magar profile has its own three baselines."""
    from ..evaluation.baselines import BASELINES
    from ..evaluation.decision_baselines import MAGAR_BASELINES, magar_answer
    from ..model.errors import InputError

    if bench.profile == "magar":
        if name not in MAGAR_BASELINES:
            raise InputError(f"a magar-profile benchmark takes one of {list(MAGAR_BASELINES)}, got {name!r}", field="name")
        return lambda sid: magar_answer(name, bench, sid)
    if name not in BASELINES:
        raise InputError(f"{name!r} is a baseline of magar-profile benchmarks; use one of {list(BASELINES)}", field="name")
    fn = BASELINES[name]

    def answer(sid: str) -> str:
        sample = bench.rework(sid)
        return fn(sample.task, sample.reference)
    return answer

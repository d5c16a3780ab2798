"""`forgeplan evaluate` and `forgeplan baseline`: score predictions; produce baseline predictions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..io.output import output_path


def register(sub) -> None:
    from .bench_cmd import add_executor_arguments

    e = sub.add_parser(
        "evaluate", help="score a predictions JSONL on a benchmark split",
        description="Verify every prediction of a split against its task and score them with the FORGE metrics "
                    "(SSE, SAPF, VMRE, DGTR, MVE, HRQ, Overall-Core), the MAGAR metrics (MPA, RCA) and the "
                    "ambiguity-aware SSE-any/MVE-any; --out writes metrics.json, report.md (with a glossary) and plots.")
    e.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark folder")
    e.add_argument("--predictions", required=True, type=Path, metavar="FILE.jsonl",
                   help="one {\"sample_id\", \"raw_output\"} object per line (as `baseline` and `infer` write)")
    e.add_argument("--split", default="test", help="benchmark split to score (train or test)")
    e.add_argument("--out", type=output_path, metavar="REPORT_DIR", help="write metrics.json, report.md and plots here")
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

    from ..evaluation.evaluate import read_predictions, score_split, summarise
    from ..evaluation.report import fmt as _fmt, write_report
    from ..bench.store import load_manifest

    from ..io.output import output_folder
    from ..model.errors import InputError

    if args.jobs < 1:
        raise InputError(f"must be at least 1, got {args.jobs}", field="--jobs")
    if args.out:
        output_folder(args.out, create=False)
    magar = load_manifest(args.bench).get("profile") == "magar"
    # compact: only the contract reads them; large ones are read back per sample, except on a Ray cluster
    preds = read_predictions(args.predictions, compact=not magar, stored=args.executor != "ray")
    if magar:
        return _evaluate_magar(args, preds)
    n = len(load_manifest(args.bench)["splits"].get(args.split, []))
    with tqdm(total=n, desc="evaluate", unit="sample", file=sys.stderr, disable=n < 200) as bar:
        samples = score_split(args.bench, preds, args.split, progress=bar.update, reference_cost=args.reference_cost,
                              jobs=args.jobs, executor=args.executor, address=args.address)
    summary = summarise(samples, args.split, args.reference_cost)
    if args.out:
        files = write_report(summary, args.out, args.predictions.stem)
        print(f"report: {files[1]}", file=sys.stderr if args.json else sys.stdout)  # --json: stdout is JSON only
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        m = summary["metrics"]
        print("  ".join(f"{k} {_fmt(m[k])}" for k in ("SSE", "SAPF", "VMRE", "DGTR", "MVE", "HRQ", "Overall-Core")))
        print("  ".join(f"{k} {_fmt(m[k])}" for k in ("SSE-any", "MVE-any", "NoFault-Compliance", "MPA", "RCA")))
    return 0


def _evaluate_magar(args, preds) -> int:
    from ..evaluation.magar_eval import magar_summary, print_line, score_magar_split, write_magar_report
    from ..model.errors import InputError

    if args.reference_cost != "forgeplan":
        raise InputError("a magar-profile benchmark keeps MAGAR's moved-part-minimal reference; "
                         "--reference-cost applies to FORGE-profile benchmarks", field="--reference-cost")
    summary = magar_summary(score_magar_split(args.bench, preds, args.split), args.split)
    if args.out:
        files = write_magar_report(summary, args.out, args.predictions.stem)
        print(f"report: {files[1]}", file=sys.stderr if args.json else sys.stdout)
    print(json.dumps(summary, indent=1) if args.json else print_line(summary))
    return 0


def run_baseline(args) -> int:
    from ..bench.store import load_manifest
    from ..model.errors import InputError
    from ..io.output import write_file

    manifest = load_manifest(args.bench)
    splits = manifest["splits"]
    if args.split not in splits:
        raise InputError(f"no split {args.split!r} (have {sorted(splits)})", field="--split")
    answer = _baseline_answer(args.name, args.bench, manifest.get("profile") == "magar")
    ids = splits[args.split]
    with write_file(args.out) as fh:
        for sid in ids:
            raw = answer(sid)
            fh.write(json.dumps({"sample_id": sid, "raw_output": raw}) + "\n")
    print(f"wrote {len(ids)} predictions to {args.out}")
    return 0


def _baseline_answer(name: str, bench: Path, magar: bool):
    """sample id -> raw output of the baseline; the magar profile has its own three baselines."""
    from ..bench.store import load_sample_task, read_sample_file
    from ..evaluation.baselines import BASELINES
    from ..evaluation.decision_baselines import MAGAR_BASELINES, magar_answer
    from ..model.errors import InputError

    if magar:
        if name not in MAGAR_BASELINES:
            raise InputError(f"a magar-profile benchmark takes one of {list(MAGAR_BASELINES)}, got {name!r}", field="name")
        return lambda sid: magar_answer(name, bench, sid)
    if name not in BASELINES:
        raise InputError(f"{name!r} is a baseline of magar-profile benchmarks; use one of {list(BASELINES)}", field="name")
    fn = BASELINES[name]
    return lambda sid: fn(load_sample_task(bench, sid), read_sample_file(bench, sid, "reference.json"))

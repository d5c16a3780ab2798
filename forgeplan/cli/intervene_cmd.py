"""`forgeplan intervene`: replace a model's answers where the verifier proves a candidate better."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..io.output import output_path


def register(sub) -> None:
    p = sub.add_parser(
        "intervene", help="verifier-gated intervention on a predictions JSONL",
        description="Replace answers of a predictions file by candidates that replace some of their fields "
                    "(MAGAR's residual variants). Rework answers: plan-from-diagnosis keeps the diagnosis and takes "
                    "the proven-minimal plan for it; minimal-edit keeps the diagnosis and takes the valid plan with "
                    "the fewest edits from the model's plan. Decision answers (magar profile): the valid decision "
                    "closest to the answer. Two gates decide, both counted: oracle (the candidate scores no lower on "
                    "every metric of the sample and higher on one, against the stored reference: an upper bound, "
                    "not comparable with MAGAR's learned gate) and deployed (only the verifier on the model's own "
                    "answer and on the candidate, no reference). Prints, per gate, the interventions, corrections, "
                    "introduced errors and the failures split into diagnosis and planning errors, before and after.")
    p.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark folder")
    p.add_argument("--predictions", required=True, type=Path, metavar="FILE.jsonl",
                   help="the anchor answers: one {\"sample_id\", \"raw_output\"} object per line")
    p.add_argument("--out", required=True, type=output_path, metavar="FILE.jsonl", help="the final answers (a JSONL file; replaced if it exists)")
    p.add_argument("--mode", required=True, choices=["plan-from-diagnosis", "minimal-edit"], help="candidate generator")
    p.add_argument("--split", default="test", help="benchmark split the predictions belong to (train or test)")
    p.add_argument("--gate", choices=["oracle", "deployed"], default="oracle",
                   help="whose answers --out gets (both gates are counted)")
    p.add_argument("--reference-cost", choices=["forgeplan", "paper"], default="forgeplan",
                   help="the cost rule of the scores and of the candidate searches, as in `evaluate`")
    p.add_argument("--time-limit", type=float, default=120.0, metavar="SECONDS",
                   help="budget of one candidate search; past it (or past a 200-step edit horizon) the search is "
                        "undecided and the answer stays")
    p.add_argument("--report", type=output_path, metavar="REPORT_DIR", help="write intervention.json and report.md here")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=run_intervene)


def run_intervene(args) -> int:
    from tqdm import tqdm

    from ..evaluation.intervene import InterventionReport, intervene_one
    from ..evaluation.report import write_intervention_report
    from ..io.output import output_folder, together, write_file

    ids, preds = _checked_input(args)
    if args.report:
        output_folder(args.report, "--report", create=False)
    report = InterventionReport(args.mode, args.gate, args.reference_cost)
    with together():   # the answers and the report appear together, or neither
        with write_file(args.out) as fh, \
                tqdm(total=len(ids), desc="intervene", unit="sample", file=sys.stderr, disable=len(ids) < 50) as bar:
            for sid in ids:
                final = intervene_one(args.bench, sid, preds[sid], args.mode, report, args.time_limit)
                fh.write(json.dumps({"sample_id": sid, "raw_output": final}) + "\n")
                bar.update(1)
        summary = report.to_json()
        files = write_intervention_report(summary, args.report, args.predictions.stem) if args.report else None
    if files:
        print(f"report: {files[1]}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    print(f"{args.mode}, reference cost {args.reference_cost}: {summary['samples']} samples, "
          f"{summary['no_candidate']} without a candidate ({summary['undecided']} undecided within the budget)")
    for gate, c in summary["gates"].items():
        print(f"{gate} gate: {c['interventions']} interventions, {c['corrections']} corrections, "
              f"{c['introduced_errors']} introduced errors ({c['rejected_by_gate']} candidates rejected); failures "
              "after: " + ", ".join(f"{k} {v}" for k, v in c["failures_after"].items()))
    print("failures before: " + ", ".join(f"{k} {v}" for k, v in summary["failures_before"].items()))
    print(f"wrote {len(ids)} answers ({args.gate} gate) to {args.out}")
    return 0


def _checked_input(args) -> tuple[list[str], dict[str, str]]:
    """The split's sample ids that have a prediction, and the predictions; bad options are one-line errors."""
    import math

    from ..bench.folder import open_bench
    from ..evaluation.evaluate import read_predictions
    from ..model.errors import InputError

    if not (math.isfinite(args.time_limit) and args.time_limit > 0):
        raise InputError(f"must be a positive number of seconds, got {args.time_limit}", field="--time-limit")
    preds = read_predictions(args.predictions)
    bench = open_bench(args.bench)
    if bench.profile == "magar" and args.reference_cost != "forgeplan":
        raise InputError("a magar-profile benchmark keeps MAGAR's moved-part-minimal reference; "
                         "--reference-cost applies to FORGE-profile benchmarks", field="--reference-cost")
    ids = bench.split(args.split)
    unknown = sorted(set(preds) - set(ids))
    if unknown:
        raise InputError(f"{len(unknown)} predictions are not in split {args.split!r}, e.g. {unknown[:3]}",
                         file=str(args.predictions))
    return [sid for sid in ids if sid in preds], preds

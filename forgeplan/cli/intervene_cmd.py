"""`forgeplan intervene`: replace a model's answers where the verifier proves a candidate better."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "intervene", help="verifier-gated intervention on a predictions JSONL",
        description="Keep each answer of a predictions file unless a candidate that replaces some of its fields "
                    "scores no lower on every metric of the sample and higher on one (MAGAR's residual variants, "
                    "gated by the verifier and the proven reference instead of a learned selector). Rework answers: "
                    "plan-from-diagnosis keeps the diagnosis and takes the proven-minimal plan for it; minimal-edit "
                    "keeps the diagnosis and takes the valid plan with the fewest edits from the model's plan. "
                    "Decision answers (magar profile): the valid decision closest to the answer. Prints the "
                    "interventions, corrections, introduced errors and the failures split into diagnosis and "
                    "planning errors, before and after.")
    p.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark folder")
    p.add_argument("--predictions", required=True, type=Path, metavar="FILE.jsonl",
                   help="the anchor answers: one {\"sample_id\", \"raw_output\"} object per line")
    p.add_argument("--out", required=True, type=Path, metavar="FILE.jsonl", help="the final answers (a JSONL file; replaced if it exists)")
    p.add_argument("--mode", required=True, choices=["plan-from-diagnosis", "minimal-edit"], help="candidate generator")
    p.add_argument("--split", default="test", help="benchmark split the predictions belong to (train or test)")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=run_intervene)


def run_intervene(args) -> int:
    from tqdm import tqdm

    from ..bench.store import load_manifest
    from ..evaluation.evaluate import read_predictions
    from ..evaluation.intervene import InterventionReport, intervene_one
    from ..io.guarded import new_file
    from ..model.errors import InputError

    preds = read_predictions(args.predictions)
    splits = load_manifest(args.bench)["splits"]
    if args.split not in splits:
        raise InputError(f"no split {args.split!r} (have {sorted(splits)})", field="--split")
    unknown = sorted(set(preds) - set(splits[args.split]))
    if unknown:
        raise InputError(f"{len(unknown)} predictions are not in split {args.split!r}, e.g. {unknown[:3]}",
                         file=str(args.predictions))
    report = InterventionReport(args.mode)
    ids = [sid for sid in splits[args.split] if sid in preds]
    with new_file(args.out, "--out") as fh, \
            tqdm(total=len(ids), desc="intervene", unit="sample", file=sys.stderr, disable=len(ids) < 50) as bar:
        for sid in ids:
            final = intervene_one(args.bench, sid, preds[sid], args.mode, report)
            fh.write(json.dumps({"sample_id": sid, "raw_output": final}) + "\n")
            bar.update(1)
    summary = report.to_json()
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{args.mode}: {summary['interventions']} interventions on {summary['samples']} samples, "
              f"{summary['corrections']} corrections, {summary['introduced_errors']} introduced errors "
              f"({summary['rejected_by_gate']} candidates rejected by the gate, {summary['no_candidate']} without one)")
        for when in ("before", "after"):
            print(f"failures {when}: " + ", ".join(f"{k} {v}" for k, v in summary[f"failures_{when}"].items()))
        print(f"wrote {len(ids)} answers to {args.out}")
    return 0

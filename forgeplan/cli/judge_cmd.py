"""`forgeplan judge`: the papers' LLM-as-judge score, through any OpenAI-compatible endpoint."""

from __future__ import annotations

from pathlib import Path

from ..io.output import output_path


def register(sub) -> None:
    j = sub.add_parser(
        "judge", help="LLM-as-judge scores of a predictions file on the papers' subsets, beside the metrics",
        description="Ask a judge model behind an OpenAI-compatible server to score each prediction of the papers' "
                    "fixed subset from 0 to 5: FORGE D.5's rubric (diagnosis consistency, recovery completeness, "
                    "action executability, target-state restoration) on 60 test samples stratified by fault type, "
                    "or MAGAR's on 40 samples of each task family (a --profile magar benchmark). The subset "
                    "depends on the benchmark and --seed only, so every model is judged on the same samples. The "
                    "same client as `infer --endpoint` (key from the environment, --concurrency, retries, every "
                    "answer cached so that a rerun resumes). Writes judge.jsonl (per sample: the automatic metrics "
                    "and the judge's score and reason) and judge.json (the mean score, answers that did not parse, "
                    "Pearson's r per sample against each automatic metric). docs/metrics.md says what the score "
                    "is and is not.")
    j.add_argument("--endpoint", metavar="URL", required=True,
                   help="base URL of an OpenAI-compatible server serving the judge model (e.g. http://localhost:8000/v1)")
    j.add_argument("--served-model", required=True, metavar="NAME", help="the judge model's name on the server")
    j.add_argument("--predictions", type=Path, required=True, help="predictions JSONL to judge")
    j.add_argument("--bench", type=Path, required=True, help="benchmark folder")
    j.add_argument("--split", default="test", help="benchmark split (train or test)")
    j.add_argument("--out", type=output_path, required=True, metavar="DIR", help="write judge.jsonl and judge.json here")
    j.add_argument("--rubric", choices=("forge", "magar"),
                   help="whose rubric and subset (default: the benchmark's profile)")
    j.add_argument("--seed", type=int, default=0, help="the seed of the subset's random draw within each stratum")
    j.add_argument("--extract-json", action="store_true",
                   help="score the automatic metrics as `evaluate --extract-json` does (the judge sees the raw output)")
    j.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="the environment variable holding the API key, sent as a bearer token (never written "
                        "anywhere; unset: no key)")
    j.add_argument("--api", choices=("chat", "completions"), default="chat",
                   help="/v1/chat/completions, or /v1/completions with the messages rendered as one text")
    j.add_argument("--concurrency", type=int, default=8, help="requests in flight at most")
    j.add_argument("--retries", type=int, default=3, help="retries of a request after a 429, a 5xx, a timeout or "
                   "a dropped connection (at most 10)")
    j.add_argument("--timeout", type=float, default=600.0, help="seconds per attempt of a request")
    j.add_argument("--max-tokens", type=int, default=512, help="length limit of the judge's answer")
    j.add_argument("--cache", type=output_path, metavar="DIR",
                   help="folder keeping every answer as it arrives (default: OUT.cache beside --out)")
    j.set_defaults(func=run)


def run(args) -> int:
    import sys

    from ..bench.folder import open_bench
    from ..evaluation.evaluate import read_predictions, scored_ids
    from ..io.output import output_folder
    from ..io.quoting import json_text
    from ..llm.endpoint import EndpointClient
    from ..llm.judge import automatic_rows, judge_requests, judge_subset, judge_summary, judged_rows, read_verdict
    from ..model.errors import InputError
    from .llm_cmd import _note, _sigterm_interrupts

    if args.max_tokens < 1:
        raise InputError(f"must be at least 1, got {args.max_tokens}", field="--max-tokens")
    output_folder(args.out, create=False)
    bench = open_bench(args.bench, full=True)
    manifest = bench.manifest
    rubric = args.rubric or ("magar" if manifest.get("profile") == "magar" else "forge")
    preds = read_predictions(args.predictions)
    scored_ids(bench, preds, args.split)   # refuses predictions outside the split
    ids = judge_subset(manifest, args.split, rubric, args.seed)
    cache = args.cache or args.out.with_name(args.out.name + ".cache")
    client = EndpointClient(args.endpoint, model=args.served_model, key_env=args.api_key_env,
                            concurrency=args.concurrency, retries=args.retries, timeout=args.timeout,
                            cache_dir=cache, say=_note)
    requests = judge_requests(args.bench, ids, preds, rubric, args.api, args.max_tokens)
    with _sigterm_interrupts():
        try:
            answers = client.run(requests)
        except KeyboardInterrupt:
            _note(f"interrupted: {client.sent + client.from_cache} of {len(requests)} answers are kept in {cache}; "
                  "the same command resumes without sending them again")
            return 130
    failed = [a for a in answers if a.error is not None]
    if failed:
        raise InputError(f"{len(failed)} of {len(answers)} requests failed (the answers are kept in {cache}; the "
                         f"same command sends only the failed ones again); {failed[0].id}: {failed[0].error}",
                         field="--endpoint")
    automatic, columns = automatic_rows(args.bench, ids, preds, args.split, args.extract_json)
    rows = judged_rows(automatic, [read_verdict(a.text) for a in answers])
    summary = judge_summary(rows, columns, rubric, args.split, args.seed)
    summary["judge"] = {"endpoint": args.endpoint, "model": args.served_model, "cache": str(cache),
                        "sent": client.sent, "from_cache": client.from_cache}
    _write(rows, args.out, summary)
    if summary["unparsed"]:
        _note(f"{summary['unparsed']} of {len(rows)} judge answers did not parse (judge_error in judge.jsonl); "
              "they have no score")
    print(json_text(summary), end="", file=sys.stdout)
    return 0


def _write(rows: list[dict], out: Path, summary: dict) -> None:
    """judge.jsonl and judge.json, appearing together."""
    import json

    from ..io.output import staged

    with staged(out) as folder:
        with folder.open("judge.jsonl") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        folder.write_json("judge.json", summary)

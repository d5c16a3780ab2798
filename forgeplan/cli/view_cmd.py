"""`forgeplan view RUN_DIR`: one self-contained HTML page to browse an evaluate run's samples."""

from __future__ import annotations

from pathlib import Path

from ..io.output import output_path


def register(sub) -> None:
    p = sub.add_parser(
        "view", help="write one self-contained HTML page to browse the samples of an evaluate run",
        description="Read RUN_DIR (written by `forgeplan evaluate --out RUN_DIR`: run.json and samples.jsonl) and the "
                    "benchmark it names, and write one HTML file that opens offline (style, script, data and "
                    "pictures inlined; no server, no network): the samples filtered by verdict, failure category, "
                    "assembly and fault type, and an opened sample's prediction beside its reference, step by step, "
                    "each step a picture drawn in the page, the failing step framed in red with the engine's reason. "
                    "At most 40 steps of a plan are kept and a raw output is cut to 20,000 characters.")
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="folder written by `evaluate --out`")
    p.add_argument("--bench", type=Path, help="benchmark folder (default: the one run.json names)")
    p.add_argument("--out", type=output_path, help="HTML file to write (default: RUN_DIR/view.html)")
    p.set_defaults(func=run, writes_inside=("view.html",))


def run(args) -> int:
    from tqdm import tqdm

    from ..io.output import check_output, write_text
    from ..model.errors import InputError
    from ..viewer.page import page_data, render_page
    from ..viewer.run import read_run

    out = args.out if args.out is not None else args.run_dir / "view.html"
    if out.suffix.lower() not in (".html", ".htm") or out.is_dir():
        raise InputError("must name an .html file", file=str(out), field="--out")
    check_output(out)
    _, rows, _ = read_run(args.run_dir, args.bench)
    with tqdm(total=len(rows), desc="samples", unit="sample", disable=None, leave=False) as bar:
        data = page_data(args.run_dir, args.bench, progress=bar.update)
    text = render_page(data)
    write_text(out, text)
    drawn = sum("prediction" in s for s in data["samples"])
    print(f"wrote {out} ({len(rows)} samples, {drawn} with a plan to draw; {len(text) / 1e6:.2f} MB; open it in a browser)")
    return 0

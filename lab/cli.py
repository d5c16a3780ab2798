"""`python -m lab NAME`: the benchmarks of lab/perf/ (each prints its figures as JSON) and `report`.

Run from a checkout with forgeplan installed (`pip install -e .`); the laboratory is not part of the
package. Exit codes as forgeplan's: 0 success, 1 a negative verdict (`report --check` finds the page
stale), 2 bad input or usage (one line), 3 a bug.
"""

from __future__ import annotations

import importlib
import pkgutil
import shlex
import sys
import traceback
from pathlib import Path

from forgeplan.cli import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_NEGATIVE, Parser, emit_json
from forgeplan.io.quoting import one_line
from forgeplan.model.errors import ForgeplanError

PROG = "python -m lab"


def build_parser() -> Parser:
    from . import perf

    p = Parser(prog=PROG, description="Measure one of forgeplan's figures (medians over several runs) and print "
                                      "it as JSON with the machine it ran on; --store keeps it for docs/performance.md.")
    psub = p.add_subparsers(dest="benchmark", metavar="BENCHMARK", parser_class=Parser)
    psub.required = True
    for mod in sorted(pkgutil.iter_modules(perf.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):  # a helper of a benchmark, not one itself
            continue
        module = importlib.import_module(f"{perf.__name__}.{mod.name}")
        if not hasattr(module, "NAME"):  # the stored results, not a benchmark
            continue
        doc = (module.__doc__ or "").strip()
        q = psub.add_parser(module.NAME, help=doc.splitlines()[0], description=doc + " Prints the figures as JSON.")
        module.add_arguments(q)
        q.add_argument("--store", type=Path, metavar="DIR", help="also write DIR/NAME.json with the command, "
                       "machine, date and load (docs/results for docs/performance.md)")
        q.set_defaults(func=lambda args, m=module: run_benchmark(m, args))
    r = psub.add_parser("report", help="render docs/performance.md from the stored results",
                        description=f"Render the stored results of `{PROG} NAME --store DIR` (every DIR/*.json) "
                                    "as one markdown page: per run the command, machine, date and load, then its "
                                    "figures as tables. With --check, exit 1 when the page differs from the rendering.")
    r.add_argument("--results", type=Path, default=Path("docs/results"), metavar="DIR", help="the stored results")
    r.add_argument("--out", type=Path, default=Path("docs/performance.md"), metavar="FILE", help="the page written")
    r.add_argument("--check", action="store_true", help="write nothing; exit 1 when --out is not the rendering")
    r.set_defaults(func=run_report)
    return p


def run_benchmark(module, args) -> int:
    result = module.run(args)
    emit_json(result)
    if args.store:
        from .perf.results import store

        words = [w for i, w in enumerate(args.argv) if w != "--store" and (i == 0 or args.argv[i - 1] != "--store")]
        # a benchmark with modes that measure different things stores each under its own name
        name = module.stored_name(args) if hasattr(module, "stored_name") else module.NAME
        store(args.store, name, shlex.join([*PROG.split(), *words]), result)
        if hasattr(module, "figure"):   # drawn from the stored result alone
            module.figure(result, args.store / f"{name}.png")
        if hasattr(module, "keep"):     # files the docs show beside the stored result
            module.keep(result, args.store)
    return 0


def run_report(args) -> int:
    from .perf.results import render

    text = render(args.results)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            print(f"{args.out} is not the rendering of {args.results}: run `{PROG} report`", file=sys.stderr)
            return EXIT_NEGATIVE
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} from {len(list(args.results.glob('*.json')))} stored results")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as typed (--store records it)
    try:
        return int(args.func(args) or 0)
    except ForgeplanError as exc:
        print(f"{PROG}: error: {one_line(exc, 2000)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception:  # noqa: BLE001 - a bug, never a verdict: a developer's tool shows the traceback
        traceback.print_exc()
        return EXIT_INTERNAL

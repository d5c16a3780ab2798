"""`forgeplan perf NAME`: benchmarks that print their figures as JSON (modules of forgeplan.perf)."""

from __future__ import annotations

import importlib
import pkgutil

from . import emit_json


def register(sub) -> None:
    from .. import perf

    p = sub.add_parser("perf", help="run a benchmark and print its figures as JSON",
                       description="Measure one of forgeplan's figures (medians over several runs) and print it as "
                                   "JSON with the machine it ran on; README.md lists each figure with its command.")
    psub = p.add_subparsers(dest="perf_command", metavar="BENCHMARK")
    psub.required = True
    for mod in sorted(pkgutil.iter_modules(perf.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):  # a helper of a benchmark, not one itself
            continue
        module = importlib.import_module(f"{perf.__name__}.{mod.name}")
        doc = (module.__doc__ or "").strip()
        q = psub.add_parser(module.NAME, help=doc.splitlines()[0], description=doc + " Prints the figures as JSON.")
        module.add_arguments(q)
        q.set_defaults(func=lambda args, m=module: emit_json(m.run(args)) or 0)

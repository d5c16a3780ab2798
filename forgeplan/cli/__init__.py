"""Command line: `forgeplan SUBCOMMAND ...`. The only layer that prints or exits.

Each module in this package registers its subcommands with `register(subparsers)`; they are found
automatically, so a feature adds a command by adding a module. Exit codes: 0 success, 1 negative
verdict (invalid plan, disagreement), 2 bad input or usage, 3 internal error (a bug: any exception
that is not a deliberate forgeplan error, so that a crash never reads as a verdict; the traceback is
printed only under `--debug`). Every message echoed from input is escaped onto one line.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
import traceback
from pathlib import Path

from ..io.guarded import check_output
from ..io.quoting import json_text, one_line
from ..model.errors import ForgeplanError

EXIT_OK, EXIT_NEGATIVE, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
STARTED = time.monotonic()   # a command's --time-limit counts from here (start-up included)


class HelpFormatter(argparse.HelpFormatter):
    """Adds "(default: X)" to an option's help unless the help already states its default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # exit 2 with one line (argparse would add the usage line)
        print(f"{self.prog}: error: {one_line(message)} (usage: `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = Parser(prog="forgeplan", description="Verified repair planning for interlocking assemblies. "
                    "`forgeplan COMMAND --help` describes each command.")
    parser.add_argument("--version", action="version", version=f"forgeplan {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error (exit 3)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{mod.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def seconds(text: str) -> float:
    """An argparse type for `--time-limit`: a positive number of seconds, or `inf`."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds or 'inf', got {text!r}")
    return value


def plural(n: int, word: str) -> str:
    """'1 action', '2 actions'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def emit_json(data) -> None:
    """JSON on stdout, valid and printable whatever strings the input smuggled in."""
    print(json_text(data))


def main(argv: list[str] | None = None) -> int:
    global STARTED
    if argv is not None:   # called in process (tests, the fuzzer): each call is a command of its own
        STARTED = time.monotonic()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as typed (`perf --store` records it)
    try:
        if isinstance(getattr(args, "out", None), Path):  # every command's --out, before any work
            check_output(args.out)
        return int(args.func(args) or 0)
    except ForgeplanError as exc:
        print(f"forgeplan: error: {one_line(exc, 2000)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("forgeplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - a bug, never a verdict
        if args.debug:
            traceback.print_exc()
        print(f"forgeplan: internal error (a bug, please report it; --debug shows the traceback): "
              f"{one_line(type(exc).__name__)}: {one_line(exc, 300)}", file=sys.stderr)
        return EXIT_INTERNAL

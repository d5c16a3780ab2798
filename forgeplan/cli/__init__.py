"""Command line: `forgeplan SUBCOMMAND ...`. The only layer that prints or exits.

Each module in this package registers its subcommands with `register(subparsers)`; they are found
automatically, so a feature adds a command by adding a module. Exit codes: 0 success, 1 negative
verdict (invalid plan, disagreement), 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys

from ..errors import ForgeplanError

EXIT_OK, EXIT_NEGATIVE, EXIT_BAD_INPUT = 0, 1, 2


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

    def error(self, message: str):  # argparse prints usage and exits 2; keep that, one line
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = Parser(prog="forgeplan", description="Verified repair planning for interlocking assemblies. "
                    "`forgeplan COMMAND --help` describes each command.")
    parser.add_argument("--version", action="version", version=f"forgeplan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{mod.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def plural(n: int, word: str) -> str:
    """'1 action', '2 actions'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def emit_json(data) -> None:
    print(json.dumps(data, indent=1, ensure_ascii=False))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ForgeplanError as exc:
        print(f"forgeplan: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("forgeplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK

"""Command line: `forgeplan SUBCOMMAND ...`. The only layer that prints or exits.

Each module in this package registers its subcommands with `register(subparsers)`; they are found
automatically, so a feature adds a command by adding a module. Exit codes: 0 success, 1 negative
verdict (invalid plan, disagreement), 2 bad input or usage, or a fault of the environment (a full disk,
a closed output), 3 internal error (a bug: any exception that is not a deliberate forgeplan error, so that a
crash never reads as a verdict; the traceback is printed only under `--debug`), 128 + the signal when one
stopped it (Ctrl-C 130, SIGHUP 129, SIGTERM 143: every worker process is ended and no partial output is
left). Every message echoed from input is escaped onto one line, and text the output's encoding cannot
hold is written as escapes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

from ..io.output import FULL, Inputs, OutPath, OutputError, check_output, protect
from ..io.quoting import json_text, one_line
from ..model.errors import ForgeplanError, Interrupted, interrupt_exit_code

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


def degrees(text: str) -> float:
    """An argparse type for a camera angle: a finite number of degrees within ±1,000,000 (the angle limit)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not abs(value) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected a finite number of degrees (at most 1,000,000 either way), got {text!r}")
    return value


def plural(n: int, word: str) -> str:
    """'1 action', '2 actions'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def emit_json(data) -> None:
    """JSON on stdout, valid and printable whatever strings the input smuggled in (all ASCII escapes when
    the output's encoding cannot hold the text)."""
    text = json_text(data)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(data, indent=1, ensure_ascii=True)
    print(text)


def _paths(value) -> list[Path]:
    return [v for v in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(v, Path)]


def command_inputs(args) -> Inputs:
    """What a command reads: every path argument that is not an output (`io.output.output_path`), and the
    arguments named by `set_defaults(reads=...)` that take an id or a path (`show ASSEMBLY_ID|TASK`) where
    they name an existing file or folder; a command names the places inside an input folder it writes by
    design with `set_defaults(writes_inside=...)`."""
    values = [v for k, v in vars(args).items() if k not in ("writes_inside", "reads")]
    named = [getattr(args, k, None) for k in getattr(args, "reads", ())]
    texts = [t for v in named for t in (v if isinstance(v, (list, tuple)) else [v]) if isinstance(t, str) and t]
    return Inputs.of([p for v in values for p in _paths(v) if not isinstance(p, OutPath)]
                     + [Path(t) for t in texts if os.path.lexists(t)], getattr(args, "writes_inside", ()))


def check_outputs(args) -> None:
    """Every output place of the command, before any work (`io.output.check_output`)."""
    for key, value in vars(args).items():
        for p in _paths(value):
            if isinstance(p, OutPath):
                check_output(p, f"--{key.replace('_', '-')}")


@contextmanager
def interrupts():
    """SIGTERM and SIGHUP end a command as Ctrl-C does (a KeyboardInterrupt, `Interrupted`: workers ended,
    partial outputs removed; exit 128 + the signal); a signal that was ignored when the command started
    (nohup) stays ignored. The interrupt is also noted (`executors.INTERRUPT`), so that one Python swallows
    where it was raised (in a fork's callback) still stops the work at its next check."""
    from ..executors import INTERRUPT

    INTERRUPT.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        INTERRUPT.set(signum)
        raise Interrupted(signum)

    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    for s, h in old.items():
        if h is not signal.SIG_IGN:
            signal.signal(s, stop)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _standard_streams() -> None:
    """Text an output's encoding cannot hold (PYTHONIOENCODING=ascii and a non-ASCII id) is written as
    backslash escapes instead of ending the command; standard output's write errors name it."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    sys.stdout = ClosedStdout() if sys.stdout is None else NamedStdout(sys.stdout)


class NamedStdout:
    """Standard output whose write errors name it (a full device, `> /dev/full`, is then one line that says
    so; a closed pipe stays a BrokenPipeError)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._named(self._stream.write, text)

    def flush(self) -> None:
        self._named(self._stream.flush)

    def _named(self, call, *args):
        try:
            return call(*args)
        except OSError as exc:
            if exc.filename is None and not isinstance(exc, BrokenPipeError):
                exc.filename = STDOUT
            raise

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class ClosedStdout:
    """Standard output when the command was started with it closed (`>&-`): writing the result there is
    one line and exit 2; a command that writes nothing there runs as usual."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        if text:
            raise OutputError("closed, where this command writes its result", file=STDOUT)
        return 0

    def flush(self) -> None:
        pass


STDOUT = "standard output"
NO_TEMP = "No usable temporary directory"   # how tempfile says that none of its candidates can be written


def _stdout_gone() -> None:
    """Point standard output at /dev/null, so that the interpreter's last flush of what could not be
    written raises nothing more."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def _error(message: str) -> int:
    try:
        print(f"forgeplan: error: {one_line(message, 2000)}", file=sys.stderr)
    except (OSError, ValueError):
        pass
    return EXIT_BAD_INPUT


def _interrupted(exc: KeyboardInterrupt) -> int:
    from ..executors import end_children

    main_thread = threading.current_thread() is threading.main_thread()
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if main_thread else ()
    old = {s: signal.signal(s, signal.SIG_IGN) for s in signals}   # a second signal must not cut the clean-up short
    try:
        end_children()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    print("forgeplan: interrupted", file=sys.stderr)
    return interrupt_exit_code(exc)


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
    if argv is None:
        _standard_streams()
    try:
        with interrupts(), protect(command_inputs(args)):
            check_outputs(args)
            code = int(args.func(args) or 0)
            sys.stdout.flush()   # a full or closed standard output is this command's error, not the interpreter's
            return code
    except ForgeplanError as exc:
        return _error(str(exc))
    except KeyboardInterrupt as exc:
        code = _interrupted(exc)
        if argv is None:   # no exit handlers: joining a pool's threads after its workers were ended can hang
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (AttributeError, OSError, ValueError):
                    pass
            os._exit(code)
        return code
    except BrokenPipeError:
        _stdout_gone()
        return _error("output closed (broken pipe): the reader of standard output stopped reading")
    except Exception as exc:  # noqa: BLE001 - a bug, never a verdict
        if isinstance(exc, OSError) and exc.errno in FULL:   # a full disk or standard output
            if exc.filename == STDOUT:
                _stdout_gone()
            return _error(f"{FULL[exc.errno]} while writing {exc.filename or 'a temporary file'}")
        if isinstance(exc, FileNotFoundError) and str(exc.args[-1]).startswith(NO_TEMP):
            return _error("no folder for temporary files can be written (a full disk? TMPDIR names another): "
                          f"{one_line(exc.args[-1], 300)}")
        if args.debug:
            traceback.print_exc()
        print(f"forgeplan: internal error (a bug, please report it; --debug shows the traceback): "
              f"{one_line(type(exc).__name__)}: {one_line(exc, 300)}", file=sys.stderr)
        return EXIT_INTERNAL

"""The library's exceptions; `cli` maps them to exit codes (2 = bad input, 128 + the signal when one stopped it)."""


class ForgeplanError(Exception):
    """Base of every error forgeplan raises on purpose."""


class InputError(ForgeplanError):
    """Bad input: names the file, the field and what was expected."""

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None):
        self.file, self.field, self.reason = file, field, message
        where = ": ".join(x for x in (file, field) if x)
        super().__init__(f"{where}: {message}" if where else message)


class AssemblyError(InputError):
    """An assembly that cannot be used: overlapping voxels, not disassemblable, bad locks."""


class UnknownAssembly(InputError):
    """An assembly id that is neither built in nor a readable file."""


class Interrupted(KeyboardInterrupt):
    """A stop signal (SIGTERM, SIGHUP) raised as Ctrl-C's KeyboardInterrupt, so that every clean-up that
    Ctrl-C runs runs for it too; it keeps the signal, since a command ends with 128 + its number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def interrupt_exit_code(exc: KeyboardInterrupt) -> int:
    """The shell's code for a command a signal stopped: 128 + the signal (Ctrl-C 130, SIGHUP 129, SIGTERM 143)."""
    import signal

    return 128 + getattr(exc, "signum", signal.SIGINT)

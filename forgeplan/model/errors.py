"""The library's exceptions; `cli.py` maps them to exit codes (2 = bad input)."""


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

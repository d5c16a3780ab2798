"""forgeplan: verified repair planning for interlocking assemblies."""

__version__ = "0.1.0"

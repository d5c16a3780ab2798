"""The command line explains itself: every subcommand has a description, every option help text that
states its default."""

from __future__ import annotations

import argparse

import pytest

from forgeplan.cli import HelpFormatter, build_parser
from lab.cli import build_parser as lab_parser


def commands(parser: argparse.ArgumentParser, prefix: str = "forgeplan"):
    """(name, parser) of every subcommand, nested ones included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from commands(sub, f"{prefix} {name}")


COMMANDS = {**dict(commands(build_parser())), **dict(commands(lab_parser(), "python -m lab"))}  # and the laboratory's


def test_there_are_commands():
    assert {"forgeplan verify", "forgeplan task make", "forgeplan plan-external", "python -m lab solve"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_has_a_description(name):
    description = COMMANDS[name].description or ""
    assert len(description) >= 40, f"{name}: no one-paragraph description"


def silent_default(action: argparse.Action) -> bool:
    """True when an option has a default a user would need to know and its shown help does not state it."""
    if action.default in (None, False, argparse.SUPPRESS) or action.option_strings == []:
        return False
    return "default" not in HelpFormatter("forgeplan")._get_help_string(action)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help_with_its_default(name):
    bad = [a.dest for a in COMMANDS[name]._actions
           if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
           and (not a.help or silent_default(a))]
    assert not bad, f"{name}: options without help or without their default: {bad}"


def test_defaults_are_shown():
    text = COMMANDS["forgeplan bench build"].format_help()
    assert "(default: 4000)" in text and "(default: 42)" in text


def test_choices_with_commas_are_not_mangled_in_help():
    for name, parser in COMMANDS.items():
        text = parser.format_help()
        assert "{moved-parts,actions," not in text, name


OUTPUT_OPTIONS = ("--out", "--report", "--store")


@pytest.mark.parametrize("name", sorted(n for n in COMMANDS if n.startswith("forgeplan")))
def test_every_output_option_goes_through_the_writer(name):
    """An option that names a place to write takes `io.output.output_path`: the command line then refuses an
    empty name, and checks the place (a link, an input of the command, a FIFO) before any work."""
    from forgeplan.io.output import output_path

    bad = [a.dest for a in COMMANDS[name]._actions
           if set(a.option_strings) & set(OUTPUT_OPTIONS) and a.type is not output_path]
    assert not bad, f"{name}: output options not typed output_path: {bad}"

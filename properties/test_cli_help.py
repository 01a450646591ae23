"""The command lines describe themselves: every `--help` of fuzz, corpora, reports, benchmarks and mutation (each
subcommand too) says what the command does, gives every option a help text, and carries no stale wording ("as
they land", TODO, "not yet").

Plants: the former corpora description "(and, as they land, corpus building and comparisons)" -> test_no_stale_help
fails naming `corpora`; `help=` removed from `corpora compare --levels` -> test_every_option_has_help fails naming it.
"""

from __future__ import annotations

import argparse
import re

import pytest
from delta_suite.benchmarks.__main__ import build_parser as benchmarks_parser
from delta_suite.corpora.cli import build_parser as corpora_parser
from delta_suite.fuzz.cli import build_parser as fuzz_parser
from delta_suite.reports.cli import build_parser as reports_parser

from mutation.cli import _parser as mutation_parser

STALE = re.compile(r"as they land|\bTODO\b|\bFIXME\b|\bnot yet\b|\bcoming soon\b|\bplaceholder\b", re.IGNORECASE)


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser and subparser, by its command line."""
    out = []
    todo = [(p.prog, p) for p in (fuzz_parser(), corpora_parser(), reports_parser(), benchmarks_parser(),
                                  mutation_parser())]
    while todo:
        name, parser = todo.pop(0)
        out.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", p) for sub, p in action.choices.items()]
    return out


@pytest.mark.parametrize(("name", "parser"), _parsers(), ids=lambda v: v if isinstance(v, str) else "")
def test_no_stale_help(name: str, parser: argparse.ArgumentParser) -> None:
    text = parser.format_help()
    assert not STALE.search(text), f"{name} --help: stale wording {STALE.search(text).group(0)!r}"


def test_every_option_has_help() -> None:
    missing = [f"{name} {a.option_strings[0] if a.option_strings else a.dest}" for name, parser in _parsers()
               for a in parser._actions
               if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and not a.help]
    assert not missing, "options without a help text: " + ", ".join(missing)


def test_every_command_says_what_it_does() -> None:
    """Each command has a description, and each subcommand a line in its parent's listing."""
    parsers = _parsers()
    assert len(parsers) > 15
    bare = [name for name, parser in parsers if " " not in name.removeprefix("python -m ")
            and not (parser.description or "").strip()]
    bare += [f"{name} {c.dest}" for name, parser in parsers for a in parser._actions
             if isinstance(a, argparse._SubParsersAction) for c in a._choices_actions if not c.help]
    assert not bare, "commands that do not say what they do: " + ", ".join(bare)


def _defaults_unsaid() -> list[str]:
    """Options that take a value and have a default their help text does not state."""
    out = []
    for prog, parser in _parsers():
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
                continue
            shown = (action.help or "") % {"default": action.default} if "%(default)" in (action.help or "") else ""
            if "default" not in (action.help or "").lower() and not shown:
                out.append(f"{prog} {action.option_strings[-1]}")
    return out


def test_every_option_with_a_default_states_it() -> None:
    """An option that takes a value and has a default says the default in its help (in words or %(default)s), so
    `--help` tells what happens when it is left out. Plant: "(default: %(default)s)" removed from `corpora compare
    --workers` -> the test names it."""
    assert _defaults_unsaid() == []

"""The suite's command lines and their argparse parsers, taken from the code itself (never copied).

`COMMANDS` lists every command a user types. `parser_of(command)` returns the live parser: a module's
`build_parser()` where it has one, else the parser its `main()` builds, caught at the moment `main()` asks it to
parse (nothing of the command runs past that point). The reference pages are rendered from these parsers at build
time (`gen_reference.py`), and the docs test parses the documented command lines with the same parsers
(`properties/test_docs.py`), so a page cannot describe an option the code does not have.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One command line: how it is typed, the module holding its parser and the attribute that builds it."""
    typed: str
    module: str
    builder: str  # "build_parser" (or another zero-argument builder), or "main" (the parser main() builds)
    page: str  # the reference page's file name under reference/commands/


COMMANDS: tuple[Command, ...] = (
    Command("fuzz", "delta_suite.fuzz.cli", "build_parser", "fuzz.md"),
    Command("corpora", "delta_suite.corpora.cli", "build_parser", "corpora.md"),
    Command("reports", "delta_suite.reports.cli", "build_parser", "reports.md"),
    Command("python -m delta_suite.controls.kill_matrix", "delta_suite.controls.kill_matrix", "main", "kill-matrix.md"),
    Command("python -m delta_suite.spec.admission_cli", "delta_suite.spec.admission_cli", "build_parser",
            "admission.md"),
    Command("python -m delta_suite.spec.proofs", "delta_suite.spec.proofs.__main__", "main", "proofs.md"),
    Command("python -m delta_suite.benchmarks", "delta_suite.benchmarks.__main__", "main", "benchmarks.md"),
    Command("python -m delta_suite.benchmarks.gate_compare", "delta_suite.benchmarks.gate_compare", "main",
            "gate-compare.md"),
    Command("python -m mutation", "mutation.cli", "_parser", "mutation.md"),
    Command("python -m delta_suite.reports.transcripts", "delta_suite.reports.transcripts", "main", "transcripts.md"),
    Command("python -m delta_suite.fuzz.campaign_tokenizers", "delta_suite.fuzz.campaign_tokenizers", "main",
            "campaign-tokenizers.md"),
    Command("python -m delta_suite.ledger.job", "delta_suite.ledger.job", "main", "ledger-job.md"),
    Command("python -m delta_suite.subjects.prefetch", "delta_suite.subjects.prefetch", "main", "prefetch.md"),
)


class _Caught(Exception):
    """Raised in place of parsing: carries the parser main() built."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def parser_of(command: Command) -> argparse.ArgumentParser:
    """The parser `command` uses. For a `main` builder, main([]) runs only until it asks its parser to parse."""
    build = getattr(importlib.import_module(command.module), command.builder)
    if command.builder != "main":
        return build()
    saved = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args

    def catch(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Caught(self)

    argparse.ArgumentParser.parse_args = argparse.ArgumentParser.parse_known_args = catch  # type: ignore[method-assign]
    try:
        build([])
    except _Caught as caught:
        return caught.parser
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = saved  # type: ignore[method-assign]
    raise RuntimeError(f"{command.module}.main() returned without parsing its arguments")


def command_for(argv: list[str]) -> tuple[Command, list[str]] | None:
    """The catalogued command an argv (as typed in a shell) runs, and the arguments its parser gets; None for a
    program this catalogue does not hold."""
    for command in sorted(COMMANDS, key=lambda c: -len(c.typed.split())):
        words = command.typed.split()
        head = argv[: len(words)]
        if head and head[0] in ("python", "python3") and words[0] == "python":
            head = ["python", *head[1:]]
        if head == words:
            return command, argv[len(words):]
    return None

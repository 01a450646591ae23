"""Build-time pages (mkdocs-gen-files runs this): the command reference from the live argparse parsers, the
tokenizer registry from `frozen/registry.json`, the error types and their exit statuses, the ledger record schema
and the exec: subject protocol, each from the code that defines it. Nothing here is copied by hand."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from pathlib import Path

import mkdocs_gen_files

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cli_catalogue  # noqa: E402  (docs/_tools is not a package: its folder is put on the path above)
from delta_suite.frozen import errors as frozen_errors  # noqa: E402
from delta_suite.frozen import export_user_files  # noqa: E402
from delta_suite.frozen.registry import REGISTRY_PATH, rows  # noqa: E402
from delta_suite.ledger import records  # noqa: E402
from delta_suite.subjects import exec_protocol  # noqa: E402

EXIT_CODES_PAGE = "../exit-codes.md"
PUBLIC_PACKAGES = ("frozen", "spec", "delta", "ledger", "controls", "subjects")


def cell(text: object) -> str:
    """One Markdown table cell: no line breaks, no bare pipes or angle brackets."""
    s = " ".join(str(text).split())
    return s.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def default_of(action: argparse.Action) -> str:
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._CountAction)):
        return "off" if action.default in (False, None, 0) else f"`{action.default}`"
    if action.default in (None, argparse.SUPPRESS) or action.required:
        return "required" if action.required and action.nargs not in ("*", "?") else "-"
    if isinstance(action.default, (list, tuple)):
        return "`" + " ".join(map(str, action.default)) + "`" if action.default else "-"
    return f"`{action.default}`"


def option_rows(parser: argparse.ArgumentParser) -> list[str]:
    """A Markdown table of the parser's own arguments (subcommands are rendered as sections of their own)."""
    formatter = parser._get_formatter()
    out = ["| argument | default | what it does |", "|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        invocation = formatter._format_action_invocation(action)
        helptext = formatter._expand_help(action) if action.help and action.help != argparse.SUPPRESS else ""
        if action.choices and not isinstance(action.choices, dict):
            helptext += f" (one of: {', '.join(map(str, action.choices))})"
        out.append(f"| `{cell(invocation)}` | {default_of(action)} | {cell(helptext) or '-'} |")
    return out


def subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each subcommand, in declaration order."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((name, helps.get(name, ""), sub))
    return found


def render(parser: argparse.ArgumentParser, level: int) -> list[str]:
    """The section of one parser, then of each of its subcommands one heading level down."""
    lines = [f"{'#' * level} `{parser.prog}`", ""]
    if parser.description:
        lines += ["```text", parser.description.strip(), "```", ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    lines += option_rows(parser) + [""]
    subs = subcommands(parser)
    if subs:
        lines += ["| subcommand | what it does |", "|---|---|"]
        lines += [f"| `{name}` | {cell(helptext) or '-'} |" for name, helptext, _ in subs] + [""]
        for _, _, sub in subs:
            lines += render(sub, min(level + 1, 6))
    return lines


def command_pages() -> None:
    index = ["# Commands", "",
             "Generated at build time from the argparse parsers themselves (`docs/_tools/cli_catalogue.py`): every",
             "option, subcommand and default below is the code's. Exit statuses are the same for every command:",
             f"see [exit codes]({EXIT_CODES_PAGE}). The set-up script `./run` is described in",
             "[`./run`](../run.md).", "", "| command | page |", "|---|---|"]
    for command in cli_catalogue.COMMANDS:
        parser = cli_catalogue.parser_of(command)
        body = [f"<!-- generated from {command.module}.{command.builder}; do not edit -->", ""]
        body += [f"Exit statuses: see [exit codes]({EXIT_CODES_PAGE}).", ""]
        body += render(parser, 1)
        with mkdocs_gen_files.open(f"reference/commands/{command.page}", "w") as f:
            f.write("\n".join(body))
        index.append(f"| `{command.typed}` | [{command.page.removesuffix('.md')}]({command.page}) |")
    with mkdocs_gen_files.open("reference/commands/index.md", "w") as f:
        f.write("\n".join(index) + "\n")


def tokenizer_page() -> None:
    out = ["# The tokenizer registry", "",
           f"Generated from `{REGISTRY_PATH.relative_to(REGISTRY_PATH.parents[1])}` "
           f"(`delta_suite.frozen.registry.rows()`) at "
           "build time. Provisioning and the sources are described in",
           "[the frozen tokenizers](../explanation/frozen-tokenizers.md).", "",
           "| name | alias | hub repository @ revision | normalizer | margin | bound | split pattern | package | "
           "recipe | files (sha256, bytes) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows():
        package = (f"{row.package_source.registry} `{row.package_source.package}=={row.package_source.version}`"
                   if row.package_source else "-")
        recipe = "yes" if row.recipe else "-"
        files = "; ".join(f"`{name}` `{d.sha256[:12]}…` {d.size:,}" for name, d in row.files.items())
        siblings = "; ".join(f"sibling `{name}` `{d.sha256[:12]}…` ({cell(d.source or d.note)})"
                             for name, d in row.known_siblings.items())
        out.append(f"| `{row.name}` | `{row.alias}` | `{row.repo_id}` @ `{row.revision[:12]}` | {row.normalizer} | "
                   f"{row.margin} | {row.bound} | {row.split_pattern} | {cell(package)} | {recipe} | "
                   f"{cell(files)}{'; ' + cell(siblings) if siblings else ''} |")
    with mkdocs_gen_files.open("reference/tokenizers.md", "w") as f:
        f.write("\n".join(out) + "\n")


def error_classes() -> list[type]:
    seen, todo = [], [frozen_errors.SuiteError]
    while todo:
        cls = todo.pop(0)
        seen.append(cls)
        todo += sorted(cls.__subclasses__(), key=lambda c: (c.__module__, c.__name__))
    return seen


def error_page() -> None:
    out = ["# Error types", "",
           "Generated from the subclasses of `delta_suite.frozen.errors.SuiteError` loaded by the commands: each is "
           "printed as one",
           "line (`error: ...`), never a traceback, and exits with its status. See [exit codes](exit-codes.md).", "",
           "| error | module | exit status | what it means |", "|---|---|---|---|"]
    for cli in cli_catalogue.COMMANDS:  # import every command so the errors its modules define are listed
        cli_catalogue.parser_of(cli)
    for cls in error_classes():
        doc = (inspect.getdoc(cls) or "").split("\n\n")[0]
        out.append(f"| `{cls.__name__}` | `{cls.__module__}` | {cls.exit_code} | {cell(doc)} |")
    with mkdocs_gen_files.open("reference/error-types.md", "w") as f:
        f.write("\n".join(out) + "\n")


def ledger_page() -> None:
    example = records.make_record("fuzz", "chunked", "cut.example", tokenizer="qwen3_8b", comparisons=3,
                                  unit="cuts", oracle="reference", details={"cases": 3})
    example["provenance"] = {k: "..." for k in example["provenance"]}
    out = ["# The ledger record schema", "",
           "Generated from `ledger/records.py` at build time.", "",
           "```text", inspect.getdoc(records).strip(), "```", "",
           f"Schema identifier: `{records.SCHEMA}`.", "",
           "## Levels", "", ", ".join(f"`{level}`" for level in records.LEVELS), "",
           "## Oracles", "", "| oracle | what the record's outputs were compared with |", "|---|---|"]
    out += [f"| `{name}` | {cell(meaning)} |" for name, meaning in records.ORACLES.items()]
    out += [f"| `{records.UNKNOWN_ORACLE}` | a record naming no oracle (an older ledger); never read as `reference` |",
            "", "## Making a record", "", "```python", f"def make_record{inspect.signature(records.make_record)}",
            "```", "", cell(inspect.getdoc(records.make_record)), "",
            "A record as `make_record` returns it (provenance values elided):", "",
            "```json", json.dumps(example, indent=1), "```", "",
            "## Identity", "",
            "Fields that make a record's outcome (`delta_suite.ledger.records.OUTCOME_FIELDS`): "
            + ", ".join(f"`{f}`" for f in records.OUTCOME_FIELDS) + "; and of `details`: "
            + ", ".join(f"`{f}`" for f in records.OUTCOME_DETAILS) + ".", ""]
    with mkdocs_gen_files.open("reference/ledger-schema.md", "w") as f:
        f.write("\n".join(out))


def exec_protocol_page() -> None:
    schema = exec_protocol.SCHEMA_FILE.read_text(encoding="utf-8")
    out = ["# The exec: subject protocol", "",
           "Generated from `subjects/exec_protocol.py` and its schema at build time. How to write such a server:",
           "[certify your own implementation](../how-to/own-implementation.md).", "",
           f"Protocol version: `{exec_protocol.PROTOCOL}`; paths a server may offer: "
           + ", ".join(f"`{p}`" for p in exec_protocol.PATHS) + ".", "",
           "```text", inspect.getdoc(exec_protocol).strip(), "```", "",
           f"## Schema (`subjects/{exec_protocol.SCHEMA_FILE.name}`)", "", "```json", schema.strip(), "```", ""]
    with mkdocs_gen_files.open("reference/exec-protocol.md", "w") as f:
        f.write("\n".join(out))


def python_api_page() -> None:
    out = ["# Python API", "",
           "Generated at build time from `__all__` of the public packages. Examples:",
           "[the frozen tokenizers](../explanation/frozen-tokenizers.md),",
           "[the two propositions](../explanation/propositions.md),",
           "[the minimal implementation](../explanation/minimal-implementation.md).", ""]
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        out += [f"## `{package}`", "", "| name | signature | what it guarantees |", "|---|---|---|"]
        for name in module.__all__:
            obj = getattr(module, name)
            try:
                signature = str(inspect.signature(obj)) if callable(obj) else ""
            except (TypeError, ValueError):
                signature = ""
            doc = (inspect.getdoc(obj) or "").split("\n\n")[0] if callable(obj) else ""
            out.append(f"| `{name}` | `{cell(signature)}` | {cell(doc) or '-'} |" if signature
                       else f"| `{name}` | - | {cell(doc) or '-'} |")
        out.append("")
    with mkdocs_gen_files.open("reference/python-api.md", "w") as f:
        f.write("\n".join(out))


def export_user_files_page() -> None:
    out = ["# `python -m delta_suite.frozen.export_user_files`", "",
           "Generated from the module's docstring (the command takes no options: `PATH` or `NAME=PATH`, repeated).",
           "Exit statuses: see [exit codes](exit-codes.md).", "",
           "```text", inspect.getdoc(export_user_files).strip(), "```", ""]
    with mkdocs_gen_files.open("reference/export-user-files.md", "w") as f:
        f.write("\n".join(out))


def run_script_section() -> None:
    """Appends to the hand-written `./run` page the script's own usage comment."""
    script = Path(__file__).resolve().parents[2] / "run"
    usage = [line[2:] for line in script.read_text(encoding="utf-8").splitlines()[1:] if line.startswith("# ")]
    with mkdocs_gen_files.open("reference/run.md", "a") as f:
        f.write("\n## Usage (from the script's header, generated)\n\n```text\n" + "\n".join(usage) + "\n```\n")


command_pages()
tokenizer_page()
python_api_page()
export_user_files_page()
run_script_section()
error_page()
ledger_page()
exec_protocol_page()

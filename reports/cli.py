"""`reports`: generated reports from ledgers; `reports table3` writes Table 3 as Markdown, HTML, JSON and CSV."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from delta_suite.frozen.errors import EnvironmentFault, os_error_message, run_command
from delta_suite.frozen.provision import status
from delta_suite.reports.diff import diff_reports, load_report
from delta_suite.reports.render_data import render_csv, render_json
from delta_suite.reports.render_md import render_markdown
from delta_suite.reports.table3 import ReportInputError, Table3, build_table3, load_records
from delta_suite.reports.verdict import verdict

FORMATS = ("md", "html", "json", "csv")


def parse_formats(text: str) -> list[str]:
    """Comma-separated formats, each one of FORMATS, in FORMATS order; anything else is a clear error."""
    wanted = [f.strip().lower() for f in text.split(",") if f.strip()]
    unknown = [f for f in wanted if f not in FORMATS]
    if unknown or not wanted:
        shown = ", ".join(unknown) or repr(text)
        raise ReportInputError(f"unknown report format {shown}; choose from {','.join(FORMATS)}")
    return [f for f in FORMATS if f in wanted]


def provisioning_status() -> list[dict]:
    """The provisioning line of every registry row, without re-hashing (the loader re-hashes on use)."""
    return status(rehash=False)


def render(model: Table3, formats: list[str]) -> dict[str, str]:
    """File name -> text for the requested formats."""
    out: dict[str, str] = {}
    if "md" in formats:
        out["table3.md"] = render_markdown(model)
    if "html" in formats:
        from delta_suite.reports.render_html import (
            render_html,  # heavy optional: matplotlib, for the plots; only when asked for
        )

        out["table3.html"] = render_html(model)
    if "json" in formats:
        out["table3.json"] = render_json(model)
    if "csv" in formats:
        out.update(render_csv(model))
    return out


def write_files(out_dir: Path, files: dict[str, str]) -> list[Path]:
    """Write each file atomically (temporary file, then rename) into out_dir; returns the paths written."""
    if out_dir.exists() and not out_dir.is_dir():
        raise EnvironmentFault(f"--out {out_dir}: exists and is not a folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in sorted(files.items()):
            path = out_dir / name
            tmp = out_dir / f".{name}.tmp-{os.getpid()}"
            tmp.write_text(text, encoding="utf-8", newline="\n")
            os.replace(tmp, path)
            written.append(path)
    except OSError as exc:
        raise EnvironmentFault(f"cannot write the report into {out_dir}: {os_error_message(exc)}") from exc
    return written


def gate_ledger_dir() -> Path:
    """Where the gate writes its ledger (the latest run only): $DELTA_LEDGER_DIR, else out/ledgers/gate."""
    return Path(os.environ.get("DELTA_LEDGER_DIR", "out/ledgers/gate"))


def _cmd_table3(args: argparse.Namespace) -> int:
    formats = parse_formats(args.format)
    if args.gate and args.ledgers:
        raise ReportInputError("--gate reads the gate's own ledger folder; give --ledgers or --gate, not both")
    ledgers = [gate_ledger_dir()] if args.gate else [Path(p) for p in (args.ledgers or ["out/ledgers"])]
    if args.gate and not gate_ledger_dir().is_dir():
        raise ReportInputError(f"no gate ledger at {gate_ledger_dir()}: run the gate first (./run test)")
    records, errors, files = load_records(ledgers)
    model = build_table3(records, provisioning=provisioning_status(), ledger_errors=errors, ledger_files_read=files)
    written = write_files(Path(args.out), render(model, formats))
    for e in model.ledger_errors:
        print(f"warning: {e.file}:{e.line}: {e.reason} (reported in the output)", file=sys.stderr)
    diffs = sum(r.total.differences for r in model.rows if r.level != "control")
    print(
        f"table3: {len(records)} records from {len(files)} ledger files, {len(model.rows)} rows, "
        f"{diffs} differences outside the controls, {len(errors)} unusable ledger lines"
    )
    for path in written:
        print(f"wrote {path}")
    result = verdict(model)
    print(result.line)
    if args.require_pass and result.passed and result.open_obligations and not args.allow_open:
        print(f"--require-pass: {result.open_obligations} obligations open (give --allow-open to accept)",
              file=sys.stderr)
        return 1
    return 1 if args.require_pass and not result.passed else 0


def _cmd_diff(args: argparse.Namespace) -> int:
    result = diff_reports(load_report(Path(args.old)), load_report(Path(args.new)))
    for line in result.regressions:
        print(f"regression: {line}")
    for line in result.changes:
        print(f"change: {line}")
    print(f"{len(result.regressions)} regressions, {len(result.changes)} other changes")
    return 1 if result.regressions else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reports", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    t3 = sub.add_parser(
        "table3",
        help="Table 3: what was checked at each level, how much, and what differed, per tokenizer",
        description="Build Table 3 from ledger records (JSON lines). Unusable ledger lines are listed in the "
        "report with their file and line; they are never skipped silently.",
    )
    t3.add_argument("--ledgers", nargs="+", metavar="PATH", help="ledger folders or files (default: out/ledgers)")
    t3.add_argument("--out", default="out/report", metavar="DIR", help="output folder (default: out/report)")
    t3.add_argument("--format", default=",".join(FORMATS),
        help=f"comma-separated subset of {','.join(FORMATS)} (default: all of them)")
    t3.add_argument("--gate", action="store_true",
                    help="render the gate's own ledger ($DELTA_LEDGER_DIR or out/ledgers/gate: its latest run)")
    t3.add_argument("--require-pass", action="store_true",
                    help="exit 1 unless the verdict (the last line printed) is PASS with every applicable "
                    "obligation discharged")
    t3.add_argument("--allow-open", action="store_true",
                    help="with --require-pass: accept a PARTIAL verdict with obligations open")
    t3.set_defaults(func=_cmd_table3)
    df = sub.add_parser(
        "diff",
        help="what changed between two reports (table3.json); exit 1 on a regression",
        description="Compare two Table 3 reports: new differences, lost coverage, obligations that left "
        "'discharged' or failed, controls no longer killed, a verdict gone from PASS to FAIL are regressions "
        "(exit 1); other changes are listed. Exit 2 when a file is missing or not a report.",
    )
    df.add_argument("old", help="the earlier table3.json (or its folder)")
    df.add_argument("new", help="the later table3.json (or its folder)")
    df.set_defaults(func=_cmd_diff)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())

"""Table 3 as data for tools: one JSON document and CSV files (rows, breakdown, kill matrix, unusable lines).

A figure that was not recorded is null in JSON and empty in CSV, never 0.
"""

from __future__ import annotations

import csv
import io
import json

from delta_suite.reports.table3 import Table3
from delta_suite.reports.verdict import verdict


def render_json(model: Table3) -> str:
    """The model as sorted, indented JSON (byte-stable for a given model), with its verdict."""
    data = model.to_dict()
    result = verdict(model)
    data["verdict"] = {"passed": result.passed, "line": result.line, "problems": result.problems,
                       "open_obligations": result.open_obligations}
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def _csv(header: list[str], rows: list[list[object]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def _share(value: float | None) -> str | None:
    return None if value is None else f"{value:.6f}"


def rows_csv(model: Table3) -> str:
    """One line per row of Table 3."""
    header = [
        "section", "level", "check", "control", "unit", "title", "records", "failed_records", "comparisons",
        "differences", "fast_path", "fallbacks", "fast_share", "mostly_fell_back", "tokenizers_covered",
        "registry_tokenizers", "control_status", "counts",
    ]
    body = [
        [r.section, r.level, r.check, r.control, r.unit, r.title, r.total.records, r.total.failed_records,
         r.total.comparisons, r.total.differences, r.total.fast_path, r.total.fallbacks,
         _share(r.total.fast_share), r.mostly_fell_back, len(r.covered), r.registry_total, r.control_status,
         json.dumps(r.counts, sort_keys=True) if r.counts else None]
        for r in model.rows
    ]
    return _csv(header, body)


def breakdown_csv(model: Table3) -> str:
    """One line per (row, tokenizer), all eleven registry tokenizers included, with their status."""
    header = [
        "section", "level", "check", "control", "unit", "tokenizer", "status", "records", "failed_records",
        "comparisons", "differences", "fast_path", "fallbacks", "fast_share",
    ]
    body = []
    for r in model.rows:
        for col in model.columns:
            cell = r.cells[col]
            f = cell.figures
            body.append(
                [r.section, r.level, r.check, r.control, r.unit, col, cell.status]
                + ([f.records, f.failed_records, f.comparisons, f.differences, f.fast_path, f.fallbacks,
                    _share(f.fast_share)] if f is not None else [None] * 7)
            )
    return _csv(header, body)


def kill_matrix_csv(model: Table3) -> str:
    """One line per (control, tokenizer)."""
    km = model.kill_matrix
    header = ["control", "tokenizer", "status", "records", "comparisons", "differences", "strings_to_first_kill",
              "failing_share", "killed_by"]
    body = []
    for name in km.controls:
        for col in km.columns:
            c = km.cells[name][col]
            ran = c.status in ("killed", "survived", "redundant")
            body.append(
                [name, col, c.status, c.records if ran else None, c.comparisons if ran else None,
                 c.differences if ran else None, c.strings_to_first_kill, _share(c.failing_share),
                 ";".join(c.killed_by)]
            )
    return _csv(header, body)


PERFORMANCE_COLUMNS = [
    "figure", "check", "ledger_file", "tokenizer", "text_kind", "context_chars", "append_chars", "chars", "chunks",
    "workers", "path", "run", "peer", "status", "ratio", "ratio_same_call", "planning_share", "cpu_over_wall",
    "overhead", "suite_overhead", "overhead_with_subject", "check_chars_per_s_per_core", "wall_s", "outcome",
    "cores", "repetitions", "comparisons", "differences",
]


def performance_csv(model: Table3) -> str:
    """One line per benchmark record the Performance section used (the latest run of each figure)."""
    points = model.performance.points if model.performance is not None else []
    return _csv(PERFORMANCE_COLUMNS, [[p.get(c) for c in PERFORMANCE_COLUMNS] for p in points])


def errors_csv(model: Table3) -> str:
    return _csv(["file", "line", "reason"], [[e.file, e.line, e.reason] for e in model.ledger_errors])


def render_csv(model: Table3) -> dict[str, str]:
    """File name -> CSV text."""
    return {
        "table3.csv": rows_csv(model),
        "table3-by-tokenizer.csv": breakdown_csv(model),
        "table3-kill-matrix.csv": kill_matrix_csv(model),
        "table3-ledger-errors.csv": errors_csv(model),
        "table3-performance.csv": performance_csv(model),
    }

"""`reports diff OLD NEW`: what changed between two Table 3 reports (their table3.json), and whether it regressed.

Regressions (exit 1): a difference where there was none (a row and tokenizer whose differences rose from 0); lost
coverage (a row, or a tokenizer's cell, that had figures and has none); an obligation cell that left "discharged"
or became "failed"; a control that was killed (or proven) on a tokenizer and no longer is; a verdict that went
from PASS to FAIL. Everything else that changed (new rows, new kills, newly discharged cells, counts) is listed as
a change. Exit 0 when nothing regressed, 2 when a file is missing or is not a Table 3 report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from delta_suite.reports.table3 import ReportInputError

GOOD_CONTROL = ("killed", "redundant")


@dataclass
class ReportDiff:
    """The regressions and the other changes between two reports, each as one line of text."""

    regressions: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)


def load_report(path: Path) -> dict:
    """A table3.json (or the folder holding one); a clear error when it is missing or not a Table 3 report."""
    path = path / "table3.json" if path.is_dir() else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportInputError(f"{path} is not JSON ({exc})") from exc
    if not isinstance(data, dict) or not {"sections", "kill_matrix", "obligations"} <= set(data):
        raise ReportInputError(f"{path} is not a Table 3 report (no sections, kill_matrix and obligations)")
    return data


def _cells(report: dict) -> dict[tuple[str, str], dict[str, dict]]:
    """(section, row key) -> {tokenizer: cell} for every row that is not a control's."""
    out = {}
    for section in report["sections"]:
        for row in section["rows"]:
            if row.get("level") == "control":
                continue
            key = (section["key"], f"{row['check']} [{row.get('unit', '')}]")
            out[key] = row.get("cells") or {}
    return out


def _figures(cell: dict | None) -> dict | None:
    return (cell or {}).get("figures") if (cell or {}).get("status") == "figures" else None


def diff_reports(old: dict, new: dict) -> ReportDiff:
    """Compare two reports (see the module docstring for what counts as a regression)."""
    out = ReportDiff()
    old_rows, new_rows = _cells(old), _cells(new)
    for key, cells in old_rows.items():
        row = f"{key[0]}: {key[1]}"
        if key not in new_rows:
            if any(_figures(c) for c in cells.values()):
                out.regressions.append(f"lost coverage: row {row} is gone")
            continue
        for tok, cell in cells.items():
            before, after = _figures(cell), _figures(new_rows[key].get(tok))
            if before and not after:
                out.regressions.append(f"lost coverage: {row} on {tok} had {before['comparisons']:,} comparisons, "
                                       f"now {(new_rows[key].get(tok) or {}).get('status', 'absent')}")
            elif before and after:
                if after["differences"] > 0 and before["differences"] == 0:
                    out.regressions.append(f"new differences: {row} on {tok}: {after['differences']:,}")
                elif after["comparisons"] != before["comparisons"]:
                    out.changes.append(f"{row} on {tok}: {before['comparisons']:,} -> {after['comparisons']:,} "
                                       "comparisons")
            elif after and not before:
                out.changes.append(f"new coverage: {row} on {tok}")
    for key in new_rows.keys() - old_rows.keys():
        out.changes.append(f"new row: {key[0]}: {key[1]}")
    _diff_obligations(old, new, out)
    _diff_controls(old, new, out)
    was, now = (old.get("verdict") or {}).get("passed"), (new.get("verdict") or {}).get("passed")
    if was is True and now is False:
        out.regressions.append(f"verdict PASS -> FAIL: {(new.get('verdict') or {}).get('line', '')}")
    elif was is False and now is True:
        out.changes.append("verdict FAIL -> PASS")
    return out


def _obligation_cells(report: dict) -> dict[tuple[str, str], str]:
    ob = report.get("obligations") or {}
    tokenizers = [t["name"] for t in report.get("tokenizers", [])]
    return {(row.get("id", "?"), tok): row[tok] for row in ob.get("rows", []) for tok in tokenizers if tok in row}


def _diff_obligations(old: dict, new: dict, out: ReportDiff) -> None:
    before, after = _obligation_cells(old), _obligation_cells(new)
    for key, state in sorted(before.items()):
        now = after.get(key, "absent")
        if now == state:
            continue
        line = f"obligation {key[0]} on {key[1]}: {state} -> {now}"
        (out.regressions if state == "discharged" or now.startswith("failed") else out.changes).append(line)


def _diff_controls(old: dict, new: dict, out: ReportDiff) -> None:
    before, after = (old.get("kill_matrix") or {}).get("cells", {}), (new.get("kill_matrix") or {}).get("cells", {})
    for control, cells in sorted(before.items()):
        for tok, cell in sorted(cells.items()):
            was = cell.get("status")
            now = ((after.get(control) or {}).get(tok) or {}).get("status", "absent")
            if was == now:
                continue
            line = f"control {control} on {tok}: {was} -> {now}"
            (out.regressions if was in GOOD_CONTROL else out.changes).append(line)

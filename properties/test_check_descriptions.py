"""Every check name a writer can put in a ledger has a one-line description in reports/check_descriptions.py, so
the report's "what" column never repeats a check's name.

The names come from the source (`properties.check_names.writer_sites`: literal names, f-string families with
SAMPLE for each formatted value, `control.NAME` for every control), and from the recorded ledgers under
out/ledgers when a run left any. Plant: the line of `accepted_cut_sets_concatenate` removed from CHECKS ->
test_every_written_check_is_described fails naming it (and the report row reads "no description").
"""

from __future__ import annotations

import pytest
from delta_suite.fuzz.checker import control_names
from delta_suite.reports.check_descriptions import check_title, describe
from delta_suite.reports.table3 import build_table3, load_records

from properties.check_names import REPO, SAMPLE, writer_sites


def _written_names() -> set[str]:
    names = {n for site in writer_sites() if site.names for n in site.names}
    controls = {f"control.{c}" for c in control_names()} if f"control.{SAMPLE}" in names else set()
    return (names - {f"control.{SAMPLE}"}) | controls


def _problem(check: str) -> str | None:
    text = describe(check)
    if not text:
        return f"{check}: no description"
    if text.strip() == check:
        return f"{check}: its description is its name"
    return None


def test_every_writer_site_is_resolved() -> None:
    """Every writer call's check argument is read from the source (a literal, an f-string, a constant, or a
    parameter whose callers pass one), so no name escapes the scan below."""
    unresolved = [f"{s.file}:{s.line}" for s in writer_sites() if s.names is None]
    assert not unresolved, "writer calls whose check name the scan cannot read: " + ", ".join(unresolved)


def test_every_written_check_is_described() -> None:
    names = _written_names()
    assert len(names) > 150, len(names)
    problems = sorted(p for n in names if (p := _problem(n)))
    assert not problems, "checks without a description in reports/check_descriptions.py: " + "; ".join(problems)


def test_recorded_ledgers_are_described() -> None:
    """The rows of a report over the ledgers a run left under out/ledgers (if any): no "what" equals the check."""
    root = REPO / "out" / "ledgers"
    if not any(root.rglob("*.jsonl")):
        pytest.skip("no recorded ledgers under out/ledgers")
    records, _errors, _files = load_records([root])
    model = build_table3(records, provisioning=[], with_mutation=False, results_file=None)
    rows = [r for s in model.sections for r in s.rows]
    bad = sorted({r.check for r in rows if r.title in (r.check, f"control {r.check}") or _problem(r.check)})
    assert not bad, "report rows without a description: " + ", ".join(bad)


def test_an_unknown_check_never_reads_as_its_name() -> None:
    assert check_title("no.such_check") != "no.such_check" and "no description" in check_title("no.such_check")
    assert check_title("control.cut.no_guard") == "the special-token guard removed"
    assert "qwen2" in check_title("classes_qwen2") and check_title("classes_qwen2") != "classes_qwen2"


def test_scan_sees_f_string_families() -> None:
    """The scan reads `f"classes_{family}"` as the family classes_SAMPLE and a writer's parameter through its callers
    (`_record(ledger, "accepted_cut_splits_reference", ...)` in test_cut_properties)."""
    names = _written_names()
    assert {"classes_SAMPLE", "accepted_cut_splits_reference", "control.cut.no_guard", "gate.session"} <= names

"""How the report's figures read as text, shared by the Markdown and HTML renderers (one wording everywhere)."""

from __future__ import annotations

from delta_suite.reports.table3 import MOSTLY_FELL_BACK_BELOW, Cell, Figures, KillCell, Row

NO_THROUGHPUT = "No fuzz records carrying cases and a rate, a duration (elapsed_s) or a campaign clock (elapsed)."


def rate_text(summary: dict) -> str:
    """Cases per second of a throughput summary line."""
    rate = summary["cases_per_s"]
    return "not recorded" if rate is None else f"{rate:,.1f}"


def num(n: int | None) -> str:
    """An integer with thousands separators; None (not recorded) is never shown as 0."""
    return "not recorded" if n is None else f"{n:,}"


def pct(share: float | None) -> str:
    return "not recorded" if share is None else f"{100 * share:.1f}%"


def fast_path_text(row: Row) -> str:
    """The fast-path column: the share, and an explicit warning when the row mostly fell back."""
    share = row.total.fast_share
    if share is None:
        if row.total.fast_path is None and row.total.fallbacks is None:
            return "not recorded" if row.wants_fast_path else ""
        return "0 units"
    text = f"{pct(share)} ({num(row.total.fast_path or 0)} fast, {num(row.total.fallbacks or 0)} fell back)"
    if row.fallback_reasons:  # why the rest fell back, by reason code, most frequent first
        top = sorted(row.fallback_reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        text += "; fell back for " + ", ".join(f"{reason} ({num(n)})" for reason, n in top)
    if row.mostly_fell_back:  # a fallback is the reference's own answer: neutral, never a difference
        text = f"mostly fell back: {text}"
    return text


def covered_text(row: Row) -> str:
    """The tokenizers column: how many of the registry tokenizers have figures, and any others."""
    if row.independent:
        return "tokenizer-independent"
    registry = list(row.cells)[: row.registry_total]
    reg = sum(name in registry for name in row.covered)
    text = f"{reg} of {row.registry_total}"
    if len(row.covered) > reg:
        text += f", +{len(row.covered) - reg} outside the registry"
    return text


def counts_text(row: Row) -> str:
    """Other quantities a row counted (details.counts), e.g. characters."""
    return ", ".join(f"{num(v)} {k}" for k, v in row.counts.items())


def figures_text(f: Figures, with_fast: bool) -> str:
    """A breakdown cell: comparisons / differences, the fast-path share where it applies, failed tests."""
    text = f"{num(f.comparisons)} / {num(f.differences)}"
    share = f.fast_share
    if with_fast:
        text += f" · {pct(share)} fast" if share is not None else " · fast path not recorded"
        if share is not None and share < MOSTLY_FELL_BACK_BELOW:
            text += " (mostly fell back)"
    if f.failed_records:
        text += f" · {f.failed_records} failed"
    return text


def cell_text(cell: Cell, row: Row, provisioned: bool = False) -> str:
    """A breakdown cell; `provisioned` (the column is a provisioned tokenizer) turns "not run" into the one
    vocabulary's "provisioned but not run"."""
    if cell.status == "not run" and provisioned:
        return "provisioned but not run"
    if cell.status == "figures" and cell.figures is not None:
        return figures_text(cell.figures, row.wants_fast_path or cell.figures.fast_share is not None)
    if cell.status == "tokenizer-independent":
        return "n/a"
    return cell.status


CONTROL_OUTCOME = {
    "killed": " (killed: expected)",
    "survived": " (control SURVIVED)",
    "redundant": " (redundant: proven or declared)",
    "open finding": " (open finding)",
    "not applicable": " (not applicable)",
}


def kill_text(cell: KillCell) -> str:
    """A kill-matrix cell: killed after N strings (share failing), survived, not run, not provisioned."""
    if cell.status == "killed":
        first = f"after {num(cell.strings_to_first_kill)}" if cell.strings_to_first_kill is not None else ""
        share = f"{pct(cell.failing_share)} failing" if cell.failing_share is not None else ""
        return "killed " + " · ".join(p for p in (first, share) if p)
    if cell.status == "survived":
        return f"SURVIVED ({num(cell.comparisons)} compared)"
    if cell.status == "redundant":
        return f"not killable (proven or declared redundant), {num(cell.comparisons)} compared"
    if cell.status == "open finding":
        return f"open finding ({num(cell.comparisons)} compared)"
    return cell.status


def _where(entry: dict) -> str:
    """FILE:LINE (JSONL) or FILE row N (Parquet) of a refused document."""
    if entry.get("line") is not None:
        return f"{entry.get('file')}:{entry['line']}"
    return f"{entry.get('file')} row {entry.get('row')}"


def refused_first(model) -> str:
    """"; first: FILE:LINE id ID: REASON" of the first refused corpus document, or "" when none is named."""
    ex = (model.refused_documents or {}).get("examples") or []
    return f"; first: {_where(ex[0])} id {ex[0].get('id')}: {ex[0].get('reason')}" if ex else ""


def skipped_line(model) -> str:
    """The sentence on documents a level did not take (count, reason, per check and tokenizer)."""
    sk = model.skipped_documents or {}
    if not sk:
        return ""
    parts = ", ".join(f"{k}: {v:,}" for k, v in sk["by_check"].items())
    why = f" ({sk['examples'][0].get('reason')})" if sk.get("examples") else ""
    return f"{sk['count']:,} documents were not taken by a level{why}: {parts}."


def checks_by_sampling(rows: list[Row]) -> dict[str, list[str]]:
    """Each distinct sampling among the rows' records (`Row.sampled`) -> the checks of the rows it applies to."""
    by_note: dict[str, list[str]] = {}
    for r in rows:
        for note in r.sampled:
            by_note.setdefault(note, []).append(r.check)
    return by_note


def sampling_notes(rows: list[Row]) -> list[str]:
    """One note per distinct sampling among the rows' records, naming the checks it applies to: the comparisons
    of those rows are what ran, a sample of the domain the check's name speaks of."""
    return [f"sampled ({note}): " + ", ".join(checks) for note, checks in checks_by_sampling(rows).items()]

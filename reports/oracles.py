"""What the report's counts were compared with: comparisons with the reference apart from every other kind of check.

A count of token-ID sequences compared with a whole reference encode says something different from a count of
verdicts compared with the spec, of the implementation compared with another path of itself, or of premise and
proof checks about a tokenizer or a pattern; adding them makes a headline that no reader can interpret. Every
record names its oracle (`ledger.records.ORACLES`; a record of an older ledger without one reads "unknown", never
"reference"), and the report sums each group apart: the verdict line and "at a glance" give comparisons with the
reference, then each other group with its own number.
"""

from __future__ import annotations

from collections.abc import Iterable

from delta_suite.ledger.records import UNKNOWN_ORACLE
from delta_suite.reports.table3 import Row

# the groups the report counts apart, in the order it names them, with the oracles each holds
GROUPS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("reference", ("reference",), "comparisons with the reference"),
    ("spec", ("spec",), "checks against the spec"),
    ("self", ("self",), "self-consistency checks (an implementation or the library against itself)"),
    ("premise and proof", ("premise", "proof"), "premise and proof checks"),
    ("oracle unknown", (UNKNOWN_ORACLE,), "checks whose records name no oracle (oracle unknown)"),
    ("nothing compared", ("none",), "counted runs or figures that compare no outputs"),
)
GROUP_OF = {oracle: key for key, oracles, _label in GROUPS for oracle in oracles}
LABEL = {key: label for key, _oracles, label in GROUPS}


def group_totals(rows: Iterable[Row]) -> dict[str, tuple[int, int]]:
    """(comparisons, differences) per group of GROUPS over the rows (every group present, zeros included); a row
    without per-oracle figures (built by hand) counts as "oracle unknown", never as reference."""
    totals = {key: [0, 0] for key, _oracles, _label in GROUPS}
    for row in rows:
        per = row.oracles or {UNKNOWN_ORACLE: row.total}
        for oracle, fig in per.items():
            t = totals[GROUP_OF.get(oracle, "oracle unknown")]
            t[0] += fig.comparisons
            t[1] += fig.differences
    return {k: (v[0], v[1]) for k, v in totals.items()}


def comparisons_phrase(rows: Iterable[Row]) -> str:
    """The verdict line's count: "N comparisons with the reference, D differences", then each other group that
    counted anything with its own number ("apart: N checks against the spec (D differences), ...")."""
    totals = group_totals(rows)
    ref, ref_diff = totals["reference"]
    text = f"{ref:,} comparisons with the reference, {ref_diff:,} differences"
    apart = [f"{n:,} {LABEL[key].split(' (')[0]} ({d:,} differences)"
             for key, (n, d) in totals.items() if key != "reference" and (n or d)]
    return text + (f"; apart: {', '.join(apart)}" if apart else "")


def row_oracle_text(row: Row) -> str:
    """What a row's records were compared with, named once ("reference", "self", "spec, premise"...); "unknown"
    for records that name none."""
    return ", ".join(row.oracles) if row.oracles else UNKNOWN_ORACLE


def other_text(by_group: dict[str, int]) -> str:
    """The "at a glance" cell of the checks that are not comparisons with the reference, one number per group."""
    parts = [f"{key} {n:,}" for key, n in by_group.items() if key != "reference" and n]
    return "; ".join(parts) or "none"

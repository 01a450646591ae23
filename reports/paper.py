"""The paper beside us: each row of the paper's Table 3 (its §4.7 and supplement) next to what this run counted.

The paper's figures are constants quoted from `../shared/reference/delta-tokenizer-paper.txt`; ours are summed
from the report's own rows (the suite's records only), per level and unit. The scale gap is stated as the ratio
of the paper's count to ours where both count the same thing; where they count different things (transcripts
against turns) the row says so instead of dividing.
"""

from __future__ import annotations

from dataclasses import dataclass

from delta_suite.reports.table3 import Table3


@dataclass(frozen=True)
class PaperRow:
    """One row: the level, what is checked, the paper's count (as quoted and as a number), and what of ours to sum."""

    level: str
    check: str
    paper: str
    paper_count: float | None
    section: str
    units: tuple[str, ...]
    ours_unit: str


PAPER_ROWS = (
    PaperRow("1", "whole encodes compared with the reference",
             "41.8 billion encodes: 3.8 billion web documents (12.3 trillion characters) under 11 tokenizers",
             41.8e9, "encoder", ("documents", "encodes"), "encodes"),
    PaperRow("2", "documents split at the cuts, compared with whole encodes",
             "102.4 million documents of 512-400,000 characters under 4 tokenizers", 102.4e6, "chunked",
             ("document_chunkings",), "document chunkings"),
    PaperRow("2", "the adversarial battery (normalization seams, special-token strings)",
             "the battery under 6 tokenizers; its control (normalization check removed) finds 2,115 differences "
             "in 100,000 Qwen3 strings", 100_000, "chunked", ("battery strings", "strings"), "battery strings"),
    PaperRow("3", "turn-by-turn replay of chat transcripts through three front ends",
             "610 transcripts (330K characters at the median), every turn of three front ends", None, "repair",
             ("turn", "turns", "turn_comparisons"), "turn comparisons"),
)


@dataclass(frozen=True)
class Beside:
    """One row of the comparison, as text cells."""

    level: str
    check: str
    paper: str
    ours: str
    gap: str


def beside(model: Table3) -> list[Beside]:
    """The paper's rows with this run's counts and the scale gap."""
    out = []
    for row in PAPER_ROWS:
        recs = [r for s in model.sections if s.key == row.section for r in s.rows
                if r.unit in row.units and r.level != "control"]
        count = sum(r.total.comparisons for r in recs)
        tokenizers = {c for r in recs for c, cell in r.cells.items() if cell.status == "figures"}
        ours = f"{count:,} {row.ours_unit} under {len(tokenizers)} tokenizers" if count else "not run in this report"
        if row.paper_count and count:
            gap = f"the paper's is {row.paper_count / count:,.0f} times larger"
        elif row.paper_count is None and count:
            clean = sum(f.transcripts for f in model.transcripts if f.front_end == "session" and f.variant == "clean")
            gap = ("counts differ in kind (transcripts against turn comparisons); "
                   + (f"{clean:,} long transcripts here" if clean else "no long transcript replayed in this report"))
        else:
            gap = "nothing of ours to compare"
        out.append(Beside(row.level, row.check, row.paper, ours, gap))
    return out

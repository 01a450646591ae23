"""One tokenizer's ci battery through the cut and repair checks, summed: what the family tests record for a file
(`checks.differential.check_cut_case` and `check_repair_case` on every case, the chunked encode included unless
asked not to)."""

from __future__ import annotations

from dataclasses import dataclass

from delta_suite.checks.battery import battery
from delta_suite.checks.differential import CheckResult, ReferenceMemo, check_cut_case, check_repair_case
from delta_suite.frozen.loader import FrozenTokenizer


@dataclass
class BatteryRun:
    """The sums of one battery run: accepted cuts and repair splits compared, and the failing results."""

    cases: int
    splits: int
    accepted: int
    chunked: int
    repaired: int
    separator_cases: int
    failed: list[CheckResult]

    @property
    def comparisons(self) -> int:
        return self.accepted + self.splits

    def details(self) -> dict:
        return {"cases": self.cases, "accepted_cuts": self.accepted, "chunked": self.chunked,
                "repaired": self.repaired, "separator_cases": self.separator_cases}

    def first_failures(self) -> list:
        return [(r.hazard, r.first) for r in self.failed[:3]]


def run_battery(tok: FrozenTokenizer, chunked: bool = True) -> BatteryRun:
    """Every ci case of `tok`: each cut check (with the chunked encode when `chunked`) and each repair split."""
    cases = battery(tok, "ci")
    memo = ReferenceMemo(tok)
    cuts = [check_cut_case(tok, c, memo=memo, chunked=chunked) for c in cases]
    repairs = [check_repair_case(tok, c, memo=memo) for c in cases if c.splits]
    return BatteryRun(len(cases), sum(len(c.splits) for c in cases), sum(r.paths["accepted"] for r in cuts),
                      sum(r.paths["chunked"] for r in cuts), sum(r.fast_path for r in repairs),
                      sum(c.hazard == "separator" for c in cases), [r for r in cuts + repairs if r.failed])

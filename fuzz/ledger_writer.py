"""The campaign ledger: one record per completed batch, appended and fsynced; read back to resume.

A batch counts only once its record is on disk. Each worker of each invocation appends to its own file
(`fuzz-<campaign>-s<segment>-w<worker>.jsonl`), so a killed writer can tear at most its own last line and a
resumed campaign never appends after a torn line. Records are kind "fuzz", level "chunked" (cut path),
"repair" (repair path) or "control" (a campaign against a control, whose differences are kills, not failures);
details carry the seed, worker, batch index, elapsed time, cases per second and the generator digest, so reports
can plot throughput over time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from delta_suite.ledger.records import append_records, make_record, read_ledgers
from delta_suite.spec.proofs.obligations import declare

KIND = "fuzz"


def level_of(path: str, control: str | None) -> str:
    """The ledger level of a batch: "control" against a control, else "chunked" (cut) or "repair"."""
    if control is not None:
        return "control"
    return "chunked" if path == "cut" else "repair"


def ledger_file(out: Path, campaign: str, segment: int, worker: int) -> Path:
    return out / f"fuzz-{campaign}-s{segment}-w{worker}.jsonl"


def batch_id(campaign: str, tokenizer: str, path: str, batch: int) -> str:
    """The identity of one batch of a campaign: whoever runs it (worker, segment), it is one batch."""
    return f"fuzz:{campaign}:{tokenizer}:{path}:{int(batch)}"


@dataclass
class BatchTally:
    """What one batch compared."""

    cases: int = 0
    chars: int = 0
    cuts: int = 0
    repairs: int = 0
    fast_path: int = 0
    fallbacks: int = 0
    differences: int = 0
    reference_seconds: float = 0.0  # the oracle's encodes (the reference the implementation is compared with)
    library_seconds: float = 0.0  # every encode inside the reference library: the oracle's and the implementation's
    paths: Counter = field(default_factory=Counter)
    faults: Counter = field(default_factory=Counter)  # a third-party subject's calls that gave no IDs, by kind


def batch_record(
    *,
    campaign: str,
    tok_name: str,
    tok_sha256: str,
    path: str,
    control: str | None,
    tally: BatchTally,
    details: dict,
    subject: str | None = None,
) -> dict:
    """The ledger record of one completed batch; `comparisons` counts cuts (cut path) or repairs (repair path).

    `subject` (default the minimal implementation) names a third-party implementation under test."""
    comparisons = tally.cuts if path == "cut" else tally.repairs
    record = make_record(
        KIND,
        level_of(path, control),
        f"fuzz.{path}" + (f".control.{control}" if control else ""),
        tokenizer=tok_name,
        tokenizer_sha256=tok_sha256,
        comparisons=comparisons,
        differences=tally.differences,
        fast_path=tally.fast_path,
        fallbacks=tally.fallbacks,
        unit="cuts" if path == "cut" else "repairs",
        oracle="reference",
        details={
            "campaign": campaign,
            "path": path,
            "control": control,
            "subject": control or subject or "delta",
            "cases": tally.cases,
            "chars": tally.chars,
            "cuts": tally.cuts,
            "repairs": tally.repairs,
            "reference_seconds": round(tally.reference_seconds, 6),
            "library_seconds": round(tally.library_seconds, 6),
            "paths": dict(tally.paths),
            "faults": dict(tally.faults),
            # against a control, a batch kills it when the control's IDs differed from the reference's on a case
            **({"killed": tally.differences > 0} if control else {}),
            **details,
        },
    )
    record["id"] = batch_id(campaign, tok_name, path, details["batch"])
    # the minimal implementation's records (and its controls') declare their obligations; a third-party subject's
    # declare none, so they never discharge or fail one of the suite's own
    return declare(record) if subject in (None, "delta") or control else record


def write_batch(file: Path, record: dict) -> None:
    """Append one batch record and fsync it: from now on the batch counts."""
    append_records(file, [record])


@dataclass
class CampaignLedger:
    """The batches a campaign folder already holds, and the lines that could not be read."""

    records: list[dict]
    torn: list[tuple[str, int, str]]
    duplicates: int = 0

    def done(self, campaign: str) -> set[tuple[str, str, int]]:
        """(tokenizer, path, batch index) of every completed batch of `campaign`."""
        return {
            (r["tokenizer"], r["details"]["path"], int(r["details"]["batch"]))
            for r in self.records
            if r.get("kind") == KIND and r["details"].get("campaign") == campaign and "batch" in r["details"]
        }

    def of(self, campaign: str) -> list[dict]:
        return [r for r in self.records if r.get("kind") == KIND and r["details"].get("campaign") == campaign]


def read_campaign(out: Path) -> CampaignLedger:
    """Read every fuzz ledger file of a campaign folder."""
    files = sorted(out.glob("fuzz-*.jsonl")) if out.is_dir() else []
    read = read_ledgers(files)
    return CampaignLedger(read.records, read.errors, read.duplicates)

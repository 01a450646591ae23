"""Ledger rows for subjects: per subject and tokenizer, what was compared, what differed, and a counterexample.

Every row has kind "subject" and details {subject, subject_version, minimal_counterexample, status}; a subject
that could not run gets a row with status "not installed" and zero comparisons, so a report can never count it
as passed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from delta_suite.ledger.records import make_record
from delta_suite.spec.reference import reference_encode_batch
from delta_suite.subjects.replay import first_difference

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer

KIND = "subject"


def subject_record(
    subject,
    tok: FrozenTokenizer | None,
    level: str,
    check: str,
    *,
    comparisons: int,
    differences: int,
    counterexample: dict | None = None,
    unit: str = "comparisons",
    **details,
) -> dict:
    """One ledger row for a subject's comparisons (status "ran")."""
    return make_record(
        KIND,
        level,
        check,
        tokenizer=tok.name if tok is not None else None,
        tokenizer_sha256=tok.sha256 if tok is not None else None,
        comparisons=comparisons,
        differences=differences,
        unit=unit,
        oracle="reference",
        details={
            "subject": subject.name,
            "subject_version": subject.version,
            "status": "ran",
            "minimal_counterexample": counterexample,
            **details,
        },
    )


def unavailable_record(spec: str, tok: FrozenTokenizer | None, level: str, check: str, reason: str) -> dict:
    """The row of a subject that could not run here: status "not installed", nothing compared."""
    name, _, version = spec.partition("==")
    return make_record(
        KIND,
        level,
        check,
        tokenizer=tok.name if tok is not None else None,
        tokenizer_sha256=tok.sha256 if tok is not None else None,
        comparisons=0,
        differences=0,
        oracle="none",
        details={
            "subject": name,
            "subject_version": version or None,
            "status": "not installed",
            "reason": reason,
            "minimal_counterexample": None,
        },
    )


def compare_whole(subject, tok: FrozenTokenizer, texts: list[str]) -> tuple[int, int, dict | None]:
    """Compare the subject's whole encodes of `texts` with the reference: (comparisons, differences, shortest diff).

    The proposition per text: subject.encode(text) == reference_encode(tok, text).
    """
    got = subject.encode_many(texts) if hasattr(subject, "encode_many") else [subject.encode(t) for t in texts]
    want = reference_encode_batch(tok, texts)
    bad = [(len(t), t, g, w) for t, g, w in zip(texts, got, want, strict=False) if g != w]
    example = None
    if bad:
        _, t, g, w = min(bad, key=lambda b: b[0])
        p = first_difference(g, w)
        example = {"text": t, "position": p, "subject_ids": g[p : p + 3], "reference_ids": w[p : p + 3]}
    return len(texts), len(bad), example

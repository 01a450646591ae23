"""A gate record says it was sampled exactly when its check sampled: under DELTA_EXHAUSTIVE_STRIDE=k the whole-space
checks at that stride say "every k-th scalar value" (`conftest.stride_note`), the ranged ones say their own
sampling (`conftest.sampling_note`), and a check that never samples (the alphabet's atoms, the bounded enumeration,
the reference's NFC version) is never marked sampled by the ledger on its behalf."""

from __future__ import annotations

import pytest

from properties.conftest import GateLedger, sampling_note, stride_note


def test_the_ledger_marks_no_record_sampled_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DELTA_EXHAUSTIVE_STRIDE", "16")
    rec = GateLedger("properties/x.py::t").record("exhaustive", "proofs.atom_parse", comparisons=3, unit="probe",
                                                  oracle="proof")
    assert "sampled" not in rec["details"]


def test_the_stride_notes_name_the_stride_and_only_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DELTA_EXHAUSTIVE_STRIDE", "16")
    assert stride_note().startswith("every 16th scalar value (DELTA_EXHAUSTIVE_STRIDE), stratified: plus the ")
    assert sampling_note(0, 0x80) == stride_note()  # below the unassigned planes: the stride alone
    monkeypatch.setenv("DELTA_EXHAUSTIVE_STRIDE", "1")
    assert stride_note() is None and sampling_note(0, 0x80) is None

"""The regression gate: every counterexample a campaign saved in fuzz/regressions/ is replayed on every run.

Against the real implementation a saved case must pass; when it came from a control it must still fail against
that control (otherwise the control or the case has drifted and the case no longer proves anything).
"""

from __future__ import annotations

import pytest
from delta_suite.frozen.errors import NotProvisioned
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.regressions import corpus_files, load, replay
from delta_suite.spec.reference import reference_version

FILES = corpus_files()


def test_corpus_is_not_empty() -> None:
    """The gate replays at least one saved case (an empty corpus would make every replay test vacuous)."""
    assert FILES, "fuzz/regressions/ holds no saved case"


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_saved_case_replays(path, ledger) -> None:
    """A saved case: the recorded expectation is still the reference's (same version), the real implementation
    agrees with the reference on it, and the control it came from still differs."""
    reg = load(path)
    try:
        tok = load_tokenizer(reg.tokenizer)
    except NotProvisioned as exc:
        pytest.skip(f"{reg.tokenizer} not provisioned: {exc}")
    assert tok.sha256 == reg.tokenizer_sha256, f"{path.name}: tokenizer digest moved"
    result = replay(reg)
    if reg.reference_version == reference_version():
        assert result.reference_ids == reg.expected, f"{path.name}: the reference no longer gives the saved IDs"
    real_diffs = int(result.real_difference is not None)
    ledger.record("chunked" if reg.case.path == "cut" else "repair", f"regression.real.{reg.case.path}", tok,
                  comparisons=1, differences=real_diffs, unit="cases",
                  details={"file": path.name, "cuts_checked": result.real_counts[0],
                           "repairs_checked": result.real_counts[1]}, oracle="reference")
    assert result.real_difference is None, f"{path.name}: the real implementation differs from the reference"
    if reg.control:
        killed = result.control_difference is not None
        ledger.record("control", f"regression.control.{reg.control}", tok, comparisons=1,
                      differences=int(killed), unit="cases",
                      details={"file": path.name, "control": reg.control, "killed": killed}, oracle="reference")
        assert killed, f"{path.name}: control {reg.control} no longer fails on its saved case"

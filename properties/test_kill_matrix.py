"""The kill matrix in the ci profile: every control is killed or proven on each tokenizer, the real thing is clean.

For each provisioned admitted tokenizer the ci battery runs once against the unbroken cut and repair paths and
every control (`controls.kill_matrix.run_matrix`). Per tokenizer: one ledger record per control (level
"control", details control, killed, strings_to_first_kill, failing_share, strings) and one per unbroken path
(level "battery"). Per tokenizer (so that the matrices are built where their tokenizer's tests run, under any
number of workers): where a control survives, it must be "survives-by-proof" (a proof in `controls.proofs`,
tested in test_control_proofs.py) or "not applicable" (its condition does not exist there, e.g. normalization
controls on non-NFC tokenizers). A survival without a proof is a finding and fails here unless listed in
OPEN_FINDINGS, as does a kill where a proof claims redundancy.
"""

from __future__ import annotations

import pytest

from controls import get, names
from controls.findings import OPEN_FINDINGS
from controls.kill_matrix import KillRow, ledger_records, run_matrix
from frozen.errors import NotProvisioned
from frozen.loader import FrozenTokenizer, load_tokenizer
from frozen.registry import rows as registry_rows
from properties.conftest import ADMITTED, PROVISIONED

_MATRIX: dict[str, list[KillRow]] = {}


def matrix(tok: FrozenTokenizer) -> list[KillRow]:
    """The ci kill matrix of one tokenizer, computed once per session."""
    if tok.name not in _MATRIX:
        _MATRIX[tok.name] = run_matrix(tok, names(), "ci", 0)
    return _MATRIX[tok.name]


def _rows(tok: FrozenTokenizer) -> dict[str, KillRow]:
    return {r.control: r for r in matrix(tok)}


def test_unbroken_implementation_is_clean(tok, ledger) -> None:
    """The unbroken cut and repair paths show no ID and no unit difference on any ci battery string."""
    rows = _rows(tok)
    for rec in ledger_records([rows["unbroken.cut"], rows["unbroken.repair"]], kind="gate"):
        ledger.record(rec["level"], rec["check"], tok, comparisons=rec["comparisons"], differences=rec["differences"],
                      fast_path=rec["fast_path"], fallbacks=rec["fallbacks"], unit=rec["unit"], details=rec["details"])
    for path in ("unbroken.cut", "unbroken.repair"):
        row = rows[path]
        assert row.strings > 0 and row.comparisons > 0
        assert row.fast_path > 0, f"{path}: nothing was served by the fast path, so nothing was tested"
        assert (row.failing, row.unit_failing) == (0, 0), f"{path} differs from the reference: {row.first}"


def test_controls_recorded_and_consistent(tok, ledger) -> None:
    """Every control has a row; killed rows name their first kill; proven-redundant controls are not killed
    (a kill there refutes the proof); harness faults are always detected."""
    rows = _rows(tok)
    records = ledger_records([rows[n] for n in names()], kind="gate")
    for rec in records:
        ledger.record(rec["level"], rec["check"], tok, comparisons=rec["comparisons"], differences=rec["differences"],
                      fast_path=rec["fast_path"], fallbacks=rec["fallbacks"], unit=rec["unit"], details=rec["details"])
    for name in names():
        row, control = rows[name], get(name)
        assert row.status in ("killed", "survived", "survives-by-proof", "not applicable")
        if row.status == "not applicable":
            assert not control.applies(tok) and row.strings == 0
            continue
        assert row.strings > 0
        if row.killed:
            assert row.strings_to_first_kill or row.strings_to_first_unit_kill
            assert not control.redundant_on(tok), (
                f"{name} is killed on {tok.name} although {control.proof} claims it redundant: {row.first}"
            )
        if control.path == "harness":
            assert row.fallbacks == 0, f"{name}: {row.fallbacks} planted faults escaped the comparison"
            assert row.comparisons > 0 and row.differences == row.comparisons


def test_no_survival_without_proof(tok) -> None:
    """On this tokenizer, a control that applies is killed or proven redundant; any other survival is a finding
    and must be listed, with what is known, in OPEN_FINDINGS (a new one fails this test by name), and a listed
    finding that no longer survives here must be taken off the list.

    Per tokenizer, so that many workers share the kill matrices (each is built where its tokenizer's tests run).
    Across tokenizers this also gives "every control is killed on some tokenizer or proven, except stated
    findings": a control never killed anywhere survives somewhere, and every survival is proven or listed."""
    unproven = {(r.control, r.tokenizer) for r in matrix(tok) if r.status == "survived"}
    listed = {k for k in OPEN_FINDINGS if k[1] == tok.name}
    assert unproven - listed == set(), f"new controls surviving without a proof on {tok.name}: {unproven - listed}"
    assert listed - unproven == set(), (
        f"listed findings no longer survive on {tok.name} (killed or proven now): {listed - unproven}; "
        "update OPEN_FINDINGS"
    )


def test_open_findings_resolved() -> None:
    """No provisioned tokenizer has an open finding: every control is killed or proven redundant on each (a new
    finding listed in OPEN_FINDINGS fails here, visibly, until it is killed or proven)."""
    assert not {k for k in OPEN_FINDINGS if k[1] in ADMITTED}


def test_unprovisioned_tokenizers_reported(ledger) -> None:
    """Tokenizers of the registry that are not provisioned get a "not provisioned" record (never a silent pass),
    and loading them raises NotProvisioned."""
    missing = [row.name for row in registry_rows() if row.name not in PROVISIONED]
    for name in missing:
        with pytest.raises(NotProvisioned):
            load_tokenizer(name)
        ledger.record("control", "control.kill_matrix", None, comparisons=0, differences=0, unit="battery strings",
                      details={"tokenizer": name, "status": "not provisioned", "controls": names()})
    assert len(missing) + len(PROVISIONED) == len(registry_rows())

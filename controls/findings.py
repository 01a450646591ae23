"""Open findings: controls that survive on a tokenizer with neither a kill nor a redundancy proof.

Each is stated with what is known. The gate fails on any survival not listed here and on a listed one that no
longer survives (killed or proven: update the list), so the list is the exact set. The kill matrix marks the
records of a listed survival (`details.open_finding`), and the report shows such a cell as "open (finding)",
never as a failure of the suite while the gate is green.
"""

from __future__ import annotations

OPEN_FINDINGS: dict[tuple[str, str], str] = {}
# Empty since repair.margin_0 (olmo_3_7b, deepseek_v4_flash) and repair.no_bound (deepseek_v4_flash) were proved
# redundant by controls.proofs.accepted_runs_resynchronize: the run's own boundaries, not the witness as a cut of the
# window text, keep the special-token scans in step. Add an entry here, with what is known, for a control that
# survives on a tokenizer with neither a kill nor a proof.


def open_finding(control: str, tokenizer: str) -> str | None:
    """What is known of a listed survival, or None when (control, tokenizer) is not an open finding."""
    return OPEN_FINDINGS.get((control, tokenizer))

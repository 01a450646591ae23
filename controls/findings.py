"""Open findings: controls that survive on a tokenizer with neither a kill nor a redundancy proof.

Each is stated with what is known. The gate fails on any survival not listed here and on a listed one that no
longer survives (killed or proven: update the list), so the list is the exact set. The kill matrix marks the
records of a listed survival (`details.open_finding`), and the report shows such a cell as "open (finding)",
never as a failure of the suite while the gate is green.
"""

from __future__ import annotations

OPEN_FINDINGS: dict[tuple[str, str], str] = {}
# olmo_3_7b's PII markers overlap on "|||" with letter-to-"|" transitions in the overlapped tails, so the witness
# argument that makes the bound and the margin redundant (controls.proofs.accepted_witnesses_are_safe_cuts) does
# not cover it (controls.proofs.overlapped_tails_without_witness is false there). The bound is needed there: the
# battery's overlap chains longer than the first window kill repair.no_bound (hazard special_overlap).
# deepseek_v4_flash's "｜DSML｜" overlaps itself on "｜": in a chain the window selects in the whole text's phase,
# the accepted run's witness (a letter before a selected "｜") lies inside the unselected occurrence overlapping it.
for _control in ("repair.no_bound", "repair.margin_0"):
    OPEN_FINDINGS[(_control, "deepseek_v4_flash")] = (
        "the witness argument (controls.proofs.accepted_witnesses_are_safe_cuts) does not cover chains of the "
        "self-overlapping '｜DSML｜': where the window selects the chain in the whole text's phase, the run's witness "
        "(letter to '｜' before a selected occurrence) is no safe cut, as it lies inside the unselected occurrence "
        "overlapping it (the battery's special_overlap chains show it); the splice is still exact on every such "
        "input tried (the battery's chains at both phases, test_repair_knobs' chain of 150, 400 random chains of it, "
        "its head and other text split near the end), and without the witness "
        "as well the bound is needed (test_witness_and_bound_are_jointly_needed). Argued, not machine-checked: a "
        "window out of the whole text's phase shares no key with it inside the chain (its occurrences and plain "
        "pieces start one link off, within a period of two links), so an accepted run lies where the phases agree, "
        "and from the first occurrence both select the two scans coincide. Not proved for chains mixing strings or "
        "broken by other text."
    )
OPEN_FINDINGS[("repair.margin_0", "olmo_3_7b")] = (
    "the witness argument does not cover olmo's overlapping markers (test_accepted_witnesses_are_safe_cuts finds a "
    "witness that is not a safe cut of the window); no input found that margin 0 gets wrong (864 overlap-chain "
    "candidates, and 400 random chains mixing the three markers, their heads and other text, split near the end); "
    "the bound >= margin argument (test_single_knob_redundancy_premises) and the phase argument of the "
    "deepseek_v4_flash findings are what remains"
)




def open_finding(control: str, tokenizer: str) -> str | None:
    """What is known of a listed survival, or None when (control, tokenizer) is not an open finding."""
    return OPEN_FINDINGS.get((control, tokenizer))

"""Open findings: controls that survive on a tokenizer with neither a kill nor a redundancy proof.

Each is stated with what is known. The gate fails on any survival not listed here and on a listed one that no
longer survives (killed or proven: update the list), so the list is the exact set. The kill matrix marks the
records of a listed survival (`details.open_finding`), and the report shows such a cell as "open (finding)",
never as a failure of the suite while the gate is green.
"""

from __future__ import annotations

OPEN_FINDINGS: dict[tuple[str, str], str] = {
    (control, tok): (
        "the sync witness is necessary on every pattern that groups digits by up to three (llama3, o200k, the "
        "deepseek stages, olmo3): a digit run longer than the window in a script whose digits no token joins, "
        "extended by ASCII digits, is pre-tokenized in another phase by the window than by the whole text while the "
        "two streams agree token for token (battery hazard digit_phase kills it on those tokenizers). This pattern "
        "splits every digit alone and has no other bounded repetition, and no counterexample is known here: the "
        "piece-level desynchronization z3 finds (a punctuation character then a long CR/LF chain, which the whole "
        "text keeps in one piece and the window joins with the whitespace appended after it) was tried on reference "
        "IDs (3 heads, 3 chain units, 8 window offsets, 11 appended tails: 792 cases per tokenizer), none wrong. "
        "Proved (z3, bounded, python -m spec.proofs): once the window and the whole text share a piece boundary, "
        "every later piece agrees. Argued, not machine-checked: inside pieces with one end, BPE agrees after a token "
        "boundary both streams share (no merge crosses it). Not proved: that the window's and the whole text's "
        "pieces around the end of an equal-key run have one end on this pattern (the digit groups are where they "
        "do not)."
    )
    for control in ("repair.no_witness",)
    for tok in ("qwen3_8b", "ministral_3_8b")
}
# olmo_3_7b's PII markers overlap on "|||" with letter-to-"|" transitions in the overlapped tails, so the witness
# argument that makes the bound and the margin redundant (controls.proofs.accepted_witnesses_are_safe_cuts) does
# not cover it (controls.proofs.overlapped_tails_without_witness is false there).
OPEN_FINDINGS[("repair.no_bound", "olmo_3_7b")] = (
    "the bound is needed here: a chain of 111 '|||EMAIL_ADDRESS' then '|||' is repaired wrongly without it "
    "(test_repair_knobs.py, require_bound=False); the ci battery has no overlap chain longer than the first window, "
    "so the battery itself does not kill it yet"
)
OPEN_FINDINGS[("repair.margin_0", "olmo_3_7b")] = (
    "the witness argument does not cover olmo's overlapping markers (test_accepted_witnesses_are_safe_cuts finds a "
    "witness that is not a safe cut of the window); no input found that margin 0 gets wrong (864 overlap-chain "
    "candidates); the bound >= margin argument (test_single_knob_redundancy_premises) is what remains"
)




def open_finding(control: str, tokenizer: str) -> str | None:
    """What is known of a listed survival, or None when (control, tokenizer) is not an open finding."""
    return OPEN_FINDINGS.get((control, tokenizer))

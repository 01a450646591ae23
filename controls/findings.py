"""Open findings: controls that survive on a tokenizer with neither a kill nor a redundancy proof.

Each is stated with what is known. The gate fails on any survival not listed here and on a listed one that no
longer survives (killed or proven: update the list), so the list is the exact set. The kill matrix marks the
records of a listed survival (`details.open_finding`), and the report shows such a cell as "open (finding)",
never as a failure of the suite while the gate is green.
"""

from __future__ import annotations

OPEN_FINDINGS: dict[tuple[str, str], str] = {
    ("repair.no_witness", "ministral_3_8b"): (
        "the sync witness is necessary wherever a pattern groups digits by up to three (llama3, o200k, the deepseek "
        "stages, olmo3: battery hazard digit_phase) and wherever a pattern with the newline tail (a punctuation piece "
        "taking the newlines after it) meets a vocabulary that joins a newline with the blank after it (qwen2, "
        "llama3, olmo3: battery hazard newline_tail). Tekken's pattern has the newline tail and splits every digit "
        "alone, and this vocabulary has no token joining a newline with other whitespace "
        "(spec.repair.newline_joins_whitespace is false: test_witness_verdict_of_the_proofs_matches_the_reference), "
        "so the window's longer whitespace piece is tokenized as the whole text's two pieces. No counterexample is "
        "known here. Proved (z3, bounded, python -m spec.proofs): once the window and the whole text share a piece "
        "boundary, every later piece agrees. Argued, not machine-checked: inside pieces with one end, BPE agrees "
        "after a token boundary both streams share (no merge crosses it; its premise, that merges alone build every "
        "vocabulary entry so the whole-piece shortcut changes nothing, is checked by "
        "test_premises_of_the_open_witness_argument). Not proved: that the window's and the "
        "whole text's pieces around the end of an equal-key run end together, or differ only where no token "
        "crosses the earlier end."
    ),
}
# olmo_3_7b's PII markers overlap on "|||" with letter-to-"|" transitions in the overlapped tails, so the witness
# argument that makes the bound and the margin redundant (controls.proofs.accepted_witnesses_are_safe_cuts) does
# not cover it (controls.proofs.overlapped_tails_without_witness is false there). The bound is needed there: the
# battery's overlap chains longer than the first window kill repair.no_bound (hazard special_overlap).
OPEN_FINDINGS[("repair.margin_0", "olmo_3_7b")] = (
    "the witness argument does not cover olmo's overlapping markers (test_accepted_witnesses_are_safe_cuts finds a "
    "witness that is not a safe cut of the window); no input found that margin 0 gets wrong (864 overlap-chain "
    "candidates); the bound >= margin argument (test_single_knob_redundancy_premises) is what remains"
)




def open_finding(control: str, tokenizer: str) -> str | None:
    """What is known of a listed survival, or None when (control, tokenizer) is not an open finding."""
    return OPEN_FINDINGS.get((control, tokenizer))

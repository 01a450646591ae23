"""Open findings: controls that survive on a tokenizer with neither a kill nor a redundancy proof.

Each is stated with what is known. The gate fails on any survival not listed here and on a listed one that no
longer survives (killed or proven: update the list), so the list is the exact set. The kill matrix marks the
records of a listed survival (`details.open_finding`), and the report shows such a cell as "open (finding)",
never as a failure of the suite while the gate is green.
"""

from __future__ import annotations

OPEN_FINDINGS: dict[tuple[str, str], str] = {
    (control, tok): (
        "the sync witness is not shown necessary here: under the full match key an equal-span run re-synchronizes "
        "the streams for this pattern in every case found (33,577 searched, and 43,351 directed cases on gpt-oss "
        "that did not find its known kill either, so the search lacks power); on o200k a periodic 's run kills it "
        "(equal 's tokens over phase-shifted pieces, no shared piece boundary). Proved (z3, bounded, python -m "
        "spec.proofs): once the window and the whole text share a piece boundary, every later piece agrees. Not "
        "proved: that an equal-key run of two or more tokens inside one piece of either stream forces BPE to agree "
        "after it. So the witness stays required by the implementation."
    )
    for control in ("repair.no_witness",)
    for tok in ("deepseek_v3", "deepseek_v4_flash", "llama_3_1_8b", "qwen3_8b", "olmo_3_7b", "ministral_3_8b")
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

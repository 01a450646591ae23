"""The premise of the Removed + inverted Split form (olmo_3_7b): the stage's matches tile every text.

`spec.patterns.TOTAL_STAGES` is the set of stage regexes that may run in that form. It must equal the set the z3
coverage proof (`spec.proofs.coverage`) proves total, both ways; a refuted stage's witness must be dropped by the
reference in that form; every code point alone must be kept whole by the reference's own Removed + inverted
Split of each total stage (the exhaustive table); and on seam texts, the Removed + inverted form gives exactly
the pieces of the Isolated form. A pattern with one clause removed is refuted by the prover (it is not vacuous).
"""

from __future__ import annotations

import pytest
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.strategies import seam_texts
from delta_suite.spec.patterns import LLAMA3, SPLIT_PATTERNS, TOTAL_STAGES
from delta_suite.spec.proofs.coverage import regex_coverage, stage_coverage
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex
from tokenizers.pre_tokenizers import Split

from properties.conftest import PROVISIONED, stratified_scalars, stride_note

STAGES = [(family, i) for family, stages in SPLIT_PATTERNS.items() for i in range(len(stages))]
TOTAL = sorted({(f, i) for f, i in STAGES if SPLIT_PATTERNS[f][i] in TOTAL_STAGES})


def _removed_inverted(regex: str) -> Split:
    return Split(Regex(regex), behavior="removed", invert=True)


@pytest.mark.parametrize(("family", "stage"), STAGES, ids=[f"{f}-{i}" for f, i in STAGES])
def test_total_stages_are_exactly_the_proved_ones(family: str, stage: int, ledger) -> None:
    """The z3 verdict agrees with TOTAL_STAGES; a refuted stage's witness is dropped by the reference."""
    verdict = stage_coverage(family, stage)
    claimed = SPLIT_PATTERNS[family][stage] in TOTAL_STAGES
    ledger.record("proof", "coverage.split_stage", comparisons=1, differences=int(verdict.total != claimed),
                  unit="stages", details={"family": family, "stage": stage, "total": verdict.total,
                                          "seconds": verdict.seconds}, oracle="proof")
    assert verdict.total == claimed, verdict
    if not verdict.total:
        assert verdict.witness is not None
        pieces = _removed_inverted(SPLIT_PATTERNS[family][stage]).pre_tokenize_str(verdict.witness)
        assert pieces == [], f"the witness {verdict.witness!r} should be dropped, got {pieces}"


@pytest.mark.exhaustive
@pytest.mark.parametrize(("family", "stage"), TOTAL, ids=[f"{f}-{i}" for f, i in TOTAL])
def test_every_code_point_alone_is_kept_whole(family: str, stage: int, ledger) -> None:
    """For every scalar value c, the reference's Removed + inverted Split of the stage keeps c as one piece."""
    split = _removed_inverted(SPLIT_PATTERNS[family][stage])
    dropped = []
    cps = stratified_scalars()
    for cp in cps:
        c = chr(cp)
        if split.pre_tokenize_str(c) != [(c, (0, 1))]:
            dropped.append(cp)
    ledger.record("exhaustive", "coverage.code_points", comparisons=len(cps), differences=len(dropped),
                  unit="code points", details={"family": family, "first": [hex(c) for c in dropped[:5]],
                                               **({"sampled": stride_note()} if stride_note() else {})}, oracle="proof")
    assert not dropped, f"{len(dropped)} code points not kept whole, first {[hex(c) for c in dropped[:5]]}"


def _seam_tok():
    name = "olmo_3_7b" if "olmo_3_7b" in PROVISIONED else PROVISIONED[0]
    return load_tokenizer(name)


@given(data=st.data())
def test_removed_inverted_pieces_equal_the_isolated_pieces(data) -> None:
    """On seam texts, every total stage gives the same pieces in the Removed + inverted form as in Isolated."""
    text = data.draw(seam_texts(_seam_tok()))
    for family, stage in TOTAL:
        regex = SPLIT_PATTERNS[family][stage]
        isolated = Split(Regex(regex), behavior="isolated").pre_tokenize_str(text)
        assert _removed_inverted(regex).pre_tokenize_str(text) == isolated, (family, text)


def test_a_pattern_without_its_last_whitespace_clause_is_refuted() -> None:
    """Dropping the final `\\s+` from the Llama 3 pattern leaves a space with no lookaround-free match: the prover
    must say so, with a whitespace witness that the reference indeed drops before a digit (at the end of the text
    `\\s+(?!\\S)` still takes it: coverage is about every context, which the under-approximation covers)."""
    assert LLAMA3.endswith(r"|\s+")
    mutated = LLAMA3[: -len(r"|\s+")]
    verdict = regex_coverage(mutated, "llama3")
    assert not verdict.total and not verdict.empty_match
    assert verdict.witness is not None and verdict.witness.isspace()
    assert _removed_inverted(mutated).pre_tokenize_str(verdict.witness + "1") == [("1", (1, 2))]

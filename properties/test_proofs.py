"""The transition set is machine-checked against every split pattern (z3), and its exclusions are real.

For each of the six pattern families (the five confirmed against files and the reconstruction qwen3_5, marked as
such wherever it is printed), every accepted class pair is proved to be a clean piece boundary with the
end-of-input argument (spec/proofs/prove.py states the obligations), and every pair outside the set is either
proved sound too (excluded conservatively) or refuted by a counterexample the reference pre-tokenizer confirms;
the pattern's record says how deep each refutation reaches on its provisioned tokenizers (pieces, units or IDs:
spec/proofs/depth.py, re-checked in properties/test_proof_stages.py). Provisioned
tokenizers are checked to run exactly the proved stages; unprovisioned ones are recorded as pattern-only with
status "not provisioned", never as a pass for the tokenizer.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from delta_suite.frozen.loader import load_tokenizer, loaded_pre_tokenizer
from delta_suite.frozen.registry import rows
from delta_suite.spec.admission import admission_of
from delta_suite.spec.patterns import CONFIRMED_AGAINST_FILE, RECONSTRUCTED, SPLIT_PATTERNS, TOTAL_STAGES
from delta_suite.spec.proofs.pieces import cut_changes_pieces, family_pieces, pieces_of
from delta_suite.spec.proofs.prove import FamilyProof, examine_family, prove_family, prove_stages
from delta_suite.spec.proofs.regex import PatternSyntaxUnsupported, parse

from properties.conftest import PROVISIONED

FAMILIES = list(SPLIT_PATTERNS)


def _tokenizers_of(family: str) -> list[str]:
    return [row.name for row in rows() if row.split_pattern == family]


def _failure_report(proof: FamilyProof) -> str:
    lines = []
    for r in proof.accepted_failures():
        lines.append(
            f"{proof.family} {r.pair.label}: {r.witness.name if r.witness else '?'} at stage "
            f"{r.witness.stage if r.witness else '?'}; text {r.counterexample!r} cut {r.counterexample_cut}; "
            f"reference pieces whole {r.pieces_whole} vs split {r.pieces_split}"
        )
    return "\n".join(lines)


def _origin(family: str) -> str:
    """How a printed pattern is marked: " (reconstruction: FROM WHAT)" or " (confirmed: file)"."""
    return f" (reconstruction: {RECONSTRUCTED[family]})" if family in RECONSTRUCTED else " (confirmed: file)"


def _details(proof: FamilyProof) -> dict:
    return {
        **proof.summary(),
        "pattern_confirmed_against_file": proof.family in CONFIRMED_AGAINST_FILE,
        "wall_seconds": round(proof.wall_seconds, 3),
    }


@pytest.mark.parametrize("family", FAMILIES)
def test_transition_set_is_proved_for_pattern(family: str, ledger) -> None:
    """Every accepted pair is sound for the pattern (some stage clean, every earlier one transparent), no stage
    matches the empty string, and every excluded pair is proved sound or refuted by a reference-confirmed cut;
    the record says per refuted pair how deep its counterexample reaches on the pattern's provisioned tokenizers
    (`examine_family`; properties/test_proof_stages.py re-checks those claims)."""
    proof = examine_family(family)
    pieces = family_pieces(family)
    confirmed = 0
    for r in proof.excluded():
        if r.confirmed:
            assert cut_changes_pieces(pieces, r.counterexample, r.counterexample_cut), (family, r.pair.label)
            confirmed += 1
    summary = proof.summary()
    print(
        f"\n{family}{_origin(family)}: {proof.symbols} symbols, {proof.stages} stage(s), "
        f"{proof.obligations_proved}/{len(proof.obligations)} obligations proved, "
        f"accepted proved {summary['accepted_pairs_proved']}, conservative {summary['excluded_sound_conservative']}, "
        f"{confirmed} counterexamples confirmed, solver {proof.solver_seconds:.2f}s"
    )
    for label, cx in summary["counterexamples"].items():
        print(f"  {label}: {' '.join(cx['codepoints'])} cut {cx['cut']} ({cx['obligation']}, stage {cx['stage']}): "
              f"{cx['pieces_whole']} vs {cx['pieces_split']}; {summary['exclusions'][label]['verdict']}")
    ledger.record(
        "proof",
        "proofs.transitions_z3.pattern",
        None,
        comparisons=proof.obligations_proved,
        differences=len(proof.accepted_failures()),
        unit="obligations",
        details={**_details(proof), "tokenizers": _tokenizers_of(family), "counterexamples_confirmed": confirmed},
                  oracle="proof",
    )
    assert all(o.proved for o in proof.stage_obligations), "a stage can match the empty string"
    assert not proof.accepted_failures(), _failure_report(proof)
    assert not proof.unresolved_exclusions(), [r.pair.label for r in proof.unresolved_exclusions()]


def _split_stages(pre_tokenizer: dict) -> tuple[list[dict], list[dict]]:
    parts = pre_tokenizer["pretokenizers"] if pre_tokenizer["type"] == "Sequence" else [pre_tokenizer]
    return [p for p in parts if p["type"] == "Split"], [p for p in parts if p["type"] != "Split"]


def test_tokenizer_runs_a_proved_pattern(tok, ledger) -> None:
    """The tokenizer's pre-tokenizer is exactly its family's proved Split stages (Isolated and not inverted, or
    Removed and inverted over a stage proved total: spec.proofs.coverage) then a
    ByteLevel without regex or prefix space; its pattern's proof holds; its own pre-tokenizer confirms every
    counterexample."""
    family = admission_of(tok).pattern
    config = loaded_pre_tokenizer(tok.tokenizer)
    splits, rest = _split_stages(config)
    assert tuple(s["pattern"]["Regex"] for s in splits) == SPLIT_PATTERNS[family]
    assert all((s["behavior"], s["invert"]) == ("Isolated", False)
               or ((s["behavior"], s["invert"]) == ("Removed", True) and s["pattern"]["Regex"] in TOTAL_STAGES)
               for s in splits)
    assert [r["type"] for r in rest] == ["ByteLevel"]
    assert rest[0]["use_regex"] is False and rest[0]["add_prefix_space"] is False
    proof = prove_family(family)
    own = pieces_of(tok.tokenizer.pre_tokenizer)
    confirmed = 0
    for r in proof.excluded():
        if r.confirmed:
            assert cut_changes_pieces(own, r.counterexample, r.counterexample_cut), (tok.name, r.pair.label)
            confirmed += 1
    ledger.record(
        "proof",
        "proofs.transitions_z3",
        tok,
        comparisons=proof.obligations_proved,
        differences=len(proof.accepted_failures()),
        unit="obligations",
        details={**_details(proof), "counterexamples_confirmed_by_own_pre_tokenizer": confirmed}, oracle="proof",
    )
    assert not proof.accepted_failures(), _failure_report(proof)


def test_unprovisioned_tokenizers_are_recorded_as_pattern_only(ledger) -> None:
    """Each registry row that is not provisioned gets its family's proof recorded as pattern-only with status
    "not provisioned" (its file's pattern is unconfirmed here), never as a tokenizer-level pass."""
    missing = [row for row in rows() if row.name not in PROVISIONED]
    for row in missing:
        proof = prove_family(row.split_pattern)
        ledger.record(
            "proof",
            "proofs.transitions_z3.pattern_only",
            SimpleNamespace(name=row.name, sha256=None),
            comparisons=proof.obligations_proved,
            differences=len(proof.accepted_failures()),
            unit="obligations",
            details={**_details(proof), "status": "not provisioned"}, oracle="proof",
        )
        print(f"\n{row.name}: not provisioned; pattern {row.split_pattern}{_origin(row.split_pattern)} proved "
              f"({proof.obligations_proved} obligations), file unconfirmed")
        assert not proof.accepted_failures()


def test_prover_refutes_a_pattern_that_absorbs_digits_into_words() -> None:
    """With letter runs that absorb digits, L→N and N→L fail no_straddle, each with a reference-confirmed cut."""
    proof = prove_stages("broken_words", (r"[\p{L}\p{N}]+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+(?!\S)|\s+",))
    failed = {r.pair.label: r for r in proof.accepted_failures()}
    assert {"L→N", "N→L"} <= set(failed)
    for label in ("L→N", "N→L"):
        assert failed[label].witness.name == "no_straddle" and failed[label].confirmed


def test_prover_refutes_a_lookahead_read_at_the_cut() -> None:
    """A lookahead after a letter run makes L→N depend on the end of input: lookahead_end fails and the
    reference confirms the cut changes the pieces."""
    proof = prove_stages("broken_lookahead", (r"\p{L}+(?!\p{N})|\p{L}|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",))
    failed = {r.pair.label: r for r in proof.accepted_failures()}
    assert "L→N" in failed
    assert failed["L→N"].witness.name == "lookahead_end" and failed["L→N"].confirmed


def test_prover_refutes_a_gap_across_the_cut() -> None:
    """A pattern that leaves other characters unmatched lets a gap straddle N→O: gap_free fails, confirmed."""
    proof = prove_stages("broken_gaps", (r"\p{L}+|\s+",))
    failed = {r.pair.label: r for r in proof.accepted_failures()}
    assert "N→O" in failed
    assert failed["N→O"].witness.name == "gap_free" and failed["N→O"].confirmed


@pytest.mark.parametrize("regex", [r"(?<=a)b", r"^a", r"a$", r"a+?", r"(a)", r"\ba", r"a++", r"a.", r"(?m:a)"])
def test_parser_refuses_constructs_the_proofs_do_not_model(regex: str) -> None:
    """Lookbehind, anchors, word boundaries, lazy or possessive quantifiers, capturing groups, '.' and other
    flags are refused, never approximated."""
    with pytest.raises(PatternSyntaxUnsupported):
        parse(regex)


def test_confirmed_and_reconstructed_patterns_partition_the_families() -> None:
    """Every family is either confirmed against a real file or a named reconstruction; a confirmed family whose
    tokenizer is provisioned runs its string byte for byte (the Tekken string against ministral_3_8b's file)."""
    assert CONFIRMED_AGAINST_FILE | set(RECONSTRUCTED) == set(SPLIT_PATTERNS)
    assert not CONFIRMED_AGAINST_FILE & set(RECONSTRUCTED)
    for family in CONFIRMED_AGAINST_FILE:
        for name in _tokenizers_of(family):
            if name in PROVISIONED:
                config = loaded_pre_tokenizer(load_tokenizer(name).tokenizer)
                splits, _ = _split_stages(config)
                assert tuple(s["pattern"]["Regex"] for s in splits) == SPLIT_PATTERNS[family], name

"""Merge locality (`spec/proofs/merge_locality.py`): BPE over a whole word never merges across a pair that no
merge joins, checked exhaustively to the gate's bound with the reference library as the oracle, under byte
fallback, the plain unknown token and `fuse_unk`; each premise's planted violation is caught by the same check.
The proof's abstraction (`abstract_bpe`) equals the reference on the same enumeration, and z3 proves the lemma over
the abstraction for every merge table up to `Z3_GATE_LENGTH` symbols; dropping a premise makes the query SAT."""

from __future__ import annotations

import itertools

import pytest
from delta_suite.spec.proofs.merge_locality import (
    BYTE_TOKENS,
    GATE_BOUND,
    MODES,
    PLANTS,
    Z3_CONTROLS,
    Z3_GATE_LENGTH,
    Merge,
    abstraction_check,
    exhaustive_check,
    inner_pairs,
    junction_pairs,
    merge_lists,
    planted_variant,
    premises_of,
    prove_locality,
)


@pytest.mark.parametrize("mode", MODES)
def test_a_free_cut_splits_the_whole_words_bpe(mode: str, ledger) -> None:
    """Every free cut of every word up to the bound, under every merge list up to the bound: the two sides'
    encodes concatenate to the whole's."""
    out = exhaustive_check(GATE_BOUND, mode)
    ledger.record("proof", f"merge_locality.exhaustive:{mode}", comparisons=out.cuts, differences=out.failures,
                  unit="cuts", oracle="reference",
                  details={"vocabularies": out.vocabularies, "words": out.words, "first": repr(out.first),
                           "bound": {"alphabet": GATE_BOUND.alphabet, "outside": GATE_BOUND.outside,
                                     "max_merges": GATE_BOUND.max_merges, "max_length": GATE_BOUND.max_length}})
    assert out.vocabularies > 100 and out.cuts > 100_000
    assert out.failures == 0, out.first


@pytest.mark.parametrize("plant", PLANTS)
def test_each_premise_violation_is_caught(plant: str, ledger) -> None:
    """The broken variants: J missing a merge's junction, `ignore_merges` on, two unknown characters counted free
    under `fuse_unk`, a merge that takes a byte-fallback token. The same enumeration finds a cut that differs."""
    out = planted_variant(plant)
    ledger.record("control", f"merge_locality.planted:{plant}", comparisons=1, differences=int(out.failures > 0),
                  unit="controls", oracle="reference",
                  details={"killed": out.failures > 0, "failing_cuts": out.failures, "cuts": out.cuts,
                           "first": repr(out.first)})
    assert out.failures > 0


def test_the_premises_are_predicates_of_the_model() -> None:
    """Each premise holds on a plain model and fails on the model that breaks it, and J is inside V."""
    plain = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<unk>": 3}, "merges": [["a", "b"]],
             "unk_token": "<unk>"}
    assert all(premises_of(plain).values())
    broken = {
        "no_dropout": {**plain, "dropout": 0.1},
        "no_ignore_merges": {**plain, "ignore_merges": True},
        "merges_avoid_special_symbols": {**plain, "merges": [["a", "b"], ["<0xC3>", "a"]]},
        "byte_fallback_complete": {**plain, "byte_fallback": True},
        "no_affixes": {**plain, "continuing_subword_prefix": "##"},
    }
    for premise, model in broken.items():
        held = premises_of(model)
        assert not held[premise] and all(v for k, v in held.items() if k != premise), premise
    complete = {**plain, "byte_fallback": True, "vocab": {**plain["vocab"], **{t: 10 + i for i, t in
                                                                               enumerate(BYTE_TOKENS)}}}
    assert premises_of(complete)["byte_fallback_complete"]
    for merges in merge_lists(("a", "b"), 3):
        results = [a + b for a, b in merges]
        assert junction_pairs(merges) <= inner_pairs(results)


def _bound_details() -> dict:
    return {"alphabet": GATE_BOUND.alphabet, "outside": GATE_BOUND.outside, "max_merges": GATE_BOUND.max_merges,
            "max_length": GATE_BOUND.max_length}


@pytest.mark.parametrize("mode", MODES)
def test_the_abstraction_is_the_reference(mode: str, ledger) -> None:
    """`abstract_bpe` (merge the adjacent pair of least (rank, position) until none is a merge) over the reference's
    initial symbols gives the reference's IDs on every (vocabulary, word) of the exhaustive enumeration."""
    out = abstraction_check(GATE_BOUND, mode)
    ledger.record("proof", f"merge_locality.abstraction:{mode}", comparisons=out.encodes,
                  differences=out.differences, unit="encodes", oracle="reference",
                  details={"vocabularies": out.vocabularies, "first": repr(out.first), "bound": _bound_details()})
    assert out.vocabularies > 100 and out.encodes > 100_000
    assert out.differences == 0, out.first


def _leftmost_first(symbols: list[str], merges: list[Merge]) -> list[str]:
    """The planted abstraction: the leftmost mergeable pair first, whatever its rank."""
    rank = {pair: i for i, pair in enumerate(merges)}
    symbols = list(symbols)
    while mergeable := [i for i, pair in enumerate(itertools.pairwise(symbols)) if pair in rank]:
        i = mergeable[0]
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
    return symbols


def test_a_wrong_abstraction_is_caught(ledger) -> None:
    """Test of the test: merging the leftmost mergeable pair first (position before rank) differs from the
    reference on the same enumeration."""
    out = abstraction_check(GATE_BOUND, "unk", abstraction=_leftmost_first)
    ledger.record("control", "merge_locality.abstraction_planted:leftmost_first", comparisons=1,
                  differences=int(out.differences > 0), unit="controls", oracle="reference",
                  details={"killed": out.differences > 0, "differing_encodes": out.differences,
                           "encodes": out.encodes, "first": repr(out.first)})
    assert out.differences > 0


def test_z3_proves_locality_for_every_merge_table(ledger) -> None:
    """For every merge table (uninterpreted) and every cut of every word of 2..Z3_GATE_LENGTH symbols whose pair no
    merge joins, the abstraction's final state on the whole word is the concatenation of the sides': every query
    is UNSAT."""
    out = prove_locality(Z3_GATE_LENGTH)
    unproved = [f"{n}:{k}={a}" for (n, k), a in out.answers.items() if a != "unsat"]
    ledger.record("proof", "merge_locality.z3_all_tables", comparisons=len(out.answers), differences=len(unproved),
                  unit="cuts", oracle="proof",
                  details={"max_length": out.max_length, "seconds": out.seconds, "unproved": unproved})
    assert len(out.answers) == Z3_GATE_LENGTH * (Z3_GATE_LENGTH - 1) // 2
    assert out.proved, unproved


@pytest.mark.parametrize("control", Z3_CONTROLS)
def test_the_z3_proof_can_fail(control: str, ledger) -> None:
    """Test of the test: with the junction premise dropped, or the table axiom (a merge's token starts as its left
    token and ends as its right one), every cut of every word of 3 and 4 symbols has a counterexample (SAT)."""
    out = prove_locality(4, control, min_length=3)
    killed = len(out.refuted) == len(out.answers)
    ledger.record("control", f"merge_locality.z3_control:{control}", comparisons=1, differences=int(killed),
                  unit="controls", oracle="proof",
                  details={"killed": killed, "refuted_cuts": len(out.refuted), "cuts": len(out.answers),
                           "answers": {f"{n}:{k}": a for (n, k), a in out.answers.items()}})
    assert len(out.answers) == 5 and killed, out.answers

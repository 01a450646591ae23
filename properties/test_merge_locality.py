"""Merge locality (`spec/proofs/merge_locality.py`): BPE over a whole word never merges across a pair that no
merge joins, checked exhaustively to the gate's bound with the reference library as the oracle, under byte
fallback, the plain unknown token and `fuse_unk`; each premise's planted violation is caught by the same check."""

from __future__ import annotations

import pytest
from delta_suite.spec.proofs.merge_locality import (
    BYTE_TOKENS,
    GATE_BOUND,
    MODES,
    PLANTS,
    exhaustive_check,
    inner_pairs,
    junction_pairs,
    merge_lists,
    planted_variant,
    premises_of,
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

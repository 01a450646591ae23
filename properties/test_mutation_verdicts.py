"""The premises of the "equivalent" verdicts in mutation/verdicts.toml that a test can check, one test each.

A verdict names its test here; if the premise stops holding, the test fails and the verdict must be revisited.
"""

from __future__ import annotations

import pytest
from tokenizers import Regex
from tokenizers.pre_tokenizers import Sequence, Split

from checks.battery import iter_battery
from frozen.loader import load_tokenizer
from properties.conftest import ADMITTED
from spec.patterns import SPLIT_PATTERNS
from spec.proofs.pieces import pieces_of

SAMPLE_TOKENIZER = "qwen3_8b"


@pytest.mark.parametrize("family", sorted(SPLIT_PATTERNS))
def test_isolated_split_ignores_invert(family: str, ledger) -> None:
    """spec/proofs/pieces.py, invert=False -> True: with behavior "isolated" both matched and unmatched stretches
    become pieces, so inverting the pattern changes no piece. Checked on the ci battery's texts (and a few edge
    texts) for every pattern; the check can fail: a "removed" split does change the pieces."""
    if SAMPLE_TOKENIZER not in ADMITTED:
        pytest.skip(f"{SAMPLE_TOKENIZER} is not provisioned: the battery's texts are built from it")
    stages = SPLIT_PATTERNS[family]
    plain = pieces_of(Sequence([Split(Regex(s), behavior="isolated", invert=False) for s in stages]))
    inverted = pieces_of(Sequence([Split(Regex(s), behavior="isolated", invert=True) for s in stages]))
    removed = pieces_of(Sequence([Split(Regex(s), behavior="removed", invert=False) for s in stages]))
    texts = ["", " ", "a", "  x\n\n 12345 it's", "\u00e9\u0301!"]
    texts += [case.text for case in iter_battery(load_tokenizer(SAMPLE_TOKENIZER), "ci")]
    differ = [t for t in texts if plain(t) != inverted(t)]
    ledger.record("harness", "mutation.verdict.isolated_split_ignores_invert", None, comparisons=len(texts),
                  differences=len(differ), unit="texts", details={"family": family, "first": differ[:1]})
    assert differ == []
    assert any(plain(t) != removed(t) for t in texts)

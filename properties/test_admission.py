"""Admission: the five provisioned tokenizers are admitted; synthetic bad configurations are refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen.loader import load_tokenizer, load_tokenizer_file
from properties.conftest import PROVISIONED
from properties.synthetic import variant, write
from spec.admission import admission_of

EXPECTED_PATTERN = {
    "qwen3_8b": "qwen2",
    "llama_3_1_8b": "llama3",
    "gpt_oss_120b": "o200k",
    "deepseek_v3": "deepseek",
    "deepseek_v4_flash": "deepseek",
    "olmo_3_7b": "llama3",  # its Split stage is Removed and inverted over the Llama 3 pattern (spec.proofs.coverage)
    "ministral_3_8b": "tekken",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_PATTERN))
def test_provisioned_tokenizers_are_admitted_with_their_pattern(name: str, ledger) -> None:
    if name not in PROVISIONED:
        pytest.fail(f"{name} should be provisioned from the mirror for this test run")
    tok = load_tokenizer(name)
    assert admission_of(tok).admitted, admission_of(tok).reason
    assert admission_of(tok).reason == "admitted"
    assert admission_of(tok).pattern == EXPECTED_PATTERN[name]
    ledger.record("harness", "admission.provisioned", tok, comparisons=1, differences=0, unit="tokenizers",
                  oracle="premise")


REFUSALS = [
    ("wordpiece", "model_not_bpe:WordPiece"),
    ("nfkc", "normalizer_not_supported:nfkc"),
    ("lstrip", "added_token_strip_or_single_word:<|end|>"),
    ("normalized_under_nfc", "normalized_added_token_under_normalizer:<|end|>"),
    ("unknown_pattern", "split_pattern_unknown"),
    ("byte_level_with_regex", "not_byte_level:ByteLevel stage has use_regex or add_prefix_space set"),
    ("dropout", "bpe_dropout"),
    ("removed_inverted_not_total", "not_byte_level:split_removed_inverted_not_total"),
    ("removed_not_inverted", "not_byte_level:Split stage is neither Isolated nor Removed and inverted"),
]


@pytest.mark.parametrize(("kind", "reason"), REFUSALS)
def test_synthetic_bad_configurations_are_refused_with_their_reason(kind: str, reason: str, tmp_path: Path) -> None:
    path, _ = write(tmp_path, variant(kind))
    tok = load_tokenizer_file(path)
    assert not admission_of(tok).admitted
    assert admission_of(tok).reason == reason


@pytest.mark.parametrize("kind", ["admissible", "normalized_under_identity", "removed_inverted_total"])
def test_synthetic_good_configurations_are_admitted(kind: str, tmp_path: Path) -> None:
    path, _ = write(tmp_path, variant(kind))
    tok = load_tokenizer_file(path)
    assert admission_of(tok).admitted, admission_of(tok).reason
    assert admission_of(tok).pattern == "qwen2"
    # the synthetic tokenizer really encodes: "the" is one merged token, the special token is kept whole
    assert tok.tokenizer.encode("the<|end|>", add_special_tokens=False).ids == [257, 258]

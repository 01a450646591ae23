"""Admission: the eight provisioned tokenizers are admitted with their split pattern; synthetic bad configurations are
refused by name."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from delta_suite.frozen.errors import CorruptTokenizerFile
from delta_suite.frozen.loader import load_tokenizer, load_tokenizer_file
from delta_suite.frozen.registry import lookup, rows
from delta_suite.spec.admission import admission_of

from properties.conftest import PROVISIONED
from properties.synthetic import variant, write

EXPECTED_PATTERN = {
    "qwen3_8b": "qwen2",
    "llama_3_1_8b": "llama3",
    "gpt_oss_120b": "o200k",
    "deepseek_v3": "deepseek",
    "deepseek_v4_flash": "deepseek",
    "olmo_3_7b": "llama3",  # its Split stage is Removed and inverted over the Llama 3 pattern (spec.proofs.coverage)
    "ministral_3_8b": "tekken",
    "nemotron_3_nano_4b": "tekken",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_PATTERN))
def test_provisioned_tokenizers_are_admitted_with_their_pattern(name: str, ledger) -> None:
    if name not in PROVISIONED:
        pytest.fail(f"{name} should be provisioned from the mirror for this test run")
    tok = load_tokenizer(name)
    got = admission_of(tok)
    wrong = [f for f, ok in (("admitted", got.admitted), ("reason", got.reason == "admitted"),
                             ("pattern", got.pattern == EXPECTED_PATTERN[name]),
                             # spec.proofs.depth reads a row's pattern from the registry (it may not import
                             # admission): the two agree
                             ("registry pattern", lookup(name).split_pattern == got.pattern)) if not ok]
    ledger.record("harness", "admission.provisioned", tok, comparisons=1, differences=int(bool(wrong)),
                  unit="tokenizers", details={"wrong": wrong}, oracle="premise")
    assert got.admitted, got.reason
    assert got.reason == "admitted"
    assert got.pattern == EXPECTED_PATTERN[name]
    assert lookup(name).split_pattern == got.pattern


@pytest.mark.parametrize("name", sorted(r.name for r in rows() if r.name not in EXPECTED_PATTERN))
def test_other_provisioned_tokenizers_are_admitted_with_their_registry_pattern(name: str, ledger) -> None:
    """A registry row outside EXPECTED_PATTERN that is provisioned here (e.g. nemotron_3_nano_4b from the mirror) is
    admitted with the split-pattern family its registry row names, and records it: without this record its
    admission obligation would stay open, and the verdict would say so."""
    if name not in PROVISIONED:
        pytest.skip(f"{name} is not provisioned here")
    tok = load_tokenizer(name)
    got = admission_of(tok)
    if not got.admitted:
        pytest.skip(f"{name} is refused by the spec ({got.reason}): its whole encode is the reference's")
    want = next(r.split_pattern for r in rows() if r.name == name)
    ledger.record("harness", "admission.provisioned", tok, comparisons=1, differences=int(got.pattern != want),
                  unit="tokenizers", details={"pattern": got.pattern, "registry_pattern": want}, oracle="premise")
    assert got.pattern == want


REFUSALS = [
    ("wordpiece", "model_not_bpe:WordPiece"),
    ("nfd", "normalizer_not_supported:nfd"),
    ("lstrip", "added_token_strip_or_single_word:<|end|>"),
    ("normalized_under_nfc", "normalized_added_token_under_normalizer:<|end|>"),
    ("unknown_pattern", "split_pattern_unsupported:class_escape"),  # \w: decided by proof, refused by construct
    # Qwen2's stage then ByteLevel's GPT-2 split: the proof refutes re-synchronization (z3 picks the text, e.g.
    # " 'MT" from 1: Qwen2's contractions ignore case, GPT-2's do not)
    ("byte_level_with_regex", "split_pattern_unproved:re-synchronization refuted"),
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


@pytest.mark.parametrize("kind", ["admissible", "normalized_under_identity", "removed_inverted_total", "nfkc"])
def test_synthetic_good_configurations_are_admitted(kind: str, tmp_path: Path) -> None:
    path, _ = write(tmp_path, variant(kind))
    tok = load_tokenizer_file(path)
    assert admission_of(tok).admitted, admission_of(tok).reason
    assert admission_of(tok).pattern == "qwen2"
    # the synthetic tokenizer really encodes: "the" is one merged token, the special token is kept whole
    assert tok.tokenizer.encode("the<|end|>", add_special_tokens=False).ids == [257, 258]


def test_a_refusal_cannot_be_rewritten_by_a_caller(tmp_path: Path) -> None:
    """`admission_of` decides once per loaded tokenizer and hands every caller the same decision: a caller writing
    to it would change what every later caller is told (a refused tokenizer then admitted, its text cut). The
    decision is immutable: the write raises, and the next answer is the same refusal."""
    path, _ = write(tmp_path, variant("nfd"))
    tok = load_tokenizer_file(path)
    refused = admission_of(tok)
    with pytest.raises(dataclasses.FrozenInstanceError):
        refused.admitted = True  # type: ignore[misc]
    assert admission_of(tok) is refused and not admission_of(tok).admitted


@pytest.mark.parametrize("dropout", [0.1, 0.5, 1, 1.0, None, 0, 0.0])
def test_any_bpe_dropout_is_refused_and_none_admitted(dropout: float | None, tmp_path: Path) -> None:
    """BPE dropout skips merges at random, so no two encodes need agree: every dropout above 0 is refused (1 as an
    integer as well as 1.0, the value that drops every merge), and no dropout (absent, 0 or 0.0) is admitted."""
    config = variant("admissible")
    config["model"]["dropout"] = dropout
    path, _ = write(tmp_path, config)
    got = admission_of(load_tokenizer_file(path))
    if dropout:
        assert (got.admitted, got.reason) == (False, "bpe_dropout")
    else:
        assert got.admitted, got.reason


@pytest.mark.parametrize("dropout", [-1.0, -1, -0.5, 1.5])
def test_a_dropout_outside_zero_to_one_never_reaches_admission(dropout: float, tmp_path: Path) -> None:
    """`admit` sees only loaded tokenizers (`admission_of`), and `tokenizers` refuses to load a BPE dropout outside
    [0, 1]: what admission answers for such a value can never be asked (the premise of the equivalent survivors that
    change the admitted zero dropout to -1)."""
    config = variant("admissible")
    config["model"]["dropout"] = dropout
    path, _ = write(tmp_path, config)
    with pytest.raises(CorruptTokenizerFile, match="Dropout should be between 0 and 1"):
        load_tokenizer_file(path)


@pytest.mark.parametrize("flag", ["lstrip", "rstrip", "single_word"])
def test_each_strip_or_single_word_flag_alone_is_refused(flag: str, tmp_path: Path) -> None:
    """An added token that strips the whitespace beside it (lstrip, rstrip) or matches only as a whole word moves
    text across a cut: each of the three flags, set alone, refuses the tokenizer with the token named."""
    config = variant("admissible")
    config["added_tokens"][0][flag] = True
    path, _ = write(tmp_path, config)
    got = admission_of(load_tokenizer_file(path))
    assert (got.admitted, got.reason) == (False, "added_token_strip_or_single_word:<|end|>")

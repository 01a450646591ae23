"""The reference oracle: whole encodes, character offsets, post-processing applied once, invalid text."""

from __future__ import annotations

import pytest

from corpora.errors import InvalidText
from corpora.samples import SAMPLES
from spec.reference import (
    post_process,
    reference_encode,
    reference_encode_batch,
    reference_encode_full,
    reference_encode_with_offsets,
)


def test_post_processing_once_equals_the_reference_post_processed_encode(tok, ledger) -> None:
    diffs = 0
    for text in SAMPLES:
        diffs += post_process(tok, reference_encode(tok, text)) != reference_encode_full(tok, text)
    assert diffs == 0
    ledger.record("encoder", "reference.post_process_once", tok, comparisons=len(SAMPLES), differences=diffs,
                  unit="encodes")


def test_batch_path_equals_single_encodes(tok, ledger) -> None:
    batch = reference_encode_batch(tok, list(SAMPLES))
    diffs = sum(reference_encode(tok, t) != ids for t, ids in zip(SAMPLES, batch, strict=True))
    assert diffs == 0
    ledger.record("encoder", "reference.batch_vs_single", tok, comparisons=len(SAMPLES), differences=diffs,
                  unit="encodes")


def test_offsets_index_the_original_text(tok) -> None:
    text = "Cafe\u0301 \u0958/ ok"
    ids, spans = reference_encode_with_offsets(tok, text)
    assert len(ids) == len(spans)
    assert spans[0][0] == 0 and max(e for _, e in spans) == len(text)
    assert all(0 <= s <= e <= len(text) for s, e in spans)


def test_lone_surrogate_is_invalid_text(tok) -> None:
    with pytest.raises(InvalidText, match="lone surrogate U\\+D800 at offset 3"):
        reference_encode(tok, "abc\ud800def")

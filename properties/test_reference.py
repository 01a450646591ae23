"""The reference oracle: whole encodes, character offsets, post-processing applied once, invalid text."""

from __future__ import annotations

import time

import pytest
from delta_suite.checks.differential import joined, unit_difference
from delta_suite.corpora.samples import SAMPLES
from delta_suite.delta.cuts import encode_rows
from delta_suite.frozen.errors import InvalidText
from delta_suite.spec.reference import (
    LIBRARY,
    LibraryMeter,
    post_process,
    reference_encode,
    reference_encode_batch,
    reference_encode_full,
    reference_encode_unit_lengths,
    reference_encode_units,
    reference_encode_with_offsets,
    reference_ids_batch,
    units_from_lengths,
)


def test_post_processing_once_equals_the_reference_post_processed_encode(tok, ledger) -> None:
    diffs = 0
    for text in SAMPLES:
        diffs += post_process(tok, reference_encode(tok, text)) != reference_encode_full(tok, text)
    assert diffs == 0
    ledger.record("encoder", "reference.post_process_once", tok, comparisons=len(SAMPLES), differences=diffs,
                  unit="encodes", oracle="self")


def test_batch_path_equals_single_encodes(tok, ledger) -> None:
    batch = reference_encode_batch(tok, list(SAMPLES))
    diffs = sum(reference_encode(tok, t) != ids for t, ids in zip(SAMPLES, batch, strict=True))
    assert diffs == 0
    ledger.record("encoder", "reference.batch_vs_single", tok, comparisons=len(SAMPLES), differences=diffs,
                  unit="encodes", oracle="self")


def test_offsets_index_the_original_text(tok) -> None:
    text = "Cafe\u0301 \u0958/ ok"
    ids, spans = reference_encode_with_offsets(tok, text)
    assert len(ids) == len(spans)
    assert spans[0][0] == 0 and max(e for _, e in spans) == len(text)
    assert all(0 <= s <= e <= len(text) for s, e in spans)


def test_lone_surrogate_is_invalid_text(tok) -> None:
    with pytest.raises(InvalidText, match="lone surrogate U\\+D800 at offset 3"):
        reference_encode(tok, "abc\ud800def")


def test_unit_lengths_give_the_same_units_as_grouping_by_word(tok, ledger) -> None:
    """Invariant: `units_from_lengths(*reference_encode_unit_lengths(S))` equals `reference_encode_units(S)` (the
    compact form the checks compare is the same units), on the samples, each sample with the tokenizer's special
    strings spliced in, and the empty text; and `unit_difference` reports a difference exactly when they differ."""
    specials = list(tok.special_strings[:3])
    texts = ["", *SAMPLES, *(s[: len(s) // 2] + sp + sp + s[len(s) // 2 :] for s in SAMPLES for sp in specials)]
    diffs = 0
    for text in texts:
        ids, units = reference_encode_units(tok, text)
        compact = reference_encode_unit_lengths(tok, text)
        diffs += compact[0] != ids or units_from_lengths(*compact) != units
    assert diffs == 0
    a, b = reference_encode_unit_lengths(tok, "hello world"), reference_encode_unit_lengths(tok, " again")
    assert unit_difference(joined([a, b]), joined([a, b])) is None
    merged = (a[0] + b[0], [sum(a[1]) + sum(b[1])])  # same IDs, one unit: must differ
    assert unit_difference(joined([a, b]), merged) is not None
    ledger.record("encoder", "reference.unit_lengths_vs_units", tok, comparisons=len(texts), differences=diffs,
                  unit="encodes", oracle="self")


def test_chunk_rows_equal_reference_batch(tok, ledger) -> None:
    """Invariant: the chunked encoder's batch call (`delta.cuts.encode_rows`, IDs only) returns the same IDs as
    the reference's batch path, row for row, on the samples and each sample's halves."""
    texts = [*SAMPLES, *(s[: len(s) // 2] for s in SAMPLES), *(s[len(s) // 2 :] for s in SAMPLES)]
    rows = encode_rows(tok, texts)
    diffs = sum(a != b for a, b in zip(rows, reference_encode_batch(tok, texts), strict=True))
    assert len(rows) == len(texts) and diffs == 0
    ledger.record("encoder", "reference.chunk_rows_vs_batch", tok, comparisons=len(texts), differences=diffs,
                  unit="encodes", oracle="self")


def test_the_library_meter_counts_each_library_call_and_its_time(tok, ledger) -> None:
    """Each entry point of the reference that calls the library adds one call to `LIBRARY` and the time the call
    took, in integer nanoseconds (above 0, at most the wall time around it); a new meter starts at zero, and
    `seconds` is its nanoseconds / 10^9."""
    fresh = LibraryMeter()
    assert (fresh.nanoseconds, fresh.calls, fresh.seconds) == (0, 0, 0.0)
    assert LibraryMeter(nanoseconds=1_500_000_000).seconds == 1.5
    text = SAMPLES[0]
    entry_points = [reference_encode, reference_encode_with_offsets, reference_encode_full, reference_encode_units,
                    reference_encode_unit_lengths, lambda t, s: reference_encode_batch(t, [s, s]),
                    lambda t, s: reference_ids_batch(t, [s, s])]
    wrong = []
    for call in entry_points:
        calls, ns, t0 = LIBRARY.calls, LIBRARY.nanoseconds, time.perf_counter_ns()
        call(tok, text)
        wall = time.perf_counter_ns() - t0
        if LIBRARY.calls - calls != 1 or not 0 < LIBRARY.nanoseconds - ns <= wall:
            wrong.append((getattr(call, "__name__", "batch"), LIBRARY.calls - calls, LIBRARY.nanoseconds - ns, wall))
    ledger.record("encoder", "reference.library_meter", tok, comparisons=len(entry_points), differences=len(wrong),
                  unit="entry points", oracle="self")
    assert wrong == []

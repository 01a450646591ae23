"""Unit tests of the repair proposition's premises and of its edge cases (spec/repair.py)."""

from __future__ import annotations

import dataclasses
import random
from itertools import accumulate, product

import pytest
from delta_suite.frozen.loader import load_tokenizer, load_tokenizer_file
from delta_suite.fuzz.strategies import seam_texts
from delta_suite.spec.reference import reference_encode, reference_encode_with_offsets
from delta_suite.spec.repair import (
    ANCHOR_SCAN,
    DEFAULT_REPAIR_PARAMS,
    PAIR_BLOCK,
    RepairParams,
    _longest_run_general,
    anchored_window_start,
    bound_premise,
    first_token_from,
    is_nfc_anchor,
    judge_run,
    longest_common_run,
    longest_token_text,
    margin_premise,
    normalized_length,
    overlap_keys,
    repair,
    repair_window,
    sync_witness,
    window_start_premise,
)
from hypothesis import given
from hypothesis import strategies as st
from tokenizers.normalizers import NFC

from properties.conftest import ADMITTED
from properties.synthetic import base_config, write

PROSE = "The committee reviewed the proposal, and agreed to revisit it in 2025. Les cafés ouvrent à 8h. "
NFC_TOKS = [n for n in ADMITTED if load_tokenizer(n).is_nfc]
PLAIN_TOKS = [n for n in ADMITTED if not load_tokenizer(n).is_nfc]


def _repair_from_scratch(tok, old: str, delta: str, params: RepairParams = DEFAULT_REPAIR_PARAMS):
    ids, spans = reference_encode_with_offsets(tok, old)
    return repair(tok, old, ids, spans, delta, params)


# --- premises ------------------------------------------------------------------------------------------------


def test_margin_premise_holds_and_is_sharp(tok, ledger) -> None:
    """margin == max(8, longest special string); one less (or a margin below 8) violates the premise."""
    short = dataclasses.replace(tok, special_strings=("<a>",), margin=8)
    verdicts = {"holds": margin_premise(tok) is True,
                "one less violates": margin_premise(dataclasses.replace(tok, margin=tok.margin - 1)) is False,
                "short specials hold at 8": margin_premise(short) is True,
                "below 8 violates": margin_premise(dataclasses.replace(short, margin=3)) is False}
    ledger.record("repair", "margin_premise", tok, comparisons=len(verdicts),
                  differences=sum(not ok for ok in verdicts.values()), unit="premise", oracle="premise")
    assert all(verdicts.values()), verdicts


def test_bound_premise_holds_and_is_sharp(tok, ledger) -> None:
    """The bound covers the longest decoded token; a bound one below that longest text violates the premise."""
    longest = longest_token_text(tok)
    verdicts = {"holds": bound_premise(tok) is True,
                "one below violates": bound_premise(dataclasses.replace(tok, bound=longest - 1)) is False}
    ledger.record("repair", "bound_premise", tok, comparisons=len(verdicts),
                  differences=sum(not ok for ok in verdicts.values()), unit="premise",
                  details={"bound": tok.bound, "longest_token_chars": longest}, oracle="premise")
    assert all(verdicts.values()), (verdicts, tok.bound, longest)


def test_a_special_tokens_text_counts_toward_the_longest_token_text(tmp_path) -> None:
    """The bound premise covers every token, the added special tokens included (they cover their text in the
    encode like any token): in a vocabulary whose longest entry is "the", the special token <|end|> is the longest
    text one token decodes to."""
    path, _ = write(tmp_path, base_config())
    assert longest_token_text(load_tokenizer_file(path)) == len("<|end|>")


@pytest.mark.parametrize(
    "ch, anchor",
    [("a", True), ("\u00e9", True), ("中", True), ("\uac00", True), (" ", True), ("\u0301", False),
     ("\u1161", False), ("\u11a8", False), ("\u0958", False), ("\u212b", False), ("\u0bbe", False),
     ("\u09be", False)],
)
def test_nfc_anchor_pins(ch: str, anchor: bool) -> None:
    """Pinned anchors and non-anchors (marks, Hangul V/T, singletons and composition exclusions, second vowels)."""
    assert is_nfc_anchor(ch) is anchor


@given(st.data())
def test_nfc_splits_before_every_anchor(data) -> None:
    """Whenever is_nfc_anchor(c): NFC(x + c + y) == NFC(x) + NFC(c + y), with x, y from the seam strategy."""
    tok = load_tokenizer(NFC_TOKS[0]) if NFC_TOKS else load_tokenizer(ADMITTED[0])
    x = data.draw(seam_texts(tok, max_size=6))
    y = data.draw(seam_texts(tok, max_size=6))
    c = data.draw(st.characters(codec="utf-8"))
    norm = NFC().normalize_str
    if is_nfc_anchor(c):
        assert norm(x + c + y) == norm(x) + norm(c + y)


def test_window_start_premise() -> None:
    """Identity normalizers: every ws; NFC: ws at an anchor (or 0), never on a mark or a Hangul V jamo."""
    text = "abc\u0301def\u1100\u1161g"
    for name in PLAIN_TOKS:
        tok = load_tokenizer(name)
        assert all(window_start_premise(tok, text, ws) for ws in range(len(text)))
    for name in NFC_TOKS:
        tok = load_tokenizer(name)
        assert window_start_premise(tok, text, 0) and window_start_premise(tok, text, 2)
        assert not window_start_premise(tok, text, 3)  # the mark
        assert not window_start_premise(tok, text, 8)  # the V jamo after an L jamo


@pytest.mark.parametrize(
    "text, b, accepted",
    [("a1", 1, True), ("1 ", 1, True), ("a.", 1, True), (".1", 1, True), (" a", 1, False), ("a'", 1, False),
     (".\n", 1, False), ("ab", 1, False), ("a\u0301", 1, False), (".a", 1, False), ("a", 0, False), ("a", 1, False),
     ("1a", 0, False), ("a1", 2, False)],  # b outside 0 < b < len: no pair (the accepted "a1" would wrap around)
)
def test_sync_witness_on_input_characters(text: str, b: int, accepted: bool) -> None:
    """The witness is the accepted-transition predicate of spec/transitions.py, read on input characters."""
    for name in ADMITTED:
        assert sync_witness(load_tokenizer(name), text, b) is accepted


def test_sync_witness_needs_anchors_under_nfc() -> None:
    """U+0958 then '/' is L->O in the input but M->O after NFC: a witness for identity normalizers only."""
    for name in PLAIN_TOKS:
        assert sync_witness(load_tokenizer(name), "\u0958/", 1)
    for name in NFC_TOKS:
        assert not sync_witness(load_tokenizer(name), "\u0958/", 1)


def test_single_token_run_is_never_accepted(tok) -> None:
    """min_match_tokens is implied: a one-token run has no internal boundary (witness) and cannot exceed the bound."""
    text = PROSE * 10
    _, spans = reference_encode_with_offsets(tok, text)
    loose = RepairParams(min_match_tokens=1)
    verdicts = {judge_run(tok, text, spans, (i, i, 1), loose, tok.bound) for i in range(len(spans))}
    assert verdicts <= {"bound", "witness"}
    no_bound = RepairParams(min_match_tokens=1, require_bound=False)
    assert {judge_run(tok, text, spans, (i, i, 1), no_bound, tok.bound) for i in range(len(spans))} == {"witness"}


def test_normalized_length_counts_after_the_tokenizers_normalizer(tok) -> None:
    """The bound is in normalized characters: an NFC tokenizer counts a decomposed "e" + U+0301 as the one "é" NFC
    makes of it (the reference's NFC normalizer), any other counts the input as it is."""
    text = "cafe\u0301 and A\u030a " * 3
    composed = NFC().normalize_str(text)
    assert len(composed) < len(text)
    assert normalized_length(tok, text) == (len(composed) if tok.is_nfc else len(text))


def test_a_witness_at_the_texts_second_offset_counts(tok) -> None:
    """The witness may be the boundary at offset 1 (a run starting with a one-character token): over the spans
    "a" | "1bb" of "a1bb", the one internal boundary, "a" before "1", is an accepted transition, so the run is
    accepted (the bound made 0), and with "ab" in place of "a1" it is refused for want of a witness."""
    run, spans = (0, 0, 2), [(0, 1), (1, 4)]
    assert judge_run(tok, "a1bb", spans, run, DEFAULT_REPAIR_PARAMS, 0) == "accepted"
    assert judge_run(tok, "abbb", spans, run, DEFAULT_REPAIR_PARAMS, 0) == "witness"


def test_a_run_must_cover_more_than_the_bound(tok) -> None:
    """The bound condition is strict: a matched run whose normalized text is exactly `bound` characters long is
    refused ("bound"), one character more passes it (then the witness decides), for runs of 2 to 4 tokens."""
    text = PROSE * 4
    _, spans = reference_encode_with_offsets(tok, text)
    judged = 0
    for length in (2, 3, 4):
        for first in range(0, len(spans) - length, 7):
            covered = normalized_length(tok, text[spans[first][0] : spans[first + length - 1][1]])
            run = (first, first, length)
            assert judge_run(tok, text, spans, run, DEFAULT_REPAIR_PARAMS, covered) == "bound"
            assert judge_run(tok, text, spans, run, DEFAULT_REPAIR_PARAMS, covered - 1) in ("witness", "accepted")
            judged += 1
    assert judged > 10


def test_the_overlap_starts_margin_characters_into_the_window(tok) -> None:
    """repair_window matches only the tokens of [ws + margin, len(S)]: with the margin reaching past S's end there
    is nothing to match ("no_run"), though the window repeats S's tokens from ws on; with the margin inside S, a
    run is found and accepted there (the bound made small so that it is the run that decides)."""
    old, delta = PROSE * 6, " Then the next turn."
    ids, spans = reference_encode_with_offsets(tok, old)
    ws = len(old) - 60
    loose = RepairParams(require_witness=False)
    assert repair_window(tok, old, delta, ids, spans, ws, 61, 1, loose) == "no_run"
    kept = repair_window(tok, old, delta, ids, spans, ws, 10, 1, loose)
    assert isinstance(kept, tuple) and spans[kept[0] - 1][1] <= len(old) and spans[kept[0] - 1][0] >= ws + 10


# --- edge cases ------------------------------------------------------------------------------------------------


def test_empty_delta_returns_stored_ids(tok) -> None:
    """An empty D returns T itself, without any encode."""
    old = PROSE * 20
    ids, spans = reference_encode_with_offsets(tok, old)
    result = repair(tok, old, ids, spans, "")
    assert result.path == "noop:empty_delta" and result.ids == ids and result.spans == spans


def test_unchecked_reuse_is_the_stored_stream_then_the_delta_alone(tok) -> None:
    """The broken variant check_seam=False (what a front end that never re-encodes the seam returns) is exactly
    the stored IDs and spans followed by the encode of D alone, its spans moved to D's place in S + D: the
    variant the controls judge is the known failure, not some other error."""
    old, delta = PROSE * 3, " and then, the next turn"
    ids, spans = reference_encode_with_offsets(tok, old)
    d_ids, d_spans = reference_encode_with_offsets(tok, delta)
    result = repair(tok, old, ids, spans, delta, RepairParams(check_seam=False))
    assert result.path == "unchecked:reuse"
    assert result.ids == ids + d_ids
    assert result.spans == spans + [(s + len(old), e + len(old)) for s, e in d_spans]
    assert (old + delta)[result.spans[-1][0] : result.spans[-1][1]] == delta[d_spans[-1][0] : d_spans[-1][1]]


def test_window_covering_all_encodes_whole(tok, ledger) -> None:
    """len(S) <= W: the window would cover all of S, so S + D is encoded whole; also when len(S) is exactly W."""
    olds = (PROSE * 3, (PROSE * 6)[:512])  # under 512 characters, and exactly 512
    assert len(olds[0]) < 512 and len(olds[1]) == 512
    results = [_repair_from_scratch(tok, old, " and more") for old in olds]
    assert [r.path for r in results] == ["fallback:window_covers_all"] * 2
    differing = sum(r.ids != reference_encode(tok, old + " and more") for r, old in zip(results, olds, strict=True))
    ledger.record("repair", "window_covers_all", tok, comparisons=len(olds), differences=differing,
                  fallbacks=len(olds), fast_path=0, oracle="reference")
    assert differing == 0


def test_wide_bound_needs_a_wider_first_window(tok, ledger) -> None:
    """A glm-like bound of 512: the first window's overlap is shorter than 512, so it never accepts; the second
    window (1,024) does, and the result is the reference."""
    old, delta = PROSE * 40, "Finally, the end."
    result = _repair_from_scratch(tok, old, delta, RepairParams(bound=512))
    assert result.rejections[0] == "window=0:bound", result.rejections
    assert result.path == "repaired:window=1"
    same = result.ids == reference_encode(tok, old + delta)
    ledger.record("repair", "wide_bound_second_window", tok, comparisons=1, differences=int(not same), fast_path=1,
                  fallbacks=0, oracle="reference")
    assert same


def test_the_window_doubles_five_times(tok) -> None:
    """The default parameters double the first window (512) at most five times, the paper's setting: with a bound
    of 8,200 characters every window up to 8,192 is rejected for the bound and the sixth, 16,384 characters, is
    accepted; with a bound of 16,400 that sixth window is rejected too and, though the old text is longer than a
    seventh window would be, S + D is encoded whole; the result is the reference."""
    old, delta = PROSE * 200, "Finally, the end."
    assert len(old) > 16_384
    result = _repair_from_scratch(tok, old, delta, dataclasses.replace(DEFAULT_REPAIR_PARAMS, bound=8_200))
    assert result.rejections == tuple(f"window={k}:bound" for k in range(5)), result.rejections
    assert result.path == "repaired:window=5"
    assert result.ids == reference_encode(tok, old + delta)
    old = PROSE * 400
    assert len(old) > 32_768
    result = _repair_from_scratch(tok, old, delta, dataclasses.replace(DEFAULT_REPAIR_PARAMS, bound=16_400))
    assert result.rejections == tuple(f"window={k}:bound" for k in range(6)), result.rejections
    assert result.path == "fallback:no_match"
    assert result.ids == reference_encode(tok, old + delta)


def test_last_window_then_whole_encode(tok) -> None:
    """When no window accepts, after the last doubling S + D is encoded whole ("fallback:no_match")."""
    old, delta = PROSE * 40, "x"
    result = _repair_from_scratch(tok, old, delta, RepairParams(bound=10**6, max_doublings=1))
    assert result.path == "fallback:no_match" and len(result.rejections) == 2
    assert result.ids == reference_encode(tok, old + delta)


def test_invalid_prior_state_and_inadmissible(tok) -> None:
    """IDs and spans of different lengths, or an inadmissible tokenizer: the reference encode, never a splice."""
    old, delta = PROSE * 20, "tail"
    ids, spans = reference_encode_with_offsets(tok, old)
    assert repair(tok, old, ids, spans[:-1], delta).path == "fallback:invalid_prior_state"
    not_bpe = dataclasses.replace(tok.admission_inputs, model_type="WordPiece")  # refused: model_not_bpe
    refused = dataclasses.replace(tok, admission_inputs=not_bpe)
    result = repair(refused, old, ids, spans, delta)
    assert result.path == "fallback:not_admitted" and result.ids == reference_encode(tok, old + delta)


def test_nfc_window_start_moves_to_an_anchor() -> None:
    """NFC: a window start inside a run of marks moves left to an anchor; a run longer than ANCHOR_SCAN skips the
    window ("nfc_no_anchor"); one that reaches the text's start encodes it whole; all end equal to the reference."""
    for name in NFC_TOKS:
        tok = load_tokenizer(name)
        old = PROSE * 8 + "e" + "\u0301\u0316" * 20 + PROSE * 6
        ws = len(old) - 512
        old = old[:ws - 10] + "a" + "\u0301" * 30 + old[ws + 21:]
        result = _repair_from_scratch(tok, old, "end")
        assert result.ids == reference_encode(tok, old + "end")
        marks = PROSE * 2 + "a" + "\u0301" * (ANCHOR_SCAN + 400) + PROSE * 3
        result = _repair_from_scratch(tok, marks, "end")
        assert "window=0:nfc_no_anchor" in result.rejections
        assert result.ids == reference_encode(tok, marks + "end")
        # a start that moves all the way to 0 is a window covering all of S: encoded whole, not repaired from 0
        marks = "\u0301" * 520
        result = _repair_from_scratch(tok, marks, "end")
        assert result.path == "fallback:window_covers_all" and result.rejections == ()
        assert result.ids == reference_encode(tok, marks + "end")


def test_the_anchor_scan_reaches_exactly_anchor_scan_code_points() -> None:
    """anchored_window_start tries every ws' in [ws - ANCHOR_SCAN, ws]: an anchor exactly ANCHOR_SCAN code points
    below the start is found, one a code point further is not (None); the start itself, when an anchor, is kept;
    and from every start in between (odd distances too) the anchor found is the nearest one."""
    for name in NFC_TOKS:
        tok = load_tokenizer(name)
        text = PROSE + "a" + "\u0301" * (ANCHOR_SCAN + 10) + PROSE
        anchor = len(PROSE)
        assert anchored_window_start(tok, text, anchor + ANCHOR_SCAN) == anchor
        assert anchored_window_start(tok, text, anchor + ANCHOR_SCAN + 1) is None
        assert anchored_window_start(tok, text, anchor) == anchor
        found = [anchored_window_start(tok, text, anchor + k) for k in range(ANCHOR_SCAN + 1)]
        assert found == [anchor] * (ANCHOR_SCAN + 1)
        assert [anchored_window_start(tok, text, anchor - k) for k in range(1, 4)] == [anchor - k for k in range(1, 4)]


def _same_span_before(spans: list[tuple[int, int]], i: int) -> int:
    """How many tokens just before token i share its span (the byte pieces of one character before it)."""
    k = 0
    while i - k - 1 >= 0 and spans[i - k - 1] == spans[i]:
        k += 1
    return k


def test_overlap_keys_are_the_tokens_inside_the_range(tok, ledger) -> None:
    """first_token_from(spans, lo) is the number of tokens starting before lo, and overlap_keys keys exactly the
    tokens whose non-empty span lies inside [lo, hi], the full key's ordinal counting the tokens before it that
    share its span; on a reference encode whose byte pieces share spans, for lo every 3 code points and four hi,
    and on one private-use character, whose byte pieces are all the tokens (the first and the last share a span);
    and a stream with zero-width tokens inside the range, which are never keys."""
    long_text = PROSE + "\U0001f999 \u4e2d\u6587 caf\u00e9 \U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1 " * 3 + PROSE
    compared = differing = 0
    for text in (long_text, "\U0010fffd"):
        ids, spans = reference_encode_with_offsets(tok, text)
        shared = any(a == b for a, b in zip(spans, spans[1:], strict=False))
        assert shared, f"no two tokens of {text[:20]!r} share a span: the ordinal is not reached"
        for lo in range(0, len(text) + 1, 3):
            compared += 1
            differing += first_token_from(spans, lo) != sum(s < lo for s, _ in spans)
            for hi in (lo, lo + 5, lo + 40, len(text)):
                inside = [i for i, (s, e) in enumerate(spans) if lo <= s < e <= hi]
                expected = {
                    "spans": {i: spans[i] for i in inside},
                    "ids": {i: (ids[i],) for i in inside},
                    "full": {i: (*spans[i], _same_span_before(spans, i), ids[i]) for i in inside},
                }
                for key, want in expected.items():
                    compared += 1
                    differing += overlap_keys(ids, spans, lo, hi, key) != want
    # a zero-width token (as a normalizer that prepends a character gives its first token) has no character of the
    # text to anchor a splice at: inside the range or not, it is never a key
    zero_width = [(0, 2), (2, 2), (2, 4), (4, 4)]
    for key in ("spans", "ids", "full"):
        compared += 1
        differing += sorted(overlap_keys([5, 6, 7, 8], zero_width, 0, 4, key)) != [0, 2]
    ledger.record("repair", "overlap_keys", tok, comparisons=compared, differences=differing, unit="ranges",
                  oracle="spec")
    assert compared > 400 and differing == 0


def test_params_validation() -> None:
    """Unknown match keys and impossible sizes are refused when the parameters are built."""
    with pytest.raises(ValueError):
        RepairParams(match_key="bogus")
    for bad in ({"first_window": 0}, {"max_doublings": -1}, {"min_match_tokens": 0}):
        with pytest.raises(ValueError):
            RepairParams(**bad)
    assert RepairParams(first_window=1, max_doublings=0, min_match_tokens=1).min_match_tokens == 1  # the least allowed


def test_params_stay_as_validated() -> None:
    """Parameters are checked once, when built, so they cannot change afterwards: a field of the shared default
    (every repair's default argument) or of any other parameter set refuses a write, which would otherwise turn
    the correct spec into a broken variant for every later caller, or slip an unknown match key past the check."""
    for params in (DEFAULT_REPAIR_PARAMS, RepairParams(margin=3)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            params.match_key = "bogus"  # type: ignore[misc]
    assert DEFAULT_REPAIR_PARAMS == RepairParams() and DEFAULT_REPAIR_PARAMS.match_key == "full"


def _adjacent_spans(widths: list[int]) -> list[tuple[int, int]]:
    """Spans laid end to end from 0, one per width (a width of 0 is an empty span)."""
    ends = list(accumulate(widths))
    return [(end - w, end) for end, w in zip(ends, widths, strict=True)]


@st.composite
def _key_streams(draw) -> tuple[dict, dict, list]:
    """Old and new key streams over a small key alphabet (so runs and ties occur), new keys each used once."""
    n_old = draw(st.integers(0, 30))
    first_old = draw(st.integers(0, 5))
    old_keys = {first_old + i: (draw(st.integers(0, 6)),) for i in range(n_old)
                if draw(st.booleans()) or i % 3}
    alphabet = draw(st.permutations(list(range(12))))
    n_new = draw(st.integers(0, 12))
    new_keys = {draw(st.integers(0, 3)) + j: (alphabet[j],) for j in range(n_new)}
    return old_keys, new_keys, _adjacent_spans(draw(st.lists(st.integers(0, 4), min_size=first_old + n_old,
                                                             max_size=first_old + n_old)))


@given(_key_streams())
def test_unique_key_run_equals_the_general_search(streams) -> None:
    """Invariant: when every key occurs once in the new stream, the one-pass run search returns exactly what the
    general longest-common-run search returns (same run, same tie-breaking by covered span, then later end)."""
    old_keys, new_keys, spans = streams
    assert longest_common_run(old_keys, new_keys, spans) == _longest_run_general(old_keys, new_keys, spans)


@st.composite
def _repeated_key_streams(draw) -> tuple[dict, dict, list]:
    """Old and new key streams over two or three keys, each key repeated in both (the general search's case)."""
    keys = draw(st.integers(2, 3))
    n_old, n_new = draw(st.integers(0, 24)), draw(st.integers(0, 24))
    first_old, first_new = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    old_keys = {first_old + i: (draw(st.integers(0, keys - 1)),) for i in range(n_old) if draw(st.booleans()) or i % 4}
    new_keys = {first_new + j: (draw(st.integers(0, keys - 1)),) for j in range(n_new) if draw(st.booleans()) or j % 4}
    return old_keys, new_keys, _adjacent_spans(draw(st.lists(st.integers(0, 3), min_size=first_old + n_old,
                                                             max_size=first_old + n_old)))


def _longest_run_by_definition(old_keys: dict, new_keys: dict, spans: list) -> tuple[int, int, int] | None:
    """Every pair of equal keys, with the run of equal keys at consecutive indices ending there measured by
    walking back; the best by length, then covered span (old stream), then later old end, then the first new end."""
    best = None
    for i in sorted(old_keys):
        for j in sorted(new_keys):
            length = 0
            while old_keys.get(i - length) is not None and old_keys.get(i - length) == new_keys.get(j - length):
                length += 1
            if length:
                rank = (length, spans[i][1] - spans[i - length + 1][0], i, -j)
                if best is None or rank > best[0]:
                    best = (rank, (i - length + 1, j - length + 1, length))
    return None if best is None else best[1]


@given(_repeated_key_streams())
def test_general_run_search_equals_its_definition(streams) -> None:
    """Invariant: the general longest-common-run search (keys repeated in the new stream) returns the run the
    definition gives: longest, then widest in the old text, then ending latest in the old stream, then earliest in
    the new one (the search skips the covered span of runs shorter than its best; this shows that loses nothing)."""
    old_keys, new_keys, spans = streams
    assert _longest_run_general(old_keys, new_keys, spans) == _longest_run_by_definition(old_keys, new_keys, spans)


def _streams_of(symbols: tuple) -> dict[int, tuple]:
    """A key stream from symbols by index: None is a gap (no key there), anything else the key (symbol,)."""
    return {i: (s,) for i, s in enumerate(symbols) if s is not None}


def test_general_run_search_equals_its_definition_exhaustively() -> None:
    """Invariant: on every pair of streams of up to four old positions, each a gap or one of two keys, and up to
    three new ones, the general run search returns the definition's run, read in one block of pairs and in blocks
    of one pair (so that every run crosses blocks); the old spans' widths make some equal-length runs tie on covered
    span.
    Plants it failed on: a run crossing into a block not continuing its predecessor's length (the carry dropped);
    the later new end preferred on a tie; the covered span left out of the order."""
    streams = {n: [_streams_of(s) for s in product((None, 0, 1), repeat=n)] for n in range(5)}
    spans = _adjacent_spans([1, 2, 1, 1])
    for old_keys in (keys for n in range(5) for keys in streams[n]):
        for new_keys in (keys for n in range(4) for keys in streams[n]):
            want = _longest_run_by_definition(old_keys, new_keys, spans)
            assert _longest_run_general(old_keys, new_keys, spans) == want, (old_keys, new_keys)
            assert _longest_run_general(old_keys, new_keys, spans, pair_block=1) == want, (old_keys, new_keys)


def test_general_run_search_keeps_diagonals_apart_when_they_span_more_than_16_bits() -> None:
    """Invariant: two pairs on diagonals (j - i) exactly 1 << 16 apart are never one run, even at consecutive old
    indices: the search's diagonal order (a 16-bit radix sort when the diagonals fit) must not fold them together.
    Old indices 70,000 and 70,001 pair with new indices 0 and 65,537: diagonals -70,000 and -4,464, each a run of
    one; the definition's answer is the later one."""
    old_keys, new_keys = {70_000: (5,), 70_001: (6,)}, {0: (5,), 65_537: (6,)}
    spans = _adjacent_spans([1] * 70_002)
    want = _longest_run_by_definition(old_keys, new_keys, spans)
    assert want == (70_001, 65_537, 1)
    for block in (1, PAIR_BLOCK):
        assert _longest_run_general(old_keys, new_keys, spans, pair_block=block) == want


def test_general_run_search_equals_its_definition_on_random_long_streams() -> None:
    """Invariant: on seeded random streams of up to 60 positions over one to four keys, with gaps and empty spans,
    the general run search returns the definition's run whatever the block of pairs it reads at once (1, 7 and
    the default). Plants as in the exhaustive test."""
    rng = random.Random(0)
    for _ in range(150):
        keys, first_old, first_new = rng.randint(1, 4), rng.randint(0, 3), rng.randint(0, 3)
        gap = rng.random() * 0.3
        n_old, n_new = rng.randint(0, 60), rng.randint(0, 60)
        old_keys = {first_old + i: (rng.randrange(keys),) for i in range(n_old) if rng.random() > gap}
        new_keys = {first_new + j: (rng.randrange(keys),) for j in range(n_new) if rng.random() > gap}
        spans = _adjacent_spans([rng.randint(0, 3) for _ in range(first_old + n_old)])
        want = _longest_run_by_definition(old_keys, new_keys, spans)
        for block in (1, 7, PAIR_BLOCK):
            assert _longest_run_general(old_keys, new_keys, spans, pair_block=block) == want, (old_keys, new_keys)

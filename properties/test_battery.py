"""The battery generator is deterministic, versioned, sized per profile, and covers every hazard it advertises."""

from __future__ import annotations

import hashlib

import pytest
from delta_suite.checks.battery import (
    BATTERY_VERSION,
    HAZARDS,
    PHASE_DIGITS,
    PROFILES,
    TAIL_PHASE,
    TAIL_WINDOW_NEWLINES,
    WINDOW_WIDTHS,
    UnknownProfile,
    battery,
    battery_case,
    battery_digest,
    case_bytes,
    get_profile,
    iter_battery,
)
from delta_suite.checks.palette import nfc_class_changers, unicode_skew_pool
from delta_suite.spec.classes import M, class_table
from delta_suite.spec.reference import reference_encode_with_offsets
from delta_suite.spec.repair import MARK_TAIL_PAIRS


def test_same_seed_same_strings_and_digest(tok, ledger) -> None:
    """Regenerating the ci battery with the same seed gives identical cases byte for byte, and the digest computed
    afresh (not the memoized one) over the regenerated cases is the recorded digest."""
    first = battery(tok, "ci", 0)
    again = [battery_case(tok, "ci", 0, i) for i in range(len(first))]  # each case on its own, uncached
    differing = sum(a.as_json() != b.as_json() for a, b in zip(again, first, strict=True))
    recorded = battery_digest(tok, "ci", 0)
    afresh = battery_digest.__wrapped__(tok, "ci", 0)  # the digest computed again, past its lru_cache
    ledger.record("battery", "battery.determinism", tok, comparisons=len(first) + 1,
                  differences=differing + (afresh != recorded), unit="strings",
                  details={"version": BATTERY_VERSION, "digest": recorded, "digest_again": afresh}, oracle="self")
    assert differing == 0
    assert afresh == recorded
    assert recorded == _digest_of(tok, again)


def _digest_of(tok, cases) -> str:
    """The battery digest's definition (checks.battery.battery_digest) applied to the given cases."""
    profile, seed = "ci", 0
    h = hashlib.sha256(f"{BATTERY_VERSION}\0{profile}\0{seed}\0{tok.name}\0{tok.sha256}\0".encode())
    for case in cases:
        h.update(case_bytes(case) + b"\n")
    return h.hexdigest()


def test_different_seed_different_strings(tok) -> None:
    """Another seed gives other strings and another digest."""
    a = [c.text for c in iter_battery(tok, "ci", 0, 0, 40)]
    b = [c.text for c in iter_battery(tok, "ci", 1, 0, 40)]
    assert sum(x != y for x, y in zip(a, b, strict=True)) >= 35
    assert battery_digest(tok, "ci", 0) != battery_digest(tok, "ci", 1)


def test_profile_sizes(tok) -> None:
    """ci holds a few hundred strings per tokenizer and full 100,000 (the last full case is generated on demand)."""
    assert 200 <= len(battery(tok, "ci")) == PROFILES["ci"].strings <= 600
    assert get_profile("full").strings == 100_000
    last = battery_case(tok, "full", 0, 99_999)
    assert last.index == 99_999 and last.text
    with pytest.raises(IndexError):
        battery_case(tok, "full", 0, 100_000)
    with pytest.raises(UnknownProfile):
        get_profile("huge")


def test_every_hazard_present_with_positions(tok) -> None:
    """Every advertised hazard occurs in the ci battery; every case has candidate cuts inside the text, and every
    repair split leaves an S longer than the first window (so the repair does not fall back to a whole encode)."""
    cases = battery(tok, "ci")
    assert {c.hazard for c in cases} == set(HAZARDS)
    for c in cases:
        assert c.cuts and all(0 < b < len(c.text) for b in c.cuts)
        assert all(WINDOW_WIDTHS[0] < s < len(c.text) for s in c.splits)
    assert sum(1 for c in cases if c.splits) >= len(cases) // 4
    assert all(c.splits for c in cases
               if c.hazard in ("long_window", "periodic_tail", "digit_phase", "newline_tail", "mark_tail"))


def test_long_window_cases_place_hazards_at_every_width(tok) -> None:
    """For every window width 512 * 2^k (k = 0..5) a long_window case has splits s with s - W (the window start)
    and s - W + margin both next to the hazard core's start."""
    cases = [c for c in battery(tok, "ci") if c.hazard == "long_window"]
    assert sorted(c.window for c in cases) == sorted(WINDOW_WIDTHS)
    for c in cases:
        starts = {s - c.window for s in c.splits}
        core = c.cuts[0] + 2  # candidate cuts begin two before the core
        assert {core, core - tok.margin} <= starts
        assert len(c.text) > c.window


def test_hazard_content(tok) -> None:
    """The hazards carry what they name: special-token strings, class-changing NFC characters, the
    Unicode-skew code points, CR/LF, and marks."""
    cases = battery(tok, "ci")
    texts = {h: [c.text for c in cases if c.hazard == h] for h in HAZARDS}
    assert all(any(s in t for s in tok.special_strings) for t in texts["special_whole"])
    changers = set(nfc_class_changers())
    assert "\u0958" in changers and all(any(ch in changers for ch in t) for t in texts["nfc_exclusion"])
    skew = {chr(c) for c in unicode_skew_pool()}
    assert all(any(ch in skew for ch in t) for t in texts["unicode_skew"])
    assert all(("\r" in t or "\n" in t) for t in texts["crlf"])
    table = class_table()
    assert all(any(table[ord(ch)] == M for ch in t) for t in texts["nfc_mark_order"])


def test_phase_digits_never_share_a_token(tok) -> None:
    """The digit_phase hazard rests on a premise per tokenizer: for at least one of its digit sets, no token of the
    reference encode of a digit run spans two digits (each digit is one token or its bytes), so the window and the
    whole text agree token for token over the run whatever the pre-token phase."""
    clean = []
    for digits in PHASE_DIGITS:
        run = "".join(digits[(7 * i) % 10] for i in range(40))
        _, spans = reference_encode_with_offsets(tok, run)
        if all(end - start <= 1 for start, end in spans) and {s for s, _ in spans} == set(range(40)):
            clean.append(digits)
    assert clean, f"{tok.name}: every digit set has a token joining two digits"


def test_digit_phase_cases_split_the_run_off_phase(tok) -> None:
    """Every digit_phase case splits right after its digit run, with the first window's start inside the run and
    off the whole text's phase of three: (ws - run start) % 3 != 0."""
    cases = [c for c in battery(tok, "ci") if c.hazard == "digit_phase"]
    assert cases
    for c in cases:
        digits = next(ds for ds in PHASE_DIGITS if c.text[c.splits[-1] - 1] in ds)
        end = c.splits[-1]
        start = end
        while start > 0 and c.text[start - 1] in digits:
            start -= 1
        ws = end - WINDOW_WIDTHS[0]
        assert start < ws and (ws - start) % 3 != 0, (c.index, start, ws)


def test_newline_tail_cases_start_the_window_in_phase_inside_the_run(tok) -> None:
    """Every newline_tail case splits once, after the word that follows the run's blanks and newline, with the
    first window's start inside the newline run, a multiple of TAIL_PHASE into it, and TAIL_WINDOW_NEWLINES of the
    run in the window; the run follows a punctuation character (one piece with it) and is followed by blanks."""
    cases = [c for c in battery(tok, "ci") if c.hazard == "newline_tail"]
    assert cases
    for c in cases:
        (split,) = c.splits
        ws = split - WINDOW_WIDTHS[0]
        end = c.text.rindex("\n", 0, split)  # the newline after the blanks
        blanks_start = len(c.text[:end].rstrip(" \t"))
        start = blanks_start
        while c.text[start - 1] == "\n":
            start -= 1
        assert c.text[start - 1] in "!:?],", (c.index, c.text[start - 3 : start])
        assert 0 < blanks_start - start and blanks_start < end, c.index
        assert start < ws < blanks_start and (ws - start) % TAIL_PHASE == 0, (c.index, start, ws)
        assert blanks_start - ws == TAIL_WINDOW_NEWLINES, (c.index, blanks_start - ws)


def test_mark_tail_cases_start_the_window_among_the_marks(tok) -> None:
    """Every mark_tail case splits once, right after the punctuation character of a MARK_TAIL_PAIRS pair that
    follows a run of its mark, with the first window's start inside the run and two punctuation characters (or
    more) before the run."""
    cases = [c for c in battery(tok, "ci") if c.hazard == "mark_tail"]
    assert cases
    for c in cases:
        (split,) = c.splits
        pair = (c.text[split - 2], c.text[split - 1])
        assert pair in MARK_TAIL_PAIRS, (c.index, pair)
        start = split - 1
        while c.text[start - 1] == pair[0]:
            start -= 1
        assert start < split - WINDOW_WIDTHS[0], (c.index, start)
        assert c.text[start - 2 : start] in ("!!", "((", "!?", ".."), (c.index, c.text[start - 2 : start])

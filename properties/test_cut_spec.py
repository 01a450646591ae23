"""Unit tests of the cut specification and the planner's edge cases, on concrete inputs."""

from __future__ import annotations

import pytest
from delta_suite.delta.cuts import MIN_TEXT, default_chunks, encode_chunked, min_chunk, plan_cuts
from delta_suite.frozen.loader import load_tokenizer, load_tokenizer_file
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import L, N, O, S, class_table
from delta_suite.spec.cut import (
    ACCEPTED_SPECIAL,
    DEFAULT_CUT_RULES,
    CutRules,
    accepted_cuts,
    explain_cut,
    is_safe_cut,
    rules_for_family,
)
from delta_suite.spec.guard import LiteralTrie, occurrences_near
from delta_suite.spec.normalization import COUNTEREXAMPLE, anchors_around, is_anchor, nfc
from delta_suite.spec.reference import reference_encode, reference_encode_full
from delta_suite.spec.transitions import ACCEPTED_PAIRS

from properties.conftest import ADMITTED


def _tok(name: str):
    if name not in ADMITTED:
        pytest.fail(f"{name} is not provisioned/admitted; this unit test needs it")
    return load_tokenizer(name)


def test_u0958_slash_refused_under_nfc(ledger) -> None:
    """U+0958 "/" is L->O raw but M->O after NFC: refused on qwen3 (NFC), accepted on a tokenizer without NFC."""
    qwen = _tok("qwen3_8b")
    assert nfc(COUNTEREXAMPLE) == "\u0915\u093c/"
    verdicts = {"refused on qwen3": explain_cut(qwen, COUNTEREXAMPLE, 1) == "nfc_transition_refused:MO",
                "raw pair accepted": is_safe_cut(qwen, COUNTEREXAMPLE, 1, CutRules(check_normalization=False)),
                "accepted without NFC": is_safe_cut(_tok("llama_3_1_8b"), COUNTEREXAMPLE, 1)}
    ledger.record("chunked", "u0958_counterexample", qwen, comparisons=len(verdicts),
                  differences=sum(not ok for ok in verdicts.values()), unit="verdicts", oracle="spec")
    assert all(verdicts.values()), verdicts


def test_the_nfc_recheck_reads_the_pair_at_the_cut() -> None:
    """Under NFC the pair at b is checked again after normalizing: the last character before b and the first after
    it. In ".1\u0301 x" at 1 the window after b normalizes to "1\u0301" (no precomposed form), so the pair is
    O->N, accepted, and the cut is exact; the window's last character, the mark, would make it O->M, refused."""
    qwen = _tok("qwen3_8b")
    text = ".1\u0301 x"
    assert nfc(text[1:3]) == "1\u0301" and explain_cut(qwen, ".\u0301", 1) == "transition_refused:OM"
    assert explain_cut(qwen, text, 1) == "accepted:transition"
    assert reference_encode(qwen, text) == reference_encode(qwen, text[:1]) + reference_encode(qwen, text[1:])


def test_accepted_pairs_and_carveouts() -> None:
    """The floor is exactly the eight pairs; CR/LF after O and the apostrophe after L are carved out (the floor
    alone: pattern_pairs="floor"; the pattern's proved pairs are properties/test_pattern_pairs.py's)."""
    assert ACCEPTED_PAIRS == frozenset({(L, N), (L, O), (L, S), (N, L), (N, O), (N, S), (O, N), (O, S)})
    tok = _tok(ADMITTED[0])
    floor = CutRules(pattern_pairs="floor")
    assert explain_cut(tok, "ab 1", 2, floor) == "accepted:transition"  # L->S
    assert explain_cut(tok, "a1", 1, floor) == "accepted:transition"  # L->N
    assert explain_cut(tok, "1a", 1, floor) == "accepted:transition"  # N->L
    assert explain_cut(tok, ". ", 1, floor) == "accepted:transition"  # O->S
    assert explain_cut(tok, ".\n", 1, floor) == "carveout_cr_lf"
    assert explain_cut(tok, ".\r", 1, floor) == "carveout_cr_lf"
    assert explain_cut(tok, "a\n", 1, floor) == "accepted:transition"  # L->S with LF is not carved out
    assert explain_cut(tok, "a'", 1, floor) == "carveout_apostrophe"
    assert explain_cut(tok, "a.", 1, floor) == "accepted:transition"
    assert explain_cut(tok, " a", 1, floor) == "transition_refused:SL"
    assert explain_cut(tok, ".a", 1, floor) == "transition_refused:OL"
    assert explain_cut(tok, "ab", 1, floor) == "transition_refused:LL"
    assert explain_cut(tok, "a\u0301", 1, floor) == "transition_refused:LM"
    assert explain_cut(tok, "ab", 0, floor) == "out_of_range"
    assert explain_cut(tok, "ab", 2, floor) == "out_of_range"
    # every offset strictly inside the text is a candidate, the first included
    assert accepted_cuts(tok, "a b c", floor) == [1, 3]


def test_named_pattern_pairs_apply_whatever_the_family() -> None:
    """Rules naming a family's pairs (the control cut.pattern_pairs_of_qwen2) apply those pairs to every family:
    for each other family they are qwen2's rules, not the family's own (so the control is not its own proof on a
    family whose pairs differ)."""
    qwen2 = rules_for_family("qwen2")
    for family in ("qwen3_5", "llama3", "o200k", "tekken", "deepseek"):
        named = rules_for_family(family, CutRules(pattern_pairs="qwen2"))
        assert named == qwen2 and named != rules_for_family(family), family


def test_guard_reasons_and_overlaps() -> None:
    """A cut strictly inside a special-token occurrence is refused; at its edges it is allowed; the trie finds
    overlapping occurrences that a leftmost-longest scan skips."""
    qwen = _tok("qwen3_8b")
    text = "x<think>y"
    assert explain_cut(qwen, text, 7) == "inside_special"  # "x<think" | ">y" would be L->O
    assert is_safe_cut(qwen, text, 7, CutRules(guard="off"))
    llama = _tok("llama_3_1_8b")
    assert explain_cut(llama, "a<|eot_id|> b", 11) == "accepted:special_token"  # at the edge of a selected occurrence
    assert explain_cut(llama, "a<|eot_id|> b", 5) == "inside_special"  # "a<|eot" | "_id|>" would be L->O
    trie = LiteralTrie(("abcd", "cdef", "cd"))
    assert trie.occurrences("abcdef") == [(0, 4), (2, 4), (2, 6)]
    assert trie.selected("abcdef") == [(0, 4)]
    # every guard mode considers the occurrences that intersect [lo, hi): one ending at lo or starting at hi does not
    marker = "<think>"
    text, start, end = "ab" + marker + "cd", 2, 2 + len(marker)
    for mode in ("all", "selected"):
        assert occurrences_near(qwen, text, start, start + 1, mode) == [(start, end)]
        assert occurrences_near(qwen, text, end - 1, end, mode) == [(start, end)]
        assert occurrences_near(qwen, text, end, end + 1, mode) == []
        assert occurrences_near(qwen, text, start - 1, start, mode) == []
    assert occurrences_near(qwen, text, 0, len(text), "off") == []
    # the trie skips an empty literal and keeps the ones after it; by default it scans the whole text, from 0
    assert LiteralTrie(("ab", "", "cd")).occurrences("abcd") == [(0, 2), (2, 4)]
    assert LiteralTrie(("a",)).occurrences("ab") == [(0, 1)]
    # where two strings start at one position the selection takes the longer, as the reference's leftmost-longest
    # matching of added tokens does
    assert LiteralTrie(("cd", "cdef")).selected("xcdefcd") == [(1, 5), (5, 7)]


def test_nfc_anchors() -> None:
    """ASCII is an anchor; marks, NFC-changing characters and V/T jamo are not; anchors bracket the cut."""
    table = class_table()
    assert is_anchor("a", table[ord("a")])
    assert is_anchor("中", table[ord("中")])
    assert not is_anchor("\u0301", table[0x301])
    assert not is_anchor("\u0958", table[0x958])
    assert not is_anchor("\u212b", table[0x212B])
    assert not is_anchor("\u1161", table[0x1161])
    assert not is_anchor("\u11a8", table[0x11A8])
    assert anchors_around("ab\u0958/cd", 3, table) == (1, 4)
    assert anchors_around("\u0301" * 300 + "a", 280, table) == (None, 300)
    assert anchors_around("a" + "\u0301" * 10, 1, table) == (0, 11)  # the scan reaches the end: it is the anchor
    assert anchors_around("\u0301" * 10 + "a", 5, table) == (0, 10)  # likewise the start


def test_the_default_rules_probe_hangul_anchors() -> None:
    """The default rules take the anchor predicate with its Hangul probes: a run of 300 V jamo (letters that NFC
    composes with a preceding L jamo) offers no left anchor, so a cut after it is refused; without the probes (the
    control cut.anchor_no_hangul, proven exact, not the specification) the jamo next to the cut is its anchor."""
    qwen = _tok("qwen3_8b")
    text = "." + "\u1161" * 300 + "1"
    assert explain_cut(qwen, text, 301) == "nfc_no_left_anchor"
    assert explain_cut(qwen, text, 301, CutRules(anchor_hangul_probes=False)) == "accepted:transition"


def test_nfc_window_touching_special_is_a_conservative_refusal(ledger) -> None:
    """Under NFC the spec refuses a cut whose anchor window touches a special-token occurrence. On the facts this
    refusal is conservative, not necessary: at 8 of "<think>\u037e b" (U+037E normalizes to ";" and is no anchor,
    so the left anchor is the special's ">") both encodes give the same IDs. Why no input can need it while its
    premise holds: the reference splits the text at the selected special tokens before normalizing (premise P1
    of `spec.special_cut`), so NFC never reaches across a special's edge; the window [a, c) then differs from
    the stretch it lies in only by characters of the special itself, and when every special string of an NFC
    tokenizer begins and ends with an anchor (checked here on every provisioned NFC tokenizer), NFC splits at
    those characters anyway. The rule is kept as stated (it costs cuts, never exactness)."""
    qwen = _tok("qwen3_8b")
    text = "<think>\u037e b"
    assert explain_cut(qwen, text, 8) == "nfc_window_touches_special"
    assert is_safe_cut(qwen, text, 8, CutRules(guard="off"))
    whole, split = reference_encode(qwen, text), reference_encode(qwen, text[:8]) + reference_encode(qwen, text[8:])
    assert whole == split  # the refused cut would have been exact
    table = class_table()
    edges = 0
    for name in ADMITTED:
        tok = load_tokenizer(name)
        if not tok.is_nfc:
            continue
        for special in tok.special_strings:
            for ch in (special[0], special[-1]):
                edges += 1
                assert is_anchor(ch, table[ord(ch)]), f"{name}: {special!r} has a non-anchor edge {ch!r}"
    ledger.record("chunked", "nfc_window_special_conservative", qwen, comparisons=1 + edges,
                  differences=int(whole != split), details={"special_edges_checked": edges}, oracle="premise")


def test_short_text_never_cut(ledger) -> None:
    """A text shorter than 256 code points gets no cut for any chunk count."""
    for name in ADMITTED:
        tok = load_tokenizer(name)
        text = ("ab 12. " * 40)[: MIN_TEXT - 1]
        cut = [k for k in (2, 8, 64) if plan_cuts(tok, text, k) != []]
        ledger.record("chunked", "short_text_never_cut", tok, comparisons=3, differences=len(cut), oracle="spec")
        assert cut == []
        assert plan_cuts(tok, text + "x", 2) != []


def test_repeated_letter_document_encoded_whole(ledger) -> None:
    """A document of one repeated letter has no accepted cut: the plan is empty and the encode is one whole encode."""
    for name in ADMITTED:
        tok = load_tokenizer(name)
        text = "a" * 5000
        assert plan_cuts(tok, text, 8) == []
        same = encode_chunked(tok, text, chunks=8) == reference_encode(tok, text)
        ledger.record("chunked", "repeated_letter_whole", tok, comparisons=1, differences=int(not same),
                      oracle="reference")
        assert same


def test_an_unknown_core_count_is_taken_as_one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a worker count the default policy asks the machine; when it cannot say (os.cpu_count() is None),
    one worker is assumed: a long text is encoded whole, never split for workers that may not exist."""
    monkeypatch.setattr("delta_suite.delta.cuts.os.cpu_count", lambda: None)
    assert default_chunks(10**6) == 1
    monkeypatch.setattr("delta_suite.delta.cuts.os.cpu_count", lambda: 4)
    assert default_chunks(10**6) == 4


def test_planner_size_rules_and_default_policy() -> None:
    """Minimum chunk is max(16, min(1024, N // 4k)); the stateless default cuts only from 131,072 characters, into
    at most 16 chunks, as many as the workers, at least one."""
    assert min_chunk(300, 64) == 16
    assert min_chunk(10**6, 2) == 1024
    assert min_chunk(40_000, 4) == 1024 and min_chunk(8_000, 4) == 500
    assert default_chunks(131_071, 16) == 1
    assert default_chunks(131_072, 16) == 2
    assert default_chunks(10**6, 2) == 2
    assert default_chunks(10**7, 64) == 16
    # never more chunks than workers, and never fewer than one: one worker (or none counted) encodes whole
    assert default_chunks(10**6, 1) == 1 and default_chunks(10**6, 0) == 1
    # a chunk per 65,536 characters begun: three whole targets are 3 chunks, one character more is 4
    assert default_chunks(3 * 65_536, 16) == 3 and default_chunks(3 * 65_536 + 1, 16) == 4
    tok = _tok(ADMITTED[0])
    # the documented floor, as a number (the other tests follow MIN_TEXT wherever it moves): 256 characters
    words = "word " * 100
    assert plan_cuts(tok, words[:255], 2) == [] and plan_cuts(tok, words[:256], 2) != []
    text = "word " * 2000
    cuts = plan_cuts(tok, text, 4)
    assert len(cuts) == 3 and all(is_safe_cut(tok, text, b, DEFAULT_CUT_RULES) for b in cuts)
    assert all(t - 48 <= b <= t for b, t in zip(cuts, (2500, 5000, 7500), strict=True))


def test_targets_closer_than_the_floor_are_skipped_and_later_ones_cut() -> None:
    """With more chunks than the floor allows (300 characters in 64 chunks: targets every 4.7 characters, floor 16),
    the targets below the first floor are skipped and the planner goes on: later targets are cut, every chunk at
    least the floor long."""
    tok = _tok(ADMITTED[0])
    text = "ab " * 100
    floor = min_chunk(len(text), 64)
    cuts = plan_cuts(tok, text, 64)
    assert floor == 16 and len(cuts) > 1 and all(is_safe_cut(tok, text, b) for b in cuts)
    assert all(hi - lo >= floor for lo, hi in zip([0, *cuts], [*cuts, len(text)], strict=True))
    # a target exactly at the floor is not below it: 256 characters in 16 chunks put the first target at 16, the
    # floor, and a word ends there, so the first cut is 16 (a target skipped there would be cut at 31, lower down)
    text = "word" * 4 + " word" * 48
    assert len(text) == 256 and min_chunk(256, 16) == 16 and is_safe_cut(tok, text, 16)
    assert plan_cuts(tok, text, 16)[0] == 16
    # a last chunk exactly the floor long is allowed: with an accepted cut at every 16th offset, all 15 targets
    # are cut, the last leaving 16 characters
    text = ("a" * 15 + "1") * 16
    assert plan_cuts(tok, text, 16) == list(range(16, 256, 16))


def test_the_scan_goes_on_past_the_quick_window() -> None:
    """When the 48 characters below a target hold no accepted cut, the scan goes on down to 4,096 characters below
    it and takes the highest accepted offset there: a target 49 or 200 characters into a run of letters is cut at
    the highest accepted offset before the run, neither skipped nor cut lower."""
    tok = _tok(ADMITTED[0])
    base = "word " * 200 + "a" * 400 + " word" * 400
    highest = max(b for b in range(1, 1001) if is_safe_cut(tok, base, b))  # the letters from 1,000 have none
    for gap in (49, 200):
        text = base[: 2 * (highest + gap)]
        target = len(text) // 2
        assert target - highest == gap and set(text[1000: target + 1]) == {"a"}
        assert is_safe_cut(tok, text, highest)
        assert not any(is_safe_cut(tok, text, b) for b in range(highest + 1, target + 1))
        assert plan_cuts(tok, text, 2) == [highest], gap


def test_the_highest_marker_edge_in_reach_is_the_cut() -> None:
    """Of the role-marker edges within the scan's reach below a target, the planner takes the highest (the chunk
    before the target as long as the markers allow): two markers below a target, the cut is the later one's end."""
    tok = _tok(ADMITTED[0])
    marker = sorted(tok.special_strings)[0]
    head = "word " * 300 + marker + " word" * 100 + marker
    second_end = len(head)
    base = head + "a" * 300 + " word" * 600
    text = base[: 2 * (second_end + 150)]
    marker_edges = [b for b in range(1, second_end + 151) if explain_cut(tok, text, b) == ACCEPTED_SPECIAL]
    assert marker_edges == [1500, 1500 + len(marker), second_end - len(marker), second_end]
    assert plan_cuts(tok, text, 2) == [second_end]


def test_missed_cut_stays_with_preceding_chunk() -> None:
    """When no accepted cut lies within 4,096 characters below a target, that target is skipped and the next one
    planned; one exactly 4,096 below is within reach."""
    tok = _tok(ADMITTED[0])
    text = "ab " * 100 + "a" * 10_000 + " cd" * 100
    cuts = plan_cuts(tok, text, 4)
    assert all(is_safe_cut(tok, text, b) for b in cuts)
    assert len(cuts) < 3
    # a missed target does not end the plan: the first of 3 targets, 4,000 characters into a run of 6,000 letters,
    # has no cut in reach, and the second, among words, is still cut
    text = "a" * 6000 + " word" * 1200
    cuts = plan_cuts(tok, text, 3)
    assert len(cuts) == 1 and 8000 - 48 <= cuts[0] <= 8000
    # the reach is 4,096 characters, as documented: an accepted offset exactly that far below the target is cut,
    # one a character further is not (the letters after it have none)
    base = "word " * 400 + "a" * 4200 + " word" * 1300
    highest = max(b for b in range(1, 2001) if is_safe_cut(tok, base, b))
    for gap, expected in ((4096, [highest]), (4097, [])):
        text = base[: 2 * (highest + gap)]
        assert set(text[2000: highest + gap + 1]) == {"a"} and min_chunk(len(text), 2) < highest
        assert plan_cuts(tok, text, 2) == expected, gap


def test_inadmissible_or_post_processed(ledger) -> None:
    """add_special_tokens applies post-processing once, to the assembled sequence."""
    for name in ADMITTED:
        tok = load_tokenizer(name)
        text = "Hello, world! 123 " * 30
        same = encode_chunked(tok, text, chunks=4, add_special_tokens=True) == reference_encode_full(tok, text)
        ledger.record("chunked", "post_process_once", tok, comparisons=1, differences=int(not same),
                      oracle="reference")
        assert same


def test_inadmissible_tokenizer_goes_to_reference(tmp_path, ledger) -> None:
    """A tokenizer that admission refuses (here: an NFD normalizer) gets no cuts and a whole reference encode."""
    import json

    base = json.loads(_tok("qwen3_8b").tokenizer.to_str())
    base["normalizer"] = {"type": "NFD"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(base), encoding="utf-8")
    tok = load_tokenizer_file(path, name="qwen3_nfd")
    assert not admission_of(tok).admitted
    text = "Hello, world! 123 " * 30
    assert plan_cuts(tok, text, 4) == []
    assert explain_cut(tok, text, 5) == "not_admitted"
    same = encode_chunked(tok, text, chunks=4) == reference_encode(tok, text)
    ledger.record("chunked", "inadmissible_to_reference", tok, comparisons=1, differences=int(not same),
                  oracle="reference")
    assert same

"""Hypothesis properties of the cut proposition over every provisioned admitted tokenizer, on seam texts.

- every accepted cut splits the reference encode: ref(S[:b]) + ref(S[b:]) == ref(S);
- any set of accepted cuts concatenates exactly;
- encode_chunked equals the reference for 1 to 64 chunks, every planned cut is accepted, the plan keeps its rules;
- no accepted cut falls strictly inside any special-token occurrence (found here by plain substring search).
"""

from __future__ import annotations

from collections import Counter

from delta_suite.delta.cuts import MIN_TEXT, encode_chunked, min_chunk, plan_cuts, split_at
from delta_suite.fuzz.strategies import seam_pieces, seam_texts
from delta_suite.spec.cut import accepted_cuts, is_safe_cut
from delta_suite.spec.reference import reference_encode, reference_encode_batch
from hypothesis import given
from hypothesis import strategies as st

MAX_CUTS_PER_TEXT = 64


def _record(ledger, check: str, tok, stats: Counter, unit: str) -> None:
    ledger.record(
        "chunked",
        check,
        tok,
        comparisons=stats["comparisons"],
        differences=stats["differences"],
        unit=unit,
        details={"examples": stats["examples"], "accepted_cuts": stats["accepted_cuts"]}, oracle="reference",
    )


def _long_texts(tok) -> st.SearchStrategy[str]:
    """Seam texts repeated and joined until they reach the planner's minimum of 256 code points and beyond."""
    return st.tuples(
        st.lists(seam_texts(tok, min_size=1, max_size=16), min_size=1, max_size=4).map("".join),
        st.lists(seam_pieces(tok), min_size=0, max_size=8).map("".join),
        st.integers(MIN_TEXT, 1500),
    ).map(lambda p: ((p[0] or "x") * (1 + p[2] // max(1, len(p[0] or "x"))) + p[1]))


def test_every_accepted_cut_splits_the_reference(tok, ledger) -> None:
    """For every accepted cut b of a seam text S: ref(S[:b]) + ref(S[b:]) == ref(S)."""
    stats: Counter = Counter()

    @given(seam_texts(tok, min_size=4, max_size=32))
    def run(text: str) -> None:
        stats["examples"] += 1
        cuts = accepted_cuts(tok, text)[:MAX_CUTS_PER_TEXT]
        stats["accepted_cuts"] += len(cuts)
        if not cuts:
            return
        whole = reference_encode(tok, text)
        rows = reference_encode_batch(tok, [text[:b] for b in cuts] + [text[b:] for b in cuts])
        bad = [b for i, b in enumerate(cuts) if rows[i] + rows[len(cuts) + i] != whole]
        stats["comparisons"] += len(cuts)
        stats["differences"] += len(bad)
        assert not bad, f"{tok.name}: accepted cuts {bad} of {text!r} change the encode"

    try:
        run()
    finally:
        _record(ledger, "accepted_cut_splits_reference", tok, stats, "cut")


def test_any_set_of_accepted_cuts_concatenates(tok, ledger) -> None:
    """For any subset C of the accepted cuts of S, the concatenated encodes of the pieces between C equal ref(S)."""
    stats: Counter = Counter()

    @given(seam_texts(tok, min_size=4, max_size=32), st.randoms(use_true_random=False))
    def run(text: str, rnd) -> None:
        stats["examples"] += 1
        cuts = accepted_cuts(tok, text)
        chosen = sorted(rnd.sample(cuts, rnd.randint(0, len(cuts)))) if cuts else []
        stats["accepted_cuts"] += len(chosen)
        joined = [i for row in reference_encode_batch(tok, split_at(text, chosen)) for i in row]
        stats["comparisons"] += 1
        same = joined == reference_encode(tok, text)
        stats["differences"] += not same
        assert same, f"{tok.name}: cuts {chosen} of {text!r} do not concatenate"

    try:
        run()
    finally:
        _record(ledger, "accepted_cut_sets_concatenate", tok, stats, "text")


def test_encode_chunked_equals_reference_and_plan_keeps_rules(tok, ledger) -> None:
    """For 1..64 chunks: encode_chunked(S, k) == ref(S); every planned cut is accepted; cuts increase; no chunk is
    shorter than max(16, min(1024, N // 4k)); texts under 256 code points are never cut."""
    stats: Counter = Counter()

    @given(_long_texts(tok), st.integers(1, 64))
    def run(text: str, k: int) -> None:
        stats["examples"] += 1
        cuts = plan_cuts(tok, text, k)
        stats["accepted_cuts"] += len(cuts)
        assert all(is_safe_cut(tok, text, b) for b in cuts), f"planned cut refused by the spec: {cuts}"
        assert cuts == sorted(set(cuts)) and len(cuts) <= max(0, k - 1)
        if len(text) < MIN_TEXT:
            assert not cuts
        floor = min_chunk(len(text), k)
        assert all(len(c) >= floor for c in split_at(text, cuts)) or not cuts
        got = encode_chunked(tok, text, chunks=k)
        stats["comparisons"] += 1
        same = got == reference_encode(tok, text)
        stats["differences"] += not same
        assert same, f"{tok.name}: encode_chunked with {k} chunks (cuts {cuts}) differs on {text!r}"

    try:
        run()
    finally:
        _record(ledger, "encode_chunked_equals_reference", tok, stats, "text")


def _occurrences(text: str, literals: tuple[str, ...]) -> list[tuple[int, int]]:
    """Every occurrence of every literal, overlapping ones included, by plain substring search."""
    out = []
    for lit in literals:
        start = text.find(lit)
        while start != -1:
            out.append((start, start + len(lit)))
            start = text.find(lit, start + 1)
    return out


def test_no_accepted_cut_inside_a_special_token(tok, ledger) -> None:
    """No accepted cut b has start < b < end for any occurrence (start, end) of any special-token string."""
    stats: Counter = Counter()

    @given(seam_texts(tok, min_size=4, max_size=32))
    def run(text: str) -> None:
        stats["examples"] += 1
        cuts = accepted_cuts(tok, text)
        stats["accepted_cuts"] += len(cuts)
        occ = _occurrences(text, tok.special_strings)
        inside = [b for b in cuts for s, e in occ if s < b < e]
        stats["comparisons"] += len(cuts) * max(1, len(occ))
        stats["differences"] += len(inside)
        assert not inside, f"{tok.name}: accepted cuts {inside} fall inside special tokens {occ} of {text!r}"

    try:
        run()
    finally:
        _record(ledger, "no_accepted_cut_inside_special", tok, stats, "cut x occurrence")

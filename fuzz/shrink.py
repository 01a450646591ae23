"""Deterministic shrinking of a failing case: delta debugging over cuts, then characters, then simpler characters.

`shrink(case, fails)` returns a case that still fails (`fails(result)` is true; the input must fail) and is
1-minimal under the moves tried, with a bounded number of predicate calls. The moves, in order:
1. cut cases: keep a single failing cut if one suffices, otherwise drop cuts one at a time;
2. delete spans of characters, halving the span length down to one (offsets after a deleted span shift left;
   a cut inside it is dropped, a repair split inside it moves to the span's start);
3. replace each character by "a" (letters) or " " where the case still fails, so saved cases read plainly.
Every move is a pure function of the case, so the same failing case always shrinks to the same result.
"""

from __future__ import annotations

from collections.abc import Callable

from delta_suite.fuzz.cases import FuzzCase

MAX_CALLS = 4000


class _Budget:
    def __init__(self, fails: Callable[[FuzzCase], bool], limit: int) -> None:
        self.fails, self.left = fails, limit

    def __call__(self, case: FuzzCase | None) -> bool:
        if case is None or self.left <= 0:
            return False
        self.left -= 1
        try:
            return bool(self.fails(case))
        except Exception:  # a move that makes the checker raise is not the same failure
            return False


def delete_span(case: FuzzCase, start: int, length: int) -> FuzzCase | None:
    """The case with text[start:start+length] removed and its offsets moved; None if nothing is left to check."""
    end = start + length
    text = case.text[:start] + case.text[end:]
    if case.path == "cut":
        cuts = tuple(b - length if b >= end else b for b in case.cuts if not start < b < end)
        cuts = tuple(sorted({b for b in cuts if 0 < b < len(text)}))
        return FuzzCase("cut", text, cuts=cuts, origin=case.origin) if cuts else None
    assert case.split is not None
    split = case.split - length if case.split >= end else min(case.split, start)
    if split >= len(text):  # an empty D checks nothing
        return None
    return FuzzCase("repair", text, split=split, origin=case.origin)


def _shrink_cuts(case: FuzzCase, fails: _Budget) -> FuzzCase:
    if case.path != "cut" or len(case.cuts) <= 1:
        return case
    for b in case.cuts:
        single = FuzzCase("cut", case.text, cuts=(b,), origin=case.origin)
        if fails(single):
            return single
    i = 0
    while i < len(case.cuts) and len(case.cuts) > 1:
        fewer = FuzzCase("cut", case.text, cuts=case.cuts[:i] + case.cuts[i + 1 :], origin=case.origin)
        if fails(fewer):
            case = fewer
        else:
            i += 1
    return case


def _shrink_chars(case: FuzzCase, fails: _Budget) -> FuzzCase:
    length = max(1, len(case.text) // 2)
    while True:
        changed = False
        start = 0
        while start < len(case.text):
            smaller = delete_span(case, start, min(length, len(case.text) - start))
            if fails(smaller):
                assert smaller is not None
                case, changed = smaller, True
            else:
                start += length
        if length == 1 and not changed:
            return case
        if not changed:
            length = max(1, length // 2)


def _simplify_chars(case: FuzzCase, fails: _Budget) -> FuzzCase:
    for i, ch in enumerate(case.text):
        for simpler in ("a", " "):
            if ch == simpler or (ch.isascii() and ch.isalnum()):
                break
            text = case.text[:i] + simpler + case.text[i + 1 :]
            candidate = FuzzCase(case.path, text, cuts=case.cuts, split=case.split, origin=case.origin)
            if fails(candidate):
                case = candidate
                break
    return case


def shrink(case: FuzzCase, fails: Callable[[FuzzCase], bool], max_calls: int = MAX_CALLS) -> FuzzCase:
    """A smaller case that still fails; `case` itself must fail (ValueError otherwise)."""
    budget = _Budget(fails, max_calls)
    if not budget(case):
        raise ValueError("shrink needs a failing case; this one passes")
    case = _shrink_cuts(case, budget)
    case = _shrink_chars(case, budget)
    case = _shrink_cuts(case, budget)
    case = _simplify_chars(case, budget)
    return case

"""The differential checks one battery case undergoes, and the comparison code every check relies on.

- `first_difference(expected, actual)`: where two ID sequences first differ (None iff they are equal). This is
  the single comparison the harness self-test controls target: a planted fault must always produce a Difference.
- `check_cut_case(tok, case, rules)`: for every candidate cut b of the case that `rules` accept,
  ref(S[:b]) + ref(S[b:]) == ref(S); the pieces at all accepted cuts together concatenate to ref(S); and, where
  the text is long enough to be cut, encode_chunked(S) == ref(S). The
  same comparisons are made on units (the IDs grouped per pre-token, compared as IDs plus unit lengths): the cut
  proposition holds there too, and a broken cut whose IDs happen to coincide still shows as a unit difference.
- `check_repair_case(tok, case, params)`: for every repair split s, the repair of S = text[:s] by D = text[s:]
  from the stored reference IDs and spans of S returns ref(S + D) (IDs; spans are compared and counted apart).

Each returns a `CheckResult` with what was compared, how many differed, how many were served by the fast path
(an accepted cut, a repaired splice) versus a fallback, and the first difference with where it came from.
Reference encodes go through `spec.reference` and are memoized per case in a `ReferenceMemo`, so the same
case checked under many controls encodes each piece once. Given a `timing` Counter, a check adds the seconds spent in
the implementation under test (cut decisions, the chunked encode, the repair) to timing["subject"].
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from time import perf_counter
from typing import TYPE_CHECKING

from delta_suite.delta.cut_map import cut_map
from delta_suite.delta.cuts import encode_chunked
from delta_suite.spec.admission import WHOLE_WORD, admission_of
from delta_suite.spec.cut import DEFAULT_CUT_RULES
from delta_suite.spec.free_pair_cut import chunked_ids
from delta_suite.spec.reference import reference_encode_unit_lengths, reference_encode_with_offsets, units_from_lengths
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS, repair

if TYPE_CHECKING:
    from delta_suite.checks.battery import BatteryCase
    from delta_suite.frozen.loader import FrozenTokenizer

CHUNKED_MIN_CHARS = 0  # short texts too: the chunked encoder serves them whole, and that path must be exact as well
CHUNKED_MAX_CHARS = 4096  # the planner scans every offset near its targets; the long repair strings are left out
CHUNKED_PIECES = 4


@dataclass(frozen=True)
class Difference:
    """The first position where the IDs under test leave the reference, with both sequences' lengths."""
    position: int
    expected: int | tuple | None  # the reference ID (or unit) at `position` (None: the reference ended there)
    actual: int | tuple | None  # the ID (or unit) under test at `position` (None: the sequence ended there)
    expected_len: int
    actual_len: int
    where: str = ""  # what produced the IDs under test, e.g. "cut=17", "partition", "split=600"

    def located(self, where: str) -> Difference:
        return Difference(self.position, self.expected, self.actual, self.expected_len, self.actual_len, where)

    def as_json(self) -> dict:
        return {
            "position": self.position,
            "expected": list(self.expected) if isinstance(self.expected, tuple) else self.expected,
            "actual": list(self.actual) if isinstance(self.actual, tuple) else self.actual,
            "expected_len": self.expected_len,
            "actual_len": self.actual_len,
            "where": self.where,
        }


def first_difference(expected: list, actual: list) -> Difference | None:
    """None iff the two ID sequences are equal element for element and in length; else the first differing index.

    A sequence that is a strict prefix of the other differs at the shorter length (the missing side is None).
    """
    if type(expected) is type(actual) and expected == actual:  # the common case, compared in C
        return None
    n = min(len(expected), len(actual))
    for i in range(n):
        if expected[i] != actual[i]:
            return Difference(i, expected[i], actual[i], len(expected), len(actual))
    if len(expected) == len(actual):
        return None
    return Difference(
        n,
        expected[n] if n < len(expected) else None,
        actual[n] if n < len(actual) else None,
        len(expected),
        len(actual),
    )


@dataclass
class CheckResult:
    """What one case's check compared and found."""
    case: int
    hazard: str
    comparisons: int = 0
    differences: int = 0
    fast_path: int = 0
    fallbacks: int = 0
    span_differences: int = 0
    unit_differences: int = 0  # comparisons whose units differed (IDs equal or not)
    paths: Counter = field(default_factory=Counter)
    first: Difference | None = None
    first_unit: Difference | None = None

    @property
    def failed(self) -> bool:
        return self.differences > 0

    def note(self, diff: Difference | None) -> None:
        """Count one comparison and, if it differed, the difference (keeping the first)."""
        self.comparisons += 1
        if diff is not None:
            self.differences += 1
            if self.first is None:
                self.first = diff

    def note_units(self, diff: Difference | None) -> None:
        """Count a unit-level difference (the comparison itself is counted by `note`)."""
        if diff is not None:
            self.unit_differences += 1
            if self.first_unit is None:
                self.first_unit = diff


Units = tuple[list[int], list[int]]  # (IDs, unit lengths): see spec.reference.unit_lengths


class ReferenceMemo:
    """Reference encodes of one text's pieces, each computed once however many variants ask for it."""

    def __init__(self, tok: FrozenTokenizer) -> None:
        self.tok = tok
        self._units: dict[str, Units] = {}
        self._offsets: dict[str, tuple[list[int], list[tuple[int, int]]]] = {}

    def encoded(self, text: str) -> Units:
        """(IDs, unit lengths) of `text`."""
        got = self._units.get(text)
        if got is None:
            got = self._units[text] = reference_encode_unit_lengths(self.tok, text)
        return got

    def ids(self, text: str) -> list[int]:
        return self.encoded(text)[0]

    def units(self, text: str) -> list[tuple[int, ...]]:
        """The units of `text` as tuples of IDs."""
        return units_from_lengths(*self.encoded(text))

    def with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        got = self._offsets.get(text)
        if got is None:
            got = self._offsets[text] = reference_encode_with_offsets(self.tok, text)
        return got


def joined(parts: list[Units]) -> Units:
    """The (IDs, unit lengths) of the concatenation of encodes: IDs and lengths each concatenated (units of
    separate pieces never merge)."""
    return list(chain.from_iterable(p[0] for p in parts)), list(chain.from_iterable(p[1] for p in parts))


def unit_difference(expected: Units, actual: Units) -> Difference | None:
    """None iff the units are equal (same IDs and same unit lengths); else the first differing unit, as tuples."""
    if expected[0] == actual[0] and expected[1] == actual[1]:
        return None
    return first_difference(units_from_lengths(*expected), units_from_lengths(*actual))


def _bill(timing: Counter | None, since: float) -> None:
    """Add the seconds since `since` to `timing["subject"]` (the implementation under test), when timing."""
    if timing is not None:
        timing["subject"] += perf_counter() - since


def check_cut_case(
    tok: FrozenTokenizer,
    case: BatteryCase,
    rules=None,
    memo: ReferenceMemo | None = None,
    chunked: bool = True,
    timing: Counter | None = None,
    fault: str | None = None,
) -> CheckResult:
    """Every cut the rules accept splits the reference encode exactly, and all accepted cuts together do too.

    Proposition checked (the cut proposition): for each accepted b, ref(S[:b]) + ref(S[b:]) == ref(S); the
    concatenation of ref over the pieces between all accepted cuts == ref(S); and encode_chunked(S) == ref(S)
    under the same rules when S has at most CHUNKED_MAX_CHARS characters (short ones included: they are served
    whole, and that must be exact too). The same holds for units (IDs grouped per pre-token), counted in
    `unit_differences`.
    A case with no accepted cut counts as one fallback (served whole). The accepted cuts are the minimal
    implementation's (`delta.cut_map`, equal to `spec.cut.is_safe_cut` offset by offset; `fault` names a broken
    variant of it, for the controls).
    """
    rules = DEFAULT_CUT_RULES if rules is None else rules
    memo = memo or ReferenceMemo(tok)
    text = case.text
    out = CheckResult(case.index, case.hazard)
    t0 = perf_counter()
    accepted = cut_map(tok, text, rules, fault).accepted_among(case.cuts)
    _bill(timing, t0)
    out.paths["accepted"] = len(accepted)
    out.paths["refused"] = len(case.cuts) - len(accepted)
    whole_encoded = memo.encoded(text)
    whole = whole_encoded[0]
    if accepted and admission_of(tok).kind == WHOLE_WORD:  # admitted, or a control's stripping variant
        out.fast_path += 1
        _check_whole_word_cuts(tok, text, accepted, whole, out)
    elif accepted:
        out.fast_path += 1
        for b in accepted:
            got = joined([memo.encoded(text[:b]), memo.encoded(text[b:])])
            diff = first_difference(whole, got[0])
            out.note(diff.located(f"cut={b}") if diff else None)
            udiff = unit_difference(whole_encoded, got)
            out.note_units(udiff.located(f"units:cut={b}") if udiff else None)
        if len(accepted) > 1:
            bounds = [0, *accepted, len(text)]
            got = joined([memo.encoded(text[bounds[i] : bounds[i + 1]]) for i in range(len(bounds) - 1)])
            diff = first_difference(whole, got[0])
            out.note(diff.located("partition") if diff else None)
            udiff = unit_difference(whole_encoded, got)
            out.note_units(udiff.located("units:partition") if udiff else None)
    else:
        out.fallbacks += 1
    long_enough = CHUNKED_MIN_CHARS <= len(text) <= CHUNKED_MAX_CHARS
    if chunked and long_enough:
        t0 = perf_counter()
        got = list(encode_chunked(tok, text, chunks=CHUNKED_PIECES, workers=1, rules=rules, fault=fault))
        _bill(timing, t0)
        diff = first_difference(whole, got)
        out.paths["chunked"] += 1
        out.note(diff.located(f"encode_chunked:chunks={CHUNKED_PIECES}") if diff else None)
    return out


def _check_whole_word_cuts(tok: FrozenTokenizer, text: str, accepted: list[int], whole: list[int],
                           out: CheckResult) -> None:
    """The cut checks of `check_cut_case` for a whole-word tokenizer: each accepted cut alone, then all of them,
    with the chunks after the first encoded by the family's chunk encoder (`spec.free_pair_cut.chunked_ids`: the
    proposition's own statement). Units are not compared: the whole text is one pre-token per stretch, so a free
    cut splits a unit by design (counted in `paths["units_not_applicable"]`)."""
    for b in accepted:
        diff = first_difference(whole, chunked_ids(tok, text, [b]))
        out.note(diff.located(f"cut={b}") if diff else None)
    if len(accepted) > 1:
        diff = first_difference(whole, chunked_ids(tok, text, accepted))
        out.note(diff.located("partition") if diff else None)
    out.paths["units_not_applicable"] += 1


def check_repair_case(
    tok: FrozenTokenizer,
    case: BatteryCase,
    params=None,
    memo: ReferenceMemo | None = None,
    timing: Counter | None = None,
) -> CheckResult:
    """Repairing the stored encode of S by D returns the reference encode of S + D, at every split of the case.

    Proposition checked (the repair proposition): with (T, spans) = ref(S) with offsets, the IDs of
    `spec.repair.repair(tok, S, T, spans, D, params)` equal ref(S + D). Repaired splices count as fast path,
    anything re-encoded through the reference as a fallback; returned spans that differ from the reference's
    offsets are counted in `span_differences` (they poison the next repair) but are not ID differences.
    """
    params = DEFAULT_REPAIR_PARAMS if params is None else params
    memo = memo or ReferenceMemo(tok)
    text = case.text
    out = CheckResult(case.index, case.hazard)
    for s in case.splits:
        old_text, delta = text[:s], text[s:]
        old_ids, old_spans = memo.with_offsets(old_text)
        expected_ids, expected_spans = memo.with_offsets(text)
        t0 = perf_counter()
        result = repair(tok, old_text, old_ids, old_spans, delta, params)
        _bill(timing, t0)
        out.paths[result.path.split(":")[0]] += 1
        if result.path.startswith(("repaired", "unchecked")):
            out.fast_path += 1
        else:
            out.fallbacks += 1
        diff = first_difference(expected_ids, list(result.ids))
        out.note(diff.located(f"split={s}:{result.path}") if diff else None)
        if diff is None and list(result.spans) != expected_spans and list(map(tuple, result.spans)) != expected_spans:
            out.span_differences += 1
    return out

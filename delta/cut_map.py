"""The minimal implementation's own whole-text cut evaluation: every offset's verdict from array operations.

`cut_map(tok, text, rules)` decides, for every offset 0 < b < len(text) at once, which rule of the cut
proposition accepts a cut there (the special-token rule, the transition rule) or that none does, the way
`spec.cut.explain_cut` decides it for one offset; the spec stays the per-offset oracle, and
`properties/test_cut_map.py` compares the two verdicts offset by offset on every provisioned tokenizer.

How each condition becomes an array operation over the text's code points (numpy, no loop per offset):
- classes: the reference engine's class table (`spec.classes`) indexed by the code points;
- transition pairs: a 5x5 matrix of accepted pairs indexed by (class left, class right); the carve-outs are
  masks (O->S with CR/LF on the right, L->O with an apostrophe on the right);
- the guard and the special-token rule: the occurrences of every special-token string from one scan (the
  candidate starts found by a regular expression over the literals' first characters, the lengths from the
  trie); "inside an occurrence" is a difference array summed once; the reference's selection (the two-stage
  leftmost-longest scan of `spec.special_cut`, premise P1) is computed from the same occurrence list;
- the free-pair rule (whole-word tokenizers, `spec.free_pair_cut`, in place of classes and transitions): each
  offset's normalized pair as one integer `(left << 21) | right`, looked up in the sorted table of pairs joined
  inside vocabulary tokens by a binary search (`np.searchsorted`); with fused unknowns, a mask of the characters
  that are no single-character token;
- the separator rule (piece-local tokenizers, `spec.piece_local`): a membership test of the character at b in the
  file's separators (`np.isin`);
- the normalization condition (NFC tokenizers): where the characters at b-1, b and b+1 are all anchors
  (`spec.normalization.is_anchor`, computed once per distinct code point) the anchors are a = b-1 and
  c = b+1 (or the end of the text), NFC splits the window at b without changing it, and only the occurrence
  test of the window remains (a mask); every other transition offset is judged lazily, when asked for, by the
  spec's own normalization predicate (rare: it needs a mark, a Hangul jamo or a character NFC changes nearby).

`FAULTS` are deliberately broken variants of the array rules, for the controls only: the suite must see each
(by the offset comparison with the spec, and by reference IDs in campaigns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import PIECE_LOCAL, WHOLE_WORD, admission_of
from delta_suite.spec.classes import L, O, S
from delta_suite.spec.cut import (
    ACCEPTED_FREE_PAIR,
    ACCEPTED_SPECIAL,
    ACCEPTED_TRANSITION,
    DEFAULT_CUT_RULES,
    CutRules,
    explain_cut,
    refused_only_for_strip,
    rules_for,
    rules_table,
)
from delta_suite.spec.free_pair_cut import forgotten_pair
from delta_suite.spec.guard import LiteralTrie, literal_trie
from delta_suite.spec.normalization import is_anchor
from delta_suite.spec.piece_local import ACCEPTED_SEPARATOR, piece_local_rules
from delta_suite.spec.special_cut import clear_left, clear_right, premises_hold, stage_tries
from delta_suite.spec.whole_word import WholeWordRules, whole_word_rules

REFUSED, TRANSITION, SPECIAL, NFC_PENDING, FREE_PAIR, SEPARATOR = 0, 1, 2, 3, 4, 5
VERDICT_NAMES = {TRANSITION: ACCEPTED_TRANSITION, SPECIAL: ACCEPTED_SPECIAL, FREE_PAIR: ACCEPTED_FREE_PAIR,
                 SEPARATOR: ACCEPTED_SEPARATOR}
FAULTS = ("guard_misses_last_interior", "crlf_carveout_misses_cr")  # broken array rules (controls only)
_CR, _LF, _APOSTROPHE = 13, 10, 39


@lru_cache(maxsize=4)
def _class_array(rules_source: str) -> np.ndarray:
    """The class table of `rules_source` ("engine" or "python") as a numpy lookup array."""
    return np.frombuffer(rules_table(CutRules(class_source=rules_source)), dtype=np.uint8)


@lru_cache(maxsize=64)
def _pair_matrix(pairs: frozenset) -> np.ndarray:
    """5x5 booleans: (left class, right class) is an accepted pair."""
    matrix = np.zeros((5, 5), dtype=bool)
    for left, right in pairs:
        matrix[left, right] = True
    return matrix


def occurrences(trie: LiteralTrie, text: str) -> list[tuple[int, int]]:
    """Every occurrence (start, end) of the trie's literals in `text`, overlapping ones included, by start."""
    finder = trie.starts  # any first character of a literal
    if finder is None:
        return []
    out = []
    for m in finder.finditer(text):
        start = m.start()
        out.extend((start, start + length) for length in trie.lengths_at(text, start))
    return out


def leftmost_longest(found: list[tuple[int, int]], lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """The occurrences a left-to-right leftmost-longest scan of [lo, hi) selects, from every occurrence `found`
    (sorted by start, shortest first at one start)."""
    out: list[tuple[int, int]] = []
    at = lo
    best: tuple[int, int] | None = None
    for start, end in found:
        if start < at or (hi is not None and end > hi):
            continue
        if best is not None and start != best[0]:
            out.append(best)
            at = best[1]
            best = None
            if start < at:
                continue
        best = (start, end)  # the longest at this start comes last
    if best is not None:
        out.append(best)
    return out


def selected_occurrences(tok: FrozenTokenizer, text: str) -> list[tuple[int, int]]:
    """The reference's selection (premise P1 of `spec.special_cut`): a leftmost-longest scan over the
    normalized=false strings, then one over the normalized=true strings inside each stretch between them."""
    raw, normalized = stage_tries(tok)
    first = leftmost_longest(occurrences(raw, text))
    if not normalized.root:
        return first
    second = occurrences(normalized, text)
    out: list[tuple[int, int]] = []
    at = 0
    for start, end in [*first, (len(text), len(text))]:
        if start > at:
            out.extend(leftmost_longest(second, at, start))
        if end > start:
            out.append((start, end))
        at = end
    return out


def _covered(lo: int, hi: int, spans: list[tuple[int, int]], first: int, last: int) -> np.ndarray:
    """Booleans over offsets lo..hi: offset b lies in [s + first, e + last) of some span (a difference array)."""
    size = hi - lo + 1
    marks = np.zeros(size + 1, dtype=np.int32)
    for s, e in spans:
        a, z = max(0, s + first - lo), min(size, e + last - lo)
        if a < z:
            marks[a] += 1
            marks[z] -= 1
    return np.cumsum(marks[:size]) > 0


@lru_cache(maxsize=16)
def _pair_table(rules: WholeWordRules, forget: str | None) -> np.ndarray:
    """The sorted pair keys of `rules.inner_pairs`, without the pair named by `forget` (a broken variant)."""
    keys = sorted(rules.inner_pairs)
    if forget is not None:
        left, right = (int(part[2:], 16) for part in forget.split(":")[1].split(","))
        keys = [k for k in keys if k != (left << 21) | right]
    return np.array(keys, dtype=np.uint64)


def _free_pair_mask(tok: FrozenTokenizer, codes: np.ndarray, size: int, rules: CutRules) -> np.ndarray:
    """The free-pair rule for `size` offsets, whose characters b-1 and b are codes[i] and codes[i+1]
    (codes[i+1] and codes[i+2] under the broken free_pair_offset 1; an offset past the text is refused)."""
    ww = whole_word_rules(tok)
    mapped = codes.astype(np.uint64)
    if ww.shape.space is not None:
        mapped = np.where(mapped == 32, np.uint64(ord(ww.shape.space)), mapped)
    shift = rules.free_pair_offset
    left = mapped[shift : shift + size]
    right = mapped[shift + 1 : shift + 1 + size]
    free = np.zeros(size, dtype=bool)
    n = min(left.size, right.size)
    forget = forgotten_pair(ww) if rules.free_pair_table == "forgets_first_merge" else None
    table = _pair_table(ww, forget)
    keys = (left[:n] << np.uint64(21)) | right[:n]
    at = np.minimum(np.searchsorted(table, keys), max(0, table.size - 1))
    joined = (table[at] == keys) if table.size else np.zeros(n, dtype=bool)
    if ww.fuses_unknowns:
        singles = np.array(sorted(ww.single_chars), dtype=np.uint64)
        unknown = ~np.isin(mapped, singles)
        joined |= unknown[shift : shift + n] & unknown[shift + 1 : shift + 1 + n]
    free[:n] = ~joined
    return free


def _separator_mask(tok: FrozenTokenizer, codes: np.ndarray, size: int, rules: CutRules) -> np.ndarray:
    """The separator rule (`spec.piece_local`) for `size` offsets, whose character at b is codes[i+1]."""
    table = np.array(sorted(ord(c) for c in piece_local_rules(tok).chosen(rules.separators)), dtype=np.uint32)
    return np.isin(codes[1 : 1 + size], table)


@lru_cache(maxsize=1 << 16)
def _anchor(cp: int, cls: int, reorder: bool, hangul: bool, form: str) -> bool:
    return is_anchor(chr(cp), cls, reorder, hangul, form)


@dataclass
class CutMap:
    """The verdicts of the offsets lo..hi of one text: REFUSED, TRANSITION, SPECIAL, or NFC_PENDING (a transition
    offset whose normalization condition is judged on demand by the spec's predicate). Offsets outside lo..hi,
    and 0 and len(text), are not cuts."""

    tok: FrozenTokenizer
    text: str
    rules: CutRules
    lo: int
    verdicts: np.ndarray  # int8 per offset lo..hi
    judged: dict[int, int] = field(default_factory=dict)

    @property
    def hi(self) -> int:
        return self.lo + len(self.verdicts) - 1

    def verdict(self, b: int) -> int:
        """The verdict at b (REFUSED, TRANSITION or SPECIAL), judging a pending NFC offset once."""
        if not (0 < b < len(self.text) and self.lo <= b <= self.hi):
            return REFUSED
        v = int(self.verdicts[b - self.lo])
        if v != NFC_PENDING:
            return v
        got = self.judged.get(b)
        if got is None:
            got = self.judged[b] = TRANSITION if explain_cut(self.tok, self.text, b, self.rules) == \
                ACCEPTED_TRANSITION else REFUSED
        return got

    def accepts(self, b: int) -> bool:
        return self.verdict(b) != REFUSED

    def accepted_among(self, offsets) -> list[int]:
        """The offsets (in the order given) that a rule accepts."""
        return [b for b in offsets if self.accepts(b)]

    def accepted(self) -> list[int]:
        """Every accepted offset of lo..hi, increasing."""
        return [b for b in self.candidates(self.lo, self.hi) if self.accepts(b)]

    def candidates(self, lo: int, hi: int) -> list[int]:
        """The offsets of [lo, hi] (within the map's range) not refused outright, increasing (pending ones
        included: `accepts` judges them)."""
        a, z = max(lo, self.lo) - self.lo, min(hi, self.hi) - self.lo + 1
        if a >= z:
            return []
        return [self.lo + a + int(i) for i in np.flatnonzero(self.verdicts[a:z] != REFUSED)]

    def specials(self) -> list[int]:
        """The offsets of lo..hi that the special-token rule accepts, increasing."""
        return [self.lo + int(i) for i in np.flatnonzero(self.verdicts == SPECIAL)]

    def name(self, b: int) -> str | None:
        """The accepting verdict's name (as `spec.cut.explain_cut` gives it), or None when refused."""
        return VERDICT_NAMES.get(self.verdict(b))


def _selected_in(tok: FrozenTokenizer, text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The reference's selection in the whole text, restricted to occurrences inside the clear positions around
    [lo, hi) (computed on that stretch alone: `spec.special_cut` shows the two are equal)."""
    p, q = clear_left(tok, text, lo), clear_right(tok, text, hi)
    return [(p + s, p + e) for s, e in selected_occurrences(tok, text[p:q])]


def cut_map(tok: FrozenTokenizer, text: str, rules: CutRules = DEFAULT_CUT_RULES, fault: str | None = None,
            lo: int = 1, hi: int | None = None) -> CutMap:
    """The verdicts of the offsets lo..hi (default: every offset) of `text` under `rules` (see the module
    docstring); the work and memory grow with hi - lo, not with the text. `fault` names a broken variant of the
    array rules (controls only)."""
    if fault is not None and fault not in FAULTS:
        raise ValueError(f"fault must be one of {FAULTS}, not {fault!r}")
    n = len(text)
    lo, hi = max(1, lo), min(n - 1, n - 1 if hi is None else hi)
    rules = rules_for(tok, rules)  # the floor plus the tokenizer's pattern's proved pairs
    cmap = CutMap(tok, text, rules, lo, np.zeros(max(0, hi - lo + 1), dtype=np.int8))
    if hi < lo:
        return cmap
    if not admission_of(tok).admitted and (rules.check_premises or not refused_only_for_strip(tok)):
        return cmap
    base = lo - 1  # the characters at b-1, b and b+1 for every b in lo..hi
    codes = np.frombuffer(text[base : hi + 2].encode("utf-32-le"), dtype="<u4")
    family_kind = admission_of(tok).kind  # admitted, or refused only for a stripping token
    whole_word = family_kind in (WHOLE_WORD, PIECE_LOCAL)  # no classes, transitions or NFC condition
    if family_kind == WHOLE_WORD:
        transition, kind = _free_pair_mask(tok, codes, hi - base, rules), FREE_PAIR
    elif family_kind == PIECE_LOCAL:
        transition, kind = _separator_mask(tok, codes, hi - base, rules), SEPARATOR
    else:
        transition, kind = _transition_mask(codes, hi - base, rules, fault), TRANSITION
    trie = literal_trie(tok)
    first = max(0, lo - 1 - trie.longest)  # every occurrence that contains or touches an offset of lo..hi
    if rules.guard == "off" or not trie.root:
        guarded: list[tuple[int, int]] = []
    elif rules.guard == "all":
        guarded = [(first + s, first + e) for s, e in occurrences(trie, text[first : hi + 1 + trie.longest])]
    else:
        guarded = _selected_in(tok, text, first, hi + 1 + trie.longest)
    # inside an occurrence [s, e): s < b < e, i.e. b in [s + 1, e) (the fault forgets b = e - 1)
    clear = ~_covered(lo, hi, guarded, 1, -1 if fault == "guard_misses_last_interior" else 0)
    cmap.verdicts[:] = np.where(transition & clear, kind, REFUSED)
    if tok.is_nfc and rules.check_normalization and not whole_word:
        _normalization_mask(cmap, codes, _class_array(rules.class_source)[codes], guarded, rules)
    edges_exact = family_kind != PIECE_LOCAL or piece_local_rules(tok).special_edges or not rules.piece_special_edges
    if rules.special_rule != "off" and trie.root and (premises_hold(tok) or not rules.check_premises) and edges_exact:
        if rules.special_rule == "selected":
            edges = _selected_in(tok, text, first, hi + 1 + trie.longest)
        else:
            edges = [(first + s, first + e) for s, e in occurrences(trie, text[first : hi + 1 + trie.longest])]
        for s, e in edges:
            for b in (s, e):
                if lo <= b <= hi and clear[b - lo]:
                    cmap.verdicts[b - lo] = SPECIAL
    return cmap


def _transition_mask(codes: np.ndarray, size: int, rules: CutRules, fault: str | None) -> np.ndarray:
    """The transition rule (classes, accepted pairs, carve-outs) for `size` offsets whose characters b-1 and b
    are codes[i] and codes[i+1]."""
    classes = _class_array(rules.class_source)[codes]
    left, right, right_codes = classes[:size], classes[1 : size + 1], codes[1 : size + 1]
    transition = _pair_matrix(rules.pairs)[left, right]
    if rules.cr_lf_carveout:
        cr_lf = (right_codes == _LF) if fault == "crlf_carveout_misses_cr" else \
            (right_codes == _CR) | (right_codes == _LF)
        transition &= ~((left == O) & (right == S) & cr_lf)
    if rules.apostrophe_carveout:
        transition &= ~((left == L) & (right == O) & (right_codes == _APOSTROPHE))
    return transition


def _normalization_mask(cmap: CutMap, codes: np.ndarray, classes: np.ndarray, guarded: list, rules: CutRules) -> None:
    """Condition 3 on the transition offsets: accepted outright where b-1, b and b+1 are anchors and no
    occurrence touches the window [b-1, b+1); pending (judged by the spec on demand) where a neighbour is not an
    anchor; refused where an occurrence touches the window. `codes` and `classes` cover text[lo-1 : hi+2]."""
    verdicts, lo, hi = cmap.verdicts, cmap.lo, cmap.hi
    is_transition = verdicts == TRANSITION
    if not is_transition.any():
        return
    anchor = codes < 0x80
    wide = np.flatnonzero(~anchor)
    if wide.size:
        reorder, hangul = rules.anchor_reorder_probes, rules.anchor_hangul_probes
        anchor = anchor.copy()
        form = cmap.tok.normal_form
        anchor[wide] = [_anchor(int(codes[i]), int(classes[i]), reorder, hangul, form) for i in wide]
    size = hi - lo + 1
    simple = anchor[:size] & anchor[1 : size + 1]  # the characters at b-1 and b
    after = anchor[2 : size + 2]  # the character at b+1 (missing for b = n-1: the end of the text is the anchor)
    simple[: after.size] &= after
    # an occurrence [s, e) touches the window [b-1, b+1) iff s < b+1 and e > b-1: b in [s, e+1)
    touched = _covered(lo, hi, guarded, 0, 1)
    verdicts[is_transition & ~simple] = NFC_PENDING
    if rules.nfc_window_specials:
        verdicts[is_transition & simple & touched] = REFUSED

"""The repair proposition: when the IDs of an old text, spliced with a re-encoded window, equal the whole encode.

Old text S with stored IDs T = ref(S) and their character spans; new text S' = S + D. For a window width W
(512 first, doubled at most 5 times), window start ws = len(S) - W:

1. encode the window text S'[ws:] with the reference (spans shifted by ws);
2. in the overlap [ws + margin, len(S)], keep the tokens of both streams whose non-empty span lies inside it,
   keyed by (start, end, ordinal among tokens sharing one span, ID);
3. take the longest run of equal keys contiguous in both streams (ties: larger covered span, then later end);
4. accept iff the run has at least 2 tokens, covers strictly more normalized characters than the bound, and
   contains an internal token boundary that is an accepted class transition read on input characters (the sync
   witness of the cut proposition);
5. the repaired IDs are T up to the end of the run, then the window's IDs after it; otherwise widen, and after
   the last window (or once the window would cover all of S) encode S' whole. An empty D returns T.

Premises, each a named predicate below and tested separately:

- `margin_premise(tok)`: the margin is the longest special-token string (in code points), at least 8. A window
  scan that starts inside a special-token occurrence cannot see it; the occurrence ends before ws + margin, so
  the excluded region [ws, ws + margin) holds every token the cut occurrence can disturb directly.
- `bound_premise(tok)`: the bound is at least the longest text one token decodes to, in characters (the
  registry's bound counts bytes, which is larger still). A run that covers more than the bound cannot be one token of
  either stream, so acceptance never rests on a single token that merely happens to agree.
- `window_start_premise(tok, text, ws)` (NFC only): the first characters of a window cut from their left context
  may normalize differently (a mark composes with, or reorders against, the character before ws; a Hangul V/T
  jamo composes with the L/LV jamo before it). The margin does not bound this: a run of combining marks after
  ws has no length limit, so the disturbed stretch can reach past ws + margin. The explicit check: ws must sit
  on an anchor (`is_nfc_anchor`, a character before which NFC splits the text), so NFC(S'[ws:]) is exactly the
  suffix of NFC(S') and the window sees the same normalized characters as the whole encode. A window start that
  is not an anchor moves left to the nearest anchor within `ANCHOR_SCAN` code points (the window only grows);
  none found means that width is skipped (reason "nfc_no_anchor"). For non-NFC tokenizers the normalizer is the
  identity and the premise holds at every ws.
- `sync_witness(tok, text, b)`: b is an accepted class transition on input characters; for NFC tokenizers both
  characters around b are also anchors, so the normalized pair at b is the input pair.

Why the splice is the whole encode (sketch; p = start of the run's first token, b = the witness, e = run end). T and
U agree token for token on [p, e) with equal spans, so both have token boundaries at p and b and no special-token
occurrence either selects crosses them. (1) Special tokens: the leftmost-longest scans of S and S' agree on every
occurrence starting at or before len(S) - margin (no occurrence is longer than the margin); the bound keeps p at or
before that point (it spans the longest special string in input characters), so the whole encode R, like T, selects
nothing across p, and from a boundary free in both, R and U select the same occurrences. (2) Pre-tokens: b is an
accepted transition, so every split pattern ends a piece at b whatever precedes it, and no lookahead reaches past
text[b]; (3) NFC: with anchors on both sides of b, NFC splits the text at b and leaves the pair as it is. Hence R =
T[:i_b] + U[j_b:], and since T and U agree on [b, e), R = T[:keep] + U[resume:]. Consequences
(properties/test_repair_knobs.py): the margin is redundant whenever the bound spans the longest special string (the
window-start anchor and the margin are defence in depth); two tokens are implied by the witness; the bound matters
only where special strings overlap (a window starting in a chain of overlapping occurrences selects the other half
of them): alone where the overlapping string holds an accepted transition past the overlap (olmo3's PII markers
"|||EMAIL_ADDRESS|||", ...), elsewhere only together with a missing witness (deepseek_v4_flash's "｜DSML｜"); both are
argued and their premises checked in controls.proofs.accepted_runs_resynchronize. The witness itself is necessary:
patterns that group digits by up to three (N{1,3}) pre-tokenize a digit run in a phase set by where the scan starts,
so a window starting inside a long run of digits that no token joins (fullwidth, Arabic-Indic) agrees with T token
for token over the run, with no piece boundary shared, and ASCII digits appended in D join other groups than in the
whole encode (battery hazard digit_phase; test_repair_knobs.py). Every pattern with a punctuation piece that takes
the newlines after it (` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*`) gives a second input where the vocabulary joins a newline
with the blank after it (`newline_joins_whitespace`; qwen3's, llama3's, olmo3's do): a punctuation character, a
newline run longer than the window, blanks, a newline. The whole text's piece ends with the run; the window,
starting inside it, matches `\\s*[\\r\\n]+` through the blanks to the next newline, and its last newline joins them
("\\n  \\n") while both streams chunk the run alike (battery hazard newline_tail). A third holds where a letter
alternative takes marks and the punctuation class takes them too (o200k, tekken): "!!", a run of marks longer than
the window, a punctuation character. The whole text reads it as one punctuation piece; the window, starting among
the marks, reads them as a letter piece that ends before the punctuation, and where the vocabulary joins the last
mark with the punctuation's first bytes (`mark_joins_punctuation`: Kannada marks before U+0C84 on tekken's
vocabulary) the whole text's token crosses the window's piece end, while both streams agree mark for mark before it
(battery hazard mark_tail).

The anchor predicate is the cut spec's (spec/normalization.py), so both propositions rest on one definition.

A whole-word tokenizer (`spec.whole_word`) is repaired by its own proposition (`spec.whole_word_repair`): re-encode
from the highest accepted cut at or before len(S), with no window, bound or witness (path "repaired:free_cut"),
and so is a piece-local one (`spec.piece_local`): its cuts are separator cuts, its chunks are encoded by the
tokenizer itself, and the argument of `spec.whole_word_repair` needs nothing but the cut proposition and the
reference's spans.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.classes import class_table
from delta_suite.spec.cut import DEFAULT_CUT_RULES, CutRules, is_safe_cut
from delta_suite.spec.normalization import ANCHOR_SCAN, is_anchor, normalize
from delta_suite.spec.reference import reference_encode_with_offsets
from delta_suite.spec.transitions import is_accepted_transition
from delta_suite.spec.whole_word_repair import encode_from_with_spans, repair_cut, token_boundary

MIN_MARGIN = 8
MATCH_KEYS = ("full", "ids", "spans")
PAIR_BLOCK = 1 << 16  # pairs of equal keys processed at once by the general run search (bounds its memory)

Span = tuple[int, int]


@dataclass(frozen=True)
class RepairParams:
    """The knobs of the repair proposition; the defaults are the correct spec, the others are broken variants."""

    first_window: int = 512
    max_doublings: int = 5
    min_match_tokens: int = 2
    match_key: str = "full"  # "full" = (start, end, ordinal, id); "ids" = ids only; "spans" = spans only
    require_bound: bool = True
    require_witness: bool = True
    margin: int | None = None  # None = tok.margin
    bound: int | None = None  # None = tok.bound
    check_seam: bool = True  # False = unchecked reuse: stored IDs + encode of the delta alone
    anchor_window_start: bool = True  # False = the window starts at len(S) - W even where NFC joins across it
    cut_rules: CutRules = DEFAULT_CUT_RULES  # whole-word repair: the cut proposition that chooses its cut

    def __post_init__(self) -> None:
        if self.match_key not in MATCH_KEYS:
            raise ValueError(f"match_key must be one of {MATCH_KEYS}, got {self.match_key!r}")
        if self.first_window < 1 or self.max_doublings < 0 or self.min_match_tokens < 1:
            raise ValueError("first_window >= 1, max_doublings >= 0 and min_match_tokens >= 1 are required")


DEFAULT_REPAIR_PARAMS = RepairParams()


@dataclass(frozen=True)
class RepairResult:
    """Repaired IDs and spans of S + D, the path taken, the window index used, and why earlier windows failed."""

    ids: list[int]
    spans: list[Span]
    path: str  # "repaired:window=k" | "noop:empty_delta" | "unchecked:reuse" | "fallback:<reason>"
    window: int | None = None
    rejections: tuple[str, ...] = ()

    @property
    def repaired(self) -> bool:
        return self.path.startswith("repaired:")


# --- premises ------------------------------------------------------------------------------------------------


def margin_premise(tok: FrozenTokenizer) -> bool:
    """The margin equals the longest special-token string in code points, and is at least 8."""
    longest = max((len(s) for s in tok.special_strings), default=0)
    return tok.margin == max(MIN_MARGIN, longest)


@lru_cache(maxsize=16)
def token_texts(tok: FrozenTokenizer) -> tuple[str, ...]:
    """The text each token (vocabulary entry or added token) decodes to alone, by ID."""
    size = tok.tokenizer.get_vocab_size(with_added_tokens=True)
    return tuple(tok.tokenizer.decode_batch([[i] for i in range(size)], skip_special_tokens=False))


def longest_token_text(tok: FrozenTokenizer) -> int:
    """The most characters any single token (vocabulary entry or added token) decodes to, found by decoding each.

    A token holding part of a multi-byte character decodes that part to at least one replacement character, so
    the count bounds the characters a token's span can cover."""
    return max(len(t) for t in token_texts(tok))


# Kannada marks (anusvara, vowel signs AA and I, virama) and the Kannada sign siaghna (U+0C84, punctuation Po),
# whose first two bytes byte-level vocabularies can join with the mark before it.
MARK_TAIL_PAIRS = (("\u0c82", "\u0c84"), ("\u0cbe", "\u0c84"), ("\u0cbf", "\u0c84"), ("\u0ccd", "\u0c84"))


def mark_joins_punctuation(tok: FrozenTokenizer) -> bool:
    """For some pair (mark, punctuation) of MARK_TAIL_PAIRS, the reference encode of "!!", marks, the punctuation
    (one piece on patterns whose punctuation class takes marks) has a token crossing from the last mark into the
    punctuation character: the vocabulary joins them. The mark-tail counterexample to a repair without its sync
    witness needs such a token."""
    for mark, punct in MARK_TAIL_PAIRS:
        text = "!!" + mark * 5 + punct
        _, spans = reference_encode_with_offsets(tok, text)
        if any(s < len(text) - 1 < e for s, e in spans):
            return True
    return False


NEWLINE_THEN_BLANK = re.compile(r"\n+[^\S\r\n]")


def newline_joins_whitespace(tok: FrozenTokenizer) -> bool:
    """Some token's text is one or more newlines followed by whitespace other than CR/LF ("\\n \\n", "\\n\\t"): the
    vocabulary can join the last newline of a run with the blank after it. The newline-tail counterexample to a
    repair without its sync witness needs such a token; without one, no token crosses from a newline run into the
    whitespace after it, and the window's longer whitespace piece is tokenized as the whole text's two pieces."""
    return any(NEWLINE_THEN_BLANK.match(t) for t in token_texts(tok))


def bound_premise(tok: FrozenTokenizer) -> bool:
    """The bound is at least the longest text one token decodes to, so no single token covers more than it."""
    return tok.bound >= longest_token_text(tok)


def is_nfc_anchor(ch: str, form: str = "nfc") -> bool:
    """The normal form `form` (NFC, or NFKC) splits the text before `ch`: F(x + ch + y) == F(x) + F(ch + y) for
    all x (the cut spec's anchor predicate, spec.normalization.is_anchor, with the class from the reference's
    engine table)."""
    return is_anchor(ch, class_table()[ord(ch)], form=form)


def window_start_premise(tok: FrozenTokenizer, text: str, ws: int) -> bool:
    """The window text[ws:] normalizes to the suffix of the whole: always for identity normalizers; for NFC,
    iff ws is 0 or text[ws] is an anchor."""
    if not tok.is_nfc or ws == 0:
        return True
    return ws < len(text) and is_nfc_anchor(text[ws], tok.normal_form)


def anchored_window_start(tok: FrozenTokenizer, text: str, ws: int) -> int | None:
    """The nearest ws' <= ws within ANCHOR_SCAN code points at which `window_start_premise` holds, else None."""
    for candidate in range(ws, max(-1, ws - ANCHOR_SCAN - 1), -1):
        if window_start_premise(tok, text, candidate):
            return candidate
    return None


def sync_witness(tok: FrozenTokenizer, text: str, b: int) -> bool:
    """The boundary before text[b] is an accepted class transition on input characters (0 < b < len(text));
    for NFC tokenizers both characters are also anchors, so normalization leaves that pair as it is."""
    if not 0 < b < len(text):
        return False
    left, right = text[b - 1], text[b]
    if not is_accepted_transition(left, right):
        return False
    return not tok.is_nfc or (is_nfc_anchor(left, tok.normal_form) and is_nfc_anchor(right, tok.normal_form))


def normalized_length(tok: FrozenTokenizer, text: str) -> int:
    """Characters of `text` after the tokenizer's normalizer (NFC through the reference's normalizer; else as is)."""
    return len(normalize(text, tok.normal_form)) if tok.is_nfc else len(text)


# --- the algorithm --------------------------------------------------------------------------------------------


def first_token_from(spans: list[Span], lo: int) -> int:
    """The index after the last token that starts before `lo`, found from the end (spans start in order)."""
    i = len(spans)
    while i > 0 and spans[i - 1][0] >= lo:
        i -= 1
    return i


def overlap_keys(
    ids: list[int], spans: list[Span], lo: int, hi: int, match_key: str
) -> dict[int, tuple]:
    """Index -> match key for the tokens whose non-empty span lies inside [lo, hi].

    The full key carries the ordinal among consecutive tokens sharing one span (byte pieces of one character);
    tokens sharing a span share its start, so a group never straddles `lo` and counting from there is exact."""
    keys: dict[int, tuple] = {}
    ordinal = 0
    first = first_token_from(spans, lo)
    for i in range(first, len(spans)):
        start, end = spans[i]
        ordinal = ordinal + 1 if i > first and spans[i - 1] == spans[i] else 0
        if start < end and end <= hi:
            if match_key == "full":
                keys[i] = (start, end, ordinal, ids[i])
            elif match_key == "ids":
                keys[i] = (ids[i],)
            else:
                keys[i] = (start, end)
    return keys


def longest_common_run(
    old_keys: dict[int, tuple], new_keys: dict[int, tuple], old_spans: list[Span]
) -> tuple[int, int, int] | None:
    """The longest run of equal keys at consecutive indices in both streams, as (old_first, new_first, length).

    Ties go to the larger covered span (in the old stream), then to the later end."""
    position = {key: j for j, key in new_keys.items()}
    if len(position) == len(new_keys):  # every key once in the new stream (always so for the "full" key)
        return _longest_run_unique(old_keys, position, old_spans)
    return _longest_run_general(old_keys, new_keys, old_spans)


def _longest_run_general(
    old_keys: dict[int, tuple], new_keys: dict[int, tuple], old_spans: list[Span], pair_block: int = PAIR_BLOCK
) -> tuple[int, int, int] | None:
    """`longest_common_run` for any keys (a key may occur several times in the new stream).

    Every pair (i, j) of equal keys gets the length of the run of equal-key pairs ending there, (i - k, j - k) for
    k = 0, 1, ... (`_diagonal_runs`, numpy, in time proportional to the pairs, which can number millions on
    repetitive text). The old stream is taken in blocks of whole rows holding about `pair_block` pairs; a run
    crossing into a block continues the length its predecessor had in the previous block's last row. The best pair
    is the longest run, then the larger covered span, then the later old end, then the earlier new end."""
    code: dict[tuple, int] = {}
    new_sorted = sorted(new_keys)
    new_code = np.fromiter((code.setdefault(new_keys[j], len(code)) for j in new_sorted), np.intp, len(new_sorted))
    old_sorted = sorted(old_keys)
    old_code = np.fromiter((code.get(old_keys[i], -1) for i in old_sorted), np.intp, len(old_sorted))
    shared = old_code >= 0
    if not shared.any():
        return None
    old_i, old_code = np.array(old_sorted, np.intp)[shared], old_code[shared]
    grouped_j = np.array(new_sorted, np.intp)[np.argsort(new_code, kind="stable")]  # by key, ascending in a key
    group_size = np.bincount(new_code, minlength=len(code))
    row_pairs, row_first = group_size[old_code], (np.cumsum(group_size) - group_size)[old_code]
    pairs_before = np.cumsum(row_pairs) - row_pairs
    j_low = new_sorted[0]
    carry = np.zeros(new_sorted[-1] - j_low + 2, np.intp)  # run length ending at (carry_row, j), at j - j_low + 1
    carry_row = None
    best: tuple[int, int, int, int] | None = None  # (length, covered, old_last, -new_last)
    u = 0
    while u < len(old_i):
        v = max(u + 1, int(np.searchsorted(pairs_before, pairs_before[u] + pair_block, side="left")))
        counts = row_pairs[u:v]
        i = np.repeat(old_i[u:v], counts)
        within = np.arange(len(i)) - np.repeat(pairs_before[u:v] - pairs_before[u], counts)
        i, j, length, first = _diagonal_runs(i, grouped_j[np.repeat(row_first[u:v], counts) + within])
        if carry_row is not None and int(old_i[u]) == carry_row + 1:
            length += np.where(i[first] == old_i[u], carry[j[first] - j_low], 0)
        top = int(length.max())
        if best is None or top >= best[0]:
            at = np.flatnonzero(length == top)
            ends = np.unique(i[at])
            covered = np.array([old_spans[e][1] - old_spans[e - top + 1][0] for e in ends.tolist()], np.intp)
            widest = int(ends[covered == covered.max()].max())
            cand = (top, int(covered.max()), widest, -int(j[at[i[at] == widest]].min()))
            best = cand if best is None else max(best, cand)
        carry[:] = 0
        last = i == old_i[v - 1]
        carry[j[last] - j_low + 1] = length[last]
        carry_row, u = int(old_i[v - 1]), v
    assert best is not None
    length_best, _, i_last, j_neg = best
    return i_last - length_best + 1, -j_neg - length_best + 1, length_best


def _diagonal_runs(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (i, j) given in ascending i, re-ordered by diagonal j - i, then i, with the length of the run of pairs
    ending at each, (i - k, j - k) for k = 0, 1, ..., counted within the given pairs, and the position (in the new
    order) of that run's first pair. In this order each run is a stretch of consecutive i, so one cumulative pass
    measures them all."""
    diagonal = j - i
    diagonal = diagonal - diagonal.min() if len(diagonal) else diagonal
    if len(diagonal) and diagonal.max() < 1 << 16:  # numpy's stable sort of 16-bit integers is a radix sort
        diagonal = diagonal.astype(np.uint16)
    order = np.argsort(diagonal, kind="stable")  # stable: i still ascends within a diagonal
    i, j, diagonal = i[order], j[order], diagonal[order]
    step = np.arange(len(i))
    continues = np.zeros(len(i), bool)
    continues[1:] = (diagonal[1:] == diagonal[:-1]) & (i[1:] == i[:-1] + 1)
    first = np.maximum.accumulate(np.where(continues, 0, step))
    return i, j, step - first + 1, first


def _longest_run_unique(
    old_keys: dict[int, tuple], position: dict[tuple, int], old_spans: list[Span]
) -> tuple[int, int, int] | None:
    """`longest_common_run` when each key occurs once in the new stream: old token i can only continue the run
    that ended at (i - 1, position - 1), so one pass suffices; same result and tie-breaking."""
    best: tuple[int, int, int, int] | None = None  # (length, covered, old_last, new_last)
    best_length = best_covered = 0
    prev_i = prev_j = -2
    length = 0
    for i in sorted(old_keys):
        j = position.get(old_keys[i])
        if j is None:
            continue
        length = length + 1 if (i == prev_i + 1 and j == prev_j + 1) else 1
        prev_i, prev_j = i, j
        if length >= best_length:  # i ascends, so a later run of equal length and covered span wins the tie
            covered = old_spans[i][1] - old_spans[i - length + 1][0]
            if length > best_length or covered >= best_covered:
                best, best_length, best_covered = (length, covered, i, j), length, covered
    if best is None:
        return None
    length, _, i_last, j_last = best
    return i_last - length + 1, j_last - length + 1, length


def judge_run(
    tok: FrozenTokenizer,
    text: str,
    old_spans: list[Span],
    run: tuple[int, int, int] | None,
    params: RepairParams,
    bound: int,
) -> str:
    """"accepted", or why the run does not justify a splice (no_run, too_few_tokens, bound, witness)."""
    if run is None:
        return "no_run"
    first, _, length = run
    if length < params.min_match_tokens:
        return "too_few_tokens"
    start, end = old_spans[first][0], old_spans[first + length - 1][1]
    if params.require_bound and not normalized_length(tok, text[start:end]) > bound:
        return "bound"
    if params.require_witness:
        internal = (old_spans[i][0] for i in range(first + 1, first + length))
        if not any(sync_witness(tok, pair, 1) for pair in _distinct_pairs(text, internal)):
            return "witness"
    return "accepted"


def _distinct_pairs(text: str, boundaries: Iterable[int]) -> Iterator[str]:
    """The two characters around each boundary b (0 < b < len(text)), each distinct pair once, in order of first
    occurrence: `sync_witness` depends on them alone, so judging each once decides the same."""
    seen: set[str] = set()
    for b in boundaries:
        if 0 < b < len(text):
            pair = text[b - 1 : b + 1]
            if pair not in seen:
                seen.add(pair)
                yield pair


@dataclass(frozen=True)
class Splice:
    """The result as an edit of the stored stream: keep `keep` old tokens, then append `ids` / `spans`."""

    keep: int
    ids: list[int]
    spans: list[Span]
    path: str
    window: int | None = None
    rejections: tuple[str, ...] = ()


def _whole(tok: FrozenTokenizer, text: str, reason: str, rejections: list[str]) -> Splice:
    ids, spans = reference_encode_with_offsets(tok, text)
    return Splice(0, ids, spans, f"fallback:{reason}", None, tuple(rejections))


def repair(
    tok: FrozenTokenizer,
    old_text: str,
    old_ids: list[int],
    old_spans: list[Span],
    delta: str,
    params: RepairParams = DEFAULT_REPAIR_PARAMS,
) -> RepairResult:
    """The IDs and spans of old_text + delta, from the stored encode of old_text and one re-encoded window.

    Proposition (for an admitted tokenizer whose premises hold, with T, spans = ref(old_text) with offsets):
    the result equals ref(old_text + delta) on every path."""
    edit = repair_splice(tok, old_text, old_ids, old_spans, delta, params)
    ids = old_ids[: edit.keep] + edit.ids
    spans = old_spans[: edit.keep] + edit.spans
    return RepairResult(ids, spans, edit.path, edit.window, edit.rejections)


def repair_splice(
    tok: FrozenTokenizer,
    old_text: str,
    old_ids: list[int],
    old_spans: list[Span],
    delta: str,
    params: RepairParams = DEFAULT_REPAIR_PARAMS,
) -> Splice:
    """`repair` as an edit of the stored stream (what a session applies in place, in time proportional to the
    window rather than to the whole text)."""
    n = len(old_text)
    if not delta:
        return Splice(len(old_ids), [], [], "noop:empty_delta")
    if len(old_ids) != len(old_spans):
        return _whole(tok, old_text + delta, "invalid_prior_state", [])
    if not params.check_seam:
        d_ids, d_spans = reference_encode_with_offsets(tok, delta)
        return Splice(len(old_ids), d_ids, [(s + n, e + n) for s, e in d_spans], "unchecked:reuse")
    admission = admission_of(tok)
    if not admission.admitted:
        return _whole(tok, old_text + delta, "not_admitted", [])
    if admission.own_rule:
        return _whole_word_splice(tok, old_text, old_spans, delta, params)
    margin = tok.margin if params.margin is None else params.margin
    bound = tok.bound if params.bound is None else params.bound
    rejections: list[str] = []
    width = params.first_window
    for k in range(params.max_doublings + 1):
        if width >= n:
            return _whole(tok, old_text + delta, "window_covers_all", rejections)
        ws = anchored_window_start(tok, old_text, n - width) if params.anchor_window_start else n - width
        if ws is None:
            rejections.append(f"window={k}:nfc_no_anchor")
        elif ws == 0:
            return _whole(tok, old_text + delta, "window_covers_all", rejections)
        else:
            result = repair_window(tok, old_text, delta, old_ids, old_spans, ws, margin, bound, params)
            if isinstance(result, str):
                rejections.append(f"window={k}:{result}")
            else:
                keep, ids, spans = result
                return Splice(keep, ids, spans, f"repaired:window={k}", k, tuple(rejections))
        width *= 2
    return _whole(tok, old_text + delta, "no_match", rejections)


def _whole_word_splice(tok: FrozenTokenizer, old_text: str, old_spans: list[Span], delta: str,
                       params: RepairParams) -> Splice:
    """`spec.whole_word_repair`: keep the tokens before the highest cut accepted in both texts, encode from it."""
    new_text = old_text + delta
    c = repair_cut(lambda text, b: is_safe_cut(tok, text, b, params.cut_rules), old_text, new_text)
    if c is None:
        return _whole(tok, new_text, "no_free_cut", [])
    keep = token_boundary(old_spans, c)
    if keep is None:
        return _whole(tok, new_text, "no_token_boundary", [])
    ids, spans = encode_from_with_spans(tok, new_text, c, params.cut_rules.chunk_prefix)
    return Splice(keep, ids, spans, "repaired:free_cut")


def repair_window(
    tok: FrozenTokenizer,
    old_text: str,
    delta: str,
    old_ids: list[int],
    old_spans: list[Span],
    ws: int,
    margin: int,
    bound: int,
    params: RepairParams,
) -> tuple[int, list[int], list[Span]] | str:
    """One window: (old tokens kept, window IDs and spans after the run) when the window's longest matched run is
    accepted, else the reason it is not."""
    win_ids, win_local = reference_encode_with_offsets(tok, old_text[ws:] + delta)
    win_spans = [(s + ws, e + ws) for s, e in win_local]
    lo, hi = ws + margin, len(old_text)
    old_keys = overlap_keys(old_ids, old_spans, lo, hi, params.match_key)
    new_keys = overlap_keys(win_ids, win_spans, lo, hi, params.match_key)
    run = longest_common_run(old_keys, new_keys, old_spans)
    verdict = judge_run(tok, old_text, old_spans, run, params, bound)
    if verdict != "accepted":
        return verdict
    assert run is not None
    old_first, new_first, length = run
    resume = new_first + length
    return old_first + length, win_ids[resume:], win_spans[resume:]

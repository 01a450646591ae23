"""The special-token cut: a cut at an edge of a special-token occurrence that the reference's own scan selects.

Proposition. For an admitted tokenizer, a text S and 0 < b < len(S): if b is the start or the end of an
occurrence that the reference's added-token scan of S selects (`selected_occurrences`), and no occurrence of any
special-token string (selected or not, overlapping ones included) strictly contains b, then
ref(S[:b]) + ref(S[b:]) == ref(S); with the transition cut of `spec.cut`, any set of accepted cuts of either
rule concatenates to ref(S).

Premises, each a predicate below that the tests check against the reference itself:
- P1 (`two_stage_scan`, checked by `selection_matches_reference`): the reference (tokenizers'
  `AddedVocabulary::extract_and_normalize`) first splits the raw text at the occurrences of the added tokens
  with normalized=false that one leftmost-longest scan of the whole text selects, then normalizes each
  remaining stretch on its own and splits it at the leftmost-longest occurrences of the normalized=true tokens;
  the normalizer, the pre-tokenizer and BPE then work inside one stretch at a time, and a selected occurrence
  becomes its token's ID.
- P2 (`no_strip_or_single_word`): no added token sets lstrip, rstrip or single_word. lstrip and rstrip move a
  match's edges over the whitespace next to it (a cut before such a token would leave that whitespace to the
  left piece), and single_word drops a match depending on its neighbours.
- P3 (`normalized_tokens_under_identity`): tokens with normalized=true take part only when the normalizer is
  the identity (none, or the empty Sequence): then the second scan sees the raw characters of each stretch.
  Under NFC the second scan runs on the normalized stretch, where composition can join a raw occurrence's
  first or last character with its neighbour (a token that starts with a combining mark, or text before it
  that composes with its first letter), so a raw occurrence need not be a normalized one; under NFC such
  tokens are refused (and `spec.admission` refuses the tokenizer outright). Tokens with normalized=false match
  raw text before any normalization, under every normalizer, so NFC does not reach across their edges.
- P4 (`scans_special_tokens`, read from the loaded reference at each use): the scans' literals are the added
  tokens the reference scans for, special or not, unless its run-time `encode_special_tokens` is on (see
  "Special or not" below).

Argument (beside the paper's §3.3.2). Call a position p clear when no occurrence of any string strictly contains
it. A leftmost-longest scan never selects a match across a clear position, so the scan of S restricted to
[p, q) for clear p < q equals the scan of S[p:q]: left of b the scan of S[:b] keeps every selection of S that
ends at or before b (each step's leftmost start and longest match are the same among fewer candidates), and
right of b the scan of S[b:] starts where the scan of S continues after the selection that ends at b (or
reaches the one that starts at b). So when b is an edge of a selected occurrence, the stretches of S[:b] and
of S[b:] are exactly the stretches of S on either side of b, each with the same selected occurrences; by P1
everything after the scan happens inside a stretch, so the IDs of S are the IDs of S[:b] followed by those of
S[b:]. P2 keeps the edges where the scan put them; P3 keeps the second scan on raw characters. The rule needs
no class transition and no normalization window: a role marker next to CR/LF, an apostrophe, a digit run or a
decomposed accent is still a cut. The containment condition is stronger than the argument needs (a containing
occurrence of an edge of a selected one is never selected itself); it is kept as the guard of both rules.

Special or not. "Special-token string" here means the content of any added token, whatever its `special` flag,
because the reference's scan ignores that flag. `tokenizers` (0.23: `AddedVocabulary::refresh_added_tokens`)
builds its two tries from every added token, split by `normalized` alone, and `find_matches` reads `special`
only when the run-time setting `encode_special_tokens` is on (not stored in tokenizer.json, off by default), to
skip the special tokens, which are then encoded as text while the non-special ones are still matched. So a
non-special token with normalized=false (nemotron_3_nano_4b's and qwen3_8b's `<think>` ... `</tool_response>`,
olmo_3_7b's PII markers) is selected in the raw text by the first scan exactly as a special one is: a cut at
its edge is the same scan and the same argument, and the loader's `special_strings` (margin, guard) count it
like any other. Elsewhere the flag changes only decoding (`decode(skip_special_tokens=True)`, the library's
default, drops the special tokens and keeps the non-special ones; the suite decodes with skip_special_tokens
False) and what a chat template treats as a marker. With `encode_special_tokens` set, P4 leaves only the
non-special tokens in the scans (handled, not refused: a special string is then text, and its edge is judged by
the transition rule; the guard still counts it, which only refuses more); before P4 the rule accepted "a <s> b"
at 2 on nemotron_3_nano_4b, where the reference joins the blank to "<". properties/test_non_special_tokens.py
checks this section on the reference, exhaustively over nemotron's six non-special tokens and their neighbours.

Whole-word tokenizers (`spec.whole_word`). The scan, the guard and the edge rule are the same, and so is the
argument up to the encode of the right side: there the stretch after the edge may need the family's prefix, and the
whole encode decides that by the prefix scheme. Under "per_stretch" (a Prepend normalizer, Metaspace "always") and
"none", ref(S[b:]) is the whole encode's suffix, as above. Under "first" (Metaspace prepend_scheme "first") the whole
encode prefixes only the stretch at offset 0, so the right side is encoded by the chunk encoder without the prefix
(`spec.free_pair_cut.encode_from`; measured on Llama 2's vocabulary in that form: "hi</s>again" cut after "</s>"
differs with ref(S[b:])). Gemma 3's runs of newlines, tabs and U+2581 are non-special added tokens matched in the
raw text: a cut inside a run is refused by the guard (it lies strictly inside an occurrence of the shorter run), and
their edges are this rule's cuts.

Selection is computed locally: from the clear positions around b (found by walking left and right over
overlapping occurrences), so the cost does not grow with the text except across chains of overlapping strings.
"""

from __future__ import annotations

from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import IDENTITY_NORMALIZERS
from delta_suite.spec.guard import LiteralTrie, literal_trie
from delta_suite.spec.reference import reference_encode_with_offsets

SPECIAL_RULE_MODES = ("selected", "any_occurrence", "off")


def _normalized_flag(token: dict) -> bool:
    return bool(token.get("normalized", False))


def scans_special_tokens(tok: FrozenTokenizer) -> bool:
    """P4: whether the loaded reference's added-token scan looks for the special tokens too: True unless its
    run-time setting `encode_special_tokens` is on (then only the non-special added tokens are matched)."""
    return not tok.tokenizer.encode_special_tokens


def stage_tries(tok: FrozenTokenizer) -> tuple[LiteralTrie, LiteralTrie]:
    """The literals of the two scans of P1: (normalized=false tokens, normalized=true tokens), among the added
    tokens the reference scans for (P4)."""
    return _stage_tries(tok, scans_special_tokens(tok))


@lru_cache(maxsize=64)
def _stage_tries(tok: FrozenTokenizer, with_special: bool) -> tuple[LiteralTrie, LiteralTrie]:
    tokens = [t for t in tok.admission_inputs.added_tokens if with_special or not t.get("special", False)]
    raw = tuple(sorted({t["content"] for t in tokens if not _normalized_flag(t)}))
    normalized = tuple(sorted({t["content"] for t in tokens if _normalized_flag(t)}))
    return LiteralTrie(raw), LiteralTrie(normalized)


def no_strip_or_single_word(tok: FrozenTokenizer) -> bool:
    """P2: no added token of the loaded configuration sets lstrip, rstrip or single_word."""
    flags = ("lstrip", "rstrip", "single_word")
    return not any(t.get(f) for t in tok.admission_inputs.added_tokens for f in flags)


def normalized_tokens_under_identity(tok: FrozenTokenizer) -> bool:
    """P3: tokens with normalized=true exist only under an identity normalizer (none or the empty Sequence)."""
    if tok.normalizer in IDENTITY_NORMALIZERS:
        return True
    return not any(_normalized_flag(t) for t in tok.admission_inputs.added_tokens)


@lru_cache(maxsize=64)
def premises_hold(tok: FrozenTokenizer) -> bool:
    """P2 and P3 (P1 is the reference's behaviour, checked against it by `selection_matches_reference`)."""
    return no_strip_or_single_word(tok) and normalized_tokens_under_identity(tok)


def two_stage_scan(tok: FrozenTokenizer, text: str) -> list[tuple[int, int]]:
    """P1 as a computation: the occurrences the reference selects in `text`, in order. First the leftmost-longest
    scan of the whole text over the normalized=false strings; then, in each stretch between its selections, the
    leftmost-longest scan over the normalized=true strings (identity normalizers only, by P3)."""
    raw, normalized = stage_tries(tok)
    first = raw.selected(text)
    if not normalized.root:
        return first
    out: list[tuple[int, int]] = []
    at = 0
    for start, end in [*first, (len(text), len(text))]:
        if start > at:
            out.extend((at + s, at + e) for s, e in normalized.selected(text[at:start]))
        if end > start:
            out.append((start, end))
        at = end
    return out


def _straddling(trie: LiteralTrie, text: str, p: int) -> list[tuple[int, int]]:
    return [(s, e) for s, e in trie.occurrences(text, p - 1, p + 1) if s < p < e]


def clear_left(tok: FrozenTokenizer, text: str, p: int) -> int:
    """The nearest position at or left of p that no occurrence of any special-token string strictly contains."""
    trie = literal_trie(tok)
    while p > 0:
        inside = _straddling(trie, text, p)
        if not inside:
            return p
        p = min(s for s, _ in inside)
    return 0


def clear_right(tok: FrozenTokenizer, text: str, p: int) -> int:
    """The nearest position at or right of p that no occurrence of any special-token string strictly contains."""
    trie = literal_trie(tok)
    n = len(text)
    while p < n:
        inside = _straddling(trie, text, p)
        if not inside:
            return p
        p = max(e for _, e in inside)
    return n


def edge_occurrences(tok: FrozenTokenizer, text: str, b: int) -> list[tuple[int, int]]:
    """Every occurrence of a special-token string that starts or ends at b (selected or not)."""
    return [(s, e) for s, e in literal_trie(tok).occurrences(text, b - 1, b + 1) if s == b or e == b]


def selected_near(tok: FrozenTokenizer, text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The selected occurrences (`two_stage_scan` of the whole text) that lie inside [lo', hi') for the clear
    positions lo' <= lo and hi' >= hi: computed on text[lo':hi'] alone, which the argument above shows is equal."""
    p, q = clear_left(tok, text, lo), clear_right(tok, text, hi)
    return [(p + s, p + e) for s, e in two_stage_scan(tok, text[p:q])]


def at_selected_edge(tok: FrozenTokenizer, text: str, b: int, mode: str = "selected") -> tuple[int, int] | None:
    """The occurrence whose edge b is, when the special-token rule's edge condition holds, else None.

    mode "selected" is the specification (an occurrence the reference's scan selects); "any_occurrence" (the
    edge of any occurrence, unselected ones included) and "off" (no special-token rule) exist for the controls.
    """
    if mode == "off":
        return None
    edges = edge_occurrences(tok, text, b)
    if not edges:
        return None
    if mode == "any_occurrence":
        return edges[0]
    if mode != "selected":
        raise ValueError(f"special rule mode must be one of {SPECIAL_RULE_MODES}, not {mode!r}")
    lo = min(s for s, _ in edges)
    hi = max(e for _, e in edges)
    for s, e in selected_near(tok, text, lo, hi):
        if s == b or e == b:
            return (s, e)
    return None


def added_token_ids(tok: FrozenTokenizer) -> dict[int, str]:
    """ID -> content of every added token (what a selected occurrence becomes)."""
    return {tok.tokenizer.token_to_id(t["content"]): t["content"] for t in tok.admission_inputs.added_tokens}


def reference_selection(tok: FrozenTokenizer, text: str) -> list[tuple[int, int]]:
    """The occurrences the reference itself selected in `text`: the spans of its tokens that carry an added
    token's ID and cover exactly that token's string."""
    ids, offsets = reference_encode_with_offsets(tok, text)
    added = added_token_ids(tok)
    return [(s, e) for i, (s, e) in zip(ids, offsets, strict=True) if i in added and text[s:e] == added[i]]


def selection_matches_reference(tok: FrozenTokenizer, text: str) -> bool:
    """P1 on one text: `two_stage_scan` selects exactly the occurrences the reference turned into added tokens."""
    return two_stage_scan(tok, text) == reference_selection(tok, text)

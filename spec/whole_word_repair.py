"""The repair proposition for the whole-word family (`spec.whole_word`): re-encode from one accepted cut, no window.

Old text S (n characters) with stored IDs T = ref(S) and their character spans; new text S' = S + D, D non-empty.
Let c be the highest offset with max(1, n - SCAN_BUDGET) <= c <= n such that
- c == n and the cut proposition (`spec.cut`, whole-word rules) accepts a cut at n in S', or
- c < n and it accepts a cut at c both in S and in S'.
Then ref(S') == T[:k] + encode_from(S', c, len(S')), where k is the number of tokens of T whose span starts before
c (`spec.free_pair_cut.encode_from`, the chunk encoder). With no such c the new text is encoded whole.

Argument. By the cut proposition on S (for c < n), T = ref(S[:c]) + encode_from(S, c, n): T has a token boundary
at c, and, since the reference's spans are offsets of the raw text in order (a prefix U+2581 is aligned to its
stretch's first character, byte-fallback tokens share their character's span), the tokens of ref(S[:c]) are
exactly the tokens of T that start before c: k counts them. (c == n: T is ref(S[:c]) itself.) By the cut
proposition on S', ref(S') = ref(S'[:c]) + encode_from(S', c, len(S')), and S'[:c] == S[:c]. `token_boundary`
checks the span condition on T at run time and falls back to the whole encode if it failed (it never has).

What the byte-level repair needs and this family does not (properties/test_whole_word.py measures each):
- the doubling windows: there is nothing to re-encode and match; a scan back from n for one accepted cut is all;
- the bound: it keeps a matched run from being a single token that agrees by accident; nothing is matched here;
- the sync witness: it supplies a boundary that the whole encode and the window share; the cut proposition
  supplies c in both S and S' directly;
- the margin as an excluded region: the guard of the cut proposition, judged in S', already refuses a c inside an
  added-token occurrence that D completes (S ending in "<start_of_tu" and D "rn>"), and judging c in S as well
  keeps T's boundary at c;
- the NFC window-start anchor: no NFC in this family.
"""

from __future__ import annotations

from collections.abc import Callable

from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.free_pair_cut import chunk_encoder, chunk_pieces

SCAN_BUDGET = 4096
Span = tuple[int, int]


def repair_cut(accepts: Callable[[str, int], bool], old_text: str, new_text: str,
               budget: int = SCAN_BUDGET) -> int | None:
    """The c of the module docstring, or None. `accepts(text, b)` is the cut proposition's verdict."""
    n = len(old_text)
    if n < len(new_text) and n > 0 and accepts(new_text, n):
        return n
    for c in range(n - 1, max(0, n - budget), -1):
        if accepts(new_text, c) and accepts(old_text, c):
            return c
    return None


def token_boundary(spans: list[Span], c: int) -> int | None:
    """k, the number of tokens whose span starts before c, if the spans split at c (every one of them ends at or
    before c, every later one starts at or after c); None otherwise."""
    k = 0
    while k < len(spans) and spans[k][0] < c:
        k += 1
    if (k and spans[k - 1][1] > c) or (k < len(spans) and spans[k][0] < c):
        return None
    return k


def encode_from_with_spans(tok: FrozenTokenizer, text: str, lo: int, prefix: str = "scheme"
                           ) -> tuple[list[int], list[Span]]:
    """`encode_from(tok, text, lo, len(text))` with each token's span in `text` (each piece encoded by its encoder
    with offsets, shifted by the piece's start)."""
    ids: list[int] = []
    spans: list[Span] = []
    for which, start, end in chunk_pieces(tok, text, lo, len(text), prefix):
        encoder = tok.tokenizer if which == "full" else chunk_encoder(tok)
        enc = encoder.encode(text[start:end], add_special_tokens=False)
        ids.extend(enc.ids)
        spans.extend((s + start, e + start) for s, e in enc.offsets)
    return ids, spans

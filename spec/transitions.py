"""The class-transition condition: which (left, right) character pairs end one pre-token and start the next.

A boundary between characters x and y is an accepted transition iff (class(x), class(y)) is one of
L->N, L->O, L->S, N->L, N->O, N->S, O->N, O->S, except O->S when y is CR or LF (a punctuation run absorbs
[\\r\\n]*), and L->O when y is an apostrophe (o200k letter runs carry an optional contraction suffix).
Nothing leaves whitespace (a whitespace run may give its last space to the next word) and M never takes part.
"""

from __future__ import annotations

from spec.classes import L, N, O, S, class_table

ACCEPTED_PAIRS: frozenset[tuple[int, int]] = frozenset(
    {(L, N), (L, O), (L, S), (N, L), (N, O), (N, S), (O, N), (O, S)}
)
CR_LF = ("\r", "\n")
APOSTROPHE = "'"


def is_accepted_pair(left_cls: int, right_cls: int, right_char: str) -> bool:
    """The class pair is in the accepted set and no carve-out applies to the right character."""
    if (left_cls, right_cls) not in ACCEPTED_PAIRS:
        return False
    if (left_cls, right_cls) == (O, S) and right_char in CR_LF:
        return False
    if (left_cls, right_cls) == (L, O) and right_char == APOSTROPHE:
        return False
    return True


def is_accepted_transition(left: str, right: str, table: bytes | None = None) -> bool:
    """Whether the boundary between characters `left` and `right` is an accepted class transition."""
    t = table or class_table()
    return is_accepted_pair(t[ord(left)], t[ord(right)], right)

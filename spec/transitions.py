"""The class-transition condition: which (left, right) character pairs end one pre-token and start the next.

A boundary between characters x and y is an accepted transition iff (class(x), class(y)) is one of
L->N, L->O, L->S, N->L, N->O, N->S, O->N, O->S, except O->S when y is CR or LF (a punctuation run absorbs
[\\r\\n]*), and L->O when y is an apostrophe (o200k letter runs carry an optional contraction suffix).
Nothing leaves whitespace (a whitespace run may give its last space to the next word) and M never takes part.

That set is the floor every admitted pattern shares. Per split pattern, the paper derives more ("single-digit vs
{1,3} digit grouping, case-aware boundaries for o200k", its appendix A.3): `PATTERN_PAIRS` adds, per pattern
family, the pairs its z3 proofs show sound (spec.proofs: the split-level obligations, unbounded, and the
pipeline-level proof of every stage together, bounded; properties/test_pattern_pairs.py checks the table equals
what the proofs find), and `APOSTROPHE_FREE` lists the families whose letter runs never take an apostrophe, where
the L->O carve-out is not needed. The repair's sync witness stays on the floor.
"""

from __future__ import annotations

from delta_suite.spec.classes import L, M, N, O, S, class_table

ACCEPTED_PAIRS: frozenset[tuple[int, int]] = frozenset(
    {(L, N), (L, O), (L, S), (N, L), (N, O), (N, S), (O, N), (O, S)}
)
# family -> the pairs proved sound for that split pattern beyond the floor (single digits: N->N; marks that no
# letter run of the pattern takes: L->M, N->M, M->N; DeepSeek's stages: digits split off first, so S->N; ...)
PATTERN_PAIRS: dict[str, frozenset[tuple[int, int]]] = {
    "qwen2": frozenset({(L, M), (N, N), (N, M), (M, N)}),
    "qwen3_5": frozenset({(N, N), (N, M), (M, O), (M, S), (M, N)}),
    "llama3": frozenset({(L, M), (N, M), (M, N)}),
    "o200k": frozenset({(N, M), (M, N)}),
    "tekken": frozenset({(N, N), (N, M), (M, N)}),
    "deepseek": frozenset({(S, N), (N, M), (M, O), (M, S), (M, N)}),
}
# families whose letter runs carry no contraction suffix: L->O stands for the apostrophe too
APOSTROPHE_FREE: frozenset[str] = frozenset({"qwen2", "qwen3_5", "llama3", "tekken", "deepseek"})
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

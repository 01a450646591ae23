"""The five character classes of the cut and repair propositions, taken from the reference's regex engine.

L (letter, \\p{L}), N (number, \\p{N}), S (whitespace, the engine's \\s), M (mark, \\p{M}) and O (everything
else). Whitespace is tested first: the engine's \\s is exactly the 25 White_Space code points, none of which is
a letter, number or mark. The table is derived from the installed reference (its Unicode version, not
Python's) and proved against it exhaustively by the per-code-point tests.
"""

from __future__ import annotations

from functools import lru_cache

from delta_suite.spec.engine_classes import CODE_SPACE, engine_mask

O, S, L, N, M = 0, 1, 2, 3, 4
CLASS_NAMES = "OSLNM"
CLASS_REGEX = {S: r"\s", L: r"\p{L}", N: r"\p{N}", M: r"\p{M}"}


@lru_cache(maxsize=1)
def class_table() -> bytes:
    """One byte per code point (O=0, S=1, L=2, N=3, M=4), from the reference engine's own class membership."""
    table = bytearray(CODE_SPACE)
    for cls in (M, N, L, S):  # later assignments win: S over L over N over M
        mask = engine_mask(CLASS_REGEX[cls])
        for cp in range(CODE_SPACE):
            if mask[cp]:
                table[cp] = cls
    return bytes(table)

"""The reference pre-tokenizer's pieces, and whether a cut at one position changes them.

The pieces come from `tokenizers` itself: either a Sequence of Split stages (Isolated, not inverted) built from
a pattern family's regexes, or a provisioned tokenizer's own pre-tokenizer. Only the piece strings matter: a
trailing ByteLevel without regex maps bytes one to one, so equal piece lists mean equal piece boundaries.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from delta_suite.spec.families import stages_of
from tokenizers import Regex
from tokenizers.pre_tokenizers import PreTokenizer, Sequence, Split

Pieces = Callable[[str], list[str]]


@cache
def stages_pre_tokenizer(stages: tuple[str, ...]) -> PreTokenizer:
    """Split stages (Isolated, not inverted) in order, as the reference builds them."""
    return Sequence([Split(Regex(stage), behavior="isolated", invert=False) for stage in stages])


def family_pre_tokenizer(family: str) -> PreTokenizer:
    """The Split stages of a pattern family."""
    return stages_pre_tokenizer(stages_of(family))


def pieces_of(pre_tokenizer: PreTokenizer) -> Pieces:
    """A function from text to the reference's piece strings."""

    def pieces(text: str) -> list[str]:
        return [piece for piece, _ in pre_tokenizer.pre_tokenize_str(text)] if text else []

    return pieces


def family_pieces(family: str) -> Pieces:
    return pieces_of(family_pre_tokenizer(family))


def cut_changes_pieces(pieces: Pieces, text: str, cut: int) -> bool:
    """True iff pieces(text) differs from pieces(text[:cut]) + pieces(text[cut:])."""
    return pieces(text) != pieces(text[:cut]) + pieces(text[cut:])

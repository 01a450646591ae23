"""Seam texts drawn in bulk from a seeded `random.Random`: the families of `fuzz.strategies.seam_pieces`, without
the Hypothesis engine.

A campaign needs thousands of seam texts per minute; Hypothesis spends about a millisecond of bookkeeping per
drawn text (its choice tree, spans and health checks), more than the reference takes to encode it. The sampler
draws the same piece families from the same pools (special-token strings, prefixes, suffixes, overlaps and
near-misses of `tok`; the fixed NFC, mark, Hangul, CR/LF, contraction, whitespace, digit, CJK, emoji, punctuation
and word pieces; engine-class code points, each class equally likely; code points where Python's Unicode data
disagrees with the engine; any scalar value), each family equally likely, as the strategy's `one_of` does. The
same (tokenizer, seed) give the same texts. The property tests keep the Hypothesis strategies (which shrink).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.fuzz import strategies as seams

NEAR_MISS_CHARS = ("|", "<", ">", "a", " ", "\u0301")
RUN_FAMILIES = (
    (seams.MARKS, 4), (seams.HANGUL, 3), (seams.CR_LF, 3), (seams.WHITESPACE, 5), (seams.CJK_KANA, 3),
    (seams.EMOJI, 3), (seams.ASCII_PUNCT, 4), (seams.WORDS, 3),
)
SCALAR_COUNT = 0x110000 - 0x800  # every code point but the surrogates


@lru_cache(maxsize=1)
def _class_members() -> tuple[tuple[int, ...], ...]:
    """The code points of each engine class (surrogates excluded), as tuples for indexed draws."""
    by_class = seams._by_class()
    return tuple(tuple(by_class[c]) for c in sorted(by_class))


class SeamSampler:
    """Seam pieces and texts for one tokenizer from one seeded generator (see the module docstring)."""

    def __init__(self, tok: FrozenTokenizer, rng: random.Random) -> None:
        self.rng = rng
        self.specials = [s for s in tok.special_strings if s] or ["<|none|>"]  # an empty one has no fragments
        self.skew = seams.version_skew_codepoints()
        self.members = _class_members()
        self.families: tuple[Callable[[], str], ...] = (
            self._special_fragment,
            lambda: rng.choice(seams.FIXED_SEAMS),
            lambda: rng.choice(seams.NFC_CHANGING),
            *(self._run(pool, longest) for pool, longest in RUN_FAMILIES[:1]),
            lambda: rng.choice(seams.MARKS_OUT_OF_ORDER),
            *(self._run(pool, longest) for pool, longest in RUN_FAMILIES[1:3]),
            lambda: rng.choice(seams.CONTRACTIONS),
            self._run(*RUN_FAMILIES[3]),
            lambda: "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 9))),
            *(self._run(pool, longest) for pool, longest in RUN_FAMILIES[4:]),
            self._class_codepoint,
            lambda: chr(rng.choice(self.skew)) if self.skew else "a",
            self._scalar,
        )

    def _run(self, pool: tuple[str, ...], longest: int) -> Callable[[], str]:
        return lambda: "".join(self.rng.choice(pool) for _ in range(self.rng.randint(1, longest)))

    def _class_codepoint(self) -> str:
        members = self.members[self.rng.randrange(len(self.members))]
        return chr(members[self.rng.randrange(len(members))])

    def _scalar(self) -> str:
        cp = self.rng.randrange(SCALAR_COUNT)
        return chr(cp if cp < 0xD800 else cp + 0x800)

    def _special_fragment(self) -> str:
        """A special-token string, a prefix, a suffix, an overlapping pair, a self-overlap, a near-miss, or a
        prefix of one followed by another (the seven shapes of `fuzz.strategies.special_fragments`)."""
        rng, one = self.rng, self.rng.choice(self.specials)
        cut = 1 + rng.randrange(10_001) % max(1, len(one) - 1)
        shape = rng.randrange(7)
        if shape == 0:
            return one
        if shape == 1:
            return one[:cut]
        if shape == 2:
            return one[cut:]
        if shape == 3:
            return seams._overlap(one, rng.choice(self.specials))
        if shape == 4:
            return seams._overlap(one, one)
        if shape == 5:
            j = rng.randrange(len(one))
            return one[:j] + rng.choice(NEAR_MISS_CHARS) + one[j + 1 :]
        return one[: 1 + rng.randrange(10_001) % len(one)] + rng.choice(self.specials)

    def piece(self) -> str:
        """One piece of a family drawn uniformly."""
        return self.families[self.rng.randrange(len(self.families))]()

    def text(self, min_pieces: int, max_pieces: int) -> str:
        """The concatenation of min_pieces..max_pieces pieces."""
        return "".join(self.piece() for _ in range(self.rng.randint(min_pieces, max_pieces)))

    def texts(self, n: int, min_pieces: int, max_pieces: int) -> list[str]:
        """`n` texts at once."""
        return [self.text(min_pieces, max_pieces) for _ in range(n)]

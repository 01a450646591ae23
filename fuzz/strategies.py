"""Hypothesis strategies for seams: texts built from the pieces at which cuts and repairs can go wrong.

The API is small and shared by every property module:

- `seam_pieces(tok)`: one piece, drawn from the families below (each family is a separate strategy, so
  Hypothesis shrinks within a family).
- `seam_texts(tok, min_size=0, max_size=24)`: the concatenation of `min_size..max_size` PIECES (not
  characters; a piece is 1 to about 40 code points), so a text is usually a few hundred code points at most.
- `engine_class_codepoints(cls)`: a random code point of one engine class (O, S, L, N, M from the reference's own
  regex engine, `spec.classes.class_table`), surrogates excluded.
- `special_fragments(tok)`: special-token strings, their prefixes and suffixes, overlapping pairs and near-misses.
- `FIXED_SEAMS`: the hand-picked pieces (NFC counterexamples, Hangul, CR/LF, contractions, ...), for unit tests.

Families: special-token strings and their fragments/overlaps (for `tok`), combining marks (also out of canonical
order), NFC-changing characters (U+0958, U+212B, U+2126, decomposed accents), Hangul L/V/T jamo and LV+T, CR/LF,
apostrophes and contractions, whitespace runs, digit runs, CJK/kana, emoji with ZWJ and variation selectors, code
points where Python's Unicode data disagrees with the engine (Unicode-version skew), and random code points of
every engine class. Never `st.text()` alone: plain random text almost never reaches a seam.
"""

from __future__ import annotations

from functools import lru_cache

import unicodedata2
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.classes import CLASS_NAMES, L, M, N, O, S, class_table
from hypothesis import strategies as st

# --- fixed pieces -------------------------------------------------------------------------------------------

NFC_CHANGING = (
    "\u0958",  # DEVANAGARI QA -> U+0915 U+093C (letter becomes letter + mark): the paper's counterexample
    "\u0958/",
    "\u212b",  # ANGSTROM SIGN -> U+00C5
    "\u2126",  # OHM SIGN -> U+03A9
    "e\u0301",  # decomposed e-acute composes
    "A\u030a",
    "\u0344",  # singleton decomposition of a mark
    "\u0f73",  # Tibetan composite vowel (decomposes, never recomposed)
    "\u0bc6\u0bbe",  # Tamil two-part vowel composes
    "\u09c7\u09be",  # Bengali
    "\u1b05\u1b35",  # Balinese composition
    "\u0340",  # singleton -> U+0300
    "\u2000",  # EN QUAD -> EN SPACE (whitespace singleton)
    "\uf900",  # CJK compatibility ideograph singleton
    "\U0001d15e",  # musical symbol (composition exclusion)
    "\U000113c2\U000113c2",  # Tulu-Tigalari pair composing only from Unicode 16
    "\U000113c2\U000113b8",
    "\U00011383\U000113c9",
)
MARKS = ("\u0301", "\u0335", "\u0316", "\u0334", "\u0345", "\u05b0", "\u093c", "\u0327", "\u0300", "\u20dd", "\u3099")
MARKS_OUT_OF_ORDER = ("a\u0301\u0316", "a\u0316\u0334", "e\u0301\u0327", "o\u0345\u0301", "\u0301x", "\u093c\u0301")
HANGUL = (
    "\u1100",  # L jamo
    "\u1161",  # V jamo
    "\u11a8",  # T jamo
    "\u1100\u1161",  # L+V composes to an LV syllable
    "\u1100\u1161\u11a8",  # L+V+T composes to an LVT syllable
    "\uac00",  # LV syllable
    "\uac00\u11a8",  # LV + T composes
    "\uac01\u11a8",  # LVT + T does not compose
    "\ud55c\uad6d\uc5b4",
)
CR_LF = ("\r", "\n", "\r\n", "\n\n", ".\r\n", "!\n", " \n", "\t\r", "\n ")
CONTRACTIONS = ("'", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "don't", "it's", "I'M", "''", "a'b")
WHITESPACE = (" ", "  ", "\t", "   ", "\u00a0", "\u3000", "\u2003", " \t ", "\u0085", "\u2028", "\x0b", "\x0c")
DIGITS = ("1", "12", "123", "1234", "12345", "٣٤", "１２", "Ⅻ", "½", "²")
CJK_KANA = (
    "中", "中文", "漢字テスト", "ひらがな", "カタカナ", "ー", "\u309b", "\u30fb", "\u3099", "가나다", "鿕", "𠀀",
)
EMOJI = (
    "😀", "👨\u200d👩\u200d👧", "❤\ufe0f", "👍🏽", "🏳\ufe0f\u200d🌈", "\u200d", "\ufe0f", "\u200b", "#\ufe0f\u20e3",
)
ASCII_PUNCT = (".", ",", "/", "-", "!", "?", ":", ";", "(", ")", "[", "]", "<", ">", "|", "_", "@", "#", "$", "\\")
WORDS = ("a", "A", "the", "The", "Hello", "HTTP", "camelCase", "é", "É", "über", "naïve", "Ωmega", "ß", "ǅ", "x")

FIXED_SEAMS: tuple[str, ...] = (
    NFC_CHANGING + MARKS + MARKS_OUT_OF_ORDER + HANGUL + CR_LF + CONTRACTIONS + WHITESPACE + DIGITS + CJK_KANA
    + EMOJI + ASCII_PUNCT + WORDS
)

# --- engine-class code points -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _by_class() -> dict[int, list[int]]:
    """Code points of each engine class, surrogates excluded."""
    table = class_table()
    out: dict[int, list[int]] = {c: [] for c in range(len(CLASS_NAMES))}
    for cp, cls in enumerate(table):
        if not 0xD800 <= cp < 0xE000:
            out[cls].append(cp)
    return out


MAJOR_CLASS = {"L": L, "N": N, "M": M}  # the other major categories are class O


def _python_class(cp: int) -> int:
    """The class Python's `unicodedata2` would assign (whitespace first, then the major general category)."""
    ch = chr(cp)
    if ch.isspace() and not 0x1C <= cp < 0x20:
        return S
    return MAJOR_CLASS.get(unicodedata2.category(ch)[0], O)


@lru_cache(maxsize=1)
def version_skew_codepoints() -> tuple[int, ...]:
    """Code points whose class under Python's `unicodedata2` differs from the engine's (Unicode-version skew):
    `_python_class` inlined over the code space (every fuzz process computes it; three times faster inlined)."""
    table, category, major = class_table(), unicodedata2.category, MAJOR_CLASS
    out = []
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        cls = S if ch.isspace() and not 0x1C <= cp < 0x20 else major.get(category(ch)[0], O)
        if cls != table[cp]:
            out.append(cp)
    return tuple(out)


@lru_cache(maxsize=1)
def version_skew_characters() -> st.SearchStrategy[str]:
    """One code point of `version_skew_codepoints()`, as a character: one strategy object per process, so that
    Hypothesis walks its 17,000-odd elements for the strategy's label once, not once per `seam_pieces` built (a
    property that builds its strategy inside each draw builds one per example, and per shrink step)."""
    return st.sampled_from(version_skew_codepoints()).map(chr)


def engine_class_codepoints(cls: int) -> st.SearchStrategy[str]:
    """One random code point of engine class `cls` (0..4 = O, S, L, N, M)."""
    members = _by_class()[cls]
    return st.integers(0, len(members) - 1).map(lambda i: chr(members[i]))


def any_engine_class_codepoint() -> st.SearchStrategy[str]:
    """A code point of a random engine class (each class equally likely, so S and M are not drowned by O)."""
    return st.one_of([engine_class_codepoints(c) for c in range(len(CLASS_NAMES))])


def _general_category_codepoints() -> st.SearchStrategy[str]:
    """A code point of a random general category as `unicodedata2` knows it (surrogates excluded)."""
    return st.characters(codec="utf-8")


# --- special-token fragments --------------------------------------------------------------------------------


def _overlap(left: str, right: str) -> str:
    """`left` followed by `right`, sharing the longest proper suffix/prefix overlap (both occurrences stay whole)."""
    for k in range(min(len(left), len(right)) - 1, 0, -1):
        if left.endswith(right[:k]):
            return left + right[k:]
    return left + right


def special_fragments(tok: FrozenTokenizer) -> st.SearchStrategy[str]:
    """Special-token strings of `tok`, their prefixes/suffixes, overlapping pairs, and one-character near-misses."""
    specials = list(tok.special_strings) or ["<|none|>"]
    one = st.sampled_from(specials)

    def prefix(s_i: tuple[str, int]) -> str:
        s, i = s_i
        return s[: 1 + i % max(1, len(s) - 1)]

    def suffix(s_i: tuple[str, int]) -> str:
        s, i = s_i
        return s[1 + i % max(1, len(s) - 1) :]

    def near_miss(s_i_c: tuple[str, int, str]) -> str:
        s, i, c = s_i_c
        j = i % len(s)
        return s[:j] + c + s[j + 1 :]

    def self_overlap(s: str) -> str:
        return _overlap(s, s)

    pos = st.integers(0, 10_000)
    return st.one_of(
        one,
        st.tuples(one, pos).map(prefix),
        st.tuples(one, pos).map(suffix),
        st.tuples(one, one).map(lambda p: _overlap(*p)),
        one.map(self_overlap),
        st.tuples(one, pos, st.sampled_from(["|", "<", ">", "a", " ", "\u0301"])).map(near_miss),
        st.tuples(one, one, pos).map(lambda p: p[0][: 1 + p[2] % len(p[0])] + p[1]),
    )


# --- composite ---------------------------------------------------------------------------------------------


def _runs(alphabet: tuple[str, ...], max_len: int = 6) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(alphabet), min_size=1, max_size=max_len).map("".join)


def seam_pieces(tok: FrozenTokenizer) -> st.SearchStrategy[str]:
    """One seam piece for `tok`: a special-token fragment, a fixed piece, a run, or an engine-class code point."""
    return st.one_of(
        special_fragments(tok),
        st.sampled_from(FIXED_SEAMS),
        st.sampled_from(NFC_CHANGING),
        _runs(MARKS, 4),
        st.sampled_from(MARKS_OUT_OF_ORDER),
        _runs(HANGUL, 3),
        _runs(CR_LF, 3),
        st.sampled_from(CONTRACTIONS),
        _runs(WHITESPACE, 5),
        st.text(alphabet="0123456789", min_size=1, max_size=9),
        _runs(CJK_KANA, 3),
        _runs(EMOJI, 3),
        _runs(ASCII_PUNCT, 4),
        _runs(WORDS, 3),
        any_engine_class_codepoint(),
        version_skew_characters(),
        _general_category_codepoints(),
    )


def seam_texts(tok: FrozenTokenizer, min_size: int = 0, max_size: int = 24) -> st.SearchStrategy[str]:
    """A text made of `min_size..max_size` seam pieces for `tok` (sizes count pieces, not characters)."""
    return st.lists(seam_pieces(tok), min_size=min_size, max_size=max_size).map("".join)


def texts_with_positions(tok: FrozenTokenizer, min_size: int = 1, max_size: int = 24) -> st.SearchStrategy[
    tuple[str, int]
]:
    """A seam text of at least two code points with a candidate cut offset 0 < b < len(text)."""
    return (
        seam_texts(tok, min_size=min_size, max_size=max_size)
        .filter(lambda t: len(t) >= 2)
        .flatmap(lambda t: st.tuples(st.just(t), st.integers(1, len(t) - 1)))
    )


__all__ = [
    "FIXED_SEAMS",
    "any_engine_class_codepoint",
    "engine_class_codepoints",
    "seam_pieces",
    "seam_texts",
    "special_fragments",
    "texts_with_positions",
    "version_skew_characters",
    "version_skew_codepoints",
]

"""The code points and fragments the battery draws from, every one classified by the reference itself.

Classes and general categories come from the reference's regex engine (`spec.classes`, `spec.engine_classes`),
NFC behaviour from the reference's own normalizer object; Python's `unicodedata` is consulted only to find the
Unicode-version skew (code points the engine classes as letters, digits or marks that Python's older data
leaves unassigned), which is itself a hazard. Per tokenizer, the multi-byte character pairs whose bytes the
tokenizer's BPE divides between tokens are found by encoding candidate pairs with the reference.
"""

from __future__ import annotations

import hashlib
import random
import unicodedata
from functools import cache, lru_cache

import numpy as np
from delta_suite.frozen.loader import FrozenTokenizer, byte_level_bytes
from delta_suite.spec.classes import CLASS_NAMES, L, M, N, class_table
from delta_suite.spec.engine_classes import engine_mask
from delta_suite.spec.reference import reference_encode_with_offsets
from tokenizers.normalizers import NFC

GENERAL_CATEGORIES = (
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
    "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn",
)  # fmt: skip
_REFERENCE_NFC = NFC()

# Marks with known, distinct canonical combining classes (for out-of-order mark runs).
CCC_MARKS = ("\u0301", "\u0316", "\u0334", "\u05b0", "\u0345", "\u0327", "\u031b", "\u0323", "\u0308", "\u093c")
# Hangul jamo: leading consonants (L), vowels (V), trailing consonants (T); LV syllables are U+AC00 + 28*k.
HANGUL_L = tuple(chr(c) for c in range(0x1100, 0x1113))
HANGUL_V = tuple(chr(c) for c in range(0x1161, 0x1176))
HANGUL_T = tuple(chr(c) for c in range(0x11A8, 0x11C3))
# Pairs whose NFC changes with their neighbour (composition with a following mark or vowel sign) and singletons.
CONTEXT_PAIRS = (
    ("e", "\u0301"), ("A", "\u030a"), ("o", "\u0308"), ("n", "\u0303"), ("c", "\u0327"), ("\u0b47", "\u0b3e"),
    ("\u09c7", "\u09be"), ("\u0cc6", "\u0cd5"), ("\u1b05", "\u1b35"), ("\u0928", "\u093c"), ("\u05e9", "\u05c1"),
    ("\u3046", "\u3099"), ("\u30cf", "\u309a"), ("\u0627", "\u0653"), ("\u0bc6", "\u0bbe"), ("\u0d46", "\u0d3e"),
)  # fmt: skip
SINGLETONS = ("\u2126", "\u212a", "\u212b", "\u0340", "\u0341", "\u0343", "\u0344", "\u0374", "\u037e", "\u0387",
              "\u1fee", "\u1fef", "\u2000", "\u2001", "\uf900", "\u0f73", "\u0f75", "\u0f81")  # fmt: skip
# The CJK split of the DeepSeek pattern: \u4e00-\u9fa5, hiragana \u3040-\u309f, katakana \u30a0-\u30ff; the ranges
# hold marks (U+3099, U+309A) and other-class characters (U+309B, U+309C, U+30A0, U+30FB).
CJK_IN_RANGE_ODD = ("\u3099", "\u309a", "\u309b", "\u309c", "\u30a0", "\u30fb", "\u30fc")
EMOJI = ("\U0001f600", "\U0001f468", "\U0001f469", "\U0001f467", "\U0001f466", "\u2764", "\U0001f44d", "\U0001f3f3",
         "\U0001f308", "\u263a", "\U0001f1fa", "\U0001f1f8", "\U0001f9d1", "\U0001f4bb", "\u2695")  # fmt: skip
EMOJI_JOINERS = ("\u200d", "\ufe0f", "\ufe0e", "\U0001f3fb", "\U0001f3fd", "\U0001f3ff", "\u20e3")
APOSTROPHE_SUFFIXES = ("s", "t", "re", "ve", "m", "ll", "d", "S", "T", "RE", "VE", "M", "LL", "D", "\u017f", "x", "")
WHITESPACE = (" ", "  ", "   ", "\t", " \t", "\u00a0", "\u3000", "\u2009", "\u200a", "\u202f", "\u205f", "\u1680",
              "\u2028", "\u0085", "\x0b", "\x0c")  # fmt: skip
WORDS = ("the", "of", "and", "to", "in", "is", "tokenizer", "cut", "repair", "window", "seam", "value", "Hello",
         "World", "naïve", "café", "über", "straße", "данные", "λόγος", "中文", "日本語", "한국어", "عربى", "हिन्दी",
         "x", "I", "def", "return", "None", "if", "else", "for", "while", "JSON", "HTTP", "URL", "id",
         "ok")  # fmt: skip
PUNCT = (".", ",", ";", ":", "!", "?", "(", ")", "[", "]", "{", "}", "\"", "'", "-", "--", "...", "/", "\\", "#", "$",
         "%", "&", "*", "+", "=", "<", ">", "@", "^", "_", "`", "|", "~", "»", "«", "—", "…", "·", "、",
         "。")  # fmt: skip


def derived_seed(*parts: object) -> int:
    """A 64-bit seed from its parts through SHA-256 (never Python's salted hash())."""
    digest = hashlib.sha256("\0".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def _members(mask: bytes) -> tuple[int, ...]:
    """The positions of the 1 bytes of `mask`, ascending."""
    return tuple(np.flatnonzero(np.frombuffer(mask, np.uint8) == 1).tolist())


@cache
def category_pool(category: str) -> tuple[int, ...]:
    """Code points of one general category as the reference's regex engine decides it (\\p{category})."""
    return _members(engine_mask(rf"\p{{{category}}}"))


@cache
def class_pool(cls: int) -> tuple[int, ...]:
    """Code points of one class (O, S, L, N, M) of the engine-derived class table; O restricted to assigned ones."""
    table = class_table()
    if cls != 0:
        return _members(table.translate(bytes(1 if v == cls else 0 for v in range(256))))
    # O: drop unassigned and private-use code points, which dominate the class by count
    classes = np.frombuffer(table, np.uint8)
    unassigned = np.frombuffer(engine_mask(r"\p{Cn}"), np.uint8)[: len(classes)]
    private = np.frombuffer(engine_mask(r"\p{Co}"), np.uint8)[: len(classes)]
    kept = (classes == 0) & (unassigned == 0) & (private == 0)
    kept[0xD800:0xE000] = False
    return tuple(np.flatnonzero(kept).tolist())


@lru_cache(maxsize=1)
def unicode_skew_pool() -> tuple[int, ...]:
    """Code points the engine classes as L, N or M that Python's own `unicodedata` leaves unassigned (Cn).

    A class table built from Python's data calls them O; the battery needs them to catch exactly that table.
    """
    table = class_table()
    return tuple(
        cp for cls in (L, N, M) for cp in class_pool(cls) if unicodedata.category(chr(cp)) == "Cn" and table[cp] == cls
    )


@lru_cache(maxsize=1)
def nfc_changers() -> tuple[tuple[int, str], ...]:
    """Every code point whose reference NFC differs from itself, with its NFC (scanned over all scalar values)."""
    cps = [c for c in range(1, 0x110000) if not 0xD800 <= c < 0xE000]
    out = []
    for i in range(0, len(cps), 20000):
        chunk = cps[i : i + 20000]
        parts = _REFERENCE_NFC.normalize_str("\x00".join(map(chr, chunk))).split("\x00")
        if len(parts) != len(chunk):  # a normalization that moved a separator; fall back to one at a time
            parts = [_REFERENCE_NFC.normalize_str(chr(c)) for c in chunk]
        out.extend((c, x) for c, x in zip(chunk, parts, strict=True) if x != chr(c))
    return tuple(out)


@lru_cache(maxsize=1)
def nfc_class_changers() -> tuple[str, ...]:
    """Characters whose NFC ends in a character of another class (U+0958 -> U+0915 U+093C: letter -> mark)."""
    table = class_table()
    return tuple(chr(c) for c, x in nfc_changers() if table[ord(x[-1])] != table[c])


def class_names_of(text: str) -> str:
    """The engine classes of `text` as letters (for debugging and reports)."""
    table = class_table()
    return "".join(CLASS_NAMES[table[ord(ch)]] for ch in text)


@lru_cache(maxsize=16)
def divided_pairs(tok: FrozenTokenizer, limit: int = 96) -> tuple[str, ...]:
    """Short strings c1 + rest of multi-byte characters whose bytes the tokenizer's BPE divides after c1.

    Candidates come from the vocabulary: a token whose bytes begin with UTF-8 continuation bytes followed by whole
    characters (`rest`) can only occur after a character c1 ending in those bytes; c1 is taken among the
    characters that are one token alone. Each c1 + rest is encoded with the reference and kept when some token
    holds bytes of both c1 and rest (the LoPT failure: alone and in context, c1's bytes are split differently
    under one character span).
    """
    rng = random.Random(derived_seed("divided-pairs", tok.name, tok.sha256))
    vocab = sorted(tok.tokenizer.get_vocab(with_added_tokens=False))
    raw_tokens = [raw for t in vocab if t and (raw := byte_level_bytes(t)) is not None]
    singles: dict[bytes, list[str]] = {}
    for raw in raw_tokens:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(text) == 1 and len(raw) > 1:
            for k in (1, 2):
                if len(raw) > k:
                    singles.setdefault(raw[-k:], []).append(text)
    candidates: list[str] = []
    for raw in raw_tokens:
        k = 0
        while k < len(raw) and 0x80 <= raw[k] < 0xC0:
            k += 1
        if k not in (1, 2) or k == len(raw) or raw[:k] not in singles:
            continue
        try:
            rest = raw[k:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        firsts = singles[raw[:k]]
        candidates.extend(firsts[rng.randrange(len(firsts))] + rest for _ in range(2))
    rng.shuffle(candidates)
    found: list[str] = []
    for pair in candidates[: limit * 20]:
        _, offs = reference_encode_with_offsets(tok, pair)
        if any(s < 1 < e for s, e in offs):
            found.append(pair)
            if len(found) >= limit:
                break
    return tuple(found)


def pick(rng: random.Random, pool: tuple[int, ...]) -> str:
    """One character of a code-point pool."""
    return chr(pool[rng.randrange(len(pool))])

"""Per-script character counts of text, and the script group a document belongs to.

A script is the Unicode Script property as the `regex` module knows it (Kana = Hiragana + Katakana;
"Indic" scripts other than Devanagari, Bengali and Tamil are counted together). Spaces, digits and
punctuation are "Common", combining marks shared across scripts are "Inherited". Counting is a table lookup
over the text's code points (numpy), built once per process from `regex`'s own Script classes.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import numpy as np
import regex

# (name, regex class body); the order is the table's value order, "Other" is everything not listed.
SCRIPTS: tuple[tuple[str, str], ...] = (
    ("Common", r"\p{Script=Common}"),
    ("Inherited", r"\p{Script=Inherited}"),
    ("Latin", r"\p{Script=Latin}"),
    ("Cyrillic", r"\p{Script=Cyrillic}"),
    ("Greek", r"\p{Script=Greek}"),
    ("Arabic", r"\p{Script=Arabic}"),
    ("Hebrew", r"\p{Script=Hebrew}"),
    ("Devanagari", r"\p{Script=Devanagari}"),
    ("Bengali", r"\p{Script=Bengali}"),
    ("Tamil", r"\p{Script=Tamil}"),
    (
        "OtherIndic",
        r"\p{Script=Gujarati}\p{Script=Gurmukhi}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Telugu}"
        r"\p{Script=Oriya}\p{Script=Sinhala}",
    ),
    ("Thai", r"\p{Script=Thai}"),
    ("Han", r"\p{Script=Han}"),
    ("Kana", r"\p{Script=Hiragana}\p{Script=Katakana}"),
    ("Hangul", r"\p{Script=Hangul}"),
    ("Other", ""),
)
NAMES: tuple[str, ...] = tuple(name for name, _ in SCRIPTS)
_OTHER = NAMES.index("Other")

# Which script group a document of a given dominant script lands in (one shard per group in the small profile).
GROUP_OF_SCRIPT = {
    "Latin": "latin",
    "Cyrillic": "cyrillic",
    "Greek": "greek",
    "Arabic": "arabic",
    "Hebrew": "hebrew",
    "Devanagari": "indic",
    "Bengali": "indic",
    "Tamil": "indic",
    "OtherIndic": "indic",
    "Thai": "thai",
    "Han": "cjk",
    "Kana": "cjk",
    "Hangul": "cjk",
    "Other": "other-scripts",
}


@lru_cache(maxsize=1)
def script_table() -> np.ndarray:
    """One uint8 per code point (0..0x10FFFF): the index into NAMES of its script."""
    table = np.full(0x110000, _OTHER, dtype=np.uint8)
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for index, (_name, body) in enumerate(SCRIPTS):
        if not body:
            continue
        for m in regex.finditer(f"[{body}]+", everything):
            for ch in m.group():
                table[ord(ch)] = index
    return table


def script_counts(texts: Iterable[str]) -> dict[str, int]:
    """Characters per script over `texts` (only scripts that occur); the counts sum to the total length."""
    table = script_table()
    total = np.zeros(len(NAMES), dtype=np.int64)
    for text in texts:
        if not text:
            continue
        points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        total += np.bincount(table[points], minlength=len(NAMES))
    return {NAMES[i]: int(n) for i, n in enumerate(total) if n}


def dominant_group(counts: dict[str, int]) -> str:
    """The script group of the most frequent non-Common, non-Inherited script ("latin" if there is none)."""
    letters = {k: v for k, v in counts.items() if k not in ("Common", "Inherited")}
    if not letters:
        return "latin"
    best = max(sorted(letters), key=lambda k: letters[k])
    return GROUP_OF_SCRIPT[best]

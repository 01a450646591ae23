"""Hypothesis strategies for repair: an old text S and a delta D with hazards exactly where repair is fragile.

The hazards sit at the window start ws = len(S) - W and at ws + margin for a drawn window width W (one of the
widths the repair tries), each straddling the position at a drawn offset, and across the S|D junction: D starting
with a combining mark, a Hangul vowel or trailing jamo, the rest of a special-token string whose head ends S, a
digit continuing a digit run, whitespace continuing a whitespace run, LF after a CR, an apostrophe after a
letter, and the fastokens case (a newline and spaces, then a newline and spaces). Filler between hazards comes
from the shared seam strategy (fuzz/strategies.py) mixed with prose, so windows hold real merges. The seam
strategies are built once per tokenizer (properties/strategy_cache.py), not inside every draw.
"""

from __future__ import annotations

from dataclasses import dataclass

from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.fuzz.strategies import FIXED_SEAMS
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS
from hypothesis import strategies as st

from properties.strategy_cache import seam_pieces, seam_texts, special_fragments

PROSE = (
    "The committee reviewed the proposal and agreed to revisit it next quarter. ",
    "def encode(self, text):\n    return [t.id for t in self.model(text)]\n",
    "Die Ergebnisse wurden am 12. März 2024 veröffentlicht. ",
    "東京都は今日、新しい計画を発表しました。",
    "서울의 날씨는 오늘 맑고 따뜻합니다. ",
    "Le café coûte 3,50 € ; c'est raisonnable. ",
    "Значение 12345 превышает предел.\r\n",
    "    if (x > 0) {\n        y += x;\n    }\n",
)

# (end of S, start of D): each pair puts one junction hazard across S|D
JUNCTIONS: tuple[tuple[str, str], ...] = (
    ("cafe", "\u0301 au lait"),  # combining mark composes with the last letter of S (NFC)
    ("a", "\u0316\u0301"),  # marks out of canonical order
    ("\u1100", "\u1161\u11a8 bar"),  # Hangul L | V T: composes to one syllable
    ("\uac00", "\u11a8"),  # Hangul LV | T
    ("total 12345", "6789 items"),  # a digit continuing a digit run (grouping by three counts from the run start)
    ("x = 7", "7"),
    ("value\n   ", "   \n  next"),  # whitespace continuing a whitespace run
    ("prev_host_state\n      ", "\n              return x\n"),  # the fastokens case
    ("end of line\r", "\nnext line"),  # CRLF split as CR | LF
    ("don", "'t stop"),  # apostrophe after a letter
    ("it", "'s fine"),
    ("word", "continues"),  # a letter run continuing
    ("…!", "?!"),  # a punctuation run continuing
)


@dataclass(frozen=True)
class RepairCase:
    """S, D, and where the hazards were placed (for failure messages)."""

    old: str
    delta: str
    width: int
    notes: str


def _filler(draw, tok: FrozenTokenizer, length: int) -> str:
    """Text of exactly `length` code points: seam pieces and prose, cycled."""
    if length <= 0:
        return ""
    parts = draw(st.lists(st.one_of(seam_pieces(tok), st.sampled_from(PROSE)), min_size=1, max_size=12))
    base = "".join(parts) or "x"
    return (base * (length // len(base) + 1))[:length]


def _hazard(tok: FrozenTokenizer) -> st.SearchStrategy[str]:
    return st.one_of(special_fragments(tok), st.sampled_from(FIXED_SEAMS), seam_pieces(tok))


def _place(draw, text: str, pos: int, hazard: str) -> str:
    """`text` with `hazard` written over it so that it straddles `pos` at a drawn offset (length kept)."""
    if not hazard or pos <= 0 or pos >= len(text):
        return text
    offset = draw(st.integers(0, len(hazard)))
    start = max(0, min(pos - offset, len(text) - len(hazard)))
    return text[:start] + hazard + text[start + len(hazard) :]


def _junction(draw, tok: FrozenTokenizer) -> tuple[str, str, str]:
    """(end of S, start of D, label): a fixed junction or a special-token string split between S and D."""
    specials = [s for s in tok.special_strings if len(s) >= 2][:64] or ["<|none|>"]
    split_special = st.sampled_from(specials).flatmap(
        lambda s: st.integers(1, len(s) - 1).map(lambda i: (s[:i], s[i:], "special-split"))
    )
    fixed = st.sampled_from(JUNCTIONS).map(lambda p: (p[0], p[1], "fixed"))
    return draw(st.one_of(fixed, split_special))


@st.composite
def repair_cases(draw, tok: FrozenTokenizer, max_doubling: int = 1) -> RepairCase:
    """S and D for `tok`: len(S) is a window width plus a little, hazards at ws, ws + margin and S|D."""
    width = DEFAULT_REPAIR_PARAMS.first_window << draw(st.integers(0, max_doubling))
    head = draw(st.integers(1, 300))
    left, right, label = _junction(draw, tok)
    old = _filler(draw, tok, head + width - len(left)) + left
    ws = len(old) - width
    old = _place(draw, old, ws, draw(_hazard(tok)))
    old = _place(draw, old, ws + tok.margin, draw(_hazard(tok)))
    old = old[: len(old) - len(left)] + left  # keep the junction's left half at the very end
    delta = right + draw(seam_texts(tok, max_size=4))
    return RepairCase(old, delta, width, f"W={width} ws={ws} junction={label}:{left!r}|{right!r}")

"""The special-token guard: a cut never falls strictly inside any occurrence of a special-token string.

Condition 1 of the cut proposition. The literals are every added-token string of the loaded configuration
(`FrozenTokenizer.special_strings`). An occurrence is any (start, end) with text[start:end] equal to a literal:
every occurrence, including overlapping ones that the reference's leftmost-longest scan would not select. A cut
at b is refused iff start < b < end for some occurrence; a cut exactly at an occurrence's edge is allowed.

The "selected" variant (leftmost-longest non-overlapping occurrences only, what the whole-text scan keeps) and
"off" exist only as broken variants for the controls.
"""

from __future__ import annotations

import re
from functools import lru_cache

from delta_suite.frozen.loader import FrozenTokenizer

_END = ""  # trie key marking the end of a literal (never a character)


class LiteralTrie:
    """A character trie over the special-token literals: finds every occurrence starting at a position."""

    def __init__(self, literals: tuple[str, ...]) -> None:
        self.root: dict = {}
        self.longest = max((len(s) for s in literals), default=0)
        for lit in literals:
            if not lit:
                continue
            node = self.root
            for ch in lit:
                node = node.setdefault(ch, {})
            node[_END] = len(lit)
        # any first character of a literal (None: no literals): the scans below visit only the positions where
        # an occurrence can start, the positions whose character is a key of the root
        firsts = "".join(re.escape(ch) for ch in sorted(self.root))
        self.starts: re.Pattern | None = re.compile(f"[{firsts}]") if firsts else None

    def lengths_at(self, text: str, start: int) -> list[int]:
        """Lengths of every literal occurring at `start` (shortest first)."""
        out = []
        node = self.root
        i = start
        n = len(text)
        while i < n:
            node = node.get(text[i])
            if node is None:
                break
            i += 1
            if _END in node:
                out.append(node[_END])
        return out

    def occurrences(self, text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
        """Every occurrence (start, end), overlapping ones included, that intersects [lo, hi) of `text`."""
        hi = len(text) if hi is None else hi
        first = max(0, lo - self.longest + 1)
        out: list[tuple[int, int]] = []
        if self.starts is None:
            return out
        end = min(hi, len(text))
        match = self.starts.search(text, first, end)  # the starts in [first, end), one after the other
        while match is not None:
            start = match.start()
            for length in self.lengths_at(text, start):
                if start + length > lo:
                    out.append((start, start + length))
            match = self.starts.search(text, start + 1, end)
        return out

    def selected(self, text: str) -> list[tuple[int, int]]:
        """The leftmost-longest non-overlapping occurrences of a left-to-right scan of the whole text."""
        out: list[tuple[int, int]] = []
        i = 0
        while self.starts is not None and (match := self.starts.search(text, i)) is not None:
            i = match.start()  # the next position where an occurrence can start
            lengths = self.lengths_at(text, i)
            if lengths:
                out.append((i, i + lengths[-1]))
                i += lengths[-1]
            else:
                i += 1
        return out


@lru_cache(maxsize=64)
def literal_trie(tok: FrozenTokenizer) -> LiteralTrie:
    """The trie of `tok`'s special-token strings (memoized per loaded tokenizer)."""
    return LiteralTrie(tok.special_strings)


@lru_cache(maxsize=16)
def selected_in(trie: LiteralTrie, text: str) -> tuple[tuple[int, int], ...]:
    """`trie.selected(text)`, memoized per text: the guard mode "selected" asks for the whole text's selection
    at every offset of the same text."""
    return tuple(trie.selected(text))


GUARD_MODES = ("all", "selected", "off")


def occurrences_near(tok: FrozenTokenizer, text: str, lo: int, hi: int, mode: str = "all") -> list[tuple[int, int]]:
    """The occurrences the guard mode considers that intersect [lo, hi): all, the selected ones, or none."""
    if mode == "off":
        return []
    trie = literal_trie(tok)
    if mode == "all":
        return trie.occurrences(text, lo, hi)
    if mode == "selected":
        return [(s, e) for s, e in selected_in(trie, text) if s < hi and e > lo]
    raise ValueError(f"unknown guard mode {mode!r}; expected one of {GUARD_MODES}")


def cut_inside_special(tok: FrozenTokenizer, text: str, b: int, mode: str = "all") -> tuple[int, int] | None:
    """Condition 1: the first occurrence with start < b < end (the refusing occurrence), or None if b is clear."""
    for start, end in occurrences_near(tok, text, b, b + 1, mode):
        if start < b < end:
            return (start, end)
    return None


def special_touches(tok: FrozenTokenizer, text: str, lo: int, hi: int, mode: str = "all") -> tuple[int, int] | None:
    """An occurrence that intersects text[lo:hi] (used for the NFC window), or None."""
    for start, end in occurrences_near(tok, text, lo, hi, mode):
        if start < hi and end > lo:
            return (start, end)
    return None

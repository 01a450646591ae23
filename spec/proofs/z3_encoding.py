"""The split-pattern AST as z3 regular expressions over the abstract alphabet (one z3 character per symbol).

Two readings of a lookahead: `over` replaces it by the empty word (every string the engine can match is in
the language: a sound over-approximation), `under` replaces it by the empty language (every string in the
language is matched whatever follows: a sound under-approximation). Each atom becomes the union of the blocks
inside it, which is exact because the alphabet partitions code points by membership in every atom.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from delta_suite.spec.proofs.alphabet import Alphabet
from delta_suite.spec.proofs.lazy_z3 import z3
from delta_suite.spec.proofs.regex import Alt, Cat, Look, Node, Rep, Sym

SYMBOL_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # ascending; ranges only within a run


@cache
def re_sort() -> z3.ReSortRef:
    """The sort of regular expressions over strings (built on first use: z3 is imported lazily)."""
    return z3.ReSort(z3.StringSort())


class Encoder:
    """Regex builders for one alphabet."""

    def __init__(self, alphabet: Alphabet) -> None:
        if len(alphabet) > len(SYMBOL_CHARS):
            raise ValueError(f"alphabet of {len(alphabet)} symbols exceeds the {len(SYMBOL_CHARS)} z3 characters")
        self.alphabet = alphabet
        self.chars = SYMBOL_CHARS[: len(alphabet)]

    def symbols(self, symbols: Iterable[int]) -> z3.ReRef:
        """One character from the given symbol set (the empty language for an empty set)."""
        members = sorted(set(symbols))
        if not members:
            return z3.Empty(re_sort())
        runs: list[list[int]] = []
        for s in members:
            # a run continues only where the characters are adjacent code points: "9" and "A" are consecutive
            # symbols but not consecutive characters, and Range("9", "A") would admit ":" to "@" as well
            if runs and runs[-1][1] == s - 1 and ord(self.chars[s]) == ord(self.chars[s - 1]) + 1:
                runs[-1][1] = s
            else:
                runs.append([s, s])
        res = [z3.Range(self.chars[lo], self.chars[hi]) for lo, hi in runs]
        return res[0] if len(res) == 1 else z3.Union(*res)

    def any_string(self) -> z3.ReRef:
        return z3.Star(self.symbols(range(len(self.alphabet))))

    def epsilon(self) -> z3.ReRef:
        return z3.Re(z3.StringVal(""))

    def concat(self, parts: list[z3.ReRef]) -> z3.ReRef:
        if not parts:
            return self.epsilon()
        return parts[0] if len(parts) == 1 else z3.Concat(*parts)

    def regex(self, node: Node, mode: str) -> z3.ReRef:
        """The language of `node`; mode "over" reads lookaheads as the empty word, "under" as the empty language."""
        if isinstance(node, Sym):
            return self.symbols(self.alphabet.symbols_of(node.atom))
        if isinstance(node, Cat):
            return self.concat([self.regex(n, mode) for n in node.items])
        if isinstance(node, Alt):
            return z3.Union(*[self.regex(n, mode) for n in node.items])
        if isinstance(node, Rep):
            inner = self.regex(node.item, mode)
            if node.hi is None:
                if node.lo == 0:
                    return z3.Star(inner)
                if node.lo == 1:
                    return z3.Plus(inner)
                return z3.Concat(z3.Loop(inner, node.lo, node.lo), z3.Star(inner))
            if (node.lo, node.hi) == (0, 1):
                return z3.Option(inner)
            return z3.Loop(inner, node.lo, node.hi)
        if isinstance(node, Look):
            return self.epsilon() if mode == "over" else z3.Empty(re_sort())
        raise TypeError(node)

    def before(self, node: Node, look: Look) -> z3.ReRef | None:
        """Over-approximation of what a match consumes from its start until it evaluates `look` (None: not inside)."""
        if node is look:
            return self.epsilon()
        if isinstance(node, Cat):
            for i, item in enumerate(node.items):
                inner = self.before(item, look)
                if inner is not None:
                    return self.concat([*(self.regex(n, "over") for n in node.items[:i]), inner])
            return None
        if isinstance(node, Alt):
            for item in node.items:
                inner = self.before(item, look)
                if inner is not None:
                    return inner
            return None
        if isinstance(node, Rep):
            inner = self.before(node.item, look)
            if inner is None:
                return None
            return z3.Concat(z3.Star(self.regex(node.item, "over")), inner)
        if isinstance(node, Look):
            return self.before(node.item, look)
        return None

    def decode(self, value: z3.SeqRef) -> tuple[int, ...]:
        """A z3 string model as the tuple of abstract symbols."""
        return tuple(self.chars.index(c) for c in value.as_string())

"""The shared seam strategies (`fuzz.strategies`), built once per tokenizer object in a test process.

Building `seam_pieces(tok)` makes new `sampled_from` strategies over long lists (the tokenizer's special strings,
the version-skew code points), and Hypothesis computes a strategy's label on its first draw by walking those lists.
A composite strategy that calls the builder inside every draw pays that walk on every draw: hundreds of times while
a failing example shrinks. The strategies here are the very objects `fuzz.strategies` builds, kept per tokenizer
object (weakly) and per size bounds, so their labels are computed once; what they draw is unchanged.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.fuzz import strategies as fuzz_strategies
from hypothesis import strategies as st

_BUILT: weakref.WeakKeyDictionary[FrozenTokenizer, dict[tuple, st.SearchStrategy[str]]] = (
    weakref.WeakKeyDictionary()
)


def _once(tok: FrozenTokenizer, key: tuple, build: Callable[[], st.SearchStrategy[str]]) -> st.SearchStrategy[str]:
    """The strategy `build()` made for `tok` under `key`, made on the first call only."""
    built = _BUILT.setdefault(tok, {})
    if key not in built:
        built[key] = build()
    return built[key]


def seam_pieces(tok: FrozenTokenizer) -> st.SearchStrategy[str]:
    """`fuzz.strategies.seam_pieces(tok)`, built once per tokenizer object."""
    return _once(tok, ("seam_pieces",), lambda: fuzz_strategies.seam_pieces(tok))


def seam_texts(tok: FrozenTokenizer, min_size: int = 0, max_size: int = 24) -> st.SearchStrategy[str]:
    """`fuzz.strategies.seam_texts(tok, min_size, max_size)`, built once per tokenizer object and size bounds."""
    return _once(tok, ("seam_texts", min_size, max_size),
                 lambda: fuzz_strategies.seam_texts(tok, min_size=min_size, max_size=max_size))


def special_fragments(tok: FrozenTokenizer) -> st.SearchStrategy[str]:
    """`fuzz.strategies.special_fragments(tok)`, built once per tokenizer object."""
    return _once(tok, ("special_fragments",), lambda: fuzz_strategies.special_fragments(tok))

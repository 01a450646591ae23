"""Real-text corpora: sources, building, readers, built-in samples, and sharded whole-corpus comparisons.

`load_tokenizer`, `load_tokenizer_file` and `FrozenTokenizer` live on the ground floor (`frozen`); they are
re-exported here because `from delta_suite.corpora import load_tokenizer` is public API.
"""

from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, load_tokenizer_file

__all__ = ["FrozenTokenizer", "load_tokenizer", "load_tokenizer_file"]

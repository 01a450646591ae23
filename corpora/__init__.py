"""The frozen tokenizers (registry, provisioning, loading) and the real-text corpora."""

from corpora.loader import FrozenTokenizer, load_tokenizer, load_tokenizer_file

__all__ = ["FrozenTokenizer", "load_tokenizer", "load_tokenizer_file"]

"""The ground floor: the eleven frozen tokenizers (registry, digests, cache, provisioning, loading) and the errors
every command reports. It imports nothing of the project above it; `spec/` and everything else build on it.

Public names: `load_tokenizer`, `load_tokenizer_file`, `FrozenTokenizer` (also re-exported by `corpora`).
"""

from frozen.loader import FrozenTokenizer, load_tokenizer, load_tokenizer_file

__all__ = ["FrozenTokenizer", "load_tokenizer", "load_tokenizer_file"]

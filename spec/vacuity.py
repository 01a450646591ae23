"""Vacuous tokenizers: files whose encodes carry no evidence, refused at admission (`vacuous_tokenizer`).

A file whose vocabulary is empty, or that encodes every built-in sample text to no IDs or to the unknown token
only, would "pass" every check that compares its IDs with the reference's: empty against empty, or one unknown ID
against another. Such a comparison is not evidence that a cut or a repair is exact, so the file is refused (exit 2
from the commands), never admitted to pass vacuously. An empty vocabulary is named before every premise but the
model's type: it is the first real cause (such a file also lacks byte tokens, but adding them would not make it a
tokenizer); samples encoded to nothing refuse a file the premises would otherwise admit (a pre-tokenizer that
removes every character is refused by its own premise first).

`PROBE_TEXTS` are the built-in samples: `corpora.samples.SAMPLES` is this very tuple (the corpora floor reads it
from here, since this floor may not import that one). Registry rows are never probed (their files are pinned by
digest, and building their reference object only to admit them would cost up to 0.4 s each).
"""

from __future__ import annotations

from tokenizers import Tokenizer

VACUOUS = "vacuous_tokenizer"
EMPTY_VOCABULARY = f"{VACUOUS}:empty vocabulary"
ENCODE_FAILS = "reference_encode_fails"
PROBE_TEXTS: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog. It's 2026; we've shipped 1,234,567 tokens!\r\n",
    "def encode(self, text: str) -> list[int]:\n    return [ord(c) for c in text]  # TODO\n\n\n",
    "Café, naïve, coöperate; déjà vu — “quoted” text… and e\u0301 decomposed, \u0958/ and \u1100\u1161\u11a8.",
    "Привет, мир! Καλημέρα κόσμε. مرحبا بالعالم. שלום עולם. नमस्ते दुनिया. สวัสดีชาวโลก.",
    "中文文本测试，日本語のテキスト、カタカナとひらがな。한국어 텍스트 테스트입니다.",
    "emoji 👩\u200d👩\u200d👧\u200d👦 and ❤\ufe0f and flags 🇺🇳; tabs\t\tand   spaces   \n   \n",
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n",
    "numbers 3.14159 and 1000000 and ٣٤٥ and ⅫIV and 12345678901234567890",
)


def named_first(reason: str) -> bool:
    """Whether a refusal of `vacuity` is named before the premises (an empty vocabulary, a reference that cannot
    encode the samples) rather than only for a file they would admit."""
    return reason == EMPTY_VOCABULARY or reason.startswith(f"{ENCODE_FAILS}:")


def vacuous_model(model: dict) -> str | None:
    """The refusal of a model section whose vocabulary and merges are both present and empty, else None."""
    if "vocab" in model and not model.get("vocab") and not model.get("merges"):
        return f"{VACUOUS}:empty vocabulary and merges"
    return None


def vacuity(tokenizer: Tokenizer) -> str | None:
    """The refusal (`VACUOUS:why`) of a loaded reference object whose model has no vocabulary, or that encodes every
    probe text (without special tokens) to no IDs, or to the unknown token's ID only; `ENCODE_FAILS:error` when the
    reference cannot encode them at all; None for a tokenizer whose encodes are evidence."""
    if tokenizer.get_vocab_size(with_added_tokens=False) == 0:
        return EMPTY_VOCABULARY
    try:
        encodings = tokenizer.encode_batch(list(PROBE_TEXTS), add_special_tokens=False)
    except Exception as exc:  # the Rust library raises a bare Exception (an unknown token missing from the vocabulary)
        return f"{ENCODE_FAILS}:{exc}"
    ids = {i for enc in encodings for i in enc.ids}
    if not ids:
        return f"{VACUOUS}:the built-in samples encode to no IDs"
    unk = getattr(tokenizer.model, "unk_token", None)
    if isinstance(unk, str) and ids == {tokenizer.token_to_id(unk)}:
        return f"{VACUOUS}:the built-in samples encode to the unknown token only"
    return None

"""Built-in sample texts: short, real-looking text in several scripts, with the seams the suite cares about."""

from __future__ import annotations

SAMPLES: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog. It's 2026; we've shipped 1,234,567 tokens!\r\n",
    "def encode(self, text: str) -> list[int]:\n    return [ord(c) for c in text]  # TODO\n\n\n",
    "Café, naïve, coöperate; déjà vu — “quoted” text… and e\u0301 decomposed, \u0958/ and \u1100\u1161\u11a8.",
    "Привет, мир! Καλημέρα κόσμε. مرحبا بالعالم. שלום עולם. नमस्ते दुनिया. สวัสดีชาวโลก.",
    "中文文本测试，日本語のテキスト、カタカナとひらがな。한국어 텍스트 테스트입니다.",
    "emoji 👩\u200d👩\u200d👧\u200d👦 and ❤\ufe0f and flags 🇺🇳; tabs\t\tand   spaces   \n   \n",
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n",
    "numbers 3.14159 and 1000000 and ٣٤٥ and ⅫIV and 12345678901234567890",
)

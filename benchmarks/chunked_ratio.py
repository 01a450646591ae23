"""Speed of encode_chunked against one serial reference encode on a 1,000,000-character text (ratio, median of 5).

Usage: DELTA_HOME=... python benchmarks/chunked_ratio.py [tokenizer] [workers]. Prints the serial and chunked
medians, the ratio serial/chunked, and checks that both give the same IDs. A ratio, measured in one run; never
asserted in a test.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from corpora.loader import load_tokenizer
from delta.cuts import default_chunks, encode_chunked, plan_cuts
from spec.reference import reference_encode

PARAGRAPH = (
    "The quick brown fox jumps over the lazy dog. Numbers like 1234567 and 3.14159 appear, "
    "as do contractions (don't, it's) and punctuation!\n"
    "Ünïcödé wörds, 中文文本, カタカナ, and 한국어 texts sit beside emoji 👍🏽 and tabs\t.\n\n"
)
CHARS = 1_000_000
REPEATS = 5


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "qwen3_8b"
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    tok = load_tokenizer(name)
    text = (PARAGRAPH * (CHARS // len(PARAGRAPH) + 1))[:CHARS]
    k = default_chunks(len(text), workers)
    cuts = plan_cuts(tok, text, k)
    same = encode_chunked(tok, text, workers=workers) == reference_encode(tok, text)
    serial = [timed(lambda: reference_encode(tok, text)) for _ in range(REPEATS)]
    chunked = [timed(lambda: encode_chunked(tok, text, workers=workers)) for _ in range(REPEATS)]
    s, c = statistics.median(serial), statistics.median(chunked)
    print(f"tokenizer={name} chars={len(text)} workers={workers} chunks={k} cuts={cuts} identical={same}")
    print(f"serial median {s:.3f}s  chunked median {c:.3f}s  speedup serial/chunked {s / c:.2f}x  "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()

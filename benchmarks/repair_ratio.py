"""Speed of a session repair against a whole reference encode: a 400-character append to a 1,000,000-character text.

Usage: DELTA_HOME=... python benchmarks/repair_ratio.py [tokenizer]   (default qwen3_8b)

For each of 5 rounds, with a distinct 400-character append each round: a Session is initialized on the old text
(untimed), then `Session.encode(old + append)` (the repair) and `reference_encode(old + append)` (the whole
encode) are timed back to back, interleaved, each after a `gc.collect()` (so a collection triggered by the
untimed initialization's allocations is not billed to either). Prints both medians, their ratio, the path each
repair took, and whether every repaired result equals the reference. A ratio measured in one run; never
asserted in a test.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

from corpora.loader import load_tokenizer
from delta.chat_samples import CHATS
from delta.session import Session
from spec.reference import reference_encode

CHARS = 1_000_000
APPEND = 400
ROUNDS = 5


def session_text(chars: int) -> str:
    """A long transcript-like text: the sample chats' messages in turn, each tagged with its round number."""
    parts, total, n = [], 0, 0
    messages = [m["content"] for chat in CHATS.values() for m in chat]
    while total < chars:
        piece = f"\n\n### turn {n}\n" + messages[n % len(messages)]
        parts.append(piece)
        total += len(piece)
        n += 1
    return "".join(parts)[:chars]


def append_text(round_index: int) -> str:
    """A distinct 400-character append per round (so no round re-encodes the same delta)."""
    body = f"\nUser follow-up {round_index}: please re-check the figures for week {round_index + 17} and report. "
    return (body * (APPEND // len(body) + 1))[:APPEND]


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "qwen3_8b"
    tok = load_tokenizer(name)
    old = session_text(CHARS)
    repair_ms, whole_ms, paths, identical = [], [], [], True
    for r in range(ROUNDS):
        new = old + append_text(r)
        session = Session(tok)
        session.encode(old)  # initialization, untimed
        gc.collect()  # the initialization's ~330K span tuples must not bill a collection to the timed repair
        start = time.perf_counter()
        got = session.encode(new)
        repair_ms.append((time.perf_counter() - start) * 1e3)
        paths.append(session.last_path)
        gc.collect()
        start = time.perf_counter()
        want = reference_encode(tok, new)
        whole_ms.append((time.perf_counter() - start) * 1e3)
        identical &= got == want
    rep, whole = statistics.median(repair_ms), statistics.median(whole_ms)
    print(f"tokenizer={name} old_chars={len(old)} append_chars={APPEND} tokens={len(want)} rounds={ROUNDS}")
    print(f"paths={paths} identical={identical}")
    print(f"repair median {rep:.2f} ms   whole encode median {whole:.1f} ms   ratio whole/repair {whole / rep:.1f}x")


if __name__ == "__main__":
    main()

"""Chunked encode against one serial reference encode (figure 2 alone): `python benchmarks/chunked_ratio.py [tok]`.

Kept for its old command line; it runs `python -m delta_suite.benchmarks --only chunked --tokenizer NAME` (every chunk
count,
1 and 2 workers, each worker setting in its own process) and writes to the default ledger directory.
"""

from __future__ import annotations

import sys

from delta_suite.benchmarks.__main__ import main

if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "qwen3_8b"
    raise SystemExit(main(["--only", "chunked", "--tokenizer", name]))

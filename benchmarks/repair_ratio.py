"""Repair against whole encode (figure 1 alone): `python benchmarks/repair_ratio.py [tokenizer]`.

Kept for its old command line; it runs `python -m delta_suite.benchmarks --only repair --tokenizer NAME` (the
measurement
code lives in benchmarks/suite.py and benchmarks/measure.py) and writes to the default ledger directory.
"""

from __future__ import annotations

import sys

from delta_suite.benchmarks.__main__ import main

if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "qwen3_8b"
    raise SystemExit(main(["--only", "repair", "--tokenizer", name]))

"""The child process of a chunked-family figure: runs it under the thread pool its parent set, prints JSON records.

Usage (by suite.run_in_pool only): python -m delta_suite.benchmarks.pool_child FIGURE[,FIGURE] TOKENIZER WORKERS
[--quick]
"""

from __future__ import annotations

import json
import sys

from delta_suite.benchmarks.suite import child_main


def main(argv: list[str]) -> int:
    figure, tokenizer, workers = argv[0], argv[1], int(argv[2])
    records = child_main(figure.split(","), tokenizer, workers, "--quick" in argv[3:])
    sys.stdout.write(json.dumps(records, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

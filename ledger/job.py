"""The main job's own record: one ledger row per step, with the step's exit status and what it means.

The job (scripts/main-job.sh) runs its steps whatever happens and writes the report from whatever ledgers exist;
these rows are how the report knows that a step failed, was interrupted, or never ran, so it can say so instead of
reporting only what the surviving steps recorded. Exit statuses mean one thing each (see `MEANING`).

    python -m ledger.job --ledger FILE --step NAME --status N [--seconds S] -- COMMAND...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ledger.records import append_records, make_record

KIND = "job"
CHECK = "job.step"
NOT_RUN = -1  # the status recorded for a step the job skipped (after an interruption)
NOT_SELECTED = -2  # a step left out on purpose (DELTA_MAIN_STEPS): shown, not a failure
MEANING = {0: "clean", 1: "difference found", 2: "usage or input error", 3: "environment or I/O error",
           130: "interrupted", NOT_RUN: "not run (the job was interrupted before it)",
           NOT_SELECTED: "not selected (DELTA_MAIN_STEPS)"}


def meaning(status: int) -> str:
    """What a step's exit status says (an unknown status is named as such, never read as clean)."""
    return MEANING.get(status, f"failed with an unexpected status {status}")


def step_record(step: str, status: int, seconds: float | None, command: list[str]) -> dict:
    """The row of one step: differences 0 (a step's findings are in its own records), its status and meaning."""
    return make_record(KIND, "harness", CHECK, oracle="none", details={
        "step": step, "status": status, "outcome": meaning(status), "command": command,
        "seconds": None if seconds is None else round(seconds, 3)})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ledger.job", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ledger", required=True, help="the job's ledger file (JSON lines, appended)")
    p.add_argument("--step", required=True)
    p.add_argument("--status", type=int, required=True)
    p.add_argument("--seconds", type=float)
    p.add_argument("command", nargs="*")
    args = p.parse_args(argv)
    try:
        append_records(Path(args.ledger), [step_record(args.step, args.status, args.seconds, args.command)])
    except OSError as exc:
        print(f"error: {args.ledger}: {exc.strerror or exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

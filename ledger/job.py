"""The main job's own record: one ledger row per step, with the step's exit status and what it means.

The job (scripts/main-job.sh) runs its steps whatever happens and writes the report from whatever ledgers exist;
these rows are how the report knows that a step failed, was interrupted, or never ran, so it can say so instead of
reporting only what the surviving steps recorded. Exit statuses mean one thing each (see `MEANING`).

Before it runs any step the job writes its plan (`job.plan`: every step it means to run, the ones left out on
purpose included), so that a step whose row is missing (the job was killed, the row could not be written) is a
failure the report names (`step_rows`), never a step that silently did not exist; job rows without a plan are one
too.

    python -m delta_suite.ledger.job --ledger FILE --plan STEP [STEP...]
    python -m delta_suite.ledger.job --ledger FILE --step NAME --status N [--seconds S] -- COMMAND...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from delta_suite.ledger.records import append_records, make_record

KIND = "job"
CHECK = "job.step"
PLAN_CHECK = "job.plan"
NOT_RUN = -1  # the status recorded for a step the job skipped (after an interruption)
NOT_SELECTED = -2  # a step left out on purpose (DELTA_MAIN_STEPS): shown, not a failure
NO_ROW = -3  # a planned step with no row (the report's own entry, never written by the job): a failure
MEANING = {0: "clean", 1: "difference found", 2: "usage or input error", 3: "environment or I/O error",
           130: "interrupted", NOT_RUN: "not run (the job was interrupted before it)",
           NOT_SELECTED: "not selected (DELTA_MAIN_STEPS)",
           NO_ROW: "planned, but no row was written (the job stopped before it, or its row was lost)"}
NO_PLAN = "the job wrote no plan: which steps it meant to run is unknown"


def meaning(status: int) -> str:
    """What a step's exit status says (an unknown status is named as such, never read as clean)."""
    return MEANING.get(status, f"failed with an unexpected status {status}")


def step_record(step: str, status: int, seconds: float | None, command: list[str]) -> dict:
    """The row of one step: differences 0 (a step's findings are in its own records), its status and meaning."""
    return make_record(KIND, "harness", CHECK, oracle="none", details={
        "step": step, "status": status, "outcome": meaning(status), "command": command,
        "seconds": None if seconds is None else round(seconds, 3)})


def plan_record(steps: list[str]) -> dict:
    """The job's plan: every step it means to run, in order, written before it runs any."""
    return make_record(KIND, "harness", PLAN_CHECK, details={"steps": list(steps)}, oracle="none")


def step_rows(steps: list[dict], plans: list[dict]) -> list[dict]:
    """The job's steps as the report shows them: each written row (step, status, outcome, seconds), then a NO_ROW
    entry for every planned step without a row, and one for a plan that is missing while rows exist."""
    rows = [{k: r["details"].get(k) for k in ("step", "status", "outcome", "seconds")} for r in steps]
    written = {row["step"] for row in rows}
    planned = [s for p in plans for s in p["details"].get("steps") or []]
    missing = [s for i, s in enumerate(planned) if s not in written and s not in planned[:i]]
    rows += [{"step": s, "status": NO_ROW, "outcome": meaning(NO_ROW), "seconds": None} for s in missing]
    if steps and not plans:
        rows.append({"step": "plan", "status": NO_ROW, "outcome": NO_PLAN, "seconds": None})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m delta_suite.ledger.job", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ledger", required=True, help="the job's ledger file (JSON lines, appended)")
    p.add_argument("--plan", nargs="+", metavar="STEP", help="write the job's plan: the steps it means to run")
    p.add_argument("--step")
    p.add_argument("--status", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("command", nargs="*")
    args = p.parse_args(argv)
    if args.plan is None and (args.step is None or args.status is None):
        p.error("either --plan STEP... or --step NAME --status N is required")
    record = plan_record(args.plan) if args.plan is not None else \
        step_record(args.step, args.status, args.seconds, args.command)
    try:
        append_records(Path(args.ledger), [record])
    except OSError as exc:
        print(f"error: {args.ledger}: {exc.strerror or exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

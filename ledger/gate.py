"""The gate's records of itself: one per test that did not pass, and one of the whole pytest session.

A gate ledger (the records of `pytest properties/`, properties/conftest.py) is evidence only when it is whole: every
test that failed, errored or was interrupted wrote a record saying so (`failed_test_record`, whether or not the test
recorded anything before it failed), and the session that ran them wrote one record of its own at its end
(`session_record`: pytest's exit status, the tests collected, the tests that ran to their teardown, the failures).
Every record of one pytest run carries the run's identity (`details.gate_run`), so a reader can tell a gate run
that finished from one killed midway: a killed run has test records and no session record of its run, a run stopped
by Ctrl-C has a session record that is not complete. Neither is ever a PASS (reports.gate).
"""

from __future__ import annotations

import time
import uuid

from delta_suite.ledger.records import make_record

KIND = "gate"
SESSION_CHECK = "gate.session"
TEST_CHECK = "gate.test"
RUN_KEY = "gate_run"  # details key: the identity of the pytest run a gate record belongs to
FAILED_OUTCOMES = frozenset({"failed", "error", "interrupted"})  # details.outcome of a test that did not pass
INTERRUPTED, INTERNAL_ERROR, USAGE_ERROR = 2, 3, 4  # pytest exit statuses of a session that did not run its tests


def new_run_id() -> str:
    """A fresh identity for one pytest run (its start time and a random part)."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{uuid.uuid4().hex[:8]}"


def did_not_pass(outcome: object) -> bool:
    """Whether a record's `details.outcome` says its test failed, errored or was interrupted."""
    return outcome in FAILED_OUTCOMES


def failed_test_record(run: str | None, nodeid: str, outcome: str, phase: str, obligations: list[str],
                message: str = "", tokenizer: str | None = None) -> dict:
    """The record of a test that did not pass: its node id, the obligations its records declared (none when it
    failed before recording), its outcome (failed, error, interrupted), the phase that failed and the first lines of
    the failure. It compared nothing, so it counts no comparison; it fails every obligation it names."""
    if outcome not in FAILED_OUTCOMES:
        raise ValueError(f"a gate test record is for a test that did not pass, not {outcome!r}")
    rec = make_record(KIND, "harness", TEST_CHECK, tokenizer=tokenizer, unit="tests", details={
        "test": nodeid, "outcome": outcome, "phase": phase, "message": message[:2000], RUN_KEY: run}, oracle="none")
    rec["details"]["obligations"] = sorted(set(obligations))
    return rec


def session_record(run: str | None, *, exitstatus: int, collected: int, ran: int, passed: int, skipped: int,
                   failing: dict[str, str], workers: int) -> dict:
    """The record of one pytest session of the gate, written once at its end by the process that ran it (under
    xdist the controller, which sees every worker's reports). `complete` is true only when the session was not
    stopped (exit status not interrupted, internal or usage error) and every collected test ran to its teardown."""
    failed = sum(1 for o in failing.values() if o == "failed")
    errors = len(failing) - failed
    complete = exitstatus not in (INTERRUPTED, INTERNAL_ERROR, USAGE_ERROR) and ran >= collected
    return make_record(KIND, "harness", SESSION_CHECK, unit="sessions", details={
        RUN_KEY: run, "exitstatus": int(exitstatus), "collected": collected, "ran": ran, "passed": passed,
        "skipped": skipped, "failed": failed, "errors": errors, "failing": dict(sorted(failing.items())[:50]),
        "workers": workers, "complete": complete}, oracle="none")

"""Whether the gate runs behind a report finished: the reasons a gate ledger cannot PASS (ledger.gate).

A ledger that holds records of a gate run (kind "gate") is whole only when that run's session record is there, says
the session was complete (not interrupted: every collected test ran to its teardown) and counts no failed or errored
test, and pytest exited 0. So a gate killed midway (test records, no session record), a gate stopped by Ctrl-C (a
session record that is not complete), a gate with fewer tests run than collected ("incomplete") and a gate with a
failed test are each a reason the verdict is not PASS, whatever the records that did get written say.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from delta_suite.ledger.gate import KIND, RUN_KEY, SESSION_CHECK, TEST_CHECK


@dataclass
class GateRuns:
    """The gate sessions a report's records came from, and each reason they cannot PASS."""

    sessions: list[dict] = field(default_factory=list)  # each session record's details
    problems: list[str] = field(default_factory=list)


def _run_name(run: object) -> str:
    return f"gate run {run}" if run else "gate records without a run identity"


def gate_runs(records: list[dict]) -> GateRuns:
    """The sessions of the gate runs among `records` and the problems: a run with test records and no session record
    (killed or still running: incomplete), more than one session record of a run, a session not complete or with
    fewer tests run than collected (incomplete), failed or errored tests, a non-zero pytest exit status."""
    gate = [r for r in records if r.get("kind") == KIND]
    sessions = [r["details"] for r in gate if r["check"] == SESSION_CHECK]
    problems: list[str] = []
    per_run = Counter(s.get(RUN_KEY) for s in sessions)
    for run in sorted({r["details"].get(RUN_KEY) for r in gate if r["check"] != SESSION_CHECK} - set(per_run),
                      key=str):
        problems.append(f"{_run_name(run)}: no session record, incomplete (killed midway or still running)")
    for run, n in sorted(per_run.items(), key=lambda kv: str(kv[0])):
        if n > 1:
            problems.append(f"{_run_name(run)}: {n} session records, one expected")
    for s in sessions:
        name = _run_name(s.get(RUN_KEY))
        collected, ran = s.get("collected"), s.get("ran")
        if not s.get("complete") or not isinstance(ran, int) or not isinstance(collected, int) or ran < collected:
            problems.append(f"{name}: incomplete, {ran} of {collected} collected tests ran")
        bad = (s.get("failed") or 0) + (s.get("errors") or 0)
        if bad:
            first = ", ".join(list(s.get("failing") or {})[:3])
            problems.append(f"{name}: {s.get('failed') or 0} tests failed, {s.get('errors') or 0} errors ({first})")
        if s.get("exitstatus") != 0:
            problems.append(f"{name}: pytest exited with status {s.get('exitstatus')}")
    failed_tests = sorted({r["details"].get("test", "?") for r in gate if r["check"] == TEST_CHECK})
    counted = {n for s in sessions for n in (s.get("failing") or {})}
    unseen = [t for t in failed_tests if t not in counted]
    if unseen:  # a failure record whose session does not list it (the session is missing or cut short)
        problems.append(f"{len(unseen)} tests recorded as not passed: " + ", ".join(unseen[:3]))
    return GateRuns(sessions, problems)

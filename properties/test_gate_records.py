"""The gate's verdict cannot be PASS on missing evidence: a failure always leaves a record, a killed gate is
incomplete.

Each test plants the fault in a real pytest run of the project's own gate plugin (properties/conftest.py, loaded with
`-p properties.conftest`) on a tiny test file, in a subprocess whose `DELTA_LEDGER_DIR` is a temporary folder, then
renders that ledger with `reports table3 --gate --require-pass`: a test that fails before it records anything, a
test that fails after recording, a test whose fixture errors, a test that kills its xdist worker, a gate killed
midway (SIGKILL: test records and no session record) and one stopped by Ctrl-C (a session record that is not
complete) each turn the verdict into FAIL, exit 1. A clean run writes exactly one complete session record (under
xdist too) and renders PASS.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from delta_suite.ledger.gate import RUN_KEY, SESSION_CHECK, TEST_CHECK, failed_test_record, session_record
from delta_suite.ledger.records import append_records, make_record
from delta_suite.reports.gate import gate_runs

REPO = Path(__file__).resolve().parent.parent

PLANTED = '''
import os
import time

import pytest


def test_records_and_passes(ledger):
    got, want = [1, 2], [1, 2]
    ledger.record("encoder", "encoder.planted_clean", None, comparisons=len(want),
                  differences=sum(a != b for a, b in zip(got, want, strict=True)), unit="strings",
                  oracle="reference")
'''
FAILS_BEFORE_RECORDING = '''

def test_fails_before_recording(ledger):
    got, want = [1, 2], [1, 3]
    assert got == want
    ledger.record("encoder", "encoder.planted_never", None, comparisons=len(want),
                  differences=sum(a != b for a, b in zip(got, want, strict=True)), unit="strings",
                  oracle="reference")
'''
FAILS_AFTER_RECORDING = '''

def test_fails_after_recording(ledger):
    got, want = "abcde", "abcde"
    ledger.record("battery", "battery.cut", None, comparisons=len(want),
                  differences=sum(a != b for a, b in zip(got, want, strict=True)), unit="strings",
                  oracle="reference")
    assert [1, 2] == [1, 3]
'''
ERRORS_IN_A_FIXTURE = '''

@pytest.fixture
def broken():
    raise RuntimeError("planted fixture error")


def test_errors_in_setup(ledger, broken):
    ledger.record("encoder", "encoder.planted_never", None, comparisons=1, unit="strings",
                  oracle="reference")
'''
KILLS_ITS_WORKER = '''

def test_kills_its_worker(ledger):
    import signal

    ledger.record("encoder", "encoder.planted_lost", None, comparisons=1, differences=int(1 != 1), unit="strings",
                  oracle="reference")
    os.kill(os.getpid(), signal.SIGKILL)
'''
SLOW = '''

@pytest.mark.parametrize("i", range(8))
def test_slow(ledger, i):
    time.sleep(float(os.environ.get("PLANTED_SLEEP", "1.0")))
    ledger.record("encoder", "encoder.planted_slow", None, comparisons=1, unit="strings",
                  oracle="reference")
'''


def _env(ledger_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a planted gate: this one's, less the outer xdist worker's identity, with the checkout on
    the import path for the gate's conftest (the tests are not installed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    return {**env, "DELTA_LEDGER_DIR": str(ledger_dir), "DELTA_PREFETCH": "0", "PYTHONPATH": str(REPO), **extra}


def _command(workers: int) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "properties.conftest",
            "-n", str(workers), "test_planted.py"]


def _plant(tmp_path: Path, *parts: str) -> Path:
    (tmp_path / "test_planted.py").write_text(PLANTED + "".join(parts), encoding="utf-8")
    return tmp_path / "ledger"


def _gate(tmp_path: Path, ledger_dir: Path, workers: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run(_command(workers), cwd=tmp_path, env=_env(ledger_dir), capture_output=True, text=True,
                          timeout=300)


def _records(ledger_dir: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(ledger_dir.glob("*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def _report(tmp_path: Path, ledger_dir: Path, *extra: str) -> tuple[int, str]:
    """`reports table3 --gate --require-pass` on the planted gate's ledger: (exit status, verdict line)."""
    proc = subprocess.run([sys.executable, "-m", "delta_suite.reports.cli", "table3", "--gate", "--require-pass",
                           "--allow-open",
                           "--out", str(tmp_path / "report"), "--format", "md", *extra], cwd=REPO,
                          env=_env(ledger_dir), capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr


def test_a_test_that_fails_before_recording_leaves_a_record_and_the_gate_does_not_pass(tmp_path: Path) -> None:
    """The issue's plant: `assert [1, 2] == [1, 3]` before the test records anything. Its record says failed with
    its node id; the records of a test that failed after recording carry "failed" too and name its obligations;
    the session record counts the failure; the report is FAIL, exit 1 (before: PASS, exit 0)."""
    ledger_dir = _plant(tmp_path, FAILS_BEFORE_RECORDING, FAILS_AFTER_RECORDING)
    gate = _gate(tmp_path, ledger_dir)
    assert gate.returncode == 1, gate.stdout[-2000:] + gate.stderr[-2000:]
    records = _records(ledger_dir)
    failed = {r["details"]["test"]: r for r in records if r["check"] == TEST_CHECK}
    assert set(failed) == {"test_planted.py::test_fails_before_recording",
                           "test_planted.py::test_fails_after_recording"}
    before = failed["test_planted.py::test_fails_before_recording"]["details"]
    assert before["outcome"] == "failed" and before["phase"] == "call" and "[1, 3]" in before["message"]
    after = [r for r in records if r["check"] == "battery.cut"]
    assert len(after) == 1 and after[0]["details"]["outcome"] == "failed"
    assert after[0]["details"]["obligations"]  # the planted check declares obligations, and its failure names them
    assert failed["test_planted.py::test_fails_after_recording"]["details"]["obligations"] == \
        after[0]["details"]["obligations"]
    clean = [r for r in records if r["check"] == "encoder.planted_clean"]
    assert len(clean) == 1 and clean[0]["details"]["outcome"] == "passed"
    sessions = [r["details"] for r in records if r["check"] == SESSION_CHECK]
    assert len(sessions) == 1 and sessions[0]["exitstatus"] == 1 and sessions[0]["failed"] == 2
    assert sessions[0]["collected"] == sessions[0]["ran"] == 3 and sessions[0]["complete"] is True
    assert {r["details"][RUN_KEY] for r in records} == {sessions[0][RUN_KEY]}
    status, line = _report(tmp_path, ledger_dir)
    assert status == 1 and line.startswith("FAIL"), line
    assert "test_fails_before_recording" in line and "2 tests failed" in line


def test_an_error_in_setup_leaves_an_error_record(tmp_path: Path) -> None:
    ledger_dir = _plant(tmp_path, ERRORS_IN_A_FIXTURE)
    assert _gate(tmp_path, ledger_dir).returncode == 1
    records = _records(ledger_dir)
    error = [r["details"] for r in records if r["check"] == TEST_CHECK]
    assert [(e["test"], e["outcome"], e["phase"]) for e in error] == [
        ("test_planted.py::test_errors_in_setup", "error", "setup")]
    assert [r["details"]["errors"] for r in records if r["check"] == SESSION_CHECK] == [1]
    status, line = _report(tmp_path, ledger_dir)
    assert status == 1 and "1 errors" in line, line


@pytest.mark.parametrize("workers", [0, 2])
def test_a_clean_gate_writes_one_complete_session_record_and_passes(tmp_path: Path, workers: int) -> None:
    """Under xdist the controller writes the one session record (the workers write their tests' records), with
    the controller's count of tests collected and run; the report of a clean run is PASS."""
    ledger_dir = _plant(tmp_path)
    gate = _gate(tmp_path, ledger_dir, workers)
    assert gate.returncode == 0, gate.stdout[-2000:] + gate.stderr[-2000:]
    records = _records(ledger_dir)
    sessions = [r["details"] for r in records if r["check"] == SESSION_CHECK]
    assert len(sessions) == 1, sessions
    assert sessions[0]["complete"] and sessions[0]["collected"] == sessions[0]["ran"] == 1
    assert sessions[0]["exitstatus"] == 0 and sessions[0]["failed"] == sessions[0]["errors"] == 0
    status, line = _report(tmp_path, ledger_dir)
    assert status == 0 and line.startswith(("PASS", "PARTIAL")) and "no gate run" not in line, line


def test_a_worker_killed_under_xdist_leaves_an_incomplete_session(tmp_path: Path) -> None:
    """A test that kills its own xdist worker (the records it made die with it): the controller's session record
    counts it as an error and one test fewer run than collected; the report is FAIL, exit 1."""
    ledger_dir = _plant(tmp_path, KILLS_ITS_WORKER)
    assert _gate(tmp_path, ledger_dir, workers=2).returncode == 1
    records = _records(ledger_dir)
    assert not [r for r in records if r["check"] == "encoder.planted_lost"]
    (session,) = [r["details"] for r in records if r["check"] == SESSION_CHECK]
    assert (session["collected"], session["ran"], session["errors"], session["complete"]) == (2, 1, 1, False)
    assert list(session["failing"]) == ["test_planted.py::test_kills_its_worker"]
    status, line = _report(tmp_path, ledger_dir)
    assert status == 1 and "incomplete, 1 of 2 collected tests ran" in line, line


def _killed_gate(tmp_path: Path, sig: int, after_records: int) -> Path:
    """A planted gate of eight slow tests (two xdist workers), sent `sig` (the whole process group) once
    `after_records` test records are on disk."""
    ledger_dir = _plant(tmp_path, SLOW)
    proc = subprocess.Popen(_command(2), cwd=tmp_path, env=_env(ledger_dir, PLANTED_SLEEP="1.5"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if ledger_dir.is_dir() and len(_records(ledger_dir)) >= after_records:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the planted gate ended before it could be stopped"
        os.killpg(proc.pid, sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return ledger_dir


def test_a_gate_killed_midway_is_incomplete_never_pass(tmp_path: Path) -> None:
    """SIGKILL after some tests recorded: their records are on disk (each passed), no session record; the report
    is FAIL ("incomplete"), exit 1 (before: PASS on the records that were written)."""
    ledger_dir = _killed_gate(tmp_path, signal.SIGKILL, after_records=2)
    records = _records(ledger_dir)
    assert records and not [r for r in records if r["check"] == SESSION_CHECK]
    assert all(r["details"]["outcome"] == "passed" for r in records)
    status, line = _report(tmp_path, ledger_dir)
    assert status == 1 and line.startswith("FAIL") and "no session record, incomplete" in line, line


def test_a_gate_stopped_by_ctrl_c_is_incomplete_never_pass(tmp_path: Path) -> None:
    """SIGINT: the controller writes a session record that is not complete (exit status 2, fewer tests run than
    collected; a test cut short in a worker writes its records as "interrupted"); the report is FAIL, exit 1."""
    ledger_dir = _killed_gate(tmp_path, signal.SIGINT, after_records=2)
    records = _records(ledger_dir)
    sessions = [r["details"] for r in records if r["check"] == SESSION_CHECK]
    assert len(sessions) == 1 and sessions[0]["complete"] is False and sessions[0]["exitstatus"] == 2
    assert sessions[0]["ran"] < sessions[0]["collected"] == 9
    status, line = _report(tmp_path, ledger_dir)
    assert status == 1 and line.startswith("FAIL") and "incomplete" in line, line


def _test_rec(run: str | None, check: str = "encoder.x", outcome: str = "passed") -> dict:
    rec = make_record("gate", "encoder", check, comparisons=3, unit="strings", oracle="reference")
    rec["details"].update({RUN_KEY: run, "outcome": outcome, "test": f"t.py::{check}"})
    return rec


def _session(run: str | None, **over) -> dict:
    kw = {"exitstatus": 0, "collected": 1, "ran": 1, "passed": 1, "skipped": 0, "failing": {}, "workers": 0, **over}
    return session_record(run, **kw)


@pytest.mark.parametrize(("records", "reason"), [
    ([_test_rec("r1")], "gate run r1: no session record, incomplete"),
    ([_test_rec(None)], "gate records without a run identity: no session record"),
    ([_test_rec("r1"), _session("r1", collected=5, ran=2, exitstatus=2)], "incomplete, 2 of 5 collected tests ran"),
    ([_test_rec("r1"), _session("r1", collected=5, ran=2)], "incomplete, 2 of 5"),
    ([_test_rec("r1"), _session("r1"), _session("r1")], "2 session records"),
    ([_test_rec("r1"), _session("r1", exitstatus=1, failing={"t.py::a": "failed"})], "1 tests failed"),
    ([_test_rec("r1"), _session("r1"), _test_rec("r2")], "gate run r2: no session record"),
    ([_test_rec("r1"), _session("r1"), failed_test_record("r1", "t.py::b", "interrupted", "call", [])],
     "1 tests recorded as not passed: t.py::b"),
], ids=["no-session", "no-run-id", "interrupted", "fewer-ran", "two-sessions", "failed", "second-run-killed",
        "unlisted-failure"])
def test_each_gate_fault_is_a_problem(records: list[dict], reason: str) -> None:
    problems = gate_runs(records).problems
    assert any(reason in p for p in problems), problems


def test_a_whole_clean_gate_has_no_problem(tmp_path: Path) -> None:
    records = [_test_rec("r1"), _session("r1")]
    assert gate_runs(records).problems == []
    append_records(tmp_path / "gate-x.jsonl", records)
    status, line = _report(tmp_path, tmp_path)
    assert status == 0 and line.startswith(("PASS", "PARTIAL")) and "no gate run" not in line, line

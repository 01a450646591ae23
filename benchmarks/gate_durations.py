"""The gate's per-test durations: how well it balances over 64 workers (figure `benchmark.gate_durations`).

The CI gate runs as `pytest -n 64`; its wall time there is bounded below by its longest test and by its total test
time spread over the workers, plus the collection every worker does first: `bound_64_s = max(longest, total / 64) +
collection`. The goal is a bound of at most 30 s (no test longer than 10 s on one core). A greedy scheduler such as
xdist's can do worse than that lower bound: it can start the longest test last, so the record also gives the worst
case of any greedy order, `worst_case_64_s = longest + total / 64 + collection` (Graham's bound for list
scheduling). `gate_durations(workers)` runs the gate once here (`python -m pytest properties -n WORKERS -q
--junitxml=...`, a subprocess in the repository root), times a collection-only run apart, reads every test's time
from the JUnit XML (pytest's default: setup, call and teardown together) and returns one ledger record.
`durations_of_junit` is the pure part: the XML and the timings in, the record's details out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from delta_suite.benchmarks.suite import record

REPO = Path(__file__).resolve().parent.parent
CHECK = "benchmark.gate_durations"
GOAL_WORKERS = 64
GOAL_BOUND_S = 30.0
GOAL_LONGEST_S = 10.0
TOP = 10


def _outcome(case: ET.Element) -> str:
    """A JUnit testcase's outcome: failed, error, skipped or passed (xfail is a skip in pytest's XML)."""
    tags = {child.tag for child in case}
    for tag, outcome in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        if tag in tags:
            return outcome
    return "passed"


def durations_of_junit(xml_path: Path, *, collection_s: float | None = None, wall_s: float | None = None,
                       returncode: int | None = None, workers: int | None = None) -> dict:
    """The details of a `benchmark.gate_durations` record from a pytest JUnit XML file.

    Every testcase counts with its `time` (a missing or empty time is 0). A test id is `classname::name` as the
    XML gives them. The run passed iff no testcase failed or errored and the return code (when given) is 0; the
    goal is met only by a run that passed with `bound_64_s` <= 30 s and no test over 10 s. `collection_s` None
    (not measured) counts as 0 in the bound and is said so."""
    root = ET.parse(xml_path).getroot()
    times: list[tuple[str, float]] = []
    outcomes = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    failing: list[str] = []
    for case in root.iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        seconds = float(case.get("time") or 0.0)
        outcome = _outcome(case)
        outcomes[outcome] += 1
        if outcome in ("failed", "error"):
            failing.append(test_id)
        times.append((test_id, seconds))
    ranked = sorted(times, key=lambda t: (-t[1], t[0]))
    total = sum(s for _, s in times)
    longest_id, longest_s = ranked[0] if ranked else (None, 0.0)
    bound = max(longest_s, total / GOAL_WORKERS) + (collection_s or 0.0)
    worst_case = longest_s + total / GOAL_WORKERS + (collection_s or 0.0)
    passed = bool(times) and not failing and (returncode is None or returncode == 0)
    return {
        "figure": "gate_durations",
        "workers": workers,
        "wall_s": wall_s,
        "returncode": returncode,
        "outcome": "passed" if passed else "failed",
        "tests": len(times),
        "outcomes": outcomes,
        "failing_tests": failing[:20],
        "total_test_s": round(total, 3),
        "longest_test": longest_id,
        "longest_s": round(longest_s, 3),
        "longest": [{"test": t, "seconds": round(s, 3)} for t, s in ranked[:TOP]],
        "over_goal_longest": [{"test": t, "seconds": round(s, 3)} for t, s in ranked if s > GOAL_LONGEST_S],
        "collection_s": None if collection_s is None else round(collection_s, 3),
        "bound_64_s": round(bound, 3),
        "bound_of": f"max(longest, total / {GOAL_WORKERS}) + collection"
                    + ("" if collection_s is not None else " (collection not measured: counted as 0)"),
        "worst_case_64_s": round(worst_case, 3),
        "worst_case_of": f"longest + total / {GOAL_WORKERS} + collection (any greedy order)",
        "goal_bound_s": GOAL_BOUND_S,
        "goal_longest_s": GOAL_LONGEST_S,
        "goal_met": passed and bound <= GOAL_BOUND_S and longest_s <= GOAL_LONGEST_S,
    }


def durations_record(details: dict) -> dict:
    """The ledger record of one measured run (differences: 1 when the run failed)."""
    return record(CHECK, None, details, comparisons=1, differences=int(details["outcome"] != "passed"), unit="runs",
                  oracle="none")  # a run's outcome, not compared outputs


def _collection_seconds(targets: tuple[str, ...], env: dict) -> float | None:
    """Wall seconds of `pytest TARGETS --collect-only -q` (imports, tokenizer loads, parametrization), or None
    when the collection fails."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", *targets, "--collect-only", "-q", "-p",
                           "no:cacheprovider"], cwd=REPO, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    return seconds if proc.returncode == 0 else None


def gate_durations(workers: int = 2, targets: tuple[str, ...] = ("properties",)) -> list[dict]:
    """Run the gate once with `workers` xdist workers and return its `benchmark.gate_durations` record.

    The collection is timed first, apart, with its ledger folder redirected to a temporary one (a pytest session
    start clears the gate's ledger folder, which must keep the gate run's records). `targets` (default the whole
    gate, `properties`) narrows the run to some test files, for a quick look at them."""
    with tempfile.TemporaryDirectory(prefix="gate-durations-") as tmp:
        collection_s = _collection_seconds(targets, {**os.environ, "DELTA_LEDGER_DIR": str(Path(tmp) / "ledger")})
        xml_path = Path(tmp) / "gate.xml"
        command = [sys.executable, "-m", "pytest", *targets, "-n", str(workers), "-q", f"--junitxml={xml_path}"]
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        wall = time.perf_counter() - start
        tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
        if xml_path.is_file():
            details = durations_of_junit(xml_path, collection_s=collection_s, wall_s=wall,
                                         returncode=proc.returncode, workers=workers)
        else:  # pytest did not get as far as writing its report
            details = {"figure": "gate_durations", "workers": workers, "wall_s": wall, "returncode": proc.returncode,
                       "outcome": "failed", "tests": 0, "reason": "no JUnit XML written",
                       "stderr_tail": proc.stderr[-2000:], "goal_bound_s": GOAL_BOUND_S, "goal_met": False}
    details["command"] = ["pytest", *targets, "-n", str(workers), "-q", "--junitxml=..."]
    details["summary"] = tail[0] if tail else ""
    return [durations_record(details)]

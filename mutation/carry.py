"""Mutants finished in an interrupted session, kept in the committed results file and carried into the next one.

A module's session can take longer than one sitting, and its database (`out/mutation/<module>/session.sqlite`)
lives on the machine that ran it. `checkpoint` writes the finished mutants of a local session into the results
file's "partial" section (per module: the commit the session's copy was taken at, the SHA-256 of the module's
unmutated source, and per mutant its operator, occurrence, position, source line and outcome, and for a survivor the
session's mechanical equivalence verdict if it made one); a fresh session of the module on
any machine, with the module's source unchanged (same SHA-256), `seed`s its new database with those outcomes, so
cosmic-ray's `exec` runs only the rest. The finished module's entry names how many mutants were carried and from
which commit: they were judged by the tests of that commit (the module itself being the same), which is the same
trust as a module's whole entry made at an older commit. A module whose source changed starts over.

A sample's local session (`out/mutation/samples/<sample>/<module>`) is checkpointed the same way (`checkpoint
--work` that folder): its judged mutants seed the module's complete run, and the mutants it left out or left
unfinished within its budget are not carried, so the complete run judges them.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

from mutation.mutant_tests import (
    BUDGET_MARK,
    EQUIVALENCE_REASONS,
    INTERRUPT_MARK,
    NOT_SELECTED,
    TIMEOUT_MARK,
    mechanical_equivalence,
)

Key = tuple[str, int, int, int]  # operator, occurrence, line, column


def source_sha(path: Path) -> str:
    """SHA-256 of a module's source (the unmutated module a session mutates)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _key(spec: dict) -> Key:
    line, column = spec["start_pos"]
    return spec["operator_name"], int(spec["occurrence"]), int(line), int(column)


CARRIED = "carried from commit "  # the output a seeded result holds, naming the commit whose tests judged it


def finished_mutants(dump: str, commit: str, source_lines: list[str] | None = None) -> list[dict]:
    """The finished mutants of cosmic-ray's `dump` output (one JSON [work item, result] per line), each with what a
    later session needs to restore its result: key fields, outcomes, diff and the commit whose tests judged it
    (`commit`, the session's, unless the result was itself carried; a mutant unfinished within a sample's budget
    is not finished, nor is one a sample left out); the test output is left out, a timeout and a
    mechanical equivalence verdict kept. `source` is the mutated line of `source_lines` (the unmutated module),
    stripped: what a verdict in mutation/verdicts.toml names."""
    source_lines = source_lines or []
    out = []
    for raw in dump.splitlines():
        if not raw.strip():
            continue
        item, result = json.loads(raw)
        if result is None or any(mark in (result.get("output") or "") for mark in
                                 (INTERRUPT_MARK, BUDGET_MARK, NOT_SELECTED)):
            continue  # not finished: stopped, unfinished within a sample's budget, or never run (left out by a sample)
        (spec,) = item["mutations"]
        operator, occurrence, line, column = _key(spec)
        output = result.get("output") or ""
        survived = result.get("test_outcome") == "survived"
        out.append({
            "operator": operator, "occurrence": occurrence, "line": line, "column": column,
            "source": source_lines[line - 1].strip() if 0 < line <= len(source_lines) else "",
            "worker_outcome": result.get("worker_outcome"), "test_outcome": result.get("test_outcome"),
            "timeout": output == "timeout" or TIMEOUT_MARK in output, "diff": result.get("diff") or "",
            "commit": output.split(CARRIED, 1)[1].split()[0] if CARRIED in output else commit,
            "equivalent": mechanical_equivalence(output) if survived else "",
        })
    return sorted(out, key=lambda m: (m["line"], m["column"], m["operator"], m["occurrence"]))


def partial_entry(module: str, commit: str, pristine: Path, dump: str, session: str = "") -> dict:
    """The results file's "partial" entry of one module's session: its finished mutants and what they hold for;
    `session` names the session's folder (a later checkpoint of the same folder replaces this one)."""
    return {
        "module": module,
        "session": session,
        "commit": commit,
        "module_sha": source_sha(pristine),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "mutants": finished_mutants(dump, commit, pristine.read_text(encoding="utf-8").splitlines()),
    }


_MARK_OF_REASON = {reason: mark for mark, reason in EQUIVALENCE_REASONS.items()}


def carried_result(m: dict) -> WorkResult:
    """The session database's result of a carried mutant: its outcomes, and an output naming the commit that judged
    it, with the timeout mark and the mark of a mechanical equivalence verdict (mutation.session reads both)."""
    mark = _MARK_OF_REASON.get(m.get("equivalent", ""), "")
    return WorkResult(
        worker_outcome=WorkerOutcome(m["worker_outcome"]),
        output=(TIMEOUT_MARK + "; " if m["timeout"] else "") + (mark + "; " if mark else "") + CARRIED + m["commit"],
        test_outcome=TestOutcome(m["test_outcome"]) if m["test_outcome"] else None,
        diff=m["diff"] or None,
    )


def seed(db: Path, partial: dict | None, pristine: Path) -> list[str]:
    """Write the carried outcomes of `partial` into the session database `db` for the pending mutants they match
    (operator, occurrence, position); nothing when there is no partial entry or the module's source changed since.
    Returns the commit that judged each carried mutant."""
    if not partial or partial.get("module_sha") != source_sha(pristine):
        return []
    carried = {(m["operator"], m["occurrence"], m["line"], m["column"]): m for m in partial.get("mutants", [])}
    commits = []
    with use_db(str(db), WorkDB.Mode.open) as work:
        for item in list(work.pending_work_items):
            (spec,) = item.mutations
            key = (spec.operator_name, int(spec.occurrence), int(spec.start_pos[0]), int(spec.start_pos[1]))
            if key in carried:
                work.set_result(item.job_id, carried_result(carried[key]))
                commits.append(carried[key]["commit"])
    return commits

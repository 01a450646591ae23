"""Ledgers: JSON-lines records of what ran, appended atomically, read back with every bad line reported.

One record per line. Every record carries `schema`, `kind` (what wrote it), `level` (encoder, chunked,
battery, control, repair, proof, exhaustive, harness, benchmark), `check` (a stable name), `tokenizer` and
`tokenizer_sha256` where one applies, the counts it compared (`comparisons`, `differences`, and for cut and
repair rows `fast_path` and `fallbacks`), free-form `details`, and `provenance` (suite version and commit,
reference version, host, time). A record may carry `id`, its stable identity (a fuzz batch:
"fuzz:<campaign>:<tokenizer>:<path>:<batch>"; a corpus unit: "corpus:<unit key>"); one without has the digest of
its whole content as identity. Readers keep one record per identity: an exact duplicate (same identity, same
outcome) is dropped and counted; the same identity with a different outcome is a conflict, reported with file and
line and never counted. Every record names its `oracle`, what its IDs (pieces, verdicts) were compared with
(`ORACLES`); a record without one (an older ledger) reads "unknown" (`oracle_of`), never "reference".
A writer appends whole lines in one write and fsyncs per batch, so a killed writer leaves at most one torn last
line, which the reader reports with its file and line number.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

SCHEMA = "delta-suite.ledger.v1"
LEVELS = ("encoder", "chunked", "battery", "control", "repair", "proof", "exhaustive", "harness", "benchmark")
# What a record's IDs (or pieces, or verdicts) were compared with:
ORACLES = {
    "reference": "a whole encode of the reference library",
    "spec": "the executable propositions (spec/)",
    "self": "the implementation against another path of itself, or the library against itself",
    "premise": "a fact about the tokenizer or the pattern the propositions rest on",
    "proof": "a proof obligation (a solver or an enumeration proves it)",
    "none": "nothing: the record counts runs, steps or figures, not compared outputs",
}
UNKNOWN_ORACLE = "unknown"  # a record written before records named their oracle


def oracle_of(rec: dict) -> str:
    """The oracle a record names (one of ORACLES), or "unknown" when it names none or one this code does not know:
    a record of an older ledger is never read as a comparison with the reference."""
    value = rec.get("oracle")
    return value if isinstance(value, str) and value in ORACLES else UNKNOWN_ORACLE


@lru_cache(maxsize=1)
def suite_commit() -> str:
    """The git commit of the suite's checkout, or "unknown" outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=5
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def suite_version() -> str:
    try:
        return version("delta-suite")
    except PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def _static_provenance() -> dict:
    return {
        "suite_version": suite_version(),
        "suite_commit": suite_commit(),
        "reference": "tokenizers",
        "reference_version": version("tokenizers"),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "cores": os.cpu_count(),
    }


def provenance() -> dict:
    """What can move between runs: suite version and commit, reference version, host, cores, and the time."""
    return {**_static_provenance(), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def make_record(
    kind: str,
    level: str,
    check: str,
    *,
    tokenizer: str | None = None,
    tokenizer_sha256: str | None = None,
    comparisons: int = 0,
    differences: int = 0,
    fast_path: int | None = None,
    fallbacks: int | None = None,
    unit: str = "comparisons",
    details: dict | None = None,
    oracle: str,
) -> dict:
    """One ledger record; `unit` says what `comparisons` counts (strings, documents, cuts, turns, code points...),
    `oracle` what they were compared with (one of ORACLES: required, so no new record leaves it to a reader)."""
    if level not in LEVELS:
        raise ValueError(f"unknown ledger level {level!r}; one of {LEVELS}")
    if oracle not in ORACLES:
        raise ValueError(f"unknown oracle {oracle!r}; one of {tuple(ORACLES)}")
    return {
        "schema": SCHEMA,
        "kind": kind,
        "level": level,
        "check": check,
        "tokenizer": tokenizer,
        "tokenizer_sha256": tokenizer_sha256,
        "unit": unit,
        "comparisons": comparisons,
        "differences": differences,
        "oracle": oracle,
        "fast_path": fast_path,
        "fallbacks": fallbacks,
        "details": details or {},
        "provenance": provenance(),
        **user_tokenizer_fields(tokenizer, tokenizer_sha256),
    }


USER_TABLE_ENV = "DELTA_USER_TOKENIZERS"  # written by frozen.user_table (its sibling floor; no import across it)


def user_tokenizer_fields(tokenizer: str | None, tokenizer_sha256: str | None) -> dict:
    """What a record of a user tokenizer adds: `tokenizer_file` (`user_tokenizer_file`) and, when the writer gave
    none, `tokenizer_sha256` = the file's digest; nothing for a registry row or no tokenizer."""
    facts = user_tokenizer_file(tokenizer)
    if facts is None:
        return {}
    return {"tokenizer_file": facts, "tokenizer_sha256": tokenizer_sha256 or facts["sha256"]}


def user_tokenizer_file(tokenizer: str | None) -> dict | None:
    """The facts of a user tokenizer named in this run (`frozen.user_table`): source "user file", name, path,
    sha256 and size of its tokenizer.json, the config's path and digest; None for a registry row or no tokenizer.
    Every record of a user tokenizer carries them under `tokenizer_file`, so a report never counts it as one of
    the eleven and never merges two files of one name."""
    raw = os.environ.get(USER_TABLE_ENV)
    if not tokenizer or not raw:
        return None
    try:
        entry = json.loads(raw).get(tokenizer)
    except (ValueError, AttributeError):
        return None
    return {"source": "user file", **entry} if isinstance(entry, dict) else None


def unloadable_record(kind: str, check: str, tokenizer: str, reason: str, remedy: str) -> dict:
    """The row of a tokenizer a run could not load (changed since install, corrupt): no comparison, the reason and
    the remedy; `details.status` "not loadable" (the report lists it and never counts it as a check)."""
    return make_record(kind, "harness", check, tokenizer=tokenizer, oracle="none",
                       details={"status": "not loadable", "reason": reason, "remedy": remedy})


def append_records(path: Path, records: Iterable[dict]) -> int:
    """Append records as whole JSON lines in one write, then fsync; returns the number written."""
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records]
    if not lines:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(lines).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(lines)


# what a record says it found: two records of one identity that agree on these say the same thing
OUTCOME_FIELDS = ("kind", "level", "check", "tokenizer", "tokenizer_sha256", "unit", "comparisons", "differences",
                  "fast_path", "fallbacks")
OUTCOME_DETAILS = ("cases", "cases_digest", "documents", "characters", "control", "subject", "status")


def record_id(rec: dict) -> str:
    """The identity of a record: its `id` when the writer gave one, else the digest of its whole content."""
    given = rec.get("id")
    if isinstance(given, str) and given:
        return given
    canonical = json.dumps(rec, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def outcome_of(rec: dict) -> tuple:
    """The part of a record that two writings of the same work must agree on (counts, names, input digests)."""
    details = rec.get("details") if isinstance(rec.get("details"), dict) else {}
    return (tuple(json.dumps(rec.get(k), sort_keys=True) for k in OUTCOME_FIELDS)
            + tuple(json.dumps(details.get(k), sort_keys=True) for k in OUTCOME_DETAILS))


@dataclass
class Deduplicated:
    """Records with one per identity kept (the first read), how many exact duplicates were dropped, and every
    conflicting duplicate as (file, line, reason)."""
    records: list[dict] = field(default_factory=list)
    duplicates: int = 0
    conflicts: list[tuple[str, int, str]] = field(default_factory=list)
    kept_at: list[tuple[str, int]] = field(default_factory=list)


def deduplicate(located: Iterable[tuple[dict, str, int]]) -> Deduplicated:
    """Keep one record per identity from (record, file, line) triples in reading order.

    Invariant: no identity is counted twice. A later record whose identity was seen with the same outcome is an
    exact duplicate (a ledger copied next to itself, a batch recorded by two concurrent writers) and is dropped and
    counted; one with a different outcome is a conflict: the first stays counted, the later one is not, and it is
    reported with its file and line and where the first was read."""
    out = Deduplicated()
    first: dict[str, tuple[tuple, str, int]] = {}
    for rec, file, line in located:
        key = record_id(rec)
        seen = first.get(key)
        if seen is None:
            first[key] = (outcome_of(rec), file, line)
            out.records.append(rec)
            out.kept_at.append((file, line))
        elif seen[0] == outcome_of(rec):
            out.duplicates += 1
        else:
            out.conflicts.append((file, line, f"conflicting duplicate of {key} (first read at {seen[1]}:{seen[2]}): "
                                  "same identity, different outcome; not counted"))
    return out


@dataclass
class LedgerRead:
    """Records read from ledger files (one per identity), every line that could not be read or conflicts with an
    earlier record of its identity (file, line number, reason), and how many exact duplicates were dropped."""
    records: list[dict] = field(default_factory=list)
    errors: list[tuple[str, int, str]] = field(default_factory=list)
    duplicates: int = 0


def ledger_paths(paths: Iterable[Path]) -> list[Path]:
    """The ledger files of files or folders (a folder: its *.jsonl files, recursively, in sorted order)."""
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        files.extend(sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])
    return files


def read_located(files: Iterable[Path]) -> tuple[list[tuple[dict, str, int]], list[tuple[str, int, str]]]:
    """Every ledger record of `files` as (record, file, line), and every unreadable line as (file, line, reason);
    no deduplication (see `deduplicate`)."""
    located: list[tuple[dict, str, int]] = []
    errors: list[tuple[str, int, str]] = []
    for f in files:
        try:
            raw = Path(f).read_bytes()
        except OSError as exc:
            errors.append((str(f), 0, f"unreadable: {exc.strerror or exc}"))
            continue
        for lineno, line in enumerate(raw.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                errors.append((str(f), lineno, f"not a JSON record: {exc}"))
                continue
            if not isinstance(rec, dict) or rec.get("schema") != SCHEMA:
                errors.append((str(f), lineno, f"not a {SCHEMA} record"))
                continue
            located.append((rec, str(f), lineno))
    return located, errors


def read_ledgers(paths: Iterable[Path]) -> LedgerRead:
    """Read JSON-lines ledgers (files or folders of *.jsonl, in sorted order); bad lines go to `errors`, and records
    are deduplicated by identity across all files (`deduplicate`)."""
    located, errors = read_located(ledger_paths(paths))
    kept = deduplicate(located)
    return LedgerRead(kept.records, errors + kept.conflicts, kept.duplicates)

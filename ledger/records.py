"""Ledgers: JSON-lines records of what ran, appended atomically, read back with every bad line reported.

One record per line. Every record carries `schema`, `kind` (what wrote it), `level` (encoder, chunked,
battery, control, repair, proof, exhaustive, harness, benchmark), `check` (a stable name), `tokenizer` and
`tokenizer_sha256` where one applies, the counts it compared (`comparisons`, `differences`, and for cut and
repair rows `fast_path` and `fallbacks`), free-form `details`, and `provenance` (suite version and commit,
reference version, host, time). A writer appends whole lines in one write and fsyncs per batch, so a killed
writer leaves at most one torn last line, which the reader reports with its file and line number.
"""

from __future__ import annotations

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
) -> dict:
    """One ledger record; `unit` says what `comparisons` counts (strings, documents, cuts, turns, code points...)."""
    if level not in LEVELS:
        raise ValueError(f"unknown ledger level {level!r}; one of {LEVELS}")
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
        "fast_path": fast_path,
        "fallbacks": fallbacks,
        "details": details or {},
        "provenance": provenance(),
    }


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


@dataclass
class LedgerRead:
    """Records read from ledger files, and every line that could not be read (file, line number, reason)."""
    records: list[dict] = field(default_factory=list)
    errors: list[tuple[str, int, str]] = field(default_factory=list)


def read_ledgers(paths: Iterable[Path]) -> LedgerRead:
    """Read JSON-lines ledgers (files or folders of *.jsonl, in sorted order); bad lines go to `errors`."""
    out = LedgerRead()
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        files.extend(sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])
    for f in files:
        try:
            raw = f.read_bytes()
        except OSError as exc:
            out.errors.append((str(f), 0, f"unreadable: {exc.strerror or exc}"))
            continue
        for lineno, line in enumerate(raw.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                out.errors.append((str(f), lineno, f"not a JSON record: {exc}"))
                continue
            if not isinstance(rec, dict) or rec.get("schema") != SCHEMA:
                out.errors.append((str(f), lineno, f"not a {SCHEMA} record"))
                continue
            out.records.append(rec)
    return out

"""How the suite's levels take `--subject`: one argument, one way to check a text on a path, one subjects table.

- CLIs call `add_subject_argument(parser)` and `open_subject(args.subject, tok)`; a subject that cannot run
  gives `unavailable_record(...)` for the ledger and a clear SuiteError message, never a pass.
- A fuzz case or a corpus document is checked on a subject with `check_on_subject(subject, tok, text, path,
  splits=...)`, where path is "encoder" (whole encode), "chunked" (`encode_chunked(text, chunks)`) or "repair"
  (one session: S, then S + D at each split, the whole text re-sent each call).
- Reports call `subjects_table(records)` over ledger records of kind "subject" for the per-subject table.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from typing import TYPE_CHECKING

from delta_suite.spec.reference import LIBRARY, reference_encode
from delta_suite.subjects.by_name import get_subject
from delta_suite.subjects.protocol import DEFAULT_SUBJECT, SubjectUnavailable, has_chunked, has_session, names
from delta_suite.subjects.replay import first_difference

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer

PATHS = ("encoder", "chunked", "repair")


def add_subject_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--subject NAME[==VERSION]` (default: the minimal implementation)."""
    parser.add_argument(
        "--subject",
        default=DEFAULT_SUBJECT,
        metavar="SPEC",
        help=f"implementation under test (default {DEFAULT_SUBJECT}; known: {', '.join(names())}); a PyPI peer is "
        "installed on demand into $DELTA_HOME/subject-envs/NAME-VERSION; your own: module:factory (a Python "
        "factory(tokenizer_files, config)), an installed entry point of group delta_suite.subjects, or "
        "exec:COMMAND (a server in any language speaking the JSON-lines protocol of subjects/exec_protocol.py)",
    )


def open_subject(spec: str | None, tok: FrozenTokenizer):
    """The subject bound to `tok`; raises SubjectUnavailable (a SuiteError) with the reason when it cannot run."""
    return get_subject(spec, tok)


def supports(subject, path: str) -> bool:
    """Whether `subject` offers `path` ("encoder" always; "chunked" and "repair" when it has them)."""
    if path == "encoder":
        return True
    if path == "chunked":
        return has_chunked(subject)
    if path == "repair":
        return has_session(subject)
    raise ValueError(f"unknown path {path!r}; one of {PATHS}")


def check_on_subject(
    subject,
    tok: FrozenTokenizer,
    text: str,
    path: str,
    *,
    splits: tuple[int, ...] = (),
    chunks: int | None = None,
    timing: dict | None = None,
) -> tuple[int, int, dict | None]:
    """Compare the subject with the reference on one text: (comparisons, differences, first counterexample).

    encoder: subject.encode(text) == ref(text). chunked: subject.encode_chunked(text, chunks) == ref(text).
    repair: for each split s, one new session gets text[:s] and then text; both answers equal their references.
    A repair counterexample says whether a new session given only its text returns the reference
    ("single_call_matches": False means the subject differs on that text whatever came before; True means the
    earlier call changed the answer). `timing`, when given, accumulates seconds in "subject" (every call into the
    subject, opening and closing sessions included) and in "reference" (the reference encodes) separately, and in
    "reference_library_ns" the library meter's nanoseconds within those reference encodes (`spec.reference.LIBRARY`).
    """
    if not supports(subject, path):
        raise SubjectUnavailable(subject.name, f"offers no {path} path")
    t0 = time.perf_counter()
    if path == "encoder":
        pairs = [(text, subject.encode(text))]
    elif path == "chunked":
        pairs = [(text, subject.encode_chunked(text, chunks))]
    else:
        pairs = []
        for s in splits or (len(text) // 2,):
            session = subject.session()
            pairs += [(text[:s], session.encode(text[:s])), (text, session.encode(text))]
            close = getattr(session, "close", None)
            if callable(close):
                close()
    subject_seconds = time.perf_counter() - t0
    reference_seconds, reference_library_ns = 0.0, 0
    bad = None
    differences = 0
    bad_want: list[int] = []
    for t, got in pairs:
        t1, library1 = time.perf_counter(), LIBRARY.nanoseconds
        want = reference_encode(tok, t)
        reference_seconds += time.perf_counter() - t1
        reference_library_ns += LIBRARY.nanoseconds - library1
        if got != want:
            differences += 1
            if bad is None:
                p = first_difference(got, want)
                bad = {"text": t, "path": path, "position": p, "subject_ids": got[p : p + 3],
                       "reference_ids": want[p : p + 3]}
                bad_want = want
    if bad is not None and path == "repair":
        t2 = time.perf_counter()
        single = subject.session()
        bad["single_call_matches"] = single.encode(bad["text"]) == bad_want
        close = getattr(single, "close", None)
        if callable(close):
            close()
        subject_seconds += time.perf_counter() - t2
    if timing is not None:
        timing["subject"] = timing.get("subject", 0.0) + subject_seconds
        timing["reference"] = timing.get("reference", 0.0) + reference_seconds
        timing["reference_library_ns"] = timing.get("reference_library_ns", 0) + reference_library_ns
    return len(pairs), differences, bad


def subjects_table(records: list[dict]) -> list[dict]:
    """Per (subject, version, tokenizer, level): status, comparisons, differences, and one counterexample per check.

    Rows of status "not installed" stay separate and never count as passed.
    """
    rows: dict[tuple, dict] = {}
    examples: dict[tuple, dict] = defaultdict(dict)
    for rec in records:
        if rec.get("kind") != "subject":
            continue
        d = rec.get("details", {})
        key = (d.get("subject"), d.get("subject_version"), rec.get("tokenizer"), rec.get("level"), d.get("status"))
        row = rows.setdefault(
            key,
            {"subject": key[0], "subject_version": key[1], "tokenizer": key[2], "level": key[3], "status": key[4],
             "comparisons": 0, "differences": 0, "reasons": []},
        )
        row["comparisons"] += int(rec.get("comparisons", 0))
        row["differences"] += int(rec.get("differences", 0))
        for kind, n in (d.get("faults") or {}).items():
            row.setdefault("faults", {})
            row["faults"][kind] = row["faults"].get(kind, 0) + int(n)
        if d.get("reason") and d["reason"] not in row["reasons"]:
            row["reasons"].append(d["reason"])
        if d.get("minimal_counterexample") and (rec.get("differences") or d.get("faults")):
            examples[key].setdefault(rec.get("check"), d["minimal_counterexample"])
    out = []
    for key, row in sorted(rows.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
        # a call that gave no IDs (crash, timeout, malformed output) is a finding: named in the reasons, never a pass
        row["reasons"] += [f"{kind} on {n} input(s)" for kind, n in sorted(row.pop("faults", {}).items())]
        row["counterexamples"] = examples.get(key, {})
        out.append(row)
    return out

"""Saved counterexamples: every difference a campaign finds, as a replayable JSON case, and the gate's corpus.

A regression file holds the tokenizer's name and digest, the reference version, the path, the text, the cuts
or the split, the expected (reference) and actual IDs, the first differing position, the control name when the
case came from a control (None for the real implementation), and where the campaign found it. Files are named
by a digest of their case, so saving the same case twice writes one file. `fuzz/regressions/` (next to this
module) is the corpus that `properties/test_regressions.py` replays.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.fuzz.cases import Difference, FuzzCase
from delta_suite.fuzz.checker import checker_for
from delta_suite.spec.reference import reference_encode, reference_version
from delta_suite.subjects.protocol import SubjectFault

SCHEMA = "delta-suite.fuzz-regression.v1"
CORPUS = Path(__file__).resolve().parent / "regressions"


class BadRegression(SuiteError):
    """A regression file that is not a readable case of this schema."""


@dataclass(frozen=True)
class Regression:
    """One saved counterexample."""
    tokenizer: str
    tokenizer_sha256: str
    reference_version: str
    control: str | None
    case: FuzzCase
    expected: list[int]
    actual: list[int]
    first_position: int
    found_by: dict
    subject: str | None = None  # a third-party subject's finding (None: the minimal implementation or a control)
    fault: dict | None = None  # {"kind", "message"} when the subject produced no IDs (crash, timeout, malformed)

    def as_json(self) -> dict:
        extra = {k: v for k, v in (("subject", self.subject), ("fault", self.fault)) if v is not None}
        return {
            "schema": SCHEMA,
            "tokenizer": self.tokenizer,
            "tokenizer_sha256": self.tokenizer_sha256,
            "reference_version": self.reference_version,
            "control": self.control,
            **self.case.as_json(),
            "expected": self.expected,
            "actual": self.actual,
            "first_difference": self.first_position,
            "found_by": self.found_by,
            **extra,
        }

    def case_digest(self) -> str:
        key = json.dumps([self.tokenizer, self.control, self.case.as_json(), self.subject], sort_keys=True,
                         ensure_ascii=False)
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]

    def filename(self) -> str:
        who = self.control or (re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.subject)[:40] if self.subject else "delta")
        kind = f"-{self.fault['kind']}" if self.fault else ""
        return f"{self.tokenizer}-{who}-{self.case.path}{kind}-{self.case_digest()}.json"


def make_regression(
    tok: FrozenTokenizer, control: str | None, case: FuzzCase, diff: Difference, found_by: dict
) -> Regression:
    return Regression(
        tokenizer=tok.name,
        tokenizer_sha256=tok.sha256,
        reference_version=reference_version(),
        control=control,
        case=case,
        expected=list(diff.expected),
        actual=list(diff.actual),
        first_position=diff.first_position,
        found_by=found_by,
    )


def make_fault_regression(tok: FrozenTokenizer, subject: str, case: FuzzCase, fault, found_by: dict) -> Regression:
    """A saved case on which a third-party subject produced no IDs (`fault`: a SubjectFault): the reference's IDs
    as expected, none as actual."""
    return Regression(
        tokenizer=tok.name,
        tokenizer_sha256=tok.sha256,
        reference_version=reference_version(),
        control=None,
        case=case,
        expected=reference_encode(tok, case.text),
        actual=[],
        first_position=0,
        found_by=found_by,
        subject=subject,
        fault={"kind": fault.kind, "message": fault.message},
    )


def save(reg: Regression, folder: Path = CORPUS) -> Path:
    """Write the regression (atomically, by rename) into `folder`; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / reg.filename()
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(reg.as_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def load(path: Path) -> Regression:
    """Read one regression file; BadRegression names the file and what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("schema") != SCHEMA:
            raise BadRegression(f"{path}: not a {SCHEMA} file")
        return Regression(
            tokenizer=data["tokenizer"],
            tokenizer_sha256=data["tokenizer_sha256"],
            reference_version=data["reference_version"],
            control=data.get("control"),
            case=FuzzCase.from_json(data),
            expected=list(data["expected"]),
            actual=list(data["actual"]),
            first_position=int(data["first_difference"]),
            found_by=dict(data.get("found_by") or {}),
            subject=data.get("subject"),
            fault=data.get("fault"),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadRegression(f"{path}: cannot read regression ({exc})") from exc


def corpus_files(folder: Path = CORPUS) -> list[Path]:
    """Every saved regression of the corpus, in name order."""
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@dataclass(frozen=True)
class Replay:
    """A saved case run again: the reference now, the real implementation, and the control (when there is one)."""
    reference_ids: list[int]
    real_difference: object | None  # fuzz.cases.Difference or None
    control_difference: object | None
    real_counts: tuple[int, int]  # (cuts checked, repairs checked) by the real implementation's replay


def replay(reg: Regression) -> Replay:
    """Replay a regression: the reference encode of its text, the real implementation's check, the control's check."""
    tok = load_tokenizer(reg.tokenizer)
    real = checker_for(tok, reg.case.path, None).check(reg.case)
    control = checker_for(tok, reg.case.path, reg.control).check(reg.case) if reg.control else None
    return Replay(
        reference_ids=reference_encode(tok, reg.case.text),
        real_difference=real.difference,
        control_difference=control.difference if control is not None else None,
        real_counts=(real.cuts_checked, real.repairs_checked),
    )


def replay_on_subject(reg: Regression, subject: str | None = None) -> str:
    """Run a saved case again on `subject` (default: the subject that was saved with it, else the minimal
    implementation): "same" when its answer equals the reference's IDs now, else "differs at token N" or the fault
    ("crash: ...", "timeout: ...", "malformed: ...")."""
    tok = load_tokenizer(reg.tokenizer)
    spec = subject or reg.subject
    checker = checker_for(tok, reg.case.path, reg.control if spec is None else None, spec)
    try:
        outcome = checker.check(reg.case)
    except SubjectFault as fault:
        return str(fault)
    if outcome.difference is None:
        return "same"
    return f"differs at token {outcome.difference.first_position}"

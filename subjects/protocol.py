"""The subject protocol: what an implementation under test offers the suite, and how a subject is named.

A subject has a `name` and a `version` and encodes a whole text to IDs with the same contract as
`spec.reference.reference_encode` (no sequence-level post-processing). It may also offer a session, an object
whose `.encode(text)` receives the growing transcript of one conversation in one process, and a chunked encode
`encode_chunked(text, chunks)`. A subject that cannot be built here (not installable, not installed, not able
to load the tokenizer) raises `SubjectUnavailable` with the reason, which callers record as "not installed",
never as a pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from delta_suite.frozen.errors import SuiteError

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer


class SubjectUnavailable(SuiteError):
    """A subject that cannot run here; `.reason` says why (not installable, import failed, tokenizer refused)."""

    def __init__(self, subject: str, reason: str) -> None:
        super().__init__(f"subject {subject} is not available: {reason}")
        self.subject, self.reason = subject, reason


class SubjectFault(Exception):
    """A subject's call that produced no IDs on an input: `kind` "crash" (it raised, or its server reported an
    error or died), "timeout" (no answer within the per-call timeout) or "malformed" (not a list of token IDs).
    A finding about the subject on that input, recorded and saved as such; never a pass and never an ID
    difference."""

    KINDS = ("crash", "timeout", "malformed")

    def __init__(self, kind: str, message: str) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown fault kind {kind!r}")
        super().__init__(f"{kind}: {message}")
        self.kind, self.message = kind, message


class UnknownSubject(SuiteError):
    """A `--subject` value that names no known subject or is not of the form NAME[==VERSION]."""


@runtime_checkable
class SessionLike(Protocol):
    """One conversation: each call re-sends the whole (grown) text and gets the IDs of all of it."""

    def encode(self, text: str) -> list[int]: ...


@runtime_checkable
class Subject(Protocol):
    """An implementation under test bound to one tokenizer."""
    name: str
    version: str

    def encode(self, text: str) -> list[int]: ...


def has_session(subject: Subject) -> bool:
    """Whether the subject offers a session path."""
    return callable(getattr(subject, "session", None))


def has_chunked(subject: Subject) -> bool:
    """Whether the subject offers a chunked path."""
    return callable(getattr(subject, "encode_chunked", None))


@dataclass(frozen=True)
class SubjectSpec:
    """A parsed `NAME[==VERSION]`; `version` None means the default (newest installable for a PyPI peer)."""
    name: str
    version: str | None = None

    def __str__(self) -> str:
        return self.name if self.version is None else f"{self.name}=={self.version}"


_SPEC = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.-]*)\s*(?:==\s*([A-Za-z0-9_.+!-]+))?\s*$")


def parse_subject(spec: str) -> SubjectSpec:
    """Parse `NAME[==VERSION]`; the name is lower-cased and `_` is read as `-`. A user subject named by import path
    (`module:factory`) or command (`exec:COMMAND`) is kept whole as its name (see `subjects.user`)."""
    if is_user_spec(spec):
        return SubjectSpec(spec.strip())
    m = _SPEC.match(spec or "")
    if not m:
        raise UnknownSubject(f"subject {spec!r} is not of the form NAME or NAME==VERSION (known: {', '.join(names())})")
    return SubjectSpec(m.group(1).lower().replace("_", "-"), m.group(2))


Factory = Callable[["FrozenTokenizer", "str | None"], Subject]


@dataclass(frozen=True)
class SubjectEntry:
    """Where a subject's class lives (`module:attribute`) and the fixed keyword options it is built with."""
    target: str
    options: tuple[tuple[str, object], ...] = ()


# Subject name -> where it lives. Nothing here imports a subject: the table names module paths (imported by
# `delta_suite.subjects.by_name` when that subject is asked for), so the protocol sits below every concrete subject
# and a peer's absence never breaks the suite.
SUBJECTS: dict[str, SubjectEntry] = {
    "delta": SubjectEntry("delta_suite.subjects.delta_subject:DeltaSubject"),
    "lopt": SubjectEntry("delta_suite.subjects.lopt:LoptSubject", (("compare_ids", False),)),
    "lopt-ids": SubjectEntry("delta_suite.subjects.lopt:LoptSubject", (("compare_ids", True),)),
    "toktier": SubjectEntry("delta_suite.subjects.toktier_subject:TokTierSubject"),
    "fastokens": SubjectEntry("delta_suite.subjects.fastokens_subject:FastokensSubject"),
    "gigatoken": SubjectEntry("delta_suite.subjects.gigatoken_subject:GigatokenSubject"),
    "paralleltokenizer": SubjectEntry("delta_suite.subjects.paralleltokenizer_subject:ParallelTokenizerSubject"),
}


ENTRY_POINT_GROUP = "delta_suite.subjects"
_IMPORT_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def is_import_spec(spec: str) -> bool:
    """`module.path:attribute` (the form ASGI servers and entry points use)."""
    return bool(_IMPORT_SPEC.match(spec.strip()))


def is_exec_spec(spec: str) -> bool:
    """`exec:COMMAND`: a subject in any language behind the JSON-lines protocol (`subjects.exec_protocol`)."""
    return spec.strip().startswith("exec:")


def is_user_spec(spec: str | None) -> bool:
    """Whether `spec` names a user subject by import path or command (not a built-in or entry-point name)."""
    return bool(spec) and (is_import_spec(str(spec)) or is_exec_spec(str(spec)))


def entry_point_names() -> dict[str, str]:
    """Subjects registered by installed packages: entry-point name -> `module:attribute`."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Every known subject name, the default (`delta`) first, then the entry points of installed packages."""
    return list(dict.fromkeys([*SUBJECTS, *entry_point_names()]))


def is_third_party(spec: str | None) -> bool:
    """Whether `spec` names an implementation other than the minimal one: a built-in peer, an entry point, or a
    user subject by import path or command."""
    if not spec:
        return False
    try:
        parsed = parse_subject(spec)
    except UnknownSubject:
        return False
    return parsed.name != DEFAULT_SUBJECT and (parsed.name in names() or is_user_spec(parsed.name))


DEFAULT_SUBJECT = "delta"

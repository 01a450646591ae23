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
from importlib import import_module
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from frozen.errors import SuiteError

if TYPE_CHECKING:
    from frozen.loader import FrozenTokenizer


class SubjectUnavailable(SuiteError):
    """A subject that cannot run here; `.reason` says why (not installable, import failed, tokenizer refused)."""

    def __init__(self, subject: str, reason: str) -> None:
        super().__init__(f"subject {subject} is not available: {reason}")
        self.subject, self.reason = subject, reason


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
    """Parse `NAME[==VERSION]`; the name is lower-cased and `_` is read as `-`."""
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

    def factory(self) -> Factory:
        """The class, imported only now: a subject's module (and its peer) is loaded when that subject is asked for."""
        module, _, attribute = self.target.partition(":")
        cls = getattr(import_module(module), attribute)
        options = dict(self.options)
        return lambda tok, version: cls(tok, version, **options)


# Subject name -> where it lives. Nothing here imports a subject: the table names module paths, so the protocol
# sits below every concrete subject and a peer's absence never breaks the suite.
SUBJECTS: dict[str, SubjectEntry] = {
    "delta": SubjectEntry("subjects.delta_subject:DeltaSubject"),
    "lopt": SubjectEntry("subjects.lopt:LoptSubject", (("compare_ids", False),)),
    "lopt-ids": SubjectEntry("subjects.lopt:LoptSubject", (("compare_ids", True),)),
    "toktier": SubjectEntry("subjects.toktier_subject:TokTierSubject"),
    "fastokens": SubjectEntry("subjects.fastokens_subject:FastokensSubject"),
    "gigatoken": SubjectEntry("subjects.gigatoken_subject:GigatokenSubject"),
    "paralleltokenizer": SubjectEntry("subjects.paralleltokenizer_subject:ParallelTokenizerSubject"),
}


def names() -> list[str]:
    """Every known subject name, the default (`delta`) first."""
    return list(SUBJECTS)


DEFAULT_SUBJECT = "delta"


def get_subject(spec: str | None, tok: FrozenTokenizer) -> Subject:
    """Build subject `spec` (`NAME[==VERSION]`, default `delta`) bound to `tok`; SubjectUnavailable if it cannot run."""
    parsed = parse_subject(spec or DEFAULT_SUBJECT)
    entry = SUBJECTS.get(parsed.name)
    if entry is None:
        raise UnknownSubject(f"unknown subject {parsed.name!r}; known: {', '.join(names())}")
    return entry.factory()(tok, parsed.version)

"""Subjects: implementations the suite certifies (the minimal one by default, PyPI peers, the LoPT joiner)."""

from subjects.protocol import (
    DEFAULT_SUBJECT,
    Subject,
    SubjectUnavailable,
    UnknownSubject,
    get_subject,
    names,
    parse_subject,
)

__all__ = [
    "DEFAULT_SUBJECT",
    "Subject",
    "SubjectUnavailable",
    "UnknownSubject",
    "get_subject",
    "names",
    "parse_subject",
]

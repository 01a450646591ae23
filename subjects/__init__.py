"""Subjects: implementations the suite certifies (the minimal one by default, PyPI peers, the LoPT joiner).

A subject is built by name with `delta_suite.subjects.by_name.get_subject`, which sits above every concrete subject;
the package itself re-exports only the protocol's names, so importing it (as each of its modules does) imports no
subject.
"""

from delta_suite.subjects.protocol import (
    DEFAULT_SUBJECT,
    Subject,
    SubjectUnavailable,
    UnknownSubject,
    names,
    parse_subject,
)

__all__ = [
    "DEFAULT_SUBJECT",
    "Subject",
    "SubjectUnavailable",
    "UnknownSubject",
    "names",
    "parse_subject",
]

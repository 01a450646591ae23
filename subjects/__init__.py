"""Subjects: implementations the suite certifies (the minimal one by default, PyPI peers, the LoPT joiner).

`get_subject` is re-exported lazily (PEP 562): it lives above every concrete subject (`by_name`), and importing the
package, as each of its modules does, must not import them all.
"""

from __future__ import annotations

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
    "get_subject",
    "names",
    "parse_subject",
]


def __getattr__(name: str):
    if name == "get_subject":
        from delta_suite.subjects.by_name import get_subject

        return get_subject
    raise AttributeError(f"module 'delta_suite.subjects' has no attribute {name!r}")

"""A subject by name: the one place that turns a `--subject` value into an implementation bound to a tokenizer.

It sits above the protocol (which only parses and names subjects, and imports none) and above the user subjects
(`module:factory`, `exec:COMMAND`, entry points), so the package's imports read in one direction: protocol, then
the subjects, then this.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from delta_suite.subjects.protocol import (
    DEFAULT_SUBJECT,
    SUBJECTS,
    Factory,
    Subject,
    SubjectEntry,
    UnknownSubject,
    entry_point_names,
    is_user_spec,
    names,
    parse_subject,
)
from delta_suite.subjects.user import open_user_subject

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer


def entry_factory(entry: SubjectEntry) -> Factory:
    """The class of a built-in subject, imported only now: a subject's module (and its peer) is loaded when that
    subject is asked for."""
    module, _, attribute = entry.target.partition(":")
    cls = getattr(import_module(module), attribute)
    options = dict(entry.options)
    return lambda tok, version: cls(tok, version, **options)


def get_subject(spec: str | None, tok: FrozenTokenizer) -> Subject:
    """Build subject `spec` (`NAME[==VERSION]`, default `delta`) bound to `tok`; SubjectUnavailable if it cannot run."""
    parsed = parse_subject(spec or DEFAULT_SUBJECT)
    entry = SUBJECTS.get(parsed.name)
    if entry is None:
        if is_user_spec(parsed.name) or parsed.name in entry_point_names():
            return open_user_subject(parsed.name, tok)
        raise UnknownSubject(f"unknown subject {parsed.name!r}; known: {', '.join(names())}, or module:factory, "
                             "or exec:COMMAND")
    return entry_factory(entry)(tok, parsed.version)

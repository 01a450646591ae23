"""Bring your own implementation: a subject named by import path, by entry point, or by a command over a pipe.

Three ways to name a subject anywhere `--subject` is taken (fuzz, corpora compare, the kill matrix, the pytest
plugin):

- `--subject my_pkg.module:factory` imports `my_pkg.module` and calls `factory(tokenizer_files, config)`;
- `--subject NAME` finds NAME among the entry points of group `delta_suite.subjects` of the installed packages
  (`[project.entry-points."delta_suite.subjects"] my-tok = "my_pkg.module:factory"`);
- `--subject exec:COMMAND` starts COMMAND (split like a shell would, run without one) and speaks the JSON-lines
  protocol of `subjects.exec_protocol` on its standard input and output.

What a factory is given is plain data, never the suite's objects: `tokenizer_files` = {"tokenizer_json": PATH,
"tokenizer_config_json": PATH or None, "name": the registry name, "sha256": the tokenizer.json digest}, and
`config` = the tokenizer's registry row as a dict (alias, normalizer, split family, margin, bound, ...). It
returns an object with `encode(text) -> list[int]` (required: the IDs of one whole encode, no sequence-level
post-processing, i.e. `add_special_tokens=False`), optionally `session()` (an object whose `encode(text)` receives
the growing transcript of one conversation and returns the IDs of all of it) and `encode_chunked(text, chunks)`,
and optionally `name` and `version` attributes (shown in reports as reported; defaults: the spec, and the
distribution version of the module's top package).

Honest outcomes: a subject that cannot be imported or built is `SubjectUnavailable` ("not installed", never a
pass). A call that raises, hangs past the per-call timeout (`DELTA_SUBJECT_TIMEOUT`, default 30 s), or returns
anything but a list of ints raises `SubjectFault` with its kind ("crash", "timeout", "malformed"): a finding on
that input, kept apart from ID differences. After a timeout the subject is rebuilt (an exec: server restarted)
so a campaign goes on.
"""

from __future__ import annotations

import shlex
import threading
from importlib import import_module
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from typing import TYPE_CHECKING, Any

from delta_suite.subjects.exec_subject import ExecSubject
from delta_suite.subjects.protocol import (
    ENTRY_POINT_GROUP,
    SubjectFault,
    SubjectUnavailable,
    entry_point_names,
    is_exec_spec,
    is_import_spec,
)
from delta_suite.subjects.user_inputs import registry_row, timeout_seconds, tokenizer_files

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer

def checked_ids(value: Any, what: str) -> list[int]:
    """`value` as a list of ints, or SubjectFault("malformed") naming what came back."""
    if isinstance(value, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        return list(value)
    tolist = getattr(value, "tolist", None)  # numpy arrays
    if callable(tolist):
        return checked_ids(tolist(), what)
    shown = repr(value)
    raise SubjectFault("malformed", f"{what} returned {shown[:120]}, not a list of token IDs")


def _distribution_version(module: str) -> str:
    top = module.split(".", 1)[0]
    for dist in packages_distributions().get(top, []):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    mod = import_module(top)
    return str(getattr(mod, "__version__", "unknown"))


class _Timed:
    """Run a call in a daemon thread and wait at most the timeout (an in-process call cannot be killed: after a
    timeout the caller rebuilds the object and the stuck thread is left behind)."""

    @staticmethod
    def call(fn, *args, what: str, timeout: float):
        box: dict = {}

        def run() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - everything the subject raises is a finding
                box["error"] = exc

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise SubjectFault("timeout", f"{what} did not return within {timeout:g} s")
        if "error" in box:
            exc = box["error"]
            raise SubjectFault("crash", f"{what} raised {type(exc).__name__}: {exc}")
        return box["value"]


class ImportedSubject:
    """A user implementation built by `factory(tokenizer_files, config)` (see the module docstring)."""

    def __init__(self, tok: FrozenTokenizer, spec: str, target: str | None = None) -> None:
        self.tok, self.spec = tok, spec
        target = target or spec
        module, _, attribute = target.partition(":")
        try:
            obj: Any = import_module(module)
            for part in attribute.split("."):
                obj = getattr(obj, part)
        except Exception as exc:  # noqa: BLE001 - an import failure of user code is "not installed"
            raise SubjectUnavailable(spec, f"cannot import {target}: {type(exc).__name__}: {exc}") from exc
        if not callable(obj):
            raise SubjectUnavailable(spec, f"{target} is not callable (a factory(tokenizer_files, config))")
        self.factory, self.module = obj, module
        self.timeout = timeout_seconds()
        self._build()
        self.name = str(getattr(self.impl, "name", None) or spec)
        self.version = str(getattr(self.impl, "version", None) or _distribution_version(module))
        if callable(getattr(self.impl, "session", None)):
            self.session = self._session
        if callable(getattr(self.impl, "encode_chunked", None)):
            self.encode_chunked = self._encode_chunked

    def _build(self) -> None:
        try:
            self.impl = self.factory(tokenizer_files(self.tok), registry_row(self.tok))
        except Exception as exc:  # noqa: BLE001
            raise SubjectUnavailable(self.spec, f"factory failed: {type(exc).__name__}: {exc}") from exc
        if not callable(getattr(self.impl, "encode", None)):
            raise SubjectUnavailable(self.spec, "the factory's object has no encode(text) method")

    def _call(self, fn, *args, what: str):
        try:
            return _Timed.call(fn, *args, what=what, timeout=self.timeout)
        except SubjectFault as fault:
            if fault.kind == "timeout":
                self._build()  # a fresh object for the next call; the stuck call's thread is abandoned
            raise

    def encode(self, text: str) -> list[int]:
        return checked_ids(self._call(self.impl.encode, text, what="encode"), "encode")

    def _encode_chunked(self, text: str, chunks: int | None = None) -> list[int]:
        return checked_ids(self._call(self.impl.encode_chunked, text, chunks, what="encode_chunked"),
                           "encode_chunked")

    def _session(self) -> _UserSession:
        return _UserSession(self, self._call(self.impl.session, what="session"))


class _UserSession:
    def __init__(self, owner: ImportedSubject, session: Any) -> None:
        self.owner, self.inner = owner, session
        if not callable(getattr(session, "encode", None)):
            raise SubjectFault("malformed", "session() returned an object without encode(text)")

    def encode(self, text: str) -> list[int]:
        return checked_ids(self.owner._call(self.inner.encode, text, what="session.encode"), "session.encode")

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def open_user_subject(spec: str, tok: FrozenTokenizer):
    """The user subject `spec` (import path, `exec:` command, or entry-point name) bound to `tok`."""
    spec = spec.strip()
    if is_exec_spec(spec):
        command = shlex.split(spec.removeprefix("exec:"))
        if not command:
            raise SubjectUnavailable(spec, "exec: names no command")
        return ExecSubject(tok, spec, command, timeout_seconds())
    if is_import_spec(spec):
        return ImportedSubject(tok, spec)
    target = entry_point_names().get(spec)
    if target is None:
        raise SubjectUnavailable(spec, f"no entry point {spec!r} in group {ENTRY_POINT_GROUP}")
    return ImportedSubject(tok, spec, target)

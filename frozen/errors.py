"""Errors of provisioning and loading: each names what went wrong and what to do, never a traceback."""

from __future__ import annotations

import sys


class SuiteError(Exception):
    """Base of every user-facing error; the CLIs print its message and exit with status 2."""
    exit_code = 2


class UnknownTokenizer(SuiteError):
    """A name or alias that is not one of the eleven registry rows."""


class DigestMismatch(SuiteError):
    """A file whose SHA-256 differs from the registry digest; it is never installed or loaded."""

    def __init__(self, path: str, expected: str, actual: str) -> None:
        super().__init__(f"digest mismatch for {path}: expected sha256 {expected}, got {actual}; file refused")
        self.path, self.expected, self.actual = path, expected, actual


def reinstall_command(name: str) -> str:
    """The remedy for an installed row whose files changed: the command that re-installs it from its sources."""
    return f"corpora tokenizers pull {name} --force"


class InstalledFileChanged(DigestMismatch):
    """An installed file whose SHA-256 is no longer a registry digest: it was verified at install and changed
    since, so it is refused (exit status 2), and the message names the remedy, re-installing the row."""

    def __init__(self, path: str, expected: str, actual: str, name: str) -> None:
        super().__init__(path, expected, actual)
        self.name, self.remedy = name, reinstall_command(name)
        self.args = (f"{self.args[0]}: it changed since install; re-install it: {self.remedy}",)

    def __reduce__(self):  # a pool worker's error crosses the process boundary with its message intact
        return type(self), (self.path, self.expected, self.actual, self.name)


class CorruptTokenizerFile(SuiteError):
    """A file that is truncated, not JSON, or not a tokenizer configuration."""


class NotProvisioned(SuiteError):
    """A registry row whose files are not in the cache; `corpora tokenizers pull NAME` installs them."""


class SourceUnavailable(SuiteError):
    """A provisioning source that cannot deliver (mirror folder missing, hub unreachable, package fetch failed)."""


class CacheNotWritable(SuiteError):
    """The cache directory cannot be created or written (the environment: exit status 3)."""
    exit_code = 3


class EnvironmentFault(SuiteError):
    """The machine, not the input: a file or folder that cannot be written or read (permissions, a full disk, a
    path that is a file), a worker process that died. Exit status 3."""
    exit_code = 3


def os_error_message(exc: OSError) -> str:
    """"PATH: REASON" of an OSError, without a traceback (the path and the OS's own words)."""
    where = exc.filename if exc.filename is not None else ""
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}" if where else reason


class InvalidText(SuiteError):
    """Text that no tokenizer can take: a lone surrogate, or bytes that are not UTF-8."""


def run_command(parser, argv: list[str] | None = None) -> int:
    """Parse `argv` and run the chosen sub-command: a `SuiteError` becomes "error: ..." on stderr and its exit
    status (2, or 3 for the environment), an OSError (unwritable path, full disk) "error: PATH: REASON" and 3,
    Ctrl-C 130; never a traceback for bad input."""
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"error: {os_error_message(exc)}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

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


class CorruptTokenizerFile(SuiteError):
    """A file that is truncated, not JSON, or not a tokenizer configuration."""


class NotProvisioned(SuiteError):
    """A registry row whose files are not in the cache; `corpora tokenizers pull NAME` installs them."""


class SourceUnavailable(SuiteError):
    """A provisioning source that cannot deliver (mirror folder missing, hub unreachable, package fetch failed)."""


class CacheNotWritable(SuiteError):
    """The cache directory cannot be created or written."""


class InvalidText(SuiteError):
    """Text that no tokenizer can take: a lone surrogate, or bytes that are not UTF-8."""


def run_command(parser, argv: list[str] | None = None) -> int:
    """Parse `argv` and run the chosen sub-command: a `SuiteError` becomes "error: ..." on stderr and its exit
    status (2), Ctrl-C becomes 130; never a traceback for bad input."""
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

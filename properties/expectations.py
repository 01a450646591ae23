"""Named expectations of a harness test, counted before they are asserted.

A harness self-test checks several different things about a command or a report (an exit status, a file, a row);
its ledger record must count what it checked and what failed, never a literal 0. `Expectations` keeps each named
check's outcome: the record takes `comparisons` = the checks made and `differences` = the checks that failed (their
names in `details.failed_expectations`), and only then does `assert_all` fail the test on the first of them.
"""

from __future__ import annotations

import inspect
from pathlib import Path


class Expectations:
    """Named boolean checks; `failed` lists the names of those that did not hold, in the order they were made."""

    def __init__(self) -> None:
        self.results: dict[str, bool] = {}

    def check(self, holds: object, name: str | None = None) -> bool:
        """Note whether an expectation holds, by `name` (default: the caller's file and line); a name checked twice
        keeps its worse outcome."""
        if name is None:
            caller = inspect.currentframe().f_back  # type: ignore[union-attr]
            name = f"{Path(caller.f_code.co_filename).name}:{caller.f_lineno}"
        self.results[name] = bool(holds) and self.results.get(name, True)
        return self.results[name]

    @property
    def failed(self) -> list[str]:
        return [name for name, ok in self.results.items() if not ok]

    def counts(self) -> dict:
        """The record's fields: `comparisons` (checks made), `differences` (checks that failed), their names."""
        return {"comparisons": len(self.results), "differences": len(self.failed), "unit": "checks"}

    def record(self, ledger, level: str, check: str, tok=None, details: dict | None = None,
               oracle: str = "self") -> dict:
        """Write the record of these checks through the gate's `ledger` fixture. `oracle` defaults to "self": the
        suite's own machinery checked against named expectations; a caller whose checks compare with something else
        names it."""
        return ledger.record(level, check, tok, **self.counts(), oracle=oracle,
                             details={**(details or {}), "failed_expectations": self.failed})

    def assert_all(self) -> None:
        assert not self.failed, f"expectations that failed: {self.failed}"

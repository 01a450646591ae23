"""Live campaign progress: a rich panel on a terminal, a plain line log otherwise (both on stderr).

Shows the setup phase as soon as the campaign starts, then cases per second, cuts and repairs checked, the paths
taken (repair window k, fallbacks, accepted and refused cuts), differences, the checking time and the budget left.
The budget, the elapsed time and every rate count checking time only (from the first worker's end of setup), the
same clock the workers' deadlines use; setup time is shown apart.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from delta_suite.fuzz.ledger_writer import BatchTally

LOG_EVERY = 5.0


@dataclass
class Totals(BatchTally):
    """Running totals over every batch counted so far (this invocation plus what a resumed ledger held)."""

    batches: int = 0
    fast_by_path: Counter = field(default_factory=Counter)  # cut: texts actually cut; repair: served by repair
    fallbacks_by_path: Counter = field(default_factory=Counter)  # cut: served whole; repair: re-encoded whole

    def add(self, tally: dict) -> None:
        self.batches += 1
        for key in ("cases", "chars", "cuts", "repairs", "fast_path", "fallbacks", "differences"):
            setattr(self, key, getattr(self, key) + int(tally.get(key) or 0))
        self.reference_seconds += float(tally.get("reference_seconds") or 0.0)
        self.library_seconds += float(tally.get("library_seconds") or 0.0)
        self.paths.update(tally.get("paths") or {})
        self.faults.update(tally.get("faults") or {})
        path = tally.get("path") or "cut"
        self.fast_by_path[path] += int(tally.get("fast_path") or 0)
        self.fallbacks_by_path[path] += int(tally.get("fallbacks") or 0)


def _fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    s = max(0.0, s)
    return f"{int(s // 3600)}:{int(s % 3600 // 60):02d}:{int(s % 60):02d}"


def _paths_line(paths: Counter, limit: int = 6) -> str:
    return ", ".join(f"{k} {v}" for k, v in paths.most_common(limit)) or "-"


class Progress:
    """Receives totals and renders them; `start`, `update` and `stop` are safe to call on any stream."""

    def __init__(self, title: str, budget: float | None, stream: TextIO | None = None, live: bool | None = None):
        self.title, self.budget = title, budget
        self.stream = stream or sys.stderr
        self.live_mode = self.stream.isatty() if live is None else live
        self.started = time.monotonic()
        self.checking_since: float | None = None  # when the first worker finished its setup
        self.setup_seconds = 0.0
        self.last_log = 0.0
        self._live = None
        self._last, self._prior = Totals(), 0.0

    def checking(self, worker: int, setup_seconds: float) -> None:
        """A worker finished its setup: from the first one, the clock counts checking time."""
        if self.checking_since is None:
            self.checking_since = time.monotonic()
            self.setup_seconds = setup_seconds

    def checking_seconds(self) -> float:
        """Seconds of checking so far in this invocation (0 while every worker is still setting up)."""
        return 0.0 if self.checking_since is None else time.monotonic() - self.checking_since

    def elapsed(self) -> float:
        return self.checking_seconds()

    def phase(self) -> str:
        if self.checking_since is None:
            return f"setting up ({time.monotonic() - self.started:.0f} s: loading tokenizers, generator tables)"
        return f"checking (setup took {self.setup_seconds:.1f} s)"

    def line(self, totals: Totals, prior_elapsed: float = 0.0) -> str:
        el = prior_elapsed + self.elapsed()
        rate = totals.cases / el if el > 0 else 0.0
        remaining = None if self.budget is None else self.budget - el
        if self.checking_since is None:
            return f"{self.title}: {self.phase()}"
        return (
            f"{self.title}: {totals.cases} cases ({rate:.0f}/s), {totals.cuts} cuts, {totals.repairs} repairs "
            f"[{_paths_line(totals.paths)}], {totals.differences} differences, "
            f"elapsed {_fmt_seconds(el)}, remaining {_fmt_seconds(remaining)}"
        )

    def _table(self, totals: Totals, prior_elapsed: float):
        from rich.table import Table  # optional display: only a live terminal loads rich

        el = prior_elapsed + self.elapsed()
        t = Table(title=self.title, show_header=False, expand=False)
        t.add_row("phase", self.phase())
        rate, chars = (totals.cases / el, totals.chars / el) if el else (0.0, 0.0)
        t.add_row("cases", f"{totals.cases}  ({rate:.0f}/s, {chars:.0f} chars/s)")
        t.add_row("cuts checked", str(totals.cuts))
        t.add_row("repairs checked", f"{totals.repairs}  (repaired {totals.fast_by_path['repair']}, "
                  f"fell back {totals.fallbacks_by_path['repair']})")
        t.add_row("paths", _paths_line(totals.paths, 10))
        t.add_row("differences", f"[bold red]{totals.differences}[/]" if totals.differences else "0")
        t.add_row("checking time", _fmt_seconds(el))
        t.add_row("remaining", _fmt_seconds(None if self.budget is None else self.budget - el))
        return t

    def start(self) -> None:
        if self.live_mode:
            from rich.console import Console  # optional display: only a live terminal loads rich
            from rich.live import Live

            self._live = Live(console=Console(file=self.stream), refresh_per_second=4, transient=False,
                              get_renderable=lambda: self._table(self._last, self._prior))
            self._live.start()
        else:
            print(self.line(self._last, self._prior), file=self.stream, flush=True)
            self.last_log = time.monotonic()

    def update(self, totals: Totals, prior_elapsed: float = 0.0, force: bool = False) -> None:
        self._last, self._prior = totals, prior_elapsed
        if self._live is not None:
            self._live.update(self._table(totals, prior_elapsed))
            return
        now = time.monotonic()
        if force or now - self.last_log >= LOG_EVERY:
            self.last_log = now
            print(self.line(totals, prior_elapsed), file=self.stream, flush=True)

    def note(self, message: str) -> None:
        if self._live is not None:
            self._live.console.print(message)
        else:
            print(message, file=self.stream, flush=True)

    def stop(self, totals: Totals, prior_elapsed: float = 0.0) -> None:
        if self._live is not None:
            self._live.update(self._table(totals, prior_elapsed))
            self._live.stop()
            self._live = None
        else:
            self.update(totals, prior_elapsed, force=True)

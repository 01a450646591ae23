"""The kill tier: a short, fixed set of the suite's own differential checks that each mutant meets before its tests.

A mutant of a tokenizer-exactness module is usually killed by the first comparison with the reference that reaches
its line, and most of a mutant's time in its covering tests goes to starting pytest, collecting heavy test files and
running tests that were never going to kill it. The tier asks, in the test server's forked child (the tokenizers
already loaded, `spec/` and `delta/` imported from disk: the mutant), in this order and stopping at the first
difference:

- `battery`: the `ci` battery's differential checks (`checks.differential`: every cut `delta.cut_map` accepts
  splits the reference encode, the pieces concatenate to it, `delta.cuts.encode_chunked` equals it; the repair
  spec's splice equals the reference at every split; a `delta.session.Session` given S then S + D answers the
  reference encode of each) on one tokenizer per split pattern among the provisioned ones, the one with a
  normalizer included (`tier_tokenizers`);
- `short`: the short-text set (`checks.short_texts`) on the same tokenizers, through the chunked encode and a
  session.

Proposition (what a tier kill means): the tier, run on the unmutated module in the same server, finds no
difference (mutation.mutant_tests checks that once per session before it counts a tier kill), and on the mutant it
finds one, or raises: then a check of the suite tells the mutant apart from the module, which is what a kill is. A
mutant the tier lets through goes on to its covering tests exactly as without the tier, so a survivor is judged
as before; the tier only decides some kills sooner.

    python -m mutation.kill_tier [--tokenizer NAME ...] [--step battery|short ...]

Exit status: 0 no difference, 1 a difference (or an exception: the line says which check and where), 2 usage
error, 3 no provisioned tokenizer to check with.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from delta_suite.checks.battery import battery
from delta_suite.checks.differential import ReferenceMemo, check_cut_case, check_repair_case, first_difference
from delta_suite.checks.short_texts import short_texts, wrong_chunked, wrong_session
from delta_suite.delta.session import Session
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer, provisioned_names
from delta_suite.spec.admission import admission_of

STEPS = ("short", "battery")  # the cheaper first: a mutant that breaks everything fails on "a"
KILL_MARK = "mutation.kill_tier: difference"  # the line a tier kill prints (mutation.session counts them)
PASS_MARK = "mutation.kill_tier: no difference"


@dataclass
class Tally:
    """What the tier compared: comparisons per step, and the first difference found (None: none)."""

    comparisons: dict[str, int]
    difference: str | None = None


def tier_tokenizers(names: list[str] | None = None) -> list[str]:
    """The first provisioned tokenizer of each admitted split pattern (their order kept), and the first one with a
    normalizer when none of those has one: the differential checks differ per pattern (which boundaries exist) and
    per normalizer (NFC moves text), so one of each reaches every code path a family has."""
    names = provisioned_names() if names is None else names
    chosen, patterns = [], set()
    for name in names:
        tok = load_tokenizer(name)
        verdict = admission_of(tok)
        if not verdict.admitted or verdict.pattern in patterns:
            continue
        patterns.add(verdict.pattern)
        chosen.append(name)
    if not any(_normalizes(load_tokenizer(n)) for n in chosen):
        chosen += [n for n in names if _normalizes(load_tokenizer(n))][:1]
    return chosen


def _normalizes(tok: FrozenTokenizer) -> bool:
    return tok.normalizer not in (None, "none", "empty_sequence")


def _battery_checks(tok: FrozenTokenizer) -> Iterator[tuple[int, str | None]]:
    """Per battery case: the comparisons made and where the first difference is (None: none)."""
    memo = ReferenceMemo(tok)
    for case in battery(tok, "ci"):
        for check in (check_cut_case, check_repair_case):
            result = check(tok, case, memo=memo)
            where = f"{check.__name__} case {case.index} ({case.hazard}) at {result.first.where}" \
                if result.first is not None else None
            yield result.comparisons, where
        compared, where = 0, None
        for s in case.splits:
            session = Session(tok)
            for given in (case.text[:s], case.text):
                compared += 1
                diff = first_difference(memo.ids(given), list(session.encode(given)))
                if diff is not None and where is None:
                    where = f"Session case {case.index} ({case.hazard}) split {s}, given {len(given)} characters, " \
                            f"at ID {diff.position}"
        yield compared, where


def _short_checks(tok: FrozenTokenizer) -> Iterator[tuple[int, str | None]]:
    texts = short_texts(tok)
    wrong = wrong_chunked(tok, texts)
    yield len(texts), f"encode_chunked on {wrong[0]!r}" if wrong else None
    wrong = wrong_session(tok, texts)
    yield 2 * len(texts), f"Session on {wrong[0]!r}" if wrong else None


CHECKS: dict[str, Callable[[FrozenTokenizer], Iterator[tuple[int, str | None]]]] = {
    "battery": _battery_checks, "short": _short_checks}


def run_tier(names: list[str], steps: tuple[str, ...] = STEPS) -> Tally:
    """Run the steps on each named tokenizer, stopping at the first difference or exception (which counts as one:
    a test would fail on it)."""
    tally = Tally({step: 0 for step in steps})
    for step in steps:
        for name in names:
            tok = load_tokenizer(name)
            try:
                for compared, where in CHECKS[step](tok):
                    tally.comparisons[step] += compared
                    if where is not None:
                        tally.difference = f"{step} on {name}: {where}"
                        return tally
            except Exception as exc:  # a mutant that raises is told apart as surely as one that answers wrong
                last = traceback.extract_tb(exc.__traceback__)[-1]
                tally.difference = (f"{step} on {name}: raised {type(exc).__name__}: {exc} "
                                    f"({last.filename}:{last.lineno})")
                return tally
    return tally


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutation.kill_tier", description=__doc__.split("\n\n")[0])
    p.add_argument("--tokenizer", action="append", default=[],
                   help="a provisioned tokenizer (repeatable; default: one per split pattern, see tier_tokenizers)")
    p.add_argument("--step", action="append", choices=STEPS, default=[], help="a step (repeatable; default: all)")
    args = p.parse_args(argv)
    names = args.tokenizer or tier_tokenizers()
    unknown = sorted(set(names) - set(provisioned_names()))
    if unknown:
        print(f"error: not provisioned: {', '.join(unknown)}", file=sys.stderr)
        return 2
    if not names:
        print("error: no provisioned tokenizer to run the kill tier with", file=sys.stderr)
        return 3
    t0 = time.perf_counter()
    tally = run_tier(names, tuple(args.step) or STEPS)
    counts = ", ".join(f"{step} {n:,}" for step, n in tally.comparisons.items())
    took = f"{time.perf_counter() - t0:.1f} s"
    if tally.difference is not None:
        print(f"{KILL_MARK}: {tally.difference} ({counts} comparisons with the reference on {' '.join(names)}, {took})",
              flush=True)
        return 1
    print(f"{PASS_MARK} ({counts} comparisons with the reference on {' '.join(names)}, {took})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

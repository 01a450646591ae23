"""Two runs of the gate side by side, from their JUnit XML: the figures of each, and the tests the later run lost.

`python -m delta_suite.benchmarks.gate_compare BEFORE.xml AFTER.xml` prints a Markdown table: tests, outcomes, total
test time,
the per-code-point files' test time (`PER_CODE_POINT_FILES`), the longest test, the tests over `LIMIT_S`, and
the 64-worker bounds of `benchmarks.gate_durations` (without collection): the lower bound max(longest, total / 64)
and the worst case of a greedy scheduler, longest + total / 64. Then it lists every test id of BEFORE
that AFTER does not have (dropped) and every test that passed in BEFORE and is skipped in AFTER (moved out of the
run, e.g. to the slow tier). A test id is `classname::name` as pytest writes it.

Exit status: 0 when no test was dropped or moved, 1 when one was (a difference found), 2 when a file is missing or
not JUnit XML.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from delta_suite.benchmarks.gate_durations import GOAL_WORKERS, _outcome

PER_CODE_POINT_FILES = ("properties.test_cut_exhaustive", "properties.test_cut_map")
LIMIT_S = 20.0


def outcomes_and_times(xml_path: Path) -> dict[str, tuple[str, float]]:
    """Every testcase of a JUnit XML file: its id, outcome and seconds (setup, call and teardown together)."""
    root = ET.parse(xml_path).getroot()
    return {f"{c.get('classname', '')}::{c.get('name', '')}": (_outcome(c), float(c.get("time") or 0.0))
            for c in root.iter("testcase")}


def figures(run: dict[str, tuple[str, float]]) -> dict:
    """The compared figures of one run."""
    times = {t: s for t, (_o, s) in run.items()}
    total = sum(times.values())
    longest = max(times.items(), key=lambda kv: (kv[1], kv[0])) if times else ("-", 0.0)
    counts: dict[str, int] = {}
    for outcome, _s in run.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    per_code_point = sum(s for t, s in times.items() if t.split("::")[0] in PER_CODE_POINT_FILES)
    return {"tests": len(run), "outcomes": counts, "total_s": total, "per_code_point_s": per_code_point,
            "longest": longest, "over_limit": sorted(t for t, s in times.items() if s > LIMIT_S),
            "bound_64_s": max(longest[1], total / GOAL_WORKERS), "worst_case_64_s": longest[1] + total / GOAL_WORKERS}


def lost_tests(before: dict[str, tuple[str, float]], after: dict[str, tuple[str, float]]) -> tuple[list, list]:
    """(ids of BEFORE missing from AFTER, ids that passed in BEFORE and are skipped in AFTER)."""
    dropped = sorted(t for t in before if t not in after)
    moved = sorted(t for t, (o, _s) in before.items() if o == "passed" and after.get(t, ("", 0))[0] == "skipped")
    return dropped, moved


def table(before: dict, after: dict, names: tuple[str, str]) -> list[str]:
    """The Markdown table of the two runs' figures."""
    fb, fa = figures(before), figures(after)

    def row(label: str, f) -> str:
        return f"| {label} | {f(fb)} | {f(fa)} |"

    return [
        f"| figure | {names[0]} | {names[1]} |", "|---|---|---|",
        row("tests", lambda f: str(f["tests"])),
        row("outcomes", lambda f: ", ".join(f"{k} {v}" for k, v in sorted(f["outcomes"].items()))),
        row("total test time", lambda f: f"{f['total_s']:.0f} s"),
        row("per-code-point files (" + ", ".join(p.split(".")[-1] for p in PER_CODE_POINT_FILES) + ")",
            lambda f: f"{f['per_code_point_s']:.0f} s"),
        row("longest test", lambda f: f"{f['longest'][1]:.1f} s (`{f['longest'][0].split('::')[-1]}`)"),
        row(f"tests over {LIMIT_S:.0f} s", lambda f: str(len(f["over_limit"]))),
        row(f"bound on {GOAL_WORKERS} workers, max(longest, total / {GOAL_WORKERS}), collection apart",
            lambda f: f"{f['bound_64_s']:.1f} s"),
        row(f"worst case on {GOAL_WORKERS} workers of a greedy order, longest + total / {GOAL_WORKERS}, "
            "collection apart",
            lambda f: f"{f['worst_case_64_s']:.1f} s"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delta_suite.benchmarks.gate_compare",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the earlier run's JUnit XML (pytest --junitxml)")
    parser.add_argument("after", type=Path, help="the later run's JUnit XML")
    parser.add_argument("--names", nargs=2, default=("before", "after"), metavar=("BEFORE", "AFTER"),
                        help="column titles (default: before after)")
    args = parser.parse_args(argv)
    try:
        before, after = outcomes_and_times(args.before), outcomes_and_times(args.after)
    except (OSError, ET.ParseError) as exc:
        print(f"error: cannot read a JUnit XML file: {exc}", file=sys.stderr)
        return 2
    print("\n".join(table(before, after, tuple(args.names))))
    dropped, moved = lost_tests(before, after)
    print(f"\ntests of {args.names[0]} missing from {args.names[1]}: {len(dropped)}; passed in {args.names[0]} and "
          f"skipped in {args.names[1]}: {len(moved)}")
    for t in dropped + moved:
        print(f"- {t}")
    return 1 if dropped or moved else 0


if __name__ == "__main__":
    sys.exit(main())

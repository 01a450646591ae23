"""`python -m mutation diff`: the mutants of a change, run and reported (mutation.change picks them, mutation.session
runs them, mutation.carried_map gives their tests when the map is stale).

A change's mutants are not the module's score: nothing here writes mutation/results.json; the report goes to
`<work>/diff/report.json` and the terminal.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from delta_suite.ledger.lock import FolderLock

from mutation.carried_map import carried_map, changed_test_files, check_tests_pass
from mutation.change import arid_lines, changed_lines_since, check_base, choose_for_change, default_base
from mutation.coverage_map import CoverageMap, MapError, load_map
from mutation.session import ModuleRun, run_module
from mutation.tree import commit_of, python_digest

COUNTED = ("killed", "timeout", "survived", "incompetent", "unfinished")  # the outcomes of a mutant that ran


def _say(line: str) -> None:
    print(f"[mutation] {line}", file=sys.stderr, flush=True)


def slug(module: str) -> str:
    """The folder name of a module's session: `spec/cut.py` -> `spec__cut`."""
    return module.replace("/", "__").removesuffix(".py")


def map_for_change(root: Path, work: Path, map_path: Path, tests: list[str], modules: list[str],
                   say: Callable[[str], None] = _say) -> CoverageMap:
    """The coverage map of the code at `root`: the saved one (`map_path`) when it was measured on this code, else
    carried from it (mutation.carried_map; its measuring copy is `map_path.parent/_map/tree`) after the test files
    it adds whole (changed or new since then) passed on the unmutated code in one pytest run (in `work/check`; their
    time is that run's, an upper bound for each). MapError when there is no saved map, or those tests fail."""
    if not map_path.exists():
        raise MapError(f"no coverage map ({map_path}): `python -m mutation map` measures it once (about 20 minutes "
                       "on 2 cores); after that `diff` carries it to the current code without measuring again")
    cmap = load_map(map_path)
    if cmap.digest == python_digest(root):
        return cmap
    measured = map_path.parent / "_map" / "tree"
    with FolderLock(measured.parent):  # no `map` measures meanwhile
        changed = changed_test_files(measured, root, tests)
        seconds = 0.0
        if changed:
            say(f"running the {len(changed)} changed or new test files on the unmutated code: {' '.join(changed)}")
            seconds = check_tests_pass(root, changed, work / "check")
        carried = carried_map(cmap, measured, root, changed, modules, dict.fromkeys(changed, seconds))
    say(f"the coverage map was measured at {cmap.commit}: carried to the current code (unchanged lines keep their "
        f"tests, changed lines get their function's; {len(changed)} changed or new test files added whole); "
        "`python -m mutation map` measures it exactly")
    return carried


def run_change(root: Path, base: str | None, work: Path, map_path: Path, modules: list[str], tests: list[str],
               per_line: int = 2, tier: str = "auto", use_server: bool = True, budget: float | None = None,
               jobs: int = 1, out: Callable[[str], None] = print, say: Callable[[str], None] = _say) -> int:
    """Run the mutants of the lines of `modules` changed since `base` (default: mutation.change.default_base), at
    most `per_line` per line, arid lines skipped, each session fresh in `work/diff/<module>`; print each survivor
    (position, operator, source line, diff) and a summary through `out`, write `work/diff/report.json`; 1 when a
    mutant survived that is not equivalent by construction (mutation.mutant_tests decides those), else 0 (nothing
    changed too). ChangeError for a bad base (usage), MapError or SessionError for the environment.

    With `budget`, each mutant's covering tests get at most that many seconds after the kill tier (as a sample's
    first pass): a mutant that outruns it is neither killed nor survived but unfinished, printed as such, and makes
    the result 1 too (the change is not shown to be seen); a run without the budget judges it. A survivor of a
    function that almost every test runs costs a whole gate run without one. With `jobs` above 1, each mutant's
    covering tests are split over that many cores side by side (a change's sessions run one after another)."""
    t0 = time.monotonic()
    sources = tuple(sorted({m.split("/")[0] for m in modules}))
    base = check_base(root, base) if base is not None else default_base(root, sources)
    changed = changed_lines_since(root, base, modules)
    targets = {}
    arid_total = 0
    for module, lines in changed.items():
        arid = arid_lines((root / module).read_text(encoding="utf-8")) & lines
        arid_total += len(arid)
        if lines - arid:
            targets[module] = (lines, arid)
    report: dict = {"base": base, "commit": commit_of(root), "per_line": per_line, "budget": budget,
                    "unfinished": [], "changed_lines": sum(
        len(v) for v in changed.values()), "arid_lines": arid_total, "modules": [], "survivors": []}
    if not targets:
        out(f"no line to mutate: {'no change to ' + ', '.join(sources) if not changed else 'only arid lines changed'}"
            f" since {base}")
        _write(work, report, time.monotonic() - t0)
        return 0
    diff_work = work / "diff"
    diff_work.mkdir(parents=True, exist_ok=True)
    with FolderLock(diff_work):
        cmap = map_for_change(root, diff_work, map_path, tests, modules, say)
        report["map"] = {"commit": cmap.commit, "carried_from": cmap.carried_from}
        runs: list[ModuleRun] = []
        for module, (lines, arid) in targets.items():
            say(f"{module}: mutants of {len(lines - arid)} changed lines")
            run = run_module(module, cmap, diff_work / slug(module), resume=False, root=root,
                             choose=choose_for_change(lines, arid, per_line), tier=tier, use_server=use_server,
                             budget=budget, jobs=jobs)
            runs.append(run)
            report["modules"].append({"module": module, "lines": sorted(lines - arid), "arid": sorted(arid),
                                      **{k: run.count(k) for k in COUNTED},
                                      "by_tier": sum(m.by_tier for m in run.mutants), "seconds": run.seconds})
    survivors = [(r.module, m) for r in runs for m in r.mutants if m.outcome == "survived"]
    for module, m in survivors:
        out(f"{module}:{m.line_number}:{m.column} {m.operator}" + (f"  (equivalent: {m.equivalent})"
                                                                    if m.equivalent else ""))
        out(f"    {m.line}")
        out("\n".join("        " + d for d in m.diff.strip("\n").splitlines()))
        report["survivors"].append({"module": module, **{k: v for k, v in asdict(m).items() if k != "outcome"}})
    unfinished = [(r.module, m) for r in runs for m in r.mutants if m.outcome == "unfinished"]
    for module, m in unfinished:
        out(f"{module}:{m.line_number}:{m.column} {m.operator}  (unfinished within {budget:g} s: a run without "
            "--budget judges it)")
        out(f"    {m.line}")
        report["unfinished"].append({"module": module, "line_number": m.line_number, "column": m.column,
                                     "operator": m.operator, "line": m.line})
    count = {k: sum(row[k] for row in report["modules"]) for k in (*COUNTED, "by_tier")}
    equivalent = sum(bool(m.equivalent) for _, m in survivors)
    lines_run = sum(len(v[0] - v[1]) for v in targets.values())
    report["totals"] = {"mutants": sum(count[k] for k in COUNTED), "lines": lines_run, "modules": len(targets),
                        **count, "equivalent": equivalent}
    seconds = _write(work, report, time.monotonic() - t0)
    carried = f"; map carried from {cmap.carried_from}" if cmap.carried_from else ""
    out(f"{report['totals']['mutants']} mutants on {lines_run} changed "
        f"lines ({arid_total} arid lines skipped) of {len(targets)} modules since {base}: {count['killed']} killed "
        f"({count['by_tier']} by the kill tier), {count['timeout']} timeouts, {count['survived']} survived"
        f"{f' ({equivalent} equivalent by construction)' if equivalent else ''}, "
        + (f"{count['unfinished']} unfinished within {budget:g} s, " if budget is not None else "")
        + f"{count['incompetent']} incompetent; {seconds:.0f} s{carried} (report: {work / 'diff' / 'report.json'})")
    return 1 if len(survivors) > equivalent or unfinished else 0


def _write(work: Path, report: dict, seconds: float) -> float:
    report["seconds"] = round(seconds, 1)
    path = work / "diff" / "report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return seconds

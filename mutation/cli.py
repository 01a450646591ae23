"""`python -m mutation`: the opt-in mutation profile (`./run mutate` installs what it needs and calls it).

    python -m mutation map                        measure which test files execute which statements (once per
                                                  change of the code; `run` does it when the map is missing or stale)
    python -m mutation list                       the modules of spec/ and delta/ and the test files executing each
    python -m mutation run --module spec/cut.py   run (or resume) one module's session; repeatable
    python -m mutation run --all                  every module, one after another
    python -m mutation sample --seed S --per-module K [--budget S] [--shard K/N]
                                                  judge a seeded sample of every module's mutants, stratified by
                                                  operator kind: the score per module and overall with a 95%
                                                  interval (mutation.sample; resumable like `run`; a budget leaves
                                                  slow survivors unfinished, the score a lower bound until a run
                                                  with a larger budget or none judges them)
    python -m mutation status                     the score and every survivor with its verdict
    python -m mutation checkpoint                 keep the finished mutants of unfinished local sessions in the
                                                  results file, so a session on another machine carries them
    python -m mutation confirm                    check every 'killed' verdict: its test fails on the survivor's
                                                  mutant and passes without it (mutation.confirm; exit 0 all held,
                                                  1 one does not hold or its module changed, 2 no such test, 3 the
                                                  test fails unmutated)
    python -m mutation diff [BASE] [--budget S] [--jobs N]
                                                  the mutants of a change: only the lines of spec/ and delta/
                                                  added or modified since BASE, at most --per-line (2) each, arid
                                                  lines (logging, docstrings, memo sizes) skipped; each mutant's
                                                  covering tests split over --jobs (2) cores; each survivor
                                                  printed with its line and diff (mutation.change_run; exit 0 none
                                                  survived, 1 survivors or, with a budget, mutants unfinished
                                                  within it; never writes the results file)

Each mutant runs the test files that execute its statement (mutation.coverage_map), fastest first, stopping at the
first failure; `run --every-file` runs every file that executes the module instead (slower; to confirm survivors).
The tests of each mutant run in a child forked from the session's test server, which loaded the frozen tokenizers
once (mutation.fork_server), after the module's test files passed through it on the unmutated copy; `--no-server`
runs them in a process of their own (as the server does when that baseline fails).
`run` merges each finished module into mutation/results.json (commit it with the verdicts); sessions of different
modules may run at once, one per core (two `run` commands), but not two of the same module. A session interrupted
with Ctrl-C or SIGTERM (the tests of its current mutant stopped, never judged) keeps the mutants it finished in
out/mutation/<module>/session.sqlite and the next `run` of the module resumes there (`--fresh` starts over); such a
run, and `checkpoint`, also write the finished mutants into the results file's "partial" section, which a fresh
session of the same module source on any machine starts from (mutation.carry; the module's entry then names the
commits whose tests judged the carried mutants).
Exit status: 0 every survivor has a verdict (`diff`: no mutant of the change survived, or nothing changed),
1 a survivor without one (a blind spot of the gate to judge; `diff`: a mutant of the change survived), 2 usage or
input error (`diff`: a base git cannot resolve, not a git checkout), 3 environment error (cosmic-ray missing, the
selected tests failing on the unmutated tree; `diff`: no coverage map yet, changed test files failing unmutated),
130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from dataclasses import asdict
from pathlib import Path

from delta_suite.ledger.lock import FolderBusy, FolderLock

from mutation.change import ChangeError
from mutation.change_run import run_change, slug
from mutation.confirm import CONFIRM_LIMIT_SECONDS, confirm_killed, exit_status
from mutation.coverage_map import TEST_GLOB, CoverageMap, MapError, build_map, load_map, save_map
from mutation.modules import ROOT, mutated_modules, observed_folders
from mutation.mutant_tests import TIER_MODES
from mutation.results import (
    RESULTS_FILE,
    read_results,
    summary,
    update_confirmations,
    update_partial,
    update_results,
    update_sample,
)
from mutation.sample import sample_entry, stratified_choice
from mutation.session import SessionError, checkpoint, run_module, sigterm_as_interrupt
from mutation.settle import judged_keys
from mutation.tree import commit_of, python_digest
from mutation.verdicts import VERDICTS_FILE, VerdictFileError, read_verdicts

WORK = ROOT / "out" / "mutation"
WORK_HELP = "folder of the local sessions' working files (default out/mutation)"
RESULTS_HELP = "the results file the score is read from and written to (default mutation/results.json)"
TIER_HELP = ("the kill tier (mutation.kill_tier) among each mutant's covering tests: on (before them), off, or auto "
             "(the default: after a head start of the tests as long as the tier's checks, before the rest)")
MAP_FILE = "coverage-map.json"  # in the work folder, with its measuring copy in `<work>/_map`


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mutation", description=__doc__.split("\n\n")[0])
    p.add_argument("--verdicts", type=Path, default=VERDICTS_FILE,
        help="the verdicts file (TOML; default: mutation/verdicts.toml)")
    sub = p.add_subparsers(dest="command", required=True)
    measure = sub.add_parser("map", help="measure the coverage map (which test files execute which statements)")
    measure.add_argument("--jobs", type=int, default=2, help="test files measured at once (default 2)")
    measure.add_argument("--work", type=Path, default=WORK, help=WORK_HELP)
    listing = sub.add_parser("list", help="the mutated modules and the test files executing each")
    listing.add_argument("--work", type=Path, default=WORK, help=WORK_HELP)
    run = sub.add_parser("run", help="run or resume modules' sessions")
    run.add_argument("--module", action="append", default=[],
        help="a module path such as spec/cut.py, repeatable (default: none; --all for every module)")
    run.add_argument("--all", action="store_true", help="every module of spec/ and delta/")
    run.add_argument("--fresh", action="store_true", help="start the sessions over instead of resuming")
    run.add_argument("--no-server", action="store_true",
                     help="run each mutant's tests in a process of their own, not forked from the test server")
    run.add_argument("--tier", choices=TIER_MODES, default="auto", help=TIER_HELP)
    run.add_argument("--every-file", action="store_true",
                     help="each mutant runs every test file executing the module, not only its statement's")
    run.add_argument("--jobs", type=int, default=2,
        help="test files measured at once if the map is measured (default: %(default)s)")
    run.add_argument("--results", type=Path, default=RESULTS_FILE, help=RESULTS_HELP)
    run.add_argument("--work", type=Path, default=WORK, help=WORK_HELP)
    draw = sub.add_parser("sample", help="judge a seeded, stratified sample of every module's mutants: the score "
                          "with its 95%% interval")
    draw.add_argument("--seed", type=int, required=True, help="the draw's seed (the same seed draws the same mutants)")
    draw.add_argument("--per-module", type=int, required=True, help="mutants drawn per module (at most; >= 1)")
    draw.add_argument("--module", action="append", default=[],
                      help="a module path, repeatable (default: every module of spec/ and delta/)")
    draw.add_argument("--fresh", action="store_true", help="draw and judge again instead of resuming")
    draw.add_argument("--no-server", action="store_true",
                      help="run each mutant's tests in a process of their own (no kill tier then)")
    draw.add_argument("--tier", choices=TIER_MODES, default="auto", help=TIER_HELP)
    draw.add_argument("--budget", type=float, default=None,
                      help="seconds each mutant's covering tests may take (after the kill tier, if it runs); a mutant "
                      "past it is unfinished, counted as not killed (the score a lower bound) and judged by a later "
                      "run with a larger budget or none (default: no budget, every mutant judged whole)")
    draw.add_argument("--shard", default="1/1",
                      help="K/N: only the K-th of every N modules, so N commands run a sample side by side, one a "
                      "core (default: %(default)s)")
    draw.add_argument("--jobs", type=int, default=2,
                      help="test files measured at once if the map is measured (default: %(default)s)")
    draw.add_argument("--results", type=Path, default=RESULTS_FILE, help=RESULTS_HELP)
    draw.add_argument("--work", type=Path, default=WORK, help=WORK_HELP)
    status = sub.add_parser("status", help="the score and the survivors with their verdicts")
    status.add_argument("--results", type=Path, default=RESULTS_FILE, help=RESULTS_HELP)
    keep = sub.add_parser("checkpoint", help="write unfinished local sessions' mutants into the results file")
    keep.add_argument("--module", action="append", default=[], help="a module path (default: every local session)")
    keep.add_argument("--results", type=Path, default=RESULTS_FILE, help=RESULTS_HELP)
    keep.add_argument("--work", type=Path, default=WORK, help=WORK_HELP)
    check = sub.add_parser("confirm", help="check that each 'killed' verdict's test kills its survivor")
    check.add_argument("--module", help="the survivors of one module only")
    check.add_argument("--results", type=Path, default=RESULTS_FILE, help=RESULTS_HELP)
    check.add_argument("--work", type=Path, default=WORK / "confirm", help=WORK_HELP)
    check.add_argument("--limit", type=float, default=CONFIRM_LIMIT_SECONDS,
                       help=f"seconds one test may run on one mutant, a timeout counting as a kill "
                            f"(default {CONFIRM_LIMIT_SECONDS:.0f})")
    change = sub.add_parser("diff", help="the mutants of a change: the lines of spec/ and delta/ changed since BASE")
    change.add_argument("base", nargs="?", default=None,
                        help="the commit the change is measured from (default: HEAD with uncommitted changes to "
                             "spec/ or delta/, else the merge base with main on a branch, else HEAD~1)")
    change.add_argument("--per-line", type=_at_least_one, default=2,
                        help="at most this many mutants per changed line, distinct kinds of operator first "
                             "(default %(default)s)")
    change.add_argument("--tier", choices=TIER_MODES, default="auto", help=TIER_HELP)
    change.add_argument("--budget", type=_positive_seconds, default=None,
                        help="seconds each mutant's covering tests get (after the kill tier, if it runs); a mutant "
                             "past them is listed as unfinished (exit 1), not judged (default: no budget)")
    change.add_argument("--no-server", action="store_true",
                        help="run each mutant's tests in a process of their own, not forked from the test server")
    change.add_argument("--jobs", type=_at_least_one, default=2,
                        help="each mutant's covering tests split over this many cores side by side, through the "
                             "test server (default %(default)s)")
    change.add_argument("--work", type=Path, default=WORK,
                        help="folder of the coverage map and the sessions (in <work>/diff, always fresh; "
                             "default out/mutation)")
    return p


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _confirm(args: argparse.Namespace, verdicts: dict) -> int:
    """Check the 'killed' verdicts, print one line each and the count, and record them in the results file (its
    "confirmations" section, each replacing an older record of the same survivor; the report shows them)."""
    if args.module is not None and args.module not in mutated_modules():
        print(f"error: not a module of spec/ or delta/: {args.module}", file=sys.stderr)
        return 2
    with FolderLock(args.work):
        found = confirm_killed(read_results(args.results), verdicts, ROOT, args.work, args.module, args.limit,
                               progress=lambda line: print(f"[mutation] confirm {line}", file=sys.stderr, flush=True))
    for c in found:
        print(f"{c.outcome}: {c.module}:{c.line_number}:{c.column} {c.operator}"
              f"{'  ' + c.mutant if c.mutant else ''}  by {c.test} ({c.detail})")
    held, commit = sum(c.held for c in found), commit_of(ROOT)
    update_confirmations([{**asdict(c), "commit": commit} for c in found], args.results)
    print(f"{held} of {len(found)} 'killed' verdicts confirmed at {commit} (recorded in {args.results})")
    return exit_status(found)


def _checkpoint(modules: list[str], work: Path, results: Path) -> int:
    """Write the checkpoint of each named module's local session (mutation.carry) into the results file; how many
    were written. A module whose session finished already has its entry, and a checkpoint is not needed."""
    written = 0
    for module in modules:
        entry = checkpoint(module, work / slug(module))
        if entry is None:
            continue
        done = read_results(results)["modules"].get(module)
        if done and done.get("commit") == entry["commit"] and sum(done["counts"].values()) == len(entry["mutants"]):
            continue  # this session finished and merged its entry
        update_partial(entry, results)
        print(f"[mutation] {module}: {len(entry['mutants'])} finished mutants kept in {results} (partial)",
              file=sys.stderr, flush=True)
        written += 1
    return written


def _sample(args: argparse.Namespace, verdicts: dict) -> int:
    """Draw and judge each module's sample (mutation.sample), one module after another (resuming a module whose
    session of the same seed and size exists), recording each module's entry as it finishes; print each module's
    estimate, then the sample's as `status` shows it. Exit 1 while a sampled survivor has no verdict."""
    modules = args.module or mutated_modules()
    unknown = [m for m in modules if m not in mutated_modules()]
    shard = parse_shard(args.shard)
    if unknown or args.per_module < 1 or shard is None or (args.budget is not None and args.budget <= 0):
        print(f"error: --per-module must be at least 1, --budget above 0, --shard K/N with 1 <= K <= N, and modules "
              f"of spec/ or delta/; unknown: {unknown}", file=sys.stderr)
        return 2
    modules = modules[shard[0] - 1::shard[1]]
    version = "cosmic-ray " + importlib.metadata.version("cosmic-ray")
    with FolderLock(args.work / "_map", wait=MAP_WAIT_SECONDS):  # another shard may be measuring it: one map
        cmap, _ = _current_map(args.work, args.jobs)
    folder = args.work / "samples" / f"seed-{args.seed}-per-module-{args.per_module}"
    for module in modules:
        work = folder / slug(module)
        with FolderLock(work):
            run = run_module(module, cmap, work, resume=not args.fresh, use_server=not args.no_server,
                             tier=args.tier, choose=stratified_choice(args.seed, args.per_module, module),
                             budget=args.budget,
                             judged_elsewhere=lambda sha, m=module: judged_keys(read_results(args.results), m, sha))
        entry = sample_entry(run, version, args.budget)
        update_sample(args.seed, args.per_module, entry, args.results)
        print(f"[mutation] sample {module}: {entry['killed']} of {entry['judged']} judged killed "
              f"({entry['drawn']} drawn of {entry['population']}; {entry['kill_tier']['kills']} by the kill tier"
              f"{_unfinished(entry)}) in {run.seconds} s", file=sys.stderr, flush=True)
    return _print_status(read_results(args.results), verdicts)


MAP_WAIT_SECONDS = 3600.0  # how long a sample waits for the map another command measures (a full map: 20 minutes)


def parse_shard(text: str) -> tuple[int, int] | None:
    """`K/N` as (K, N) with 1 <= K <= N, else None."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        return None
    return (k, n) if 1 <= k <= n else None


def _interval(x: dict) -> str:
    """`81.2% [74.0%, 86.9%]`, `100.0% (exact)`, or `n/a` (nothing judged)."""
    if x.get("score") is None:
        return "n/a"
    lo, hi = x["interval"]
    return f"{x['score'] * 100:.1f}% " + ("(exact)" if lo == hi else f"[{lo * 100:.1f}%, {hi * 100:.1f}%]")


def _current_map(work: Path, jobs: int, rebuild: bool = False) -> tuple[CoverageMap, Path]:
    """The coverage map of the checkout as it is now: the saved one if it was measured on the same code, else
    measured again (minutes: every test file once, under coverage)."""
    path = work / MAP_FILE
    if not rebuild and path.exists():
        cmap = load_map(path)
        if cmap.digest == python_digest(ROOT):
            return cmap, path
        print(f"[mutation] the coverage map is stale (measured at {cmap.commit}): measuring again", file=sys.stderr)
    print(f"[mutation] measuring the coverage map ({jobs} at a time)", file=sys.stderr, flush=True)
    cmap = build_map(ROOT, work / "_map", jobs=jobs, sources=observed_folders(ROOT),
                     progress=lambda line: print(f"[mutation] map {line}", file=sys.stderr, flush=True))
    save_map(cmap, path)
    return cmap, path


def _print_status(data: dict, verdicts: dict) -> int:
    """Print the score per module and every survivor without a verdict; 1 if there is one (or a sampled mutant
    unfinished within its budget), else 0."""
    s = summary(data, verdicts)
    for row in s["modules"]:
        c, sc = row["counts"], row["score"]
        print(f"{row['module']:32} {sc * 100 if sc is not None else float('nan'):6.1f}%  killed {c['killed']}"
              f" (+{c['timeout']} timeouts)  survived {c['survived']}  incompetent {c['incompetent']}  verdicts:"
              f" {row['survivors']}  [{row['commit']}, {row['date']}, {row['seconds']} s]")
    total = s["score"]
    adjusted = s["score_without_equivalent"]
    print(f"score: {total * 100:.1f}%" if total is not None else "score: none (no module run)",
          f"over {len(s['modules'])} modules", f"({adjusted * 100:.1f}% without the {s['equivalent']} equivalent)"
          if adjusted is not None else "", f"; not run: {len(s['not_run'])}")
    for p in s["partial"]:
        print(f"unfinished: {p['module']}: {p['finished']} mutants kept ({p['judged']} judged: {p['killed']} killed, "
              f"{p['survived']} survived, {p['without_verdict']} of them without a verdict) from {p['commit']} "
              f"({p['date']}); "
              "`run --module` goes on from them")
    for sample in s["samples"]:
        o = sample["overall"]
        print(f"sample ({sample['key']}): score {_bound(o)}{_interval(o)} (95% interval) over {o['judged']} mutants "
              f"judged, drawn from a population of {o['population']} in {len(sample['modules'])} modules; not drawn "
              f"yet: {len(sample['not_drawn'])} modules; an estimate, apart from the complete runs above"
              + (f"; a lower bound: {o['unfinished']} mutants unfinished within the budget count as not killed"
                 if o.get("lower_bound") else "")
              + (f"; {o['settled']} mutants it left unfinished were judged by a run of the same module source"
                 if o.get("settled") else ""))
        for row in sample["modules"]:
            print(f"  {row['module']:32} {_bound(row)}{_interval(row):26} killed {row['killed']} of {row['judged']} "
                  f"judged ({row['drawn']} drawn of {row['population']}; {row['kill_tier']['kills']} by the kill "
                  f"tier{_unfinished(row)}{_settled(row)})  verdicts: {row['survivors']}  "
                  f"[{row['commit']}, {row['date']}, {row['seconds']} s]")
            for m in row.get("unfinished_mutants", []):
                print(f"    unfinished: {row['module']}:{m['line_number']}:{m['column']} {m['operator']}  {m['line']}")
    if s["killed_claims"]:
        print(f"'killed' verdicts confirmed: {s['killed_confirmed']} of {s['killed_claims']}"
              + ("" if s["killed_confirmed"] == s["killed_claims"] else " (`confirm` checks the others)"))
    for u in s["unjudged"]:
        print(f"no verdict: {u['module']}:{u['line_number']}:{u['column']} {u['operator']}  {u['line']}"
              + (f"  (sample {u['sample']})" if u.get("sample") else ""))
    return 1 if s["unjudged"] or any(x["overall"].get("unfinished") for x in s["samples"]) else 0


def _bound(x: dict) -> str:
    """'>= ' before a score that counts unfinished mutants as not killed (a lower bound), else ''."""
    return ">= " if x.get("lower_bound") else ""


def _unfinished(row: dict) -> str:
    """'; 2 unfinished within 60 s' for a sampled module with mutants left unfinished, else ''."""
    return f"; {row['unfinished']} unfinished within {row['budget']:g} s" if row.get("unfinished") else ""


def _settled(row: dict) -> str:
    """'; 6 settled by complete run at 14315cb: 5 killed, 1 survived' for a sampled module whose unfinished
    mutants a run of the same module source judged (mutation.settle), else ''."""
    s = row.get("settled")
    if not s:
        return ""
    return (f"; {s['killed'] + s['survived'] + s['incompetent']} settled by {', '.join(s['by'])}: {s['killed']} "
            f"killed, {s['survived']} survived" + (f", {s['incompetent']} incompetent" if s["incompetent"] else ""))


def main(argv: list[str] | None = None) -> int:
    """The command's exit status; SIGTERM stops it as Ctrl-C does (130, finished mutants kept)."""
    args = _parser().parse_args(argv)
    for name in ("work", "results", "verdicts"):  # the sessions run their tools inside the copy: absolute paths
        if getattr(args, name, None) is not None:
            setattr(args, name, getattr(args, name).resolve())
    with sigterm_as_interrupt():
        return _command(args)


def _command(args: argparse.Namespace) -> int:
    try:
        verdicts = read_verdicts(args.verdicts)
        if args.command == "map":
            with FolderLock(args.work / "_map"):
                cmap, path = _current_map(args.work, args.jobs, rebuild=True)
            files = [(t, s) for t, s in cmap.tests if "::" not in t]
            print(f"{path}: {len(files)} test files ({sum(s for _, s in files):.0f} s measured), "
                  f"{len(cmap.tests) - len(files)} tests, "
                  f"{len(cmap.lines)} modules" + (f"; partial (failing only under coverage): {', '.join(cmap.partial)}"
                                                   if cmap.partial else ""))
            return 0
        if args.command == "list":
            path = args.work / MAP_FILE
            cmap = load_map(path) if path.exists() else None
            if cmap is None or cmap.digest != python_digest(ROOT):
                print("no coverage map of this code yet (`python -m mutation map` measures it):"
                      " the modules only", file=sys.stderr)
                cmap = None
            for module in mutated_modules():
                tests = cmap.module_files(module) if cmap else []
                print(f"{module}: " + (f"{len(tests)} test files ({cmap.seconds(tests):.0f} s): "
                                       f"{' '.join(Path(t).name for t in tests)}" if cmap else ""))
            return 0
        if args.command == "diff":
            importlib.metadata.version("cosmic-ray")  # PackageNotFoundError: an environment error (3)
            tests = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(TEST_GLOB))
            return run_change(ROOT, args.base, args.work, args.work / MAP_FILE, mutated_modules(), tests,
                              per_line=args.per_line, tier=args.tier, use_server=not args.no_server,
                              budget=args.budget, jobs=args.jobs)
        if args.command == "status":
            return _print_status(read_results(args.results), verdicts)
        if args.command == "confirm":
            return _confirm(args, verdicts)
        if args.command == "sample":
            return _sample(args, verdicts)
        if args.command == "checkpoint":
            unknown = [m for m in args.module if m not in mutated_modules()]
            if unknown:
                print(f"error: not modules of spec/ or delta/: {unknown}", file=sys.stderr)
                return 2
            written = _checkpoint(args.module or mutated_modules(), args.work, args.results)
            print(f"{written} unfinished sessions kept in {args.results}")
            return 0
        modules = mutated_modules() if args.all else args.module
        unknown = [m for m in modules if m not in mutated_modules()]
        if not modules or unknown:
            print(f"error: name modules of spec/ or delta/ (--module spec/cut.py, or --all); unknown: {unknown}",
                  file=sys.stderr)
            return 2
        version = "cosmic-ray " + importlib.metadata.version("cosmic-ray")
        data = read_results(args.results)
        with FolderLock(args.work / "_map"):
            cmap, _ = _current_map(args.work, args.jobs)
        for module in modules:
            print(f"[mutation] {module}: running", file=sys.stderr, flush=True)
            work = args.work / slug(module)
            partial = None if args.fresh else data.get("partial", {}).get(module)
            with FolderLock(work):  # one session per module at a time: cosmic-ray mutates the copy in place
                try:
                    run = run_module(module, cmap, work, resume=not args.fresh, every_file=args.every_file,
                                     partial=partial, use_server=not args.no_server, tier=args.tier)
                except KeyboardInterrupt:
                    _checkpoint([module], args.work, args.results)
                    raise
            data = update_results(run.entry(version), args.results)
            print(f"[mutation] {module}: {run.count('killed')} killed, {run.count('timeout')} timeouts, "
                  f"{run.count('survived')} survived in {run.seconds} s", file=sys.stderr, flush=True)
        return _print_status(data, verdicts)
    except (VerdictFileError, ChangeError, ValueError, SyntaxError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (SessionError, MapError, FolderBusy, importlib.metadata.PackageNotFoundError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("interrupted" if args.command == "diff" else
              "interrupted: finished mutants are kept; run the same command to resume", file=sys.stderr)
        return 130

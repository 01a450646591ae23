"""`python -m mutation`: the opt-in mutation profile (`./run mutate` installs what it needs and calls it).

    python -m mutation list                       the modules of spec/ and delta/ and the tests selected for each
    python -m mutation run --module spec/cut.py   run (or resume) one module's session; repeatable
    python -m mutation run --all                  every module, one after another (hours on 2 cores)
    python -m mutation status                     the score and every survivor with its verdict

`run` merges each finished module into mutation/results.json (commit it with the verdicts); sessions of different
modules may run at once, one per core (two `run` commands), but not two of the same module. A session interrupted
with Ctrl-C keeps the mutants it finished in out/mutation/<module>/session.sqlite and the next `run` of the module
resumes there (`--fresh` starts over). Exit status: 0 every survivor has a verdict, 1 a survivor without one (a blind
spot of the gate to judge), 2 usage or input error, 3 environment error (cosmic-ray missing, the selected tests
failing on the unmutated tree), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from pathlib import Path

from ledger.lock import FolderBusy, FolderLock
from mutation.modules import ROOT, mutated_modules
from mutation.results import RESULTS_FILE, read_results, summary, update_results
from mutation.selection import select
from mutation.session import SessionError, run_module
from mutation.verdicts import VERDICTS_FILE, VerdictFileError, read_verdicts

WORK = ROOT / "out" / "mutation"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mutation", description=__doc__.split("\n\n")[0])
    p.add_argument("--verdicts", type=Path, default=VERDICTS_FILE, help="the verdicts file (TOML)")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the mutated modules and their tests")
    run = sub.add_parser("run", help="run or resume modules' sessions")
    run.add_argument("--module", action="append", default=[], help="a module path such as spec/cut.py")
    run.add_argument("--all", action="store_true", help="every module of spec/ and delta/")
    run.add_argument("--fresh", action="store_true", help="start the sessions over instead of resuming")
    run.add_argument("--results", type=Path, default=RESULTS_FILE)
    run.add_argument("--work", type=Path, default=WORK)
    status = sub.add_parser("status", help="the score and the survivors with their verdicts")
    status.add_argument("--results", type=Path, default=RESULTS_FILE)
    return p


def _slug(module: str) -> str:
    return module.replace("/", "__").removesuffix(".py")


def _print_status(data: dict, verdicts: dict) -> int:
    """Print the score per module and every survivor without a verdict; 1 if there is one, else 0."""
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
    for u in s["unjudged"]:
        print(f"no verdict: {u['module']}:{u['line_number']}:{u['column']} {u['operator']}  {u['line']}")
    return 1 if s["unjudged"] else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        verdicts = read_verdicts(args.verdicts)
        if args.command == "list":
            for module in mutated_modules():
                tests = select(module).tests
                print(f"{module}: {len(tests)} test files: {' '.join(Path(t).name for t in tests)}")
            return 0
        if args.command == "status":
            return _print_status(read_results(args.results), verdicts)
        modules = mutated_modules() if args.all else args.module
        unknown = [m for m in modules if m not in mutated_modules()]
        if not modules or unknown:
            print(f"error: name modules of spec/ or delta/ (--module spec/cut.py, or --all); unknown: {unknown}",
                  file=sys.stderr)
            return 2
        version = "cosmic-ray " + importlib.metadata.version("cosmic-ray")
        data = read_results(args.results)
        for module in modules:
            print(f"[mutation] {module}: running", file=sys.stderr, flush=True)
            work = args.work / _slug(module)
            with FolderLock(work):  # one session per module at a time: cosmic-ray mutates the copy in place
                run = run_module(select(module), work, resume=not args.fresh)
            data = update_results(run.entry(version), args.results)
            print(f"[mutation] {module}: {run.count('killed')} killed, {run.count('timeout')} timeouts, "
                  f"{run.count('survived')} survived in {run.seconds} s", file=sys.stderr, flush=True)
        return _print_status(data, verdicts)
    except (VerdictFileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (SessionError, FolderBusy, importlib.metadata.PackageNotFoundError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("interrupted: finished mutants are kept; run the same command to resume", file=sys.stderr)
        return 130

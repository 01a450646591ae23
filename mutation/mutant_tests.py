"""The test command cosmic-ray runs for each mutant: the tests that execute the mutated statement, and no more.

    python -m mutation.mutant_tests --map MAP --module spec/cut.py --pristine PRISTINE [--all]

Run in the session's copy, where cosmic-ray has just written the mutant into the module: the lines that differ from
the pristine source give the mutated statements (mutation.coverage_map.statement_lines), the coverage map gives the
tests executing them (by name, every parameter set; or whole files), and pytest runs them fastest first, the
session's killers ahead (killers_first), stopping at the first failure (its exit status is the verdict: nonzero kills
the mutant). Two kinds of statement select more or
other tests: one inside a memoized function (functools' cache, lru_cache) runs the files of every test charged with
the function, whole, as its body runs once per process and the map charges only each file's first caller; a change
of a function's signature (a default value) runs the tests executing the function's body, as only a call shows it
(not the whole files that import the module, where the map charges the def line). No test executes the statement: exit 0
at once (the mutant survives; no test could see it); likewise a mutant that only changes annotations of a module
with `from __future__ import annotations` (never evaluated, so no test can observe it), or only the size of an
`lru_cache` or removes a memo whose cache methods nothing calls (equivalent while the memoized function is pure;
memo_only). A mutant of spec/ or delta/ meets the kill tier through the test server
(`kill_tier`: mutation.kill_tier's checks): with `--tier auto` (the default) after a head start of its covering
tests as long as the tier, before the rest (before_tier), with `--tier on` before them all (then also its quick
tests under a small Hypothesis budget); a mutant the tier lets through runs its tests as without it. `--all` runs
every file that executes any statement of the module, whole (the confirmation of a survivor). The tests may take
three times their measured time plus 30 s (`mutant_time_limit`); past it they are stopped and the mutant counts as
a timeout. With `--budget S` (a sample's first pass) the covering tests get at most S seconds (the tier's time not
counted) when their own limit is longer: past it they are stopped, BUDGET_MARK is printed and the mutant is
unfinished, neither killed nor survived (mutation.session reads it so, and runs it again in a pass with a larger
budget or none).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from mutation.coverage_map import (
    PYTEST_ARGS,
    CoverageMap,
    cached_function_lines,
    changed_lines,
    decorator_name,
    load_map,
    signature_body_lines,
    statement_lines,
)
from mutation.fork_server import SERVER_VARIABLE, STOPPED, ServerError, limit_memory, run_tests
from mutation.modules import MUTATED_PACKAGES
from mutation.observers import memo_observers, observers

TIMEOUT_MARK = "mutation.mutant_tests: timeout"
BUDGET_MARK = "mutation.mutant_tests: unfinished within the budget"  # followed by the budget: "(60 s)"
NOT_SELECTED = "mutation.session: not selected"  # the output of a mutant a selection left out (never judged)


class Overrun(NamedTuple):
    """What tests stopped at their time limit print and return: TIMEOUT_MARK and 1 (a kill: a mutant that loops),
    or, past a sample's budget, BUDGET_MARK and 0 (unfinished: the session reads the mark, not the status)."""

    mark: str
    status: int


A_TIMEOUT = Overrun(TIMEOUT_MARK, 1)  # a mutant's own limit: a kill


class _DropAnnotations(ast.NodeTransformer):
    """Removes every annotation, so two sources that differ only in annotations dump alike."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        node.annotation = ast.Constant(value=None)
        self.generic_visit(node)
        return node


def postponed_annotations(source: str) -> bool:
    """True when the module has `from __future__ import annotations`: its annotations are never evaluated."""
    return any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
               and any(a.name == "annotations" for a in n.names) for n in ast.parse(source).body)


def annotation_only(before: str, after: str) -> bool:
    """A mutant that changes nothing but annotations of a module whose annotations are never evaluated: no test can
    observe it (it survives without running any; its verdict says equivalent)."""
    if not postponed_annotations(before):
        return False
    strip = _DropAnnotations()
    return ast.dump(strip.visit(ast.parse(before))) == ast.dump(strip.visit(ast.parse(after)))


MEMO_DECORATORS = ("lru_cache", "cache")  # functools' memoizing decorators
CACHE_METHODS = ("cache_clear", "cache_info", "cache_parameters")  # what they add to the function


class _DropMemos(ast.NodeTransformer):
    """Removes every memoizing decorator (`lru_cache(...)`, `cache`), so two sources that differ only in a memo's
    size or presence dump alike; records the functions that had one."""

    def __init__(self) -> None:
        self.memoized: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        kept = [d for d in node.decorator_list if decorator_name(d) not in MEMO_DECORATORS]
        if len(kept) < len(node.decorator_list):
            self.memoized.add(node.name)
        node.decorator_list = kept
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


def _memos(source: str) -> tuple[str, set[str]]:
    """The source's syntax tree without memoizing decorators (dumped), and the functions that had one."""
    strip = _DropMemos()
    return ast.dump(strip.visit(ast.parse(source))), strip.memoized


def memo_only(before: str, after: str, cache_methods_called: Callable[[str], bool] = lambda _name: True) -> bool:
    """A mutant that changes nothing but a memo: the size of an `lru_cache` (`maxsize=64` -> `63`), or the removal
    of an `lru_cache` or `cache` decorator (the size 0) from a function none of whose cache methods
    (`f.cache_clear()`) is called anywhere (`cache_methods_called(name)`; the removal would raise there). The memo
    returns what the function returned for equal arguments, and its size only decides how often the function runs
    again, so no test can observe it while the function's result depends only on its arguments and no caller
    mutates it (why it is memoized); only time can tell it apart. It survives without running any test; its verdict
    says equivalent, with that premise."""
    if before == after:
        return False
    (tree_before, memoized_before), (tree_after, memoized_after) = _memos(before), _memos(after)
    removed = memoized_before - memoized_after
    return tree_before == tree_after and not any(cache_methods_called(name) for name in removed)


def cache_methods_called_in(root: Path) -> Callable[[str], bool]:
    """Whether `name.cache_clear` (or another cache method) appears in a Python file under `root` (the session's
    copy: the suite and its tests), read as text so any module's call counts."""
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*.py")
             if not {".venv", "out", "node_modules"} & set(p.relative_to(root).parts)]

    def called(name: str) -> bool:
        return any(f"{name}.{method}" in text for text in texts for method in CACHE_METHODS)

    return called


def mutant_selection(map_path: Path, module: str, pristine: Path, mutated: Path, every: bool = False) -> list[str]:
    """The tests (fastest first) that execute the statements the mutant changed (`every`: the files executing any
    statement of the module, whole), or, for a memo's body or a statement run at import, those that read what it
    computes or binds (observed_selection)."""
    cmap = load_map(map_path)
    if every:
        return cmap.module_files(module)
    before = pristine.read_text(encoding="utf-8")
    changed = changed_lines(before, mutated.read_text(encoding="utf-8"))
    observed = observed_selection(cmap, Path.cwd(), module, before, changed)
    if observed is not None:
        return observed
    cached = cached_function_lines(before, changed)
    if cached:  # a memoized body runs once per process: the files of every test charged with it, whole
        files = {t.split("::")[0] for t in cmap.tests_executing(module, cached)}
        return [f for f in cmap.module_files(module) if f in files]
    body = signature_body_lines(before, changed)
    if body:  # a default value or other signature change: only a call can show it, and a call runs the body
        return cmap.tests_executing(module, body)
    return cmap.tests_executing(module, statement_lines(before, changed))


def observed_selection(cmap: CoverageMap, root: Path, module: str, source: str, changed: set[int]
                       ) -> list[str] | None:
    """For lines the map charges too widely, the tests that can observe them (mutation.observers): a memoized
    body's callers (the map charges it to each file's first caller, so otherwise every such file runs whole), or
    the readers of what a statement run at import binds (the map charges it to whole files). None when neither
    applies or a reading cannot be resolved through the map: the caller keeps its own rule."""
    cached = cached_function_lines(source, changed)
    if cached:
        files = {t.split("::")[0] for t in cmap.tests_executing(module, cached)}
        return within(memo_observers(cmap, root, module, changed, source),
                      [f for f in cmap.module_files(module) if f in files])
    if signature_body_lines(source, changed):
        return None
    executing = cmap.tests_executing(module, statement_lines(source, changed))
    if any("::" not in t for t in executing):
        return within(observers(cmap, root, module, changed, source), executing)
    return None


def within(observed: list[str] | None, wide: list[str]) -> list[str] | None:
    """The observed tests that the wide rule selects too (a test of a whole file it names, or a test it names):
    both rules select every test that can observe the mutant, so their common part does too, and it is never more
    than the wide rule's (the readers of a name also found where another module binds the same name). A whole file
    of `observed` that the wide rule does not name whole gives the tests of it the wide rule names. None stays
    None."""
    if observed is None:
        return None
    files = {t for t in wide if "::" not in t}
    tests = [t for t in wide if "::" in t]
    out: list[str] = []
    for t in observed:
        if t.split("::")[0] in files or t in tests:
            out.append(t)
        elif "::" not in t:
            out.extend(x for x in tests if x.split("::")[0] == t)
    return list(dict.fromkeys(out))


class _Interrupted(Exception):
    """SIGINT or SIGTERM reached the mutant's tests."""


def _interrupt(signum: int, _frame) -> None:
    raise _Interrupted(signal.Signals(signum).name)


RUNNING_VARIABLE = "MUTATION_RUNNING"  # a folder where each mutant's tests name their process while they run


@contextlib.contextmanager
def registered(folder: str | None) -> Iterator[None]:
    """While the mutant's tests run, a file named by this process's pid in `folder` (when given): the session that
    stops reads it to stop them too, since they run in a session of their own (see `stop_with_parent`)."""
    if not folder:
        yield
        return
    mark = Path(folder) / str(os.getpid())
    with contextlib.suppress(OSError):
        mark.touch()
    try:
        yield
    finally:
        mark.unlink(missing_ok=True)


def stop_with_parent(interval: float = 0.5) -> threading.Thread:
    """Interrupt this process (SIGTERM to itself) once its parent is gone. cosmic-ray runs each mutant's tests in a
    session of their own, so the signal that stops a session's process group never reaches them; the end of
    cosmic-ray, their parent, does: the tests stop and the mutant is left unjudged instead of running on orphaned."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os.kill(os.getpid(), signal.SIGTERM)

    watcher = threading.Thread(target=watch, name="stop-with-parent", daemon=True)
    watcher.start()
    return watcher


def main(argv: list[str] | None = None) -> int:
    """The mutant's verdict as an exit status (0 survived, nonzero killed). Stopped by SIGINT or SIGTERM, it prints
    INTERRUPT_MARK instead of judging: the session reads that result as unfinished and runs the mutant again."""
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with registered(os.environ.get(RUNNING_VARIABLE)):
            stop_with_parent()
            return _judge(argv)
    except _Interrupted as exc:
        print(f"{INTERRUPT_MARK} by {exc}", flush=True)
        return 130


def _judge(argv: list[str] | None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutation.mutant_tests", description=__doc__.split("\n\n")[0])
    p.add_argument("--map", type=Path, required=True)
    p.add_argument("--module", required=True, help="the mutated module, relative to the working directory")
    p.add_argument("--pristine", type=Path, required=True, help="the module's unmutated source")
    p.add_argument("--all", action="store_true", help="every file that executes the module")
    p.add_argument("--verified", type=Path, default=None,
                   help="with the test server: the file of tests known to pass (or fail) on the unmutated module")
    p.add_argument("--tier", choices=TIER_MODES, default="auto",
                   help="the kill tier: before the covering tests (on), never (off), or after a head start of them "
                        "as long as itself (auto, the default; before_tier)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds the covering tests may take after the tier before the mutant is left unfinished")
    p.add_argument("--jobs", type=int, default=1,
                   help="with the test server: the covering tests split over this many children side by side")
    args = p.parse_args(argv)
    if annotation_only(args.pristine.read_text(encoding="utf-8"), Path(args.module).read_text(encoding="utf-8")):
        print(f"{ANNOTATION_MARK} of {args.module}, which are never evaluated: no test can see it")
        return 0
    if memo_only(args.pristine.read_text(encoding="utf-8"), Path(args.module).read_text(encoding="utf-8"),
                 cache_methods_called_in(Path.cwd())):
        print(f"{MEMO_MARK} (or removes a memo whose cache methods nothing calls) in {args.module}: no test can "
              "see it while the function is pure")
        return 0
    tests = mutant_selection(args.map, args.module, args.pristine, Path(args.module), args.all)
    if not tests:
        print(f"no test executes the mutated statement of {args.module}, or reads what it binds or computes")
        return 0
    cmap = load_map(args.map)
    server = os.environ.get(SERVER_VARIABLE)
    tiered = args.module.split("/")[0] in MUTATED_PACKAGES  # what the tier's checks exercise
    if tiered and args.tier == "on":
        status = kill_tier(Path(server) if server else None, Path(args.module), args.pristine, args.verified,
                           quick := [t for t in tests if cmap.seconds([t]) <= QUICK_TEST_SECONDS],
                           mutant_time_limit(cmap.seconds(quick)))
        if status is not None:
            return status
    killers = _known(args.verified)["killers"] if args.verified else []
    tests = killers_first(tests, killers)
    budget = args.budget
    if tiered and args.tier == "auto" and server and args.verified:
        first, rest = before_tier(tests, lambda t: cmap.seconds([t]), tier_seconds(args.verified))
        if rest:  # else every covering test is quicker than the tier: it cannot save time
            if first:
                t0 = time.monotonic()
                status = _covering(first, cmap, args, server, killers, budget)
                if status == UNFINISHED:
                    return 0  # the budget ran out (its mark printed): unfinished
                if status not in (0, 5):
                    return status
                if budget is not None:
                    budget -= time.monotonic() - t0
                    if budget <= 0:
                        print(f"{BUDGET_MARK} ({args.budget:g} s)", flush=True)
                        return 0
            status = kill_tier(Path(server), Path(args.module), args.pristine, args.verified,
                               quick := [t for t in tests if cmap.seconds([t]) <= QUICK_TEST_SECONDS],
                               mutant_time_limit(cmap.seconds(quick)))
            if status is not None:
                return status
            tests = rest
    status = _covering(tests, cmap, args, server, killers, budget)
    return 0 if status == UNFINISHED else status


UNFINISHED = -1  # _covering's status past the budget (BUDGET_MARK printed): the mutant is unfinished, exit 0


def _covering(tests: list[str], cmap: CoverageMap, args: argparse.Namespace, server: str | None,
              killers: list[str], budget: float | None) -> int:
    """Run `tests` (in their order, stopping at the first failure) as the mutant's covering tests: through the
    server when there is one (split over `args.jobs` children), else in a process of their own. Their limit is
    three times their measured time plus 30 s (a timeout, a kill), or `budget` when smaller (UNFINISHED)."""
    argfile = Path(".mutant-tests")  # pytest reads its arguments from `@file`, one per line
    argfile.write_text("\n".join(tests) + "\n", encoding="utf-8")
    limit = mutant_time_limit(cmap.seconds(tests))
    over = A_TIMEOUT
    if budget is not None and budget < limit:
        limit, over = budget, Overrun(f"{BUDGET_MARK} ({args.budget:g} s)", UNFINISHED)
    pytest_args = [*PYTEST_ARGS, "-x", f"@{argfile}"]
    if server and args.verified:
        if args.jobs > 1 and len(tests) > 1:
            parts = [killers_first(part, killers) for part in split_tests(tests, lambda t: cmap.seconds([t]),
                                                                          args.jobs)]
            status = through_server_parts(Path(server), parts, Path(args.module), args.pristine, args.verified,
                                          limit, over=over)
        else:
            status = through_server(Path(server), pytest_args, Path(args.module), args.pristine, args.verified,
                                    limit, over=over)
        if status is not None:
            return status
    return in_own_process(pytest_args, Path(args.module), args.pristine, args.verified, limit, over)


OWN_PREFIX = "own:"  # the verified file's name of a test checked on the unmutated module in a process of its own
LEFT_OUT_MARK = "mutation.mutant_tests: left out, failing on the unmutated module too:"


def in_own_process(pytest_args: list[str], module: Path, pristine: Path, verified: Path | None, limit: float,
                   over: Overrun = A_TIMEOUT) -> int:
    """The mutant's tests in a process of their own: their exit status, 1 (a kill) only when each test that failed
    passes on the unmutated module in a process of its own too (checked once per test and session, named with
    OWN_PREFIX in `verified`; every time without one). A test failing there as well cannot see the mutant (it
    depends on something the copy lacks, a program on PATH, a variable): it is left out, named with LEFT_OUT_MARK,
    and the rest run again, so such a failure never counts as a kill (one that cannot be left out makes the mutant
    a survivor, for a reader to judge). A run that stops at its limit, or fails naming no test, keeps its status."""
    known = _known(verified) if verified else {"pass": [], "fail": [], "tier": {}, "killers": []}
    left_out = [t[len(OWN_PREFIX):] for t in known["fail"] if t.startswith(OWN_PREFIX)]
    failures = Path(".mutant-failures-own")
    while True:
        failures.unlink(missing_ok=True)
        plugin = ["-p", "mutation.failures_plugin", f"--failures-file={failures.resolve()}"]
        deselect = [arg for t in left_out for arg in (("--deselect", t) if "::" in t else ("--ignore", t))]
        status = run_with_limit([sys.executable, "-m", "pytest", *plugin, *deselect, *pytest_args], limit, over)
        failed = sorted(set(failures.read_text(encoding="utf-8").split())) if failures.exists() else []
        if status in (0, 5) or not failed:
            return status
        if set(failed) <= set(left_out):  # left out, yet failing: no failure of the mutant's own to count
            print(f"mutation.mutant_tests: could not leave out {' '.join(failed)}: not a kill", flush=True)
            return 0
        unchecked = [t for t in failed if OWN_PREFIX + t not in known["pass"]]
        failing_unmutated = _failing_unmutated(unchecked, module, pristine, limit) if unchecked else []
        known["pass"].extend(OWN_PREFIX + t for t in unchecked if t not in failing_unmutated)
        known["fail"].extend(OWN_PREFIX + t for t in failing_unmutated)
        if verified:
            verified.write_text(json.dumps({**_known(verified), "pass": known["pass"], "fail": known["fail"]}),
                                encoding="utf-8")
        if not failing_unmutated:
            if verified:
                note_killers(verified, failed)
            return status
        print(f"{LEFT_OUT_MARK} {' '.join(failing_unmutated)}", flush=True)
        left_out += failing_unmutated


@contextlib.contextmanager
def unmutated(module: Path, pristine: Path) -> Iterator[None]:
    """The unmutated module in the mutant's place for the block; the mutant is written back afterwards, whatever
    the block raises, so the tests after it see the mutant again."""
    mutant = module.read_text(encoding="utf-8")
    module.write_text(pristine.read_text(encoding="utf-8"), encoding="utf-8")
    try:
        yield
    finally:
        module.write_text(mutant, encoding="utf-8")


def _failing_unmutated(tests: list[str], module: Path, pristine: Path, limit: float) -> list[str]:
    """Those of `tests` (node ids, or files that failed at collection) that fail on the unmutated module in a process
    of their own; the mutant is written back afterwards."""
    with unmutated(module, pristine):
        print(f"mutation.mutant_tests: checking {' '.join(tests)} on the unmutated module in a process of its own",
              flush=True)
        return [t for t in tests if run_with_limit(
            [sys.executable, "-m", "pytest", *PYTEST_ARGS, *([] if "::" in t else ["--collect-only"]), t],
            limit) not in (0, 5)]


def before_tier(tests: list[str], seconds: Callable[[str], float], tier: float | None
                ) -> tuple[list[str], list[str]]:
    """`tests` split where the kill tier goes among them (`--tier auto`): first the longest prefix (in the order
    given: the session's killers, then fastest first) whose measured time together is no more than the tier's
    checks took (QUICK_TEST_SECONDS until those are timed), then the tier, then the rest. The tests get a head start
    as long as the tier, so a mutant the quick tests kill never pays for the tier, and one they let through meets it
    after at most its own time again, before the slow tests. The same tests run either way, so a survivor is judged
    as without the tier."""
    bound = QUICK_TEST_SECONDS if tier is None else tier
    spent, cut = 0.0, 0
    for t in tests:
        if spent + seconds(t) > bound:
            break
        spent += seconds(t)
        cut += 1
    return tests[:cut], tests[cut:]


def tier_seconds(verified: Path) -> float | None:
    """The kill tier's checks' time on the unmutated module in this session, None until timed (or when they found
    a difference there, so never run: then nothing is worth placing the tier for; None too)."""
    tier = _known(verified)["tier"]
    return float(tier["seconds"]) if tier.get("usable") else None


QUICK_TEST_SECONDS = 10.0  # the covering tests the tier runs under the small Hypothesis budget: the map's quick ones
TIER_MODES = ("auto", "on", "off")  # where a mutant meets the kill tier (before_tier places it for auto)
TIER_PROFILE = "mutation-tier"  # that budget (mutation.tier_profile registers it)
TIER_LIMIT_SECONDS = 300.0  # the tier's checks on the unmutated module: past it they are left out for the session
TIER_KILL_MARK = "mutation.mutant_tests: killed by the kill tier"  # the session counts the mutants it killed
TIER_MODULE = "mutation.kill_tier"  # the module whose `main` the server's child runs as the tier's checks


def kill_tier(server: Path | None, module: Path, pristine: Path, verified: Path | None,
              quick: list[str], quick_limit: float, tier_module: str = TIER_MODULE) -> int | None:
    """The kill tier (mutation.kill_tier) on the mutant, then its quick covering tests under the small Hypothesis
    budget (`quick`, fastest first, stopping at the first failure): 1 when either tells the mutant apart, printing
    TIER_KILL_MARK (or TIMEOUT_MARK past the tier's limit: a mutant that loops, a kill as everywhere here); None
    when the mutant goes on to its covering tests as without the tier. The tier's checks run on the unmutated module
    first, once per session through the same server (`verified` keeps whether they found nothing there, and their
    time, which sets the limit: three times it plus 30 s); when they find a difference there they are left out for
    the session. A quick test's failure counts only once it passes on the unmutated module under the same budget
    (through_server); one failing there too is left out of the tier's later runs, so that it does not stop them
    (`-x`) before the quick tests after it. Only through the test server: the tier's point is the tokenizers it has
    loaded."""
    if server is None or verified is None:
        return None
    known = _known(verified)
    try:
        if "usable" not in known["tier"]:
            known["tier"] = _tier_baseline(server, module, pristine, tier_module)
            verified.write_text(json.dumps(known), encoding="utf-8")
        if known["tier"]["usable"]:
            limit = 3.0 * float(known["tier"]["seconds"]) + 30.0
            status = run_tests(server, [], Path.cwd(), limit, call=tier_module)
            if status is None:
                print(f"{TIMEOUT_MARK} after {limit:.0f} s; {TIER_KILL_MARK} (its checks ran out of time)", flush=True)
                return 1
            if status == 1:
                print(TIER_KILL_MARK + " (its checks)", flush=True)
                return 1
    except ServerError as exc:
        print(f"mutation.mutant_tests: {exc}; no kill tier", flush=True)
        return None
    if not quick:
        return None
    argfile = Path(".mutant-quick-tests")
    argfile.write_text("\n".join(quick) + "\n", encoding="utf-8")
    prefix = f"{TIER_PROFILE}:"  # a quick test known to fail unmutated under the budget cannot tell: left out
    left_out = [arg for t in _known(verified)["fail"] if t.startswith(prefix)
                for arg in ("--deselect", t[len(prefix):])]
    status = through_server(server, [*PYTEST_ARGS, *left_out, "-x", f"@{argfile}"], module, pristine, verified,
                            quick_limit, profile=TIER_PROFILE)
    if status not in (None, 0, 5):
        print(TIER_KILL_MARK + " (its quick tests, small Hypothesis budget)", flush=True)
        return 1
    return None


def _tier_baseline(server: Path, module: Path, pristine: Path, tier_module: str) -> dict:
    """The kill tier on the unmutated module, through the server: whether it finds nothing there (usable) and its
    time."""
    with unmutated(module, pristine):
        print("mutation.mutant_tests: running the kill tier on the unmutated module", flush=True)
        t0 = time.monotonic()
        status = run_tests(server, [], Path.cwd(), TIER_LIMIT_SECONDS, call=tier_module)
        seconds = time.monotonic() - t0
    if status != 0:
        print("mutation.mutant_tests: the kill tier finds a difference on the unmutated module: no tier this session",
              flush=True)
    return {"usable": status == 0, "seconds": round(seconds, 2)}


def _known(path: Path) -> dict:
    """The verified file: the tests known to pass or fail on the unmutated module ("pass", "fail"; under the tier's
    Hypothesis budget named with its prefix), the kill tier's baseline ("tier") and the session's killers, the
    tests whose failure killed a mutant, the latest last ("killers")."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {"pass": list(data["pass"]), "fail": list(data["fail"]), "tier": dict(data.get("tier") or {}),
                "killers": list(data.get("killers") or [])}
    except (OSError, ValueError, KeyError, TypeError):
        return {"pass": [], "fail": [], "tier": {}, "killers": []}


def note_killers(verified: Path, failed: list[str]) -> None:
    """Keep the tests whose failure killed this mutant as the session's latest killers (killers_first)."""
    known = _known(verified)
    named = [t.split("[", 1)[0] for t in failed]  # named as the map names tests: without their parameters
    known["killers"] = [k for k in known["killers"] if k not in named] + list(dict.fromkeys(named))
    verified.write_text(json.dumps(known), encoding="utf-8")


def killers_first(tests: list[str], killers: list[str]) -> list[str]:
    """The same tests, those that killed an earlier mutant of the session first (the latest killer first; a whole
    file holding one after the killers themselves), the rest in their order. Kill history, as PIT orders a
    mutant's tests: a mutant is often killed by the test that killed its neighbour. The verdict does not depend on
    the order (the run stops at the first failure, and any failure kills; a run that passes runs every test), only
    how soon a kill comes, and so whether it comes within a budget."""
    rank: dict[str, int] = {}
    for i, name in enumerate(reversed(killers)):
        rank.setdefault(name, i)
    for i, name in enumerate(reversed(killers)):
        rank.setdefault(name.split("::")[0], len(killers) + i)
    last = 2 * len(killers)
    return [tests[i] for i in sorted(range(len(tests)), key=lambda i: (rank.get(tests[i], last), i))]


def through_server(server: Path, pytest_args: list[str], module: Path, pristine: Path, verified: Path,
                   limit: float, profile: str | None = None, over: Overrun = A_TIMEOUT) -> int | None:
    """The mutant's tests run through the test server (mutation.fork_server): their exit status (1 with
    TIMEOUT_MARK past `limit`), or None when the tests must run in a process of their own instead. A failure kills
    the mutant only if each failing test passes on the unmutated module through the server too: checked once per
    test and session (`verified`, a JSON file of the tests known to pass or to fail there); a test failing there
    (it behaves differently in a forked child) sends the mutant to a process of its own, as does a failure that
    names no test (pytest's usage or internal errors) or an unreachable server. With `profile`, the tests run
    under that Hypothesis profile, here and on the unmutated module (and are known under its name)."""
    env = {"DELTA_HYPOTHESIS_PROFILE": profile} if profile else None
    profile_plugin = ["-p", "mutation.tier_profile"] if profile else []  # registers it before the conftest loads it
    pytest_args = [*profile_plugin, *pytest_args]
    failures = Path(".mutant-failures")
    failures.unlink(missing_ok=True)
    plugin = ["-p", "mutation.failures_plugin", f"--failures-file={failures.resolve()}"]
    try:
        status = run_tests(server, [*plugin, *pytest_args], Path.cwd(), limit, env=env)
        if status is None:
            print(f"{over.mark} after {limit:.0f} s", flush=True)
            return over.status
        if status in (0, 5):
            return status
        failed = sorted(set(failures.read_text(encoding="utf-8").split())) if failures.exists() else []
        if not _failures_hold(server, failed, module, pristine, verified, limit, profile):
            return None
        note_killers(verified, failed)
        return status
    except ServerError as exc:
        print(f"mutation.mutant_tests: {exc}; running the tests in a process of their own", flush=True)
        return None


def _failures_hold(server: Path, failed: list[str], module: Path, pristine: Path, verified: Path, limit: float,
                   profile: str | None = None) -> bool:
    """Whether the tests that failed on the mutant through the server each pass there on the unmutated module
    (checked once per test and session, `verified`): then the failure is the mutant's. False when none is named
    (a usage or internal error) or one fails unmutated too (it behaves differently in a forked child)."""
    known = _known(verified)
    env = {"DELTA_HYPOTHESIS_PROFILE": profile} if profile else None
    prefix = f"{profile}:" if profile else ""
    profile_plugin = ["-p", "mutation.tier_profile"] if profile else []
    if not failed or any(prefix + t in known["fail"] for t in failed):
        return False
    unchecked = [t for t in failed if prefix + t not in known["pass"]]
    if not unchecked:
        return True
    with unmutated(module, pristine):
        print(f"mutation.mutant_tests: checking {' '.join(unchecked)} on the unmutated module", flush=True)
        files = [t for t in unchecked if "::" not in t]  # failed at collection: collecting them is the check
        tests = [t for t in unchecked if "::" in t]
        passes = all(run_tests(server, [*profile_plugin, *PYTEST_ARGS, *extra, *ids], Path.cwd(), limit,
                               env=env) == 0
                     for extra, ids in ((["--collect-only"], files), ([], tests)) if ids)
    known["pass" if passes else "fail"].extend(prefix + t for t in unchecked)
    verified.write_text(json.dumps(known), encoding="utf-8")
    if not passes:
        print("mutation.mutant_tests: they fail there too, through the server: a process of their own", flush=True)
    return passes


def split_tests(tests: list[str], seconds: Callable[[str], float], parts: int) -> list[list[str]]:
    """`tests` in at most `parts` groups of about equal measured time (the longest first, each to the group with the
    least so far), each group fastest first, none empty."""
    groups: list[list[str]] = [[] for _ in range(max(1, min(parts, len(tests))))]
    load = [0.0] * len(groups)
    for t in sorted(tests, key=lambda t: (-seconds(t), t)):
        k = load.index(min(load))
        groups[k].append(t)
        load[k] += seconds(t)
    return [sorted(g, key=lambda t: (seconds(t), t)) for g in groups]


def through_server_parts(server: Path, parts: list[list[str]], module: Path, pristine: Path, verified: Path,
                         limit: float, over: Overrun = A_TIMEOUT) -> int | None:
    """The mutant's tests in `parts` run side by side through the server (one child each, so one core each), each
    part fastest first and stopping at its first failure; once a part fails or outruns `limit`, the others are
    stopped. The verdict as through_server gives it: 1 when a failure holds (its tests pass unmutated), the
    overrun's status past `limit`, 0 when every part passes; None when the tests must run in a process of their
    own (a failure naming no test or failing unmutated too, an unreachable server)."""
    stop = threading.Event()
    statuses: dict[int, int | None] = {}
    errors: list[ServerError] = []

    def run(k: int, tests: list[str]) -> None:
        argfile, failures = Path(f".mutant-tests-{k}"), Path(f".mutant-failures-{k}")
        argfile.write_text("\n".join(tests) + "\n", encoding="utf-8")
        failures.unlink(missing_ok=True)
        plugin = ["-p", "mutation.failures_plugin", f"--failures-file={failures.resolve()}"]
        try:
            statuses[k] = run_tests(server, [*plugin, *PYTEST_ARGS, "-x", f"@{argfile}"], Path.cwd(), limit,
                                    stop=stop)
        except ServerError as exc:
            errors.append(exc)
            statuses[k] = STOPPED
        if statuses[k] not in (0, 5, STOPPED):
            stop.set()

    threads = [threading.Thread(target=run, args=(k, tests), name=f"mutant-tests-{k}") for k, tests in
               enumerate(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print(f"mutation.mutant_tests: {errors[0]}; running the tests in a process of their own", flush=True)
        return None
    if any(status is None for status in statuses.values()):
        print(f"{over.mark} after {limit:.0f} s", flush=True)
        return over.status
    failing = [k for k, status in statuses.items() if status not in (0, 5, STOPPED)]
    if not failing:
        return 0
    failed = sorted({t for k in failing if Path(f".mutant-failures-{k}").exists()
                     for t in Path(f".mutant-failures-{k}").read_text(encoding="utf-8").split()})
    try:
        if not _failures_hold(server, failed, module, pristine, verified, limit):
            return None
        note_killers(verified, failed)
        return 1
    except ServerError as exc:
        print(f"mutation.mutant_tests: {exc}; running the tests in a process of their own", flush=True)
        return None


INTERRUPT_MARK = "mutation.mutant_tests: interrupted"  # not a verdict: the session runs the mutant again
ANNOTATION_MARK = "the mutant changes only annotations"  # its verdict follows: equivalent (mutation.session)
MEMO_MARK = "the mutant changes only the size of an lru_cache"  # its verdict follows: equivalent
MEMO_REASON = ("it changes only the size of an lru_cache, or removes a memo none of whose cache methods is called: "
               "the memo returns what the function returned for equal arguments and its size decides only how often "
               "the function runs again, so it is equivalent while the function's result depends only on its "
               "arguments and no caller mutates it, which is why it is memoized (decided from the module's syntax "
               "trees by mutation.mutant_tests)")
ANNOTATION_REASON = ("it changes only annotations of a module with 'from __future__ import annotations', which are "
                     "never evaluated (decided from the module's syntax trees by mutation.mutant_tests)")
EQUIVALENCE_REASONS = {ANNOTATION_MARK: ANNOTATION_REASON, MEMO_MARK: MEMO_REASON}  # the verdicts decided here


def mechanical_equivalence(output: str) -> str:
    """Why a survivor is equivalent when its tests' output carries the mark of a mechanical decision, else ""."""
    return next((reason for mark, reason in EQUIVALENCE_REASONS.items() if mark in output), "")


def mutant_time_limit(selected_seconds: float) -> float:
    """The time one mutant's tests may take: three times what the selected tests took in the map's measurement,
    plus 30 s. The session's own timeout (cosmic-ray's, per module) covers every file executing the module and
    is far longer: a mutant that loops forever (`i += 1` -> `i += 0`) would hold a core for it."""
    return 3.0 * selected_seconds + 30.0


def run_with_limit(command: list[str], limit: float, over: Overrun = A_TIMEOUT) -> int:
    """Run the tests; their exit status, or 1 with TIMEOUT_MARK printed when they outlive `limit` seconds (the
    process group is killed). The session reads the mark as a timeout, which counts as a kill (`over`: another
    mark and status, a sample's budget)."""
    sys.stdout.flush()
    proc = subprocess.Popen(command, start_new_session=True, preexec_fn=limit_memory)
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        print(f"{over.mark} after {limit:.0f} s", flush=True)
        return over.status
    except BaseException:  # interrupted: the tests stop with it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


if __name__ == "__main__":
    sys.exit(main())

"""One module's mutation session: cosmic-ray's init, filter and exec in a scratch copy of the suite, each mutant
tested by the files that execute its statement (mutation.coverage_map), and the results read back as mutants.

The copy (`<work>/tree`, mutation.tree) must be the code the coverage map was measured on (same digest). The session
database (`<work>/session.sqlite`) keeps every result as it comes, so an interrupted session resumes where it
stopped: `exec` runs only the pending mutants.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkerOutcome, WorkResult

from mutation.carry import partial_entry, seed, source_sha
from mutation.coverage_map import CoverageMap, load_map, save_map, statement_lines
from mutation.fork_server import SERVER_VARIABLE
from mutation.modules import ROOT
from mutation.mutant_tests import (
    BUDGET_MARK,
    INTERRUPT_MARK,
    NOT_SELECTED,
    RUNNING_VARIABLE,
    TIER_KILL_MARK,
    TIMEOUT_MARK,
    mechanical_equivalence,
    observed_selection,
)
from mutation.operators import EXCLUDED_OPERATORS
from mutation.results import OUTCOMES
from mutation.tree import commit_of, copy_tree, python_digest, tree_environment


class SessionError(RuntimeError):
    """The session could not run: cosmic-ray missing, the map measured on other code, a command refusing its input."""


@dataclass
class Mutant:
    """One mutant and what the tests made of it."""

    operator: str
    line_number: int
    column: int
    line: str  # the source line it mutates, stripped
    outcome: str  # killed | survived | incompetent | timeout | skipped | pending | unselected | unfinished
    diff: str = ""
    executed_by: list[str] = field(default_factory=list)  # the tests that execute its statement (survivors)
    observed_by: list[str] | None = None  # for a memo's body or a statement run at import, the tests that can
    # observe it, which it ran instead of `executed_by` (mutation.observers; None: that rule did not apply)
    equivalent: str = ""  # why it is equivalent when that is decided mechanically (annotations only), else empty
    by_tier: bool = False  # killed by the kill tier (mutation.kill_tier), before its covering tests
    occurrence: int = -1  # cosmic-ray's occurrence of the operator in the module (with the position: which mutant)


@dataclass
class ModuleRun:
    """The results of one module's session."""

    module: str
    tests: tuple[str, ...]  # the test files that execute any statement of the module
    tests_seconds: float  # their duration in the map's measurement
    timeout_seconds: float
    seconds: float
    mutants: list[Mutant] = field(default_factory=list)
    commit: str = "unknown"  # the checkout's commit when the copy was taken ("+changes": with uncommitted changes)
    every_file: bool = False  # each mutant ran every file of `tests`, not only those executing its statement
    carried: list[str] = field(default_factory=list)  # per mutant carried from an earlier session, its commit
    runner: str = "a process per mutant"  # or "fork server" (mutation.fork_server), when its baseline passed
    tier: str = "auto"  # when each mutant met the kill tier before its covering tests (mutation.kill_tier)
    module_sha: str = ""  # SHA-256 of the unmutated module's source (mutation.carry.source_sha)

    def count(self, outcome: str) -> int:
        return sum(m.outcome == outcome for m in self.mutants)

    def entry(self, tool_version: str) -> dict:
        """The results-file entry of this run (mutation.results): counts, timing, commit, survivors with their
        source line, diff and the test files that execute them."""
        return {
            "module": self.module,
            "tests": list(self.tests),
            "counts": {k: self.count(k) for k in OUTCOMES},
            "tests_seconds": self.tests_seconds,
            "timeout_seconds": self.timeout_seconds,
            "seconds": self.seconds,
            "commit": self.commit,
            "selection": "every file executing the module" if self.every_file else "tests executing the statement",
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tool": tool_version,
            "survivors": [{k: v for k, v in asdict(m).items()
                           if k not in ("outcome", "by_tier", "occurrence") and (k != "equivalent" or v)
                           and (k != "observed_by" or v is not None)}
                          for m in self.mutants if m.outcome == "survived"],
            "kill_tier": {"used": self.tier != "off", "mode": self.tier,
                          "kills": sum(m.by_tier for m in self.mutants)},
            "carried": len(self.carried),  # judged in an earlier session (mutation.carry), by these commits' tests
            "carried_from": sorted(set(self.carried)),
            "runner": self.runner,
            "module_sha": self.module_sha,
            "outcomes": judged_outcomes(self.mutants),
        }


JUDGED = ("killed", "timeout", "survived", "incompetent")


def judged_outcomes(mutants: list[Mutant]) -> dict[str, list[list]]:
    """Every judged mutant of a run by outcome, each as [operator, occurrence, line, column]: what settles a sample's
    mutant left unfinished within its budget when the same module source was run whole (mutation.settle)."""
    return {o: [[m.operator, m.occurrence, m.line_number, m.column] for m in mutants if m.outcome == o]
            for o in JUDGED}


def test_command(module: str, map_path: Path, pristine: Path, every_file: bool = False,
                 python: str = sys.executable, verified: Path | None = None, tier: str = "auto",
                 budget: float | None = None, jobs: int = 1) -> str:
    """The command cosmic-ray runs for each mutant (mutation.mutant_tests)."""
    return " ".join([python, "-m", "mutation.mutant_tests", "--map", str(map_path), "--module", module,
                     "--pristine", str(pristine), *(["--all"] if every_file else []),
                     *(["--verified", str(verified)] if verified else []), "--tier", tier,
                     *(["--budget", f"{budget:g}"] if budget is not None else []),
                     *(["--jobs", str(jobs)] if jobs > 1 else [])])


def _config(module: str, command: str, timeout: float) -> str:
    """cosmic-ray's configuration for the session (TOML)."""
    excluded = ", ".join(json.dumps(p) for p in EXCLUDED_OPERATORS)
    return (
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(module)}\n"
        f"timeout = {timeout:.1f}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n"
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = [{excluded}]\n"
    )


def _tool(name: str) -> str:
    """The path of a cosmic-ray command next to the running interpreter."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise SessionError(f"{name} is not installed in this environment (pip install -e '.[dev]' installs "
                           "cosmic-ray; ./run mutate does it)")
    return str(path)


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise SessionError(f"{' '.join(args[:2])} failed (exit {proc.returncode}): " + " | ".join(tail))
    return proc


STOP_GRACE_SECONDS = 30.0  # how long a stopped exec's process group has to end after SIGINT, before SIGKILL


def _raise_interrupt(signum: int, _frame) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a batch scheduler's or `kill`'s stop) raises KeyboardInterrupt like Ctrl-C does, in the main thread,
    so that a stopped session takes the path of an interrupted one: its children stopped, its finished mutants kept."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _running_tests(running: Path) -> list[int]:
    """The pids of the mutants' tests registered in `running` (mutation.mutant_tests.registered) that still run
    them (where /proc tells, a pid taken over by another program is left alone)."""
    has_proc = Path("/proc/self/cmdline").exists()
    out = []
    for mark in running.iterdir() if running.is_dir() else []:
        if not mark.name.isdigit():
            continue
        if has_proc:
            try:
                if b"mutation.mutant_tests" not in Path(f"/proc/{mark.name}/cmdline").read_bytes():
                    continue
            except FileNotFoundError:
                continue  # ended
            except OSError:
                pass  # not readable: it is signalled, and a process already gone is ignored
        out.append(int(mark.name))
    return out


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _stop_group(proc: subprocess.Popen, running: Path, grace: float = STOP_GRACE_SECONDS) -> None:
    """Stop the process group led by `proc` and the mutants' tests registered in `running` (cosmic-ray starts them
    in a session of their own): SIGINT to each (the mutant being tested prints INTERRUPT_MARK, so it is run again,
    never judged); wait until all have ended, SIGKILL to whatever is left after `grace` seconds."""
    tests = _running_tests(running)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    for pid in tests:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + grace
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    while time.monotonic() < deadline:
        if not _group_alive(proc.pid) and not _running_tests(running):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in _running_tests(running):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait()


def _exec(args: list[str], cwd: Path, env: dict[str, str], running: Path) -> None:
    """cosmic-ray exec, in a process group of its own. Stopped by SIGINT or SIGTERM (see `sigterm_as_interrupt`),
    the session stops the whole group (`_stop_group`) before KeyboardInterrupt goes on to the caller, so no mutant's
    tests outlive the session and no result of a stopped mutant counts."""
    shutil.rmtree(running, ignore_errors=True)  # marks a killed run left: one session per module, none run now
    running.mkdir(parents=True, exist_ok=True)
    env = dict(env, **{RUNNING_VARIABLE: str(running)})
    with sigterm_as_interrupt():
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate()
        except KeyboardInterrupt:
            _stop_group(proc, running)
            raise
    if proc.returncode != 0:
        tail = (err or out).strip().splitlines()[-5:]
        raise SessionError(f"{' '.join(args[:2])} failed (exit {proc.returncode}): " + " | ".join(tail))


@dataclass(frozen=True)
class Candidate:
    """A mutant cosmic-ray would run (after the operator filter), as a selection sees it."""

    job_id: str
    operator: str
    occurrence: int
    line_number: int
    column: int


Selection = Callable[[list[Candidate]], set[str]]  # the job ids to run among the candidates; the rest is not run
VERIFIED_FILE = "server-verified.json"  # the session's tests known to pass or fail unmutated, tier time, killers


def select_mutants(db: Path, choose: Selection) -> int:
    """Leave out of the session every pending mutant that `choose` does not pick (its result: skipped, with
    NOT_SELECTED as output, so it is never run nor judged); how many it picked. The candidates are sorted by
    position, operator and occurrence, so a seeded choice is the same on any machine."""
    with use_db(str(db), WorkDB.Mode.open) as work:
        items = [(item.job_id, item.mutations[0]) for item in work.pending_work_items]
        candidates = sorted((Candidate(job, spec.operator_name, int(spec.occurrence), int(spec.start_pos[0]),
                                       int(spec.start_pos[1])) for job, spec in items),
                            key=lambda c: (c.line_number, c.column, c.operator, c.occurrence))
        chosen = choose(candidates)
        left_out = [c.job_id for c in candidates if c.job_id not in chosen]
        if left_out:
            work.set_multiple_results(left_out, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=NOT_SELECTED))
    return len(candidates) - len(left_out)


def run_module(module: str, cmap: CoverageMap, work: Path, resume: bool = True, root: Path = ROOT,
               every_file: bool = False, partial: dict | None = None, use_server: bool = True,
               tier: str = "auto", choose: Selection | None = None, budget: float | None = None,
               jobs: int = 1, judged_elsewhere: Callable[[str], set] | None = None) -> ModuleRun:
    """Run (or resume) the mutation session of `module` of the checkout at `root` in `work`, each mutant tested by
    the files of `cmap` that execute its statement; the mutants with their outcomes. The session keeps its own copy
    of the map and of the module's unmutated source, so measuring a new map meanwhile does not change it. A fresh
    session starts from the finished mutants of `partial` (an interrupted session's checkpoint, mutation.carry)
    when the module's source is the same. With `use_server`, the mutants' tests run in children forked from a test
    server (mutation.fork_server), each test that kills a mutant checked to pass there on the unmutated module
    (mutation.mutant_tests.through_server), with the kill tier (mutation.kill_tier) where `tier` says (on: first;
    off; auto: among them by cost, mutation.mutant_tests.before_tier); else each
    in a process of its own (no tier: its point is the server's loaded tokenizers). With `choose`, a fresh session
    runs only the mutants it picks (`select_mutants`; a sample, the mutants of a change), the others reported
    "unselected". With `budget`, each mutant's covering tests get at most that many seconds after the tier; a mutant
    past it is "unfinished" (mutation.mutant_tests.BUDGET_MARK), and a later run with a larger budget or none runs
    it again (`forget_unfinished`). With `jobs` above 1 (and the server), each mutant's covering tests are split
    over that many children side by side (mutation.mutant_tests.through_server_parts). `judged_elsewhere` gives,
    for the module's source digest, the mutants (operator, occurrence, line, column) another run of that source
    judged (mutation.settle.judged_keys): an unfinished one of those is left unfinished, not run again, since the
    summary takes that run's outcome for it."""
    tree, db, pristine, map_path = (work / "tree", work / "session.sqlite", work / "pristine.py",
                                    work / "coverage-map.json")
    fresh = not (resume and db.exists() and tree.exists() and pristine.exists() and map_path.exists())
    if fresh:
        work.mkdir(parents=True, exist_ok=True)
        db.unlink(missing_ok=True)
        (work / VERIFIED_FILE).unlink(missing_ok=True)  # what held on the code of an earlier session
        copy_tree(root, tree)
        if python_digest(tree) != cmap.digest:
            raise SessionError(f"the coverage map was measured on other code (commit {cmap.commit}); "
                               "`python -m mutation map` measures it again")
        shutil.copyfile(tree / module, pristine)
        save_map(cmap, map_path)
        (work / "commit").write_text(commit_of(root), encoding="utf-8")
    elif load_map(map_path).digest != cmap.digest:
        raise SessionError(f"the session in {work} was started on other code: run it with --fresh")
    shutil.copyfile(pristine, tree / module)  # an interrupted exec leaves its mutant written into the copy
    env = tree_environment(tree, work / "ledgers")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant and the module it replaces may share size and second: no .pyc
    t0 = time.monotonic()
    tests = tuple(cmap.module_files(module))
    tests_seconds = cmap.seconds(tests)
    timeout = max(60.0, 3.0 * tests_seconds + 30.0)
    command = test_command(module, map_path.resolve(), pristine.resolve(), every_file,
                           verified=(work / VERIFIED_FILE).resolve() if use_server else None, tier=tier,
                           budget=budget, jobs=jobs)
    (tree / "mutation.toml").write_text(_config(module, command, timeout), encoding="utf-8")
    carried_file = work / "carried.json"
    if fresh:
        _run([_tool("cosmic-ray"), "init", "mutation.toml", str(db)], tree, env)
        _run([_tool("cr-filter-operators"), str(db), "mutation.toml"], tree, env)
        carried_file.write_text(json.dumps(seed(db, partial, pristine)), encoding="utf-8")
        if choose is not None:
            select_mutants(db, choose)
    forget_interrupted(db)
    forget_unfinished(db, budget, judged_elsewhere(source_sha(pristine)) if judged_elsewhere else set())
    server = ForkServer(work / "tests.sock", tree, env) if use_server else None
    try:
        if server is not None and not server.started():
            print(f"[mutation] the test server did not start ({server.log}): a process per mutant", file=sys.stderr)
            server.stop()
            server = None
        exec_env = dict(env, **({SERVER_VARIABLE: str(server.path)} if server else {}))
        _exec([_tool("cosmic-ray"), "exec", "mutation.toml", str(db)], tree, exec_env, work / "running")
    finally:
        if server is not None:
            server.stop()
    dump = _run([_tool("cosmic-ray"), "dump", str(db)], tree, env).stdout
    source = pristine.read_text(encoding="utf-8")
    mutants = read_dump(dump, source.splitlines())
    for m in mutants:
        if m.outcome == "survived":
            m.executed_by = cmap.tests_executing(module, statement_lines(source, {m.line_number}))
            if not m.equivalent:
                m.observed_by = observed_selection(cmap, tree, module, source, {m.line_number})
    commit_file = work / "commit"
    commit = commit_file.read_text(encoding="utf-8") if commit_file.exists() else "unknown"
    carried = json.loads(carried_file.read_text(encoding="utf-8")) if carried_file.exists() else []
    return ModuleRun(module, tests, round(tests_seconds, 1), timeout, round(time.monotonic() - t0, 1), mutants,
                     commit, every_file, carried, "fork server" if server is not None else "a process per mutant",
                     tier if server is not None else "off", source_sha(pristine))


class ForkServer:
    """The session's test server (mutation.fork_server), started in the session's copy with its environment, and
    never writing bytecode: its children import mutants, and a mutant written in the same second as the module it
    replaces, with the same size (`x < 3` -> `x < 6`), would otherwise be read from the module's cached bytecode."""

    def __init__(self, path: Path, tree: Path, env: dict[str, str]) -> None:
        self.path, self.tree = path, tree
        self.log = path.with_suffix(".log")
        env = dict(env, PYTHONDONTWRITEBYTECODE="1")
        self.env = env  # a client's environment too (the profile is imported from the path it sets)
        with self.log.open("w", encoding="utf-8") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "mutation.fork_server", "--socket", str(path)],
                                         cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)

    def started(self, wait: float = 300.0) -> bool:
        """Whether the server listens (within `wait` seconds; it loads the tokenizers first)."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if "serving on" in self.log.read_text(encoding="utf-8"):
                return True
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# a client of the server at argv[1] running pytest with the rest of argv, no time limit (for checks by hand)
CLIENT = ("import sys; from pathlib import Path; from mutation.fork_server import run_tests; "
          "sys.exit(run_tests(Path(sys.argv[1]), sys.argv[2:], Path.cwd(), None))")


def forget_interrupted(db: Path) -> int:
    """Remove the results of the mutants whose tests were stopped (INTERRUPT_MARK) from the session database, so
    `exec` runs them again; how many."""
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        return conn.execute("DELETE FROM work_results WHERE output LIKE ?", (f"%{INTERRUPT_MARK}%",)).rowcount


def unfinished_budget(output: str) -> float | None:
    """The budget a mutant's tests outran (BUDGET_MARK's "(60 s)"), or None when the output has no such mark."""
    at = output.find(BUDGET_MARK)
    if at < 0:
        return None
    try:
        return float(output[at + len(BUDGET_MARK):].split("(", 1)[1].split(" s)", 1)[0])
    except (IndexError, ValueError):
        return 0.0  # a mark without a readable budget: any run judges it again


def forget_unfinished(db: Path, budget: float | None, keep: set | frozenset = frozenset()) -> int:
    """Remove the results of the mutants left unfinished within a budget smaller than `budget` (None: no budget,
    larger than any), so `exec` runs them again with the larger one, except those in `keep` (operator, occurrence,
    line, column: judged by another run of the same source); how many."""
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        rows = conn.execute("SELECT r.job_id, r.output, s.operator_name, s.occurrence, s.start_pos_row, "
                            "s.start_pos_col FROM work_results r JOIN mutation_specs s ON r.job_id = s.job_id "
                            "WHERE r.output LIKE ?", (f"%{BUDGET_MARK}%",)).fetchall()
        again = [job for job, output, *key in rows
                 if (budget is None or (unfinished_budget(output) or 0.0) < budget) and tuple(key) not in keep]
        conn.executemany("DELETE FROM work_results WHERE job_id = ?", [(job,) for job in again])
    return len(again)


def checkpoint(module: str, work: Path) -> dict | None:
    """The results file's "partial" entry of the module's local session in `work` (mutation.carry): its finished
    mutants, or None when there is no session there."""
    db, pristine, commit_file = work / "session.sqlite", work / "pristine.py", work / "commit"
    if not (db.exists() and pristine.exists()):
        return None
    dump = _run([_tool("cosmic-ray"), "dump", str(db)], work, dict(os.environ)).stdout
    commit = commit_file.read_text(encoding="utf-8") if commit_file.exists() else "unknown"
    folder = work.resolve()
    return partial_entry(module, commit, pristine, dump,
                         str(folder.relative_to(ROOT)) if folder.is_relative_to(ROOT) else str(folder))


def read_dump(dump: str, source_lines: list[str]) -> list[Mutant]:
    """cosmic-ray's `dump` output (one JSON [work item, result] per line) as mutants of the given source."""
    mutants: list[Mutant] = []
    for raw in dump.splitlines():
        if not raw.strip():
            continue
        item, result = json.loads(raw)
        (spec,) = item["mutations"]
        line_number, column = spec["start_pos"]
        line = source_lines[line_number - 1].strip() if 0 < line_number <= len(source_lines) else ""
        if result is None or INTERRUPT_MARK in (result.get("output") or ""):
            outcome = "pending"  # not run yet, or stopped while its tests ran (run again on resume)
        elif NOT_SELECTED in (result.get("output") or ""):
            outcome = "unselected"  # left out by the session's selection: never run
        elif result.get("worker_outcome") == "skipped":
            outcome = "skipped"
        elif BUDGET_MARK in (result.get("output") or ""):
            outcome = "unfinished"  # its covering tests outran a sample's budget: neither killed nor survived
        elif result.get("output") == "timeout" or TIMEOUT_MARK in (result.get("output") or ""):
            outcome = "timeout"  # past cosmic-ray's timeout, or past the selected tests' limit (mutant_tests)
        else:
            outcome = result.get("test_outcome") or result.get("worker_outcome") or "unknown"
        output = (result or {}).get("output") or "" if outcome == "survived" else ""
        equivalent = mechanical_equivalence(output)
        by_tier = outcome in ("killed", "timeout") and TIER_KILL_MARK in ((result or {}).get("output") or "")
        mutants.append(Mutant(spec["operator_name"], line_number, column, line, outcome,
                              (result or {}).get("diff") or "", equivalent=equivalent, by_tier=by_tier,
                              occurrence=int(spec["occurrence"])))
    return sorted(mutants, key=lambda m: (m.line_number, m.column, m.operator))

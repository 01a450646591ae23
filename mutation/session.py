"""One module's mutation session: a scratch copy of the suite, cosmic-ray's init, filter, baseline and exec there,
and its results read back as mutants.

cosmic-ray writes each mutant into the file on disk before it runs the tests, so the session never touches the
working tree: it copies the checkout (without history, environment and outputs) into `<work>/tree` and runs there,
with PYTHONPATH pointing at the copy (the tests' subprocesses inherit it). The session database
(`<work>/session.sqlite`) keeps every result as it comes, so an interrupted session resumes where it stopped: `exec`
runs only the pending mutants. A baseline run of the selected tests on the unmutated copy comes first (a resumed
session reuses its recorded duration); if it fails there is no score (an environment error).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from mutation.modules import ROOT
from mutation.operators import EXCLUDED_OPERATORS
from mutation.results import OUTCOMES
from mutation.selection import Selection

# the whole checkout but its history, environment, outputs and caches (tests read the README, scripts, examples)
NOT_COPIED = (".git", ".venv", "out", "*.egg-info", "__pycache__", "*.pyc", ".hypothesis", ".pytest_cache",
              ".ruff_cache", ".import_linter_cache")
PYTEST_ARGS = ("-q", "-x", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly")


class SessionError(RuntimeError):
    """The session could not run: cosmic-ray missing, the baseline failing, a command refusing its input."""


@dataclass
class Mutant:
    """One mutant and what the tests made of it."""

    operator: str
    line_number: int
    column: int
    line: str  # the source line it mutates, stripped
    outcome: str  # killed | survived | incompetent | timeout | skipped | pending
    diff: str = ""


@dataclass
class ModuleRun:
    """The results of one module's session."""

    module: str
    tests: tuple[str, ...]
    baseline_seconds: float
    timeout_seconds: float
    seconds: float
    mutants: list[Mutant] = field(default_factory=list)
    commit: str = "unknown"  # the checkout's commit when the copy was taken ("+changes": with uncommitted changes)

    def count(self, outcome: str) -> int:
        return sum(m.outcome == outcome for m in self.mutants)

    def entry(self, tool_version: str) -> dict:
        """The results-file entry of this run (mutation.results): counts, timing, commit, survivors with their
        source line and diff."""
        return {
            "module": self.module,
            "tests": list(self.tests),
            "counts": {k: self.count(k) for k in OUTCOMES},
            "baseline_seconds": self.baseline_seconds,
            "timeout_seconds": self.timeout_seconds,
            "seconds": self.seconds,
            "commit": self.commit,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tool": tool_version,
            "survivors": [{k: v for k, v in asdict(m).items() if k != "outcome"}
                          for m in self.mutants if m.outcome == "survived"],
        }


def _commit(root: Path) -> str:
    """The commit (short) of the checkout at `root`, with "+changes" when the tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True)
    except OSError:
        return "unknown"
    return (head.stdout.strip() or "unknown") + ("+changes" if dirty.stdout.strip() else "")


def test_command(selection: Selection, python: str = sys.executable) -> str:
    """The command cosmic-ray runs for each mutant: the module's tests, serially, stopping at the first failure."""
    return " ".join([python, "-m", "pytest", *PYTEST_ARGS, *selection.tests])


def _copy_tree(root: Path, dest: Path) -> None:
    """The checkout at `root` (without NOT_COPIED) into `dest`, replacing an older copy."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(root, dest, ignore=shutil.ignore_patterns(*NOT_COPIED))


def _config(selection: Selection, timeout: float) -> str:
    """cosmic-ray's configuration for the session (TOML)."""
    excluded = ", ".join(json.dumps(p) for p in EXCLUDED_OPERATORS)
    return (
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(selection.module)}\n"
        f"timeout = {timeout:.1f}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(test_command(selection))}\n"
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = [{excluded}]\n"
    )


def _environment(tree: Path, work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["DELTA_LEDGER_DIR"] = str(work / "ledgers")
    env.setdefault("RAYON_NUM_THREADS", "1")
    return env


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


def baseline(selection: Selection, tree: Path, env: dict[str, str]) -> float:
    """Run the selected tests on the unmutated copy; their duration in seconds. Raises SessionError if they fail."""
    t0 = time.monotonic()
    proc = subprocess.run(test_command(selection).split(), cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        tail = proc.stdout.strip().splitlines()[-5:]
        raise SessionError(f"the selected tests fail on the unmutated copy of {selection.module} (exit "
                           f"{proc.returncode}): " + " | ".join(tail))
    return seconds


def run_module(selection: Selection, work: Path, resume: bool = True, root: Path = ROOT) -> ModuleRun:
    """Run (or resume) the mutation session of one module of the checkout at `root` in `work`; the mutants with
    their outcomes."""
    if not selection.tests:
        raise SessionError(f"no test file imports {selection.module}: nothing would kill its mutants")
    tree, db = work / "tree", work / "session.sqlite"
    fresh = not (resume and db.exists() and tree.exists())
    if fresh:
        work.mkdir(parents=True, exist_ok=True)
        db.unlink(missing_ok=True)
        _copy_tree(root, tree)
        (work / "commit").write_text(_commit(root), encoding="utf-8")
    env = _environment(tree, work)
    t0 = time.monotonic()
    recorded = work / "baseline_seconds"
    if fresh or not recorded.exists():
        recorded.write_text(f"{baseline(selection, tree, env):.1f}", encoding="ascii")
    base = float(recorded.read_text(encoding="ascii"))
    timeout = max(60.0, 3.0 * base + 30.0)
    (tree / "mutation.toml").write_text(_config(selection, timeout), encoding="utf-8")
    if fresh:
        _run([_tool("cosmic-ray"), "init", "mutation.toml", str(db)], tree, env)
        _run([_tool("cr-filter-operators"), str(db), "mutation.toml"], tree, env)
    _run([_tool("cosmic-ray"), "exec", "mutation.toml", str(db)], tree, env)
    dump = _run([_tool("cosmic-ray"), "dump", str(db)], tree, env).stdout
    mutants = read_dump(dump, (tree / selection.module).read_text(encoding="utf-8").splitlines())
    commit_file = work / "commit"
    commit = commit_file.read_text(encoding="utf-8") if commit_file.exists() else "unknown"
    return ModuleRun(selection.module, selection.tests, round(base, 1), timeout, round(time.monotonic() - t0, 1),
                     mutants, commit)


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
        if result is None:
            outcome = "pending"
        elif result.get("worker_outcome") == "skipped":
            outcome = "skipped"
        elif result.get("output") == "timeout":  # cosmic-ray counts a test run past the timeout as a kill
            outcome = "timeout"
        else:
            outcome = result.get("test_outcome") or result.get("worker_outcome") or "unknown"
        mutants.append(Mutant(spec["operator_name"], line_number, column, line, outcome,
                              (result or {}).get("diff") or ""))
    return sorted(mutants, key=lambda m: (m.line_number, m.column, m.operator))

"""Which tests execute which statements of the checkout's packages (mutation.modules.observed_folders: spec/ and
delta/, which are mutated, and the rest, where mutation.observers looks for the tests reading a name): the map that
picks the tests each mutant runs.

A mutant changes one statement. A test run that never executes that statement on the unmutated code cannot tell
the mutant apart: everything before the statement is unchanged, so control never reaches it in the mutant either.
So each mutant runs only the tests that execute its statement, fastest first, stopping at the first failure; a
mutant of a statement no test executes survives without running anything (and its survivor entry says so).

How the map is measured, so that it does not miss an executing file:
- one process per test file, under coverage, each test's lines (its fixtures' included) recorded under its name
  (mutation.pytest_contexts); lines run outside any test (imports, module level, collection) are charged to the
  whole file, so import-time statements count for every file that imports the module;
- subprocesses measured too (coverage's `patch = subprocess`; the data file is named per test file through
  `COVERAGE_FILE`, which children inherit), and saved on SIGTERM;
- incrementally: a file's measurement is kept while the file, the modules it executed and the harness hold
  (build_map, _reusable), so only the files a change concerns run again.
What it can miss, so that a survivor is one that the tests executing its statement let through (the score is a
lower bound): a test that uses a result cached by an earlier test of its file (an lru_cache, a module-scoped
fixture) without executing the statement itself; a child started with an environment that drops coverage's
variables, killed before it saves, or unable to save (a test that limits its file size): a file that fails under
coverage but passes without it, or leaves a data file that cannot be read, is kept with what was measured and
listed as `partial`. `python -m mutation run --every-file` runs every file executing the module, whole, against
each mutant to rule all of that out.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from coverage import CoverageData
from coverage.exceptions import DataError

from mutation.modules import MUTATED_PACKAGES
from mutation.tree import commit_of, copy_tree, python_digest, python_files, tree_environment

PYTEST_ARGS = ("-q", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly")
TEST_GLOB = "properties/test_*.py"
TEST_FOLDER = TEST_GLOB.split("/")[0]  # measured too (mutation.observers reads the tests' own lines), but harness
Measured = tuple[str, float, int, str, bool]  # (file, seconds, exit status, output tail, partial)


class MapError(RuntimeError):
    """The map could not be measured (a test file failing on the unmutated copy) or does not fit the checkout."""


@dataclass
class CoverageMap:
    """Test files (with their measured duration) and, per module, the statements each file executes."""

    digest: str  # python_digest of the copy it was measured on
    commit: str
    tests: list[tuple[str, float]]  # (test file or `file::test`, seconds), indexed by the line lists
    lines: dict[str, dict[int, list[int]]] = field(default_factory=dict)  # module -> line -> test indices
    date: str = ""
    partial: list[str] = field(default_factory=list)  # files failing only under coverage, or with unreadable data
    carried_from: str = ""  # not measured: carried from the map measured at this commit (mutation.carried_map)
    sources: list[str] = field(default_factory=lambda: list(MUTATED_PACKAGES))  # the folders measured

    def tests_executing(self, module: str, line_numbers: Iterable[int]) -> list[str]:
        """The tests that execute any of `line_numbers` of `module`, fastest first: a test's name
        (`file::test`, every parameter set) or a whole file (for lines it runs outside any test). A test whose file
        is selected whole is left out: the file runs it."""
        per_line = self.lines.get(module, {})
        found = {i for n in line_numbers for i in per_line.get(n, ())}
        whole = {self.tests[i][0] for i in found if "::" not in self.tests[i][0]}
        chosen = [i for i in found if self.tests[i][0].split("::")[0] not in whole or "::" not in self.tests[i][0]]
        return [self.tests[i][0] for i in sorted(chosen, key=lambda i: (self.tests[i][1], self.tests[i][0]))]

    def module_files(self, module: str) -> list[str]:
        """The test files that execute any statement of `module`, fastest first."""
        files = {self.tests[i][0].split("::")[0] for per in self.lines.get(module, {}).values() for i in per}
        durations = dict(self.tests)
        return sorted(files, key=lambda f: (durations.get(f, 0.0), f))

    def seconds(self, ids: Iterable[str]) -> float:
        durations = dict(self.tests)
        return sum(durations.get(i, 0.0) for i in ids)

    def to_json(self) -> dict:
        return {"digest": self.digest, "commit": self.commit, "date": self.date, "partial": self.partial,
                **({"carried_from": self.carried_from} if self.carried_from else {}), "sources": self.sources,
                "tests": [list(t) for t in self.tests],
                "lines": {m: {str(n): ix for n, ix in sorted(per.items())} for m, per in sorted(self.lines.items())}}

    @classmethod
    def from_json(cls, data: dict) -> CoverageMap:
        try:
            return cls(data["digest"], data["commit"], [(str(p), float(s)) for p, s in data["tests"]],
                       {m: {int(n): [int(i) for i in ix] for n, ix in per.items()} for m, per in data["lines"].items()},
                       data.get("date", ""), [str(p) for p in data.get("partial", [])],
                       str(data.get("carried_from", "")), [str(s) for s in data.get("sources", MUTATED_PACKAGES)])
        except (KeyError, TypeError, ValueError) as exc:
            raise MapError(f"not a coverage map: {exc}") from exc


def save_map(cmap: CoverageMap, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cmap.to_json()), encoding="utf-8")
    tmp.replace(path)


def load_map(path: Path) -> CoverageMap:
    """The map saved at `path`; MapError if the file is not one."""
    try:
        return CoverageMap.from_json(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise MapError(f"{path} is not a coverage map: {exc}") from exc


def _rcfile(work: Path, tree: Path, sources: tuple[str, ...]) -> Path:
    rc = work / "coveragerc"
    lines = "\n".join(f"    {tree / s}" for s in sources)
    rc.write_text(f"[run]\nsource =\n{lines}\nparallel = true\npatch = subprocess\nsigterm = true\n",
                  encoding="utf-8")
    return rc


class _Stopped(Exception):
    """The measurement was interrupted: no further file is started."""


class _Children:
    """The measuring processes running now, each in its own process group, so that an interrupted map stops them
    (and whatever they started) instead of waiting for them and starting the files still queued."""

    def __init__(self) -> None:
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._stopped = False

    def run(self, args: list[str], **kwargs) -> subprocess.CompletedProcess:
        with self._lock:
            if self._stopped:
                raise _Stopped()
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True, **kwargs)
            self._running.add(proc)
        try:
            out, err = proc.communicate()
        finally:
            with self._lock:
                self._running.discard(proc)
        if self._stopped:
            raise _Stopped()
        return subprocess.CompletedProcess(args, proc.returncode, out, err)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            for proc in self._running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)


def _measure(tree: Path, work: Path, rc: Path, test: str, children: _Children | None = None) -> Measured:
    """Run one test file under coverage in its own process; (file, seconds, exit status, output tail, partial).
    A file that fails under coverage is run again without it: passing there, it counts as passed but partial."""
    run = (children or _Children()).run
    env = tree_environment(tree, work / "ledgers")
    env["COVERAGE_FILE"] = str(work / "data" / data_stem(test))
    env["MUTATION_NODES"] = str(work / "data" / f"nodes-{data_stem(test)}.jsonl")
    t0 = time.monotonic()
    proc = run([sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest", *PYTEST_ARGS,
                "-p", "mutation.pytest_contexts", test], cwd=tree, env=env)
    seconds = time.monotonic() - t0
    partial = False
    if proc.returncode not in (0, 5):
        plain = run([sys.executable, "-m", "pytest", *PYTEST_ARGS, test], cwd=tree,
                    env=tree_environment(tree, work / "ledgers"))
        partial = plain.returncode in (0, 5)
        proc = plain
    tail = " | ".join(proc.stdout.strip().splitlines()[-3:])
    return test, seconds, proc.returncode, tail, partial


def _nodes(data_dir: Path, stem: str) -> tuple[dict[int, str], dict[str, float]]:
    """The tests of one measured file: number -> name, and name -> seconds (all its parameter sets)."""
    names: dict[int, str] = {}
    seconds: dict[str, float] = {}
    path = data_dir / f"nodes-{stem}.jsonl"
    if path.exists():
        for raw in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(raw)
            names[int(row["number"])] = row["name"]
            seconds[row["name"]] = seconds.get(row["name"], 0.0) + float(row["seconds"])
    return names, seconds


def _executed(data_dir: Path, tree: Path, test: str) -> tuple[dict[str, dict[int, set[str]]], bool]:
    """module -> line -> the tests of file `test` executing it: a test's name, or the
    file itself for lines run outside any test (collection, module level) or by a child of no known test; and
    whether every data file could be read (a child stopped by a file-size limit leaves a truncated one)."""
    stem = data_stem(test)
    names, _ = _nodes(data_dir, stem)
    out: dict[str, dict[int, set[str]]] = {}
    complete = True
    for path in sorted(data_dir.glob(f"{stem}.*")):
        child = path.name[len(f"{stem}."):].split(".", 1)[0]
        owner = names.get(int(child[len("node"):]), test) if child.startswith("node") and child[4:].isdigit() \
            else None  # None: the file's own process, whose lines carry their test as context
        try:
            found = _data_file_lines(CoverageData(basename=str(path)), tree, test, owner)
        except (DataError, sqlite3.Error):  # sqlite3: read while its child still creates or writes it
            complete = False
            continue
        for rel, lines in found.items():
            per = out.setdefault(rel, {})
            for n, tests in lines.items():
                per.setdefault(n, set()).update(tests)
    return out, complete


def _data_file_lines(data: CoverageData, tree: Path, test: str, owner: str | None) -> dict[str, dict[int, set[str]]]:
    """One data file's lines under `tree`: module -> line -> tests (`owner` for a child's file, else each line's
    contexts, the empty one meaning the file `test`). Read whole before any of it is used: a file that cannot be read
    to its end (a child that still writes it) raises, and none of it counts."""
    data.read()
    out: dict[str, dict[int, set[str]]] = {}
    for measured in data.measured_files():
        try:
            rel = Path(measured).resolve().relative_to(tree.resolve()).as_posix()
        except ValueError:
            continue
        if not data.lines(measured):  # a source file coverage lists unexecuted (it touches every file of `source`)
            continue
        per = out.setdefault(rel, {})
        if owner is not None:
            for n in data.lines(measured) or ():
                per.setdefault(n, set()).add(owner)
            continue
        for n, contexts in data.contexts_by_lineno(measured).items():
            per.setdefault(n, set()).update(c if c else test for c in contexts)
    return out


PROGRESS_FILE = "measured.json"  # in the map's work folder: per measured file, its result and what it depends on
MEASUREMENT = 1  # how a file is measured (_measure's command, the coverage settings): a change measures all again


def data_stem(test: str) -> str:
    """The name of a test file's coverage data (and its children's, `<stem>.node<N>...`): `properties__test_x`."""
    return test.removesuffix(".py").replace("/", "__")


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def harness_files(root: Path, tests: list[str], sources: tuple[str, ...]) -> dict[str, str]:
    """Every Python file that a measured test file may run besides the measured packages (`sources`, whose files
    each measurement lists with what it executed) and the test files themselves, with its SHA-256: the conftest and
    test helpers (measured too, but a conftest runs unimported), any file outside the measured folders. The mutation
    tool is left out: it does not run in a measured file but in its own tests, which are test files like any
    other."""
    measured = set(tests)
    out = {}
    for path in sorted(python_files(root)):
        rel = path.relative_to(root).as_posix()
        if rel in measured or (rel.split("/")[0] in sources and rel.split("/")[0] != TEST_FOLDER) or (
                rel.startswith("mutation/") and rel != "mutation/pytest_contexts.py"):
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def harness_digest(files: dict[str, str]) -> str:
    """One digest of the harness (harness_files), with the measurement's version."""
    h = hashlib.sha256(f"measurement {MEASUREMENT}\0".encode())
    for rel, sha in sorted(files.items()):
        h.update(rel.encode() + b"\0" + sha.encode() + b"\0")
    return h.hexdigest()


def harness_holds(then: dict[str, str], now: dict[str, str]) -> bool:
    """Whether runs measured under the harness `then` are the same runs under `now`: every file of `then` is
    unchanged, and no conftest.py is new. A new module changes nothing by itself: it runs only where something
    imports it, and that importer changed (a harness file: every measurement is dropped; a test file or a mutated
    module: the files concerned are measured again). pytest loads a conftest.py without any import, so a new one
    counts as a change."""
    return all(now.get(rel) == sha for rel, sha in then.items()) and not any(
        rel.rsplit("/", 1)[-1] == "conftest.py" for rel in now.keys() - then.keys())


def _reusable(work: Path, root: Path, files: list[str], sources: tuple[str, ...], harness: dict[str, str]
              ) -> dict[str, dict]:
    """The files whose earlier measurement (in PROGRESS_FILE) still holds, with their entries: measured and passed
    under a harness that still holds (harness_holds) and the same sources, with the file itself and every module of
    `sources` it executed unchanged. Its run is then the same run: what it executes is the same code, and the
    modules it did not execute were neither imported nor run by it. (A progress file without per-file harness
    hashes, from an older version, holds only under the same harness digest.) Nothing holds when the work folder
    was measured at another path (copied from another checkout or a cache): coverage's data name the files it
    measured by absolute path, so the data of a moved folder would name no file of this tree."""
    try:
        data = json.loads((work / PROGRESS_FILE).read_text(encoding="utf-8"))
        then = data.get("harness_files")
        same = harness_holds(dict(then), harness) if then is not None else data["harness"] == harness_digest(harness)
        here = str((work / "tree").resolve())  # a progress file older than this check was measured in place
        if not same or data["sources"] != list(sources) or data.get("tree", here) != here:
            return {}
        entries = dict(data["files"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        return {}
    out = {}
    for test in files:
        e = entries.get(test)
        try:
            if (e and e["result"][2] in (0, 5) and e["sha"] == _sha(root / test)
                    and all(_sha(root / m) == sha for m, sha in e["modules"].items())):
                out[test] = e
        except (KeyError, TypeError, IndexError, AttributeError):
            continue
    return out


def _save_progress(work: Path, sources: tuple[str, ...], harness: dict[str, str], entries: dict[str, dict]) -> None:
    tmp = work / (PROGRESS_FILE + ".tmp")
    tmp.write_text(json.dumps({"harness": harness_digest(harness), "harness_files": harness,
                               "sources": list(sources), "tree": str((work / "tree").resolve()), "files": entries},
                              sort_keys=True), encoding="utf-8")
    tmp.replace(work / PROGRESS_FILE)


def _data_stem(name: str) -> str:
    """The test file's stem in a data file name (`properties__test_x.host.pid1.x`, `nodes-properties__test_x.jsonl`)."""
    return name.removeprefix("nodes-").split(".", 1)[0]


def build_map(root: Path, work: Path, jobs: int = 2, tests: list[str] | None = None,
              sources: tuple[str, ...] = MUTATED_PACKAGES,
              progress: Callable[[str], None] = lambda _: None) -> CoverageMap:
    """Measure the map on a fresh copy of the checkout at `root` (in `work`): every test file (by default
    properties/test_*.py) in its own process, `jobs` at a time. MapError if a file fails on the unmutated copy.
    The measurement is incremental: a file whose earlier measurement still holds (_reusable: the same harness, the
    file and the modules it executed unchanged) keeps its data and is not run again, whether the earlier
    measurement finished or was interrupted; every other file's data is removed and measured anew."""
    tree, data_dir = work / "tree", work / "data"
    files = tests if tests is not None else sorted(p.relative_to(root).as_posix() for p in root.glob(TEST_GLOB))
    harness = harness_files(root, files, sources)
    entries = _reusable(work, root, files, sources, harness)
    copy_tree(root, tree)
    data_dir.mkdir(parents=True, exist_ok=True)
    kept = {data_stem(t) for t in entries}
    for old in data_dir.iterdir():
        if _data_stem(old.name) not in kept:
            old.unlink()
    rc = _rcfile(work, tree, sources)
    results: dict[str, Measured] = {t: tuple(e["result"]) for t, e in entries.items()}  # type: ignore[misc]
    if entries:
        progress(f"kept: {len(entries)} of {len(files)} files measured earlier on the same code")
    _save_progress(work, sources, harness, entries)
    children = _Children()
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = {pool.submit(_measure, tree, work, rc, f, children): f for f in files if f not in entries}
        for count, future in enumerate(as_completed(futures), len(entries) + 1):
            test = futures[future]
            results[test] = future.result()
            if results[test][2] in (0, 5):  # kept even with unreadable data: measuring again reads no more
                executed, _ = _executed(data_dir, tree, test)
                entries[test] = {"result": list(results[test]), "sha": _sha(tree / test),
                                 "modules": {m: _sha(tree / m) for m in sorted(executed)}}
                _save_progress(work, sources, harness, entries)
            progress(f"{count}/{len(files)} {test}: {results[test][1]:.1f} s, exit {results[test][2]}"
                     + (" (fails only under coverage: partial)" if results[test][4] else ""))
    except BaseException:  # Ctrl-C (or a failing worker): stop the running files, start no other
        children.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    ordered = [results[f] for f in files]
    failed = [f"{f} (exit {rc_}): {tail}" for f, _, rc_, tail, _ in ordered if rc_ not in (0, 5)]
    if failed:
        raise MapError("test files fail on the unmutated copy: " + "; ".join(failed))
    ids, lines, unreadable = read_measurements(data_dir, tree, [(f, round(s, 2)) for f, s, _, _, _ in ordered])
    return CoverageMap(python_digest(tree), commit_of(root), ids, lines,
                       datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       [f for i, (f, _, _, _, partial) in enumerate(ordered) if partial or i in unreadable],
                       sources=list(sources))


def read_measurements(data_dir: Path, tree: Path, files: list[tuple[str, float]]
                      ) -> tuple[list[tuple[str, float]], dict[str, dict[int, list[int]]], set[int]]:
    """From the data of the measured `files` (path, seconds) in order: every test id (the files, then the tests
    named in them, with their seconds), module -> line -> indices of the ids executing it, and the indices of the
    files whose data could not all be read."""
    ids: list[tuple[str, float]] = list(files)
    index_of = {f: i for i, (f, _) in enumerate(files)}
    lines: dict[str, dict[int, list[int]]] = {}
    unreadable: set[int] = set()
    for i, (test, _) in enumerate(files):
        _, seconds = _nodes(data_dir, data_stem(test))
        for name, s in sorted(seconds.items()):
            index_of.setdefault(name, len(ids))
            if index_of[name] == len(ids):
                ids.append((name, round(s, 2)))
        executed, complete = _executed(data_dir, tree, test)
        if not complete:
            unreadable.add(i)
        for module, per_line in executed.items():
            per = lines.setdefault(module, {})
            for n, owners in per_line.items():
                per.setdefault(n, []).extend(sorted(index_of.setdefault(o, index_of[test]) for o in owners))
    return ids, lines, unreadable


def changed_lines(before: str, after: str) -> set[int]:
    """The lines (1-based, numbered as in `before`) that a mutation replaced or deleted; an insertion counts the
    line it follows and the one it precedes."""
    a, b = before.splitlines(), after.splitlines()
    out: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        out.update(range(i1 + 1, i2 + 1) if i2 > i1 else {max(i1, 1), i1 + 1})
    return out


CACHE_DECORATORS = frozenset({"cache", "lru_cache", "cached_property"})


def decorator_name(node: ast.expr) -> str:
    """The last name of a decorator expression: `lru_cache` for `functools.lru_cache(maxsize=1)`."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def cached_function_lines(source: str, line_numbers: Iterable[int]) -> set[int]:
    """Every line of each memoized function (decorated with functools' cache, lru_cache or cached_property) that
    contains one of `line_numbers`; empty when none does. Such a body runs once per process, so the map charges it
    only to the first test of a file that calls it: a mutant there must run those files whole."""
    wanted = set(line_numbers)
    out: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                decorator_name(d) in CACHE_DECORATORS for d in node.decorator_list):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            span = set(range(first, (node.end_lineno or node.lineno) + 1))
            if span & wanted:
                out |= span
    return out


def signature_body_lines(source: str, line_numbers: Iterable[int]) -> set[int]:
    """When every one of `line_numbers` lies in the signature of a function (its `def` line through the line before
    its body; decorators excluded), the lines of those functions' bodies; else the empty set. A default value is
    evaluated at import, but a changed one can only be observed by calling the function, which runs its body: the
    tests executing the body are the ones that can see it."""
    wanted = set(line_numbers)
    signatures: dict[int, set[int]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body[0].lineno > node.lineno:
            body = set(range(node.body[0].lineno, (node.end_lineno or node.lineno) + 1))
            for n in range(node.lineno, node.body[0].lineno):
                signatures.setdefault(n, set()).update(body)
    if not wanted or not all(n in signatures for n in wanted):
        return set()
    return set().union(*(signatures[n] for n in wanted))


@lru_cache(maxsize=512)
def _statement_spans(source: str) -> tuple[tuple[int, int, frozenset[int]], ...]:
    """Each statement of `source`: (first line with decorators, last line, the lines coverage records it under),
    parsed once per text (mutation.observers asks for many lines of one file)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            decorators = [d.lineno for d in getattr(node, "decorator_list", [])]
            out.append((min([node.lineno, *decorators]), node.end_lineno or node.lineno,
                        frozenset({node.lineno, *decorators})))
    return tuple(out)


def statement_lines(source: str, line_numbers: Iterable[int]) -> set[int]:
    """The lines under which coverage records the statements that contain `line_numbers`: for each line, the
    innermost statement spanning it (decorators included) gives its first line, its decorators' lines and the line
    itself. A line outside every statement gives itself."""
    spans = _statement_spans(source)
    out: set[int] = set()
    for n in line_numbers:
        out.add(n)
        containing = [s for s in spans if s[0] <= n <= s[1]]
        if containing:
            start, _, recorded = min(containing, key=lambda s: s[1] - s[0])
            out.update({start, *recorded})
    return out

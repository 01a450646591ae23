"""A coverage map for the current code, carried from the last measured one without measuring again (minutes, not an
hour), for the mutants of a change (`python -m mutation diff`).

The old sources are read from the map's measuring copy (`<work>/_map/tree`), checked to be the measured code by its
digest: it is exactly what the map describes, uncommitted changes included (a map measured on `abc123+changes` has
no commit git could show), and it needs no git. What is carried, per module line of the current source:
- a module whose source is unchanged keeps the tests of each line;
- in a changed module, a line unchanged since the measured copy (difflib.SequenceMatcher over the line lists) keeps
  the tests of its old line; a changed or added line gets the tests that executed any line of its enclosing
  function's body in the old source (by qualified name, the innermost one that existed there), or, outside any function
  (or in a function new to the module), every test that executed the module: the per-function selection mutmut 3
  uses for every mutant;
- every test file that changed or is new since the measured copy is added whole to every line of every changed
  module, and replaces its old tests by name everywhere (a node id may have changed, and pytest refusing an id
  that no longer exists would count as a kill); a test file that no longer exists is dropped.
What this can miss beyond the measured map: an unchanged test file that now reaches a changed line of another
function (a new call), and the effect of a changed harness (conftest, helpers) on which tests run what.
"""

from __future__ import annotations

import ast
import difflib
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from mutation.coverage_map import PYTEST_ARGS, CoverageMap, MapError
from mutation.tree import commit_of, copy_tree, python_digest, tree_environment


def changed_test_files(measured_tree: Path, root: Path, tests: Iterable[str]) -> list[str]:
    """The test files of `tests` (paths relative to `root`, those that exist there) whose content differs from the
    measuring copy's, or that the copy does not have, sorted."""
    return sorted(t for t in tests if (root / t).is_file() and (
        not (measured_tree / t).is_file() or (measured_tree / t).read_bytes() != (root / t).read_bytes()))


def function_spans(source: str) -> dict[str, tuple[int, int, int]]:
    """Qualified name (`Class.method`, `outer.inner`) -> (first line, decorators included; first line of the body;
    last line) of every function of `source`."""
    spans: dict[str, tuple[int, int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    spans[name] = (first, child.body[0].lineno, child.end_lineno or child.lineno)
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return spans


def _enclosing(spans: dict[str, tuple[int, int, int]], line: int) -> list[str]:
    """The functions spanning `line` (decorators and signature included), innermost first."""
    return sorted((q for q, (a, _, b) in spans.items() if a <= line <= b), key=lambda q: spans[q][2] - spans[q][0])


def carried_lines(old_source: str, new_source: str, old_lines: Mapping[int, list[int]],
                  added: Iterable[int] = ()) -> dict[int, list[int]]:
    """The line -> test indices of a changed module's current source (`new_source`), from those of its measured
    source (`old_lines`, numbered as in `old_source`), as the module docstring says; `added` (the indices of the
    changed and new test files) on every line."""
    old, new = old_source.splitlines(), new_source.splitlines()
    module_wide = {i for ix in old_lines.values() for i in ix}
    old_spans, new_spans = function_spans(old_source) if old_source else {}, function_spans(new_source)

    def function_tests(name: str) -> set[int]:  # its body's: the def line runs at import, charged to whole files
        _, body, end = old_spans[name]
        return {i for n in range(body, end + 1) for i in old_lines.get(n, ())}

    out: dict[int, set[int]] = {n: set(added) for n in range(1, len(new) + 1)}
    for tag, i1, _i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for k, j in enumerate(range(j1, j2)):
            if tag == "equal":
                out[j + 1].update(old_lines.get(i1 + k + 1, ()))
                continue
            known = [q for q in _enclosing(new_spans, j + 1) if q in old_spans]
            out[j + 1].update(function_tests(known[0]) if known else module_wide)
    return {n: sorted(ix) for n, ix in out.items() if ix}


def carried_map(cmap: CoverageMap, measured_tree: Path, root: Path, changed_tests: Iterable[str],
                modules: Iterable[str], seconds: Mapping[str, float] | None = None) -> CoverageMap:
    """The coverage map of the code at `root`, carried from `cmap` (measured on `measured_tree`, MapError when that
    copy is no longer the measured code) as the module docstring says, over the modules of `cmap` and `modules`
    (paths relative to both trees): its digest is `python_digest(root)`, so a session accepts it, and
    `carried_from` names the measured map's commit. `changed_tests` are the test files to add whole (changed or
    new since the measured copy: `changed_test_files`), each with its duration from `seconds` (else its old
    one, else 0). No test id it names is of a changed or missing test file, except the changed files whole."""
    if not measured_tree.is_dir() or python_digest(measured_tree) != cmap.digest:
        raise MapError(f"the map's measuring copy {measured_tree} is no longer the code the map was measured on (a "
                       "`map` running or interrupted): wait for it, or run `python -m mutation map`")
    changed = sorted(set(changed_tests))
    seconds = dict(seconds or {})
    tests: list[tuple[str, float]] = []
    index: dict[int, int] = {}  # old index -> new index
    for i, (test, s) in enumerate(cmap.tests):
        if test.split("::")[0] not in changed and (root / test.split("::")[0]).is_file():
            index[i] = len(tests)
            tests.append((test, s))
    old_seconds = dict(cmap.tests)
    whole = {}
    for f in changed:
        whole[f] = len(tests)
        tests.append((f, round(float(seconds.get(f, old_seconds.get(f, 0.0))), 2)))
    for i, (test, _) in enumerate(cmap.tests):
        if test.split("::")[0] in whole:
            index[i] = whole[test.split("::")[0]]
    lines: dict[str, dict[int, list[int]]] = {}
    for module in sorted(set(cmap.lines) | set(modules)):
        if not (root / module).is_file():
            continue
        per = {n: sorted({index[i] for i in ix if i in index}) for n, ix in cmap.lines.get(module, {}).items()}
        per = {n: ix for n, ix in per.items() if ix}
        new_source = (root / module).read_text(encoding="utf-8")
        old_path = measured_tree / module
        old_source = old_path.read_text(encoding="utf-8") if old_path.is_file() else ""
        if old_source != new_source:
            per = carried_lines(old_source, new_source, per, whole.values())
        if per:
            lines[module] = per
    partial = [p for p in cmap.partial if p not in changed and (root / p).is_file()]
    return CoverageMap(python_digest(root), commit_of(root), tests, lines,
                       datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), partial,
                       carried_from=cmap.commit, sources=cmap.sources)


def check_tests_pass(root: Path, tests: list[str], work: Path) -> float:
    """Run `tests` (test files) once, in one pytest process, in a fresh copy of the checkout at `root` (`work/tree`),
    as the coverage map runs them (PYTEST_ARGS); their seconds. MapError naming the failing files when they fail on
    the unmutated code (such a test would kill every mutant it is given)."""
    tree = work / "tree"
    copy_tree(root, tree)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", *PYTEST_ARGS, *tests], cwd=tree,
                          env=tree_environment(tree, work / "ledgers"), capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if proc.returncode not in (0, 5):
        failing = sorted({line.split()[1].split("::")[0] for line in proc.stdout.splitlines()
                          if line.startswith(("FAILED ", "ERROR ")) and len(line.split()) > 1}) or tests
        tail = " | ".join(proc.stdout.strip().splitlines()[-3:])
        raise MapError(f"changed test files fail on the unmutated code (exit {proc.returncode}): "
                       f"{', '.join(failing)}: {tail}")
    return seconds

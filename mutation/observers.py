"""Which tests can observe a statement that runs at import: the tests that read what it binds.

The coverage map charges a line run at import (a module's constant, a class's field or decorator) to every test file
that imports the module, since it runs before any test; a mutant of such a line ran almost the whole gate. Yet the
statement does nothing but bind names, and a test can see the mutant only through what it reads by those names.

The proposition this selection relies on: let S be a statement run at import, in a module or a class body, of one of
the forms below, and N(S) the names it binds. A mutant of S changes the program only through the objects bound to
N(S). So a test that executes no line reading one of N(S), where lines are found by the name (a variable, an
attribute, or a string equal to it, as `getattr` needs), computes what it computes on the unmutated code. A line
that reads one and itself runs at import passes the change on to the names its own statement binds, so the reading
goes on from there (recursively, over every Python file of the checkout). The forms and their names:
- an assignment at module or class level whose targets are plain names: those names;
- a function or class whose decorators, bases or keywords the mutant changed, every decorator one of
  PURE_DECORATORS (they wrap or define; none registers the object elsewhere): the function's or class's name;
- inside a class, also the class itself: a field's default is seen where an instance is built, which is where the
  class's name is read or one of its methods runs (`cls(...)` builds one without the name), so the tests reading the
  class's name and those executing its methods' bodies.
A reading line is resolved through the map: in a measured module (spec/, delta/), the tests executing it (and, when
it runs at import, the readers of its own statement's names); in a test file, that file whole. A reading line in any
other file (a conftest, a package the map does not measure), a reading statement run at import of another form, or a
name read by a star import leaves the question open: None, and the mutant keeps its whole files.

What it shares with the map's blind spots: a value cached across tests (a memo filled by an earlier test, a
module-level table) is read without executing the reading line; `python -m mutation run --every-file` rules it out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mutation.coverage_map import CACHE_DECORATORS, TEST_GLOB, CoverageMap, decorator_name, statement_lines
from mutation.tree import python_files

PURE_DECORATORS = frozenset({"dataclass", "property", "staticmethod", "classmethod", "cached_property", "cache",
                             "lru_cache", "wraps", "contextmanager", "total_ordering", "abstractmethod", "override",
                             "setter", "getter", "deleter", "unique", "final"})


@dataclass(frozen=True)
class Binding:
    """A statement run at import whose effect is its names (`names`); `classes`: the class bodies it lies in,
    innermost last, as (name, first line, last line)."""

    names: frozenset[str]
    span: tuple[int, int]
    classes: tuple[tuple[str, int, int], ...] = ()


def _targets(node: ast.stmt) -> set[str] | None:
    """The plain names an assignment binds; None when a target is anything else (an attribute, a subscript)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    names: set[str] = set()
    for t in targets:
        parts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        for p in parts:
            if not isinstance(p, ast.Name):
                return None
            names.add(p.id)
    return names


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def _in_header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, lines: set[int]) -> bool:
    """Whether every line lies in the decorators or the header (the `def`/`class` line through the line before
    the body)."""
    return all(_first_line(node) <= n < node.body[0].lineno for n in lines)


def binding_of(source: str, lines: Iterable[int]) -> Binding | None:
    """The statement run at import that contains all of `lines`, when it is of a form whose effect is its names
    (see the module's docstring); None otherwise (a line inside a function body, an import, an `if`, a call, a
    decorator that may register the object)."""
    wanted = set(lines)
    if not wanted:
        return None
    body: list[ast.stmt] = ast.parse(source).body
    classes: tuple[tuple[str, int, int], ...] = ()
    while True:
        node = next((s for s in body if _first_line(s) <= min(wanted) and max(wanted) <= (s.end_lineno or s.lineno)),
                    None)
        if node is None:
            return None
        span = (_first_line(node), node.end_lineno or node.lineno)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names = _targets(node)
            return Binding(frozenset(names), span, classes) if names else None
        if isinstance(node, (ast.Import, ast.ImportFrom)) and all(a.name != "*" for a in node.names):
            return Binding(frozenset((a.asname or a.name).split(".")[0] for a in node.names), span, classes)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if _in_header(node, wanted):
                if not all(decorator_name(d) in PURE_DECORATORS for d in node.decorator_list):
                    return None
                return Binding(frozenset({node.name}), span, classes)
            if isinstance(node, ast.ClassDef):
                classes = (*classes, (node.name, *span))
                body = node.body
                continue
        return None  # inside a function's body (run by a call, not by the import), or another kind of statement


def run_at_import_binding(source: str, line: int, name: str | None = None) -> Binding | None:
    """For a reading line that runs at import: the binding of its statement, where the import-time statement is
    the assignment, decorated definition or class around it; a line inside a function's body stands for the
    function (its callers read its name). An import binds only the names it imports as `name` (when given: the
    name being followed). None for any other statement."""
    body: list[ast.stmt] = ast.parse(source).body
    classes: tuple[tuple[str, int, int], ...] = ()
    while True:
        node = next((s for s in body if _first_line(s) <= line <= (s.end_lineno or s.lineno)), None)
        if node is None:
            return None
        span = (_first_line(node), node.end_lineno or node.lineno)
        if isinstance(node, ast.ClassDef) and not _in_header(node, {line}):
            classes = (*classes, (node.name, *span))
            body = node.body
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _in_header(node, {line}):
            if not all(decorator_name(d) in PURE_DECORATORS for d in node.decorator_list):
                return None  # a decorator that may register it: its callers need not name it
            return Binding(frozenset({node.name}), span, classes)
        binding = binding_of(source, {line})
        if binding is not None and name is not None and isinstance(node, (ast.Import, ast.ImportFrom)):
            imported = {(a.asname or a.name).split(".")[0] for a in node.names if name in a.name.split(".")}
            binding = Binding(frozenset(imported or binding.names), binding.span, binding.classes)
        return binding


def memo_binding(source: str, line: int) -> Binding | None:
    """When `line` lies in the body of a memoized function (functools' cache, lru_cache, cached_property; the
    innermost), that function as a binding of its name: its body runs once per process for equal arguments, so the
    map charges it to the first caller of each file, and every later caller sees what it computed by calling it,
    which reads its name. None otherwise."""
    best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and any(decorator_name(d) in CACHE_DECORATORS for d in node.decorator_list)
                and node.body[0].lineno <= line <= (node.end_lineno or node.lineno)
                and (best is None or node.lineno > best.lineno)):
            best = node
    if best is None:
        return None
    return Binding(frozenset({best.name}), (_first_line(best), best.end_lineno or best.lineno))


def memo_observers(cmap: CoverageMap, root: Path, module: str, lines: Iterable[int], source: str | None = None,
                   readings: Readings | None = None) -> list[str] | None:
    """The tests (fastest first) that can observe a mutant of a memoized function's body (`lines` of `module`):
    those the map charges with the changed lines (the first callers of each file, which run the mutated body) and
    every test reading the function's name, that is calling it, followed as for a statement run at import (a call
    inside another memo's body, or at import, passes on to that one's readers). None when a reading cannot be
    resolved (the caller keeps the callers' files whole)."""
    source = source if source is not None else (root / module).read_text(encoding="utf-8")
    bindings = {memo_binding(source, n) for n in lines}
    if len(bindings) != 1 or None in bindings:
        return None
    return _observed(cmap, root, module, source, bindings.pop(), readings, set(lines))


@dataclass
class Readings:
    """Where each identifier is read in the checkout: name -> file -> lines. A reading is a variable, an attribute,
    a name imported (`from m import name`), a keyword argument, or a string literal equal to an identifier (what
    `getattr(obj, "name")` needs); an annotation of a module with postponed annotations is never evaluated and
    reads nothing. `star`: the files with a star import (they read names without naming them)."""

    at: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    star: set[str] = field(default_factory=set)

    def add(self, name: str, path: str, line: int) -> None:
        self.at.setdefault(name, {}).setdefault(path, set()).add(line)


def _annotations(tree: ast.AST) -> set[int]:
    """The ids of every node inside an annotation (arguments, returns, annotated assignments)."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    return {id(n) for r in roots for n in ast.walk(r)}


def read_names(path: str, source: str, into: Readings) -> None:
    """Add the readings of one file's source (see Readings); a file that does not parse reads anything (`star`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        into.star.add(path)
        return
    postponed = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                    and any(a.name == "annotations" for a in n.names) for n in tree.body)
    skipped = _annotations(tree) if postponed else set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Name):
            into.add(node.id, path, node.lineno)
        elif isinstance(node, ast.Attribute):
            into.add(node.attr, path, node.end_lineno or node.lineno)
        elif isinstance(node, ast.keyword) and node.arg:
            into.add(node.arg, path, node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            into.add(node.value, path, node.lineno)
        elif isinstance(node, (ast.ImportFrom, ast.Import)):
            for alias in node.names:
                if alias.name == "*":
                    into.star.add(path)
                for part in alias.name.split("."):
                    into.add(part, path, node.lineno)


def index_readings(root: Path, overrides: dict[str, str] | None = None) -> Readings:
    """Every identifier's reading lines over the checkout's Python files (mutation.tree.python_files); a file of
    `overrides` (path -> source) is read from there (a mutated module, read as its unmutated source)."""
    out = Readings()
    for path in python_files(root):
        rel = path.relative_to(root).as_posix()
        text = (overrides or {}).get(rel)
        read_names(rel, text if text is not None else path.read_text(encoding="utf-8", errors="replace"), out)
    return out


class _Open(Exception):
    """A reading the map cannot resolve: the mutant keeps its whole files."""


def observers(cmap: CoverageMap, root: Path, module: str, lines: Iterable[int], source: str | None = None,
              readings: Readings | None = None) -> list[str] | None:
    """The tests (fastest first) that can observe a mutant of the statement run at import containing `lines` of
    `module` (at `root`; `source`: its unmutated source, when the file there is the mutant): the readers of what it
    binds, as the module's docstring states; None when the statement is not of such a form or a reading cannot be
    resolved (the caller keeps the whole files)."""
    source = source if source is not None else (root / module).read_text(encoding="utf-8")
    binding = binding_of(source, lines)
    if binding is None:
        return None
    return _observed(cmap, root, module, source, binding, readings)


def _observed(cmap: CoverageMap, root: Path, module: str, source: str, binding: Binding,
              readings: Readings | None, own_lines: set[int] | None = None) -> list[str] | None:
    """The readers of `binding` (and the tests executing `own_lines`, the mutated ones), fastest first; None when
    one cannot be resolved."""
    found: set[str] = set()
    seen: set[tuple[str, str]] = set()
    sources: dict[str, str] = {module: source}
    readings = readings if readings is not None else index_readings(root, {module: source})
    if readings.star - {module}:
        return None  # a star import reads names without naming them
    try:
        if own_lines:
            per_line = cmap.lines.get(module, {})
            found.update(cmap.tests[i][0] for n in statement_lines(source, own_lines) for i in per_line.get(n, ()))
        _collect(cmap, root, module, binding, readings, found, seen, sources)
    except _Open:
        return None
    durations = dict(cmap.tests)
    whole = {t for t in found if "::" not in t}
    chosen = [t for t in found if "::" not in t or t.split("::")[0] not in whole]
    return sorted(chosen, key=lambda t: (durations.get(t, 0.0), t))


def _collect(cmap: CoverageMap, root: Path, module: str, binding: Binding, readings: Readings, found: set[str],
             seen: set[tuple[str, str]], sources: dict[str, str]) -> None:
    names = set(binding.names) | {c[0] for c in binding.classes}
    for cls_name, first, last in binding.classes:  # a class's methods: what runs on its instances
        if (module, f"{cls_name}:{first}") not in seen:
            seen.add((module, f"{cls_name}:{first}"))
            _executing(cmap, root, module, _function_body_lines(sources[module], first, last), readings, found,
                       seen, sources)
    for name in sorted(names):
        if ("", name) in seen:  # a name's readings are the whole checkout's: walked once
            continue
        seen.add(("", name))
        for path, at in sorted(readings.at.get(name, {}).items()):
            own = set(range(binding.span[0], binding.span[1] + 1)) if path == module else set()
            reading = at - own
            if reading:
                _resolve(cmap, root, path, reading, readings, found, seen, sources, name)


def _function_body_lines(source: str, first: int, last: int) -> set[int]:
    """The lines of every function body between `first` and `last` (a class's methods)."""
    out: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and first <= node.lineno <= last:
            out |= set(range(node.body[0].lineno, (node.end_lineno or node.lineno) + 1))
    return out


def _is_test_file(path: str) -> bool:
    return Path(path).match(TEST_GLOB)


def _resolve(cmap: CoverageMap, root: Path, path: str, lines: set[int], readings: Readings, found: set[str],
             seen: set[tuple[str, str]], sources: dict[str, str], name: str | None = None) -> None:
    if _is_test_file(path) and (path not in cmap.lines or cmap.carried_from):
        found.add(path)  # a test file whose lines the map does not know (or may have moved): whole
        return
    if path.split("/")[0] not in cmap.sources:
        raise _Open(f"{path} reads it, and the map does not measure that file")
    if path not in cmap.lines and cmap.carried_from:
        raise _Open(f"{path} reads it, and a carried map does not know whether a test runs it")
    if path not in sources:
        sources[path] = (root / path).read_text(encoding="utf-8")
    _executing(cmap, root, path, lines, readings, found, seen, sources, name)


def _executing(cmap: CoverageMap, root: Path, path: str, lines: set[int], readings: Readings, found: set[str],
               seen: set[tuple[str, str]], sources: dict[str, str], name: str | None = None) -> None:
    """The tests executing `lines` of the measured `path`; a line run at import passes on to its statement's
    readers."""
    source, per_line = sources[path], cmap.lines.get(path, {})
    for line in sorted(lines):
        tests = {cmap.tests[i][0] for n in statement_lines(source, {line}) for i in per_line.get(n, ())}
        found.update(t for t in tests if "::" in t)
        memo = memo_binding(source, line)
        if memo is not None and tests:  # a memo's body runs for a file's first caller only: its callers read it
            _collect(cmap, root, path, memo, readings, found, seen, sources)
        if any("::" not in t for t in tests):
            binding = run_at_import_binding(source, line, name)
            if binding is None and _is_test_file(path):
                found.add(path)  # a test file's own statement (a parametrization): no other file imports it
                continue
            if binding is None:
                raise _Open(f"{path}:{line} reads it at import in a statement of another form")
            _collect(cmap, root, path, binding, readings, found, seen, sources)

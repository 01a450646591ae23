"""Which tests can observe a statement run at import, or a memoized function's body: the tests that read what it
binds or computes.

The coverage map charges a line run at import (a module's constant, a class's field or decorator) to every test file
that imports the module, since it runs before any test; and a memoized body (functools' cache, lru_cache,
cached_property) to the first caller of each file only, since it runs once per process. A mutant of either ran the
files concerned whole: almost the whole gate for a module that everything imports. Yet such a statement only binds
names, and a memo's later callers see its result only by calling it.

The proposition this selection relies on: let S be a statement run at import, in a module or a class body, of one of
the forms below, and N(S) the names it binds. A mutant of S changes the program only through the objects bound to
N(S). So a test that executes no line reading one of N(S) computes what it computes on the unmutated code. Lines are
found by the name (Readings: a variable, an attribute, a keyword, an import, or a string equal to it, as `getattr`
needs; not an annotation that is never evaluated). A line that reads one and itself runs at import passes the change
on to the names its own statement binds (an import: the names it imports as the one followed), so the reading goes
on from there, recursively, over every Python file of the checkout. The forms and their names:
- an assignment at module or class level whose targets are plain names: those names;
- an import: the names it binds;
- a function or class whose decorators, bases or keywords the mutant changed, every decorator one of
  PURE_DECORATORS (they wrap or define; none registers the object elsewhere): the function's or class's name;
- inside a class, also the class itself: a field's default is seen where an instance is built, which is where the
  class's name is read or one of its methods runs (`cls(...)` builds one without the name), so the tests reading the
  class's name and those executing its methods' bodies.
A memoized body's mutant is seen by the tests the map charges with it (the first callers, which run it) and by every
test reading the function's name (memo_observers); a reading inside another memo's body passes on to that memo's
readers the same way.

A reading line is resolved through the map, which measures every folder of the checkout (CoverageMap.sources): the
tests executing it, and, when it runs at import, the readers of its own statement's names; a test file's own
statement of another form (a parametrization) runs that file whole, as nothing imports a test file. It is left open
(None: the mutant keeps its whole files) by a reading in a folder the map does not measure, or in a file a carried
map (mutation.carried_map) has no line of; a statement of another form run at import (an `if`, a call, a decorator
that may register); a star import anywhere.

What it shares with the map's blind spots: a value cached across tests (a memo filled by an earlier test, a
module-level table) is read without executing the reading line; reflection over a module's attributes (`vars`,
`dir`) reads no name (the checkout has none over its modules); `python -m mutation run --every-file` rules them out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from mutation.coverage_map import CACHE_DECORATORS, TEST_GLOB, CoverageMap, decorator_name, statement_lines
from mutation.modules import import_name
from mutation.tree import python_files

PURE_DECORATORS = frozenset({"dataclass", "property", "staticmethod", "classmethod", "cached_property", "cache",
                             "lru_cache", "wraps", "contextmanager", "total_ordering", "abstractmethod", "override",
                             "setter", "getter", "deleter", "unique", "final"})


@lru_cache(maxsize=512)
def _parse(source: str) -> ast.Module:
    """A source's syntax tree, parsed once per text (a name read in many places of one file; never mutated)."""
    return ast.parse(source)


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
    body: list[ast.stmt] = _parse(source).body
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
    body: list[ast.stmt] = _parse(source).body
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
            if any(_exit_hook(d) for d in node.decorator_list):
                return Binding(frozenset(), span, classes)  # runs when the process ends, after every test's verdict
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
    for node in ast.walk(_parse(source)):
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


def _exit_hook(decorator: ast.expr) -> bool:
    """`@atexit.register`: the function runs when the process ends, after its tests have their verdicts."""
    return (isinstance(decorator, ast.Attribute) and decorator.attr == "register"
            and isinstance(decorator.value, ast.Name) and decorator.value.id == "atexit")


NOT_IN_MUTANT_RUNS = frozenset({"mutation/pytest_contexts.py"})  # the map's own plugin: loaded only to measure it


@dataclass
class Readings:
    """Where each identifier is read in the checkout, by kind: name -> file -> lines.
    - `names`: a variable (ast.Name); a module's global N is read so in its own module, and in another file only
      after that file imports N (`imports`), or through the module (`attrs` in a file importing the module);
    - `attrs`: an attribute (`x.N`): a class's field or method is read so anywhere, its instances going anywhere;
    - `imports`: `from m import N`, by the module m it names (the import binds N in that file, whose own readings
      follow);
    - `strings`: a string literal equal to the identifier, as `getattr(obj, "N")` needs (counted like `attrs`);
    - `modules`: file -> the dotted modules it imports (`import a.b`, `from a import b`, relative ones resolved).
    An annotation of a module with postponed annotations is never evaluated and reads nothing, and a keyword
    argument names a parameter, not a value (a class's field passed by keyword is read where the class is named).
    `star`: the files with a star import (they read names without naming them)."""

    names: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    attrs: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    imports: dict[str, dict[str, dict[str, set[int]]]] = field(default_factory=dict)  # name -> module -> file
    strings: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    modules: dict[str, set[str]] = field(default_factory=dict)
    star: set[str] = field(default_factory=set)

    @staticmethod
    def add(kind: dict[str, dict[str, set[int]]], name: str, path: str, line: int) -> None:
        kind.setdefault(name, {}).setdefault(path, set()).add(line)

    def module_readers(self, name: str, module: str) -> dict[str, set[int]]:
        """The lines reading the global `name` of `module` (a path) in other files: its imports, and attributes or
        strings of that name in the files importing the module."""
        dotted = import_name(module.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
        out: dict[str, set[int]] = {}
        for path, lines in self.imports.get(name, {}).get(dotted, {}).items():
            out.setdefault(path, set()).update(lines)
        for kind in (self.attrs, self.strings):
            for path, lines in kind.get(name, {}).items():
                if dotted in self.modules.get(path, ()):
                    out.setdefault(path, set()).update(lines)
        return out

    def attribute_readers(self, name: str) -> dict[str, set[int]]:
        """The lines reading `name` as an attribute or a string, in any file."""
        out: dict[str, set[int]] = {}
        for kind in (self.attrs, self.strings):
            for path, lines in kind.get(name, {}).items():
                out.setdefault(path, set()).update(lines)
        return out


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
    package = import_name(path.rsplit("/", 1)[0].replace("/", ".")) if "/" in path else ""
    modules = into.modules.setdefault(path, set())
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Name):
            into.add(into.names, node.id, path, node.lineno)
        elif isinstance(node, ast.Attribute):
            into.add(into.attrs, node.attr, path, node.end_lineno or node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            into.add(into.strings, node.value, path, node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                modules.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*parts, *([node.module] if node.module else [])])
            modules.add(base)
            for alias in node.names:
                if alias.name == "*":
                    into.star.add(path)
                    continue
                modules.add(f"{base}.{alias.name}" if base else alias.name)
                into.add(into.imports.setdefault(alias.name, {}), base, path, node.lineno)


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
    wanted = set(lines)
    binding = binding_of(source, wanted)
    if binding is not None:
        return _observed(cmap, root, module, source, binding, readings)
    callers = {run_at_import_binding(source, n) for n in wanted}  # inside a function's body, called at import
    if len(callers) != 1 or None in callers or not next(iter(callers)).names:
        return None
    return _observed(cmap, root, module, source, callers.pop(), readings, wanted)


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
    own_span = set(range(binding.span[0], binding.span[1] + 1))
    for name in sorted(names):
        # a field, a method or an inner class: read as an attribute (the outermost class is a module's global)
        inner = {c[0] for c in binding.classes[1:]}
        at_class_level = bool(binding.classes) and (name in binding.names or name in inner)
        key = ("attribute", name) if at_class_level else (module, name)
        if key in seen:
            continue
        seen.add(key)
        found_at = readings.attribute_readers(name) if at_class_level else readings.module_readers(name, module)
        here = readings.names.get(name, {}).get(module, set())  # the module's own readings (its class body's too)
        for path, at in sorted({**found_at, module: found_at.get(module, set()) | here}.items()):
            if path in NOT_IN_MUTANT_RUNS:
                continue
            reading = at - own_span if path == module else at
            if reading:
                _resolve(cmap, root, path, reading, readings, found, seen, sources, name)


def _function_body_lines(source: str, first: int, last: int) -> set[int]:
    """The lines of every function body between `first` and `last` (a class's methods)."""
    out: set[int] = set()
    for node in ast.walk(_parse(source)):
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

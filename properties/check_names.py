"""The check names the suite's code writes into ledgers, found in its source (a helper of the gate's tests).

A writer call is `make_record(kind, level, check, ...)`, the gate's `ledger.record(level, check, ...)`, the
expectations' `X.record(ledger, level, check, ...)`, `subject_record(subject, tok, level, check, ...)`,
`unavailable_record(spec, tok, level, check, ...)`, `unloadable_record(kind, check, ...)` and the benchmarks'
`record(check, ...)` (or `check=` by keyword). Its check argument is read as:
- a string literal: the name itself;
- an f-string (or a `+` of strings, or `a if c else b`): every combination of its literal parts, each formatted
  value standing for SAMPLE (so `f"classes_{family}"` gives "classes_SAMPLE", which a family pattern must match);
- a module-level constant (`CHECK = "..."`) of any scanned module, by name;
anything else (a variable passed down from elsewhere) is "unresolved": the site is reported with file and line,
and the test that uses this module names the names such a site can write.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("frozen", "ledger", "spec", "delta", "subjects", "checks", "controls", "fuzz", "corpora", "reports",
            "benchmarks", "mutation", "properties")
SAMPLE = "SAMPLE"
# writer function -> position of its `check` argument
WRITERS = {"make_record": 2, "subject_record": 3, "unavailable_record": 3, "unloadable_record": 1}


@dataclass(frozen=True)
class Site:
    """One writer call: where it is, and the names it writes (None: not resolvable from the source)."""

    file: str
    line: int
    names: tuple[str, ...] | None


def _files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def _constants(trees: dict[Path, ast.Module]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for tree in trees.values():
        for node in tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.isupper():
                        out.setdefault(target.id, set()).add(node.value.value)
    return out


class _Scope:
    """The parsed suite: module constants, every function by name, and each node's enclosing function."""

    def __init__(self, trees: dict[Path, ast.Module]) -> None:
        self.constants = _constants(trees)
        self.file_constants = {path: _constants({path: tree}) for path, tree in trees.items()}
        self.calls: dict[str, list[ast.Call]] = {}
        self.parent: dict[ast.AST, ast.AST] = {}
        self.file: dict[ast.AST, Path] = {}
        for path, tree in trees.items():
            for node in ast.walk(tree):
                for child in ast.iter_child_nodes(node):
                    self.parent[child] = node
                if isinstance(node, (ast.FunctionDef, ast.Call)):
                    self.file[node] = path
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) \
                        else None
                    if name:
                        self.calls.setdefault(name, []).append(node)

    def callers(self, fn: ast.FunctionDef) -> list[ast.Call]:
        """The calls of `fn` by name: those in its own file when there are any (a private helper), else all."""
        calls = self.calls.get(fn.name, [])
        return [c for c in calls if self.file[c] == self.file[fn]] or calls

    def constant(self, node: ast.Name) -> list[str] | None:
        """A module-level string constant: of the node's own file, else the one of that name in the suite."""
        fn = self.enclosing(node)
        own = self.file_constants.get(self.file[fn], {}) if fn is not None else {}
        for table in (own, self.constants):
            if len(table.get(node.id, ())) == 1:
                return sorted(table[node.id])
        return None

    def enclosing(self, node: ast.AST) -> ast.FunctionDef | None:
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, ast.FunctionDef):
                return node
        return None


def _parameter_values(scope: _Scope, fn: ast.FunctionDef, name: str, depth: int) -> list[str] | None:
    """What the callers of `fn` pass as its parameter `name` (None if some caller passes an unresolvable value)."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    offset = 1 if params and params[0] in ("self", "cls") else 0
    out: list[str] = []
    for call in scope.callers(fn):
        arg = next((k.value for k in call.keywords if k.arg == name), None)
        if arg is None and name in params and params.index(name) - offset < len(call.args):
            arg = call.args[params.index(name) - offset]
        if arg is None:
            continue
        got = _values(arg, scope, depth + 1)
        if got is None:
            return None
        out += got
    return out


def _assignments(fn: ast.FunctionDef, name: str):
    """The values assigned to `name` in `fn` (`name = v`, or `a, name = x, v`)."""
    for n in ast.walk(fn):
        if not isinstance(n, ast.Assign):
            continue
        for target in n.targets:
            if isinstance(target, ast.Name) and target.id == name:
                yield n.value
            elif isinstance(target, ast.Tuple) and isinstance(n.value, ast.Tuple):
                for t, v in zip(target.elts, n.value.elts, strict=False):
                    if isinstance(t, ast.Name) and t.id == name:
                        yield v


def _values(node: ast.expr, scope: _Scope, depth: int = 0) -> list[str] | None:
    """Every string `node` can evaluate to, formatted values as SAMPLE; None when not resolvable. A record's
    `x["check"]` relayed to a writer is another writer's name: no name of its own (an empty list)."""
    if depth > 4:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts = [[v.value] if isinstance(v, ast.Constant) else [SAMPLE] for v in node.values]
        return ["".join(p) for p in itertools.product(*parts)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _values(node.left, scope, depth), _values(node.right, scope, depth)
        return None if left is None or right is None else [a + b for a in left for b in right]
    if isinstance(node, ast.IfExp):
        body, orelse = _values(node.body, scope, depth), _values(node.orelse, scope, depth)
        return None if body is None or orelse is None else body + orelse
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "check":
        return []
    if isinstance(node, ast.Name):
        fn = scope.enclosing(node)
        if fn is not None:
            assigned = list(_assignments(fn, node.id))
            if assigned:
                got = [_values(v, scope, depth + 1) for v in assigned]
                return None if any(g is None for g in got) else [x for g in got for x in g]  # type: ignore[union-attr]
            if node.id in [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]:
                if fn.name in WRITERS or fn.name == "record":
                    return []  # a writer passing its own `check` on: each call of it is a site of its own
                return _parameter_values(scope, fn, node.id, depth)
        return scope.constant(node)
    return None


def _check_argument(call: ast.Call, path: Path) -> ast.expr | None:
    """The `check` argument of a writer call, or None when `call` writes no record."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    for kw in call.keywords:
        if kw.arg == "check" and name in (*WRITERS, "record"):
            return kw.value
    if name == "make_record" and path.parts[-2] == "properties" and not (
            call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == "gate"):
        return None  # a test's made-up record (its own input), not one the gate writes
    if name in WRITERS:
        index = WRITERS[name]
    elif name == "record" and isinstance(func, ast.Attribute):
        first = call.args[0] if call.args else None
        # the expectations' record(ledger, level, check), else the gate fixture's ledger.record(level, check)
        index = 2 if isinstance(first, ast.Name) and first.id == "ledger" else 1
        if not (isinstance(func.value, ast.Name) and func.value.id in ("ledger", "EXPECTED", "expected")) and \
                index == 1:
            return None
    elif name == "record" and isinstance(func, ast.Name) and path.parts[-2] == "benchmarks":
        index = 0
    else:
        return None
    return call.args[index] if len(call.args) > index else None


def writer_sites() -> list[Site]:
    """Every writer call in the suite's packages (tests included), with the check names it writes."""
    trees = {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in _files()}
    scope = _Scope(trees)
    out = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (arg := _check_argument(node, path)) is not None:
                values = _values(arg, scope)
                out.append(Site(str(path.relative_to(REPO)), node.lineno, None if values is None else tuple(values)))
    return out

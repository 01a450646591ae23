"""The mutants of a change: which lines of the mutated modules a change touched, which of them are arid, and which
mutants of those lines a session runs (`python -m mutation diff`).

A change's mutants ask whether the tests notice a bug in the lines just written, in minutes: only the lines added or
modified since a base commit, at most a few mutants per line (distinct kinds of operator first), and none on an arid
line, where a mutant cannot change what the code computes (Petrović and Ivanković, "State of Mutation Testing at
Google", ICSE-SEIP 2018: a mutant there is noise a reviewer skips).
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from mutation.coverage_map import decorator_name
from mutation.operators import operator_kind
from mutation.session import Candidate, Selection

LOGGING_NAMES = frozenset({"logging", "logger", "log", "_logger", "_log", "LOGGER", "LOG"})
MAIN_BRANCH = "main"


class ChangeError(ValueError):
    """The change cannot be read: not a git checkout, or a base git cannot resolve (a usage error)."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    except OSError as exc:
        raise ChangeError(f"git cannot run: {exc}") from exc


def _resolves(root: Path, rev: str) -> bool:
    return _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode == 0


def check_base(root: Path, base: str) -> str:
    """`base` itself when git resolves it to a commit in the checkout at `root`; ChangeError (usage) when `root` is
    not a git checkout or the base is no commit there."""
    if _git(root, "rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
        raise ChangeError(f"not a git checkout: {root}")
    if not _resolves(root, base):
        raise ChangeError(f"git cannot resolve the base {base!r} to a commit")
    return base


def default_base(root: Path, sources: tuple[str, ...] = ("spec", "delta")) -> str:
    """The base a change is measured from when none is named: `HEAD` when the working tree has uncommitted changes
    (staged, unstaged or untracked) to Python files under `sources`; else, on a branch other than `main` whose
    merge base with `main` exists and differs from HEAD, that merge base (the branch's whole change); else `HEAD~1`
    (the last commit's own change). The result is checked with `check_base` (ChangeError when git cannot resolve
    it, e.g. `HEAD~1` of a first commit)."""
    check_base(root, "HEAD")
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *sources).stdout
    if any(line[3:].strip().strip('"').endswith(".py") for line in status.splitlines()):
        return "HEAD"
    branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
    if branch not in (MAIN_BRANCH, "HEAD") and _resolves(root, MAIN_BRANCH):
        merge_base = _git(root, "merge-base", "HEAD", MAIN_BRANCH)
        head = _git(root, "rev-parse", "HEAD").stdout.strip()
        if merge_base.returncode == 0 and merge_base.stdout.strip() and merge_base.stdout.strip() != head:
            return merge_base.stdout.strip()
    return check_base(root, "HEAD~1")


HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines_since(root: Path, base: str, modules: Iterable[str]) -> dict[str, set[int]]:
    """Per module of `modules` (paths relative to `root`), the line numbers of its current file in the working tree
    that were added or modified since `base` (the `+` side of `git diff -U0 base`); a file new since `base`,
    committed or untracked, has all its lines. A line only deleted leaves no current line and gives none; a module
    without a changed line is absent. ChangeError when `base` does not resolve."""
    check_base(root, base)
    wanted = set(modules)
    dirs = sorted({m.split("/")[0] for m in wanted}) or ["."]
    diff = _git(root, "diff", "-U0", "--no-color", "--no-ext-diff", "--relative", base, "--", *dirs)
    if diff.returncode != 0:
        raise ChangeError(f"git diff {base} failed: {diff.stderr.strip()}")
    out: dict[str, set[int]] = {}
    current: str | None = None
    for line in diff.stdout.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip()
            current = path[2:] if path.startswith("b/") else None
        elif current in wanted and (hunk := HUNK.match(line)):
            start, count = int(hunk.group(1)), int(hunk.group(2) if hunk.group(2) is not None else 1)
            if count:
                out.setdefault(current, set()).update(range(start, start + count))
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "--", *dirs).stdout.split()
    for path in untracked:
        if path in wanted:
            out[path] = set(range(1, len((root / path).read_text(encoding="utf-8").splitlines()) + 1))
    return {m: lines for m, lines in sorted(out.items()) if lines}


def _dotted(node: ast.expr) -> list[str]:
    """The names of a called expression, outermost first: `self.logger.info` -> [self, logger, info];
    `logging.getLogger(x).warning` -> [logging, getLogger, warning]."""
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        return [*_dotted(node.value), node.attr]
    return [node.id] if isinstance(node, ast.Name) else []


def _only_reports(call: ast.Call) -> bool:
    names = _dotted(call.func)
    return (names == ["print"] or names[-2:] == ["warnings", "warn"]
            or any(n in LOGGING_NAMES for n in names[:-1]))


def arid_lines(source: str) -> set[int]:
    """The lines of `source` where a mutant cannot matter to what the code computes, exactly these kinds: (1) an
    expression statement that is a call of `print`, of `warnings.warn`, or of a method reached through a name in
    LOGGING_NAMES (`logging.info(...)`, `logger.debug(...)`, `self.log.warning(...)`,
    `logging.getLogger(__name__).info(...)`); (2) an expression statement that is a string constant (docstrings
    and other bare strings); (3) the size arguments of an `lru_cache(...)` decorator (its positional arguments and
    `maxsize`). A statement or argument spanning several lines makes all of them arid. A line holding anything
    else as well (a call whose value is used, an assignment of a logger) is not arid."""
    out: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and (
                (isinstance(node.value, ast.Call) and _only_reports(node.value))
                or (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))):
            out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and decorator_name(d) == "lru_cache":
                    for size in [*d.args, *(k.value for k in d.keywords if k.arg == "maxsize")]:
                        out.update(range(size.lineno, (size.end_lineno or size.lineno) + 1))
    return out


def choose_for_change(lines: set[int], arid: set[int], per_line: int) -> Selection:
    """A session's selection (mutation.session.select_mutants) of the mutants of a change: only candidates on a
    line of `lines - arid`, at most `per_line` of each line; on a line, one candidate of each operator kind first
    (operator_kind, kinds in the order of their first candidate), then the others in order, so the picks are the
    same for the same sorted candidates (no randomness)."""
    if per_line < 1:
        raise ValueError(f"per_line must be at least 1, not {per_line}")
    wanted = set(lines) - set(arid)

    def choose(candidates: list[Candidate]) -> set[str]:
        by_line: dict[int, list[Candidate]] = {}
        for c in candidates:
            if c.line_number in wanted:
                by_line.setdefault(c.line_number, []).append(c)
        chosen: set[str] = set()
        for on_line in by_line.values():
            kinds: dict[str, Candidate] = {}
            for c in on_line:
                kinds.setdefault(operator_kind(c.operator), c)
            order = [*kinds.values(), *(c for c in on_line if c not in kinds.values())]
            chosen.update(c.job_id for c in order[:per_line])
        return chosen

    return choose

"""The mutants of a change (`python -m mutation diff`): the base, the changed lines, the arid lines, the selection,
the coverage map carried to the current code, and one real run on a toy checkout in a git repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mutation.carried_map import carried_lines, carried_map, changed_test_files, function_spans
from mutation.change import (
    ChangeError,
    arid_lines,
    changed_lines_since,
    check_base,
    choose_for_change,
    default_base,
)
from mutation.change_run import run_change
from mutation.cli import main as mutation_main
from mutation.coverage_map import CoverageMap, MapError, build_map, save_map
from mutation.operators import operator_kind
from mutation.session import Candidate
from mutation.tree import python_digest

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
                          check=True).stdout.strip()


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _commit(root, files, "first")
    return root


def _commit(root: Path, files: dict[str, str], message: str) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", message)


def test_the_default_base_follows_where_the_change_is(tmp_path: Path) -> None:
    """Uncommitted changes to a Python file of spec/ or delta/ (modified, or untracked): HEAD; a branch off main:
    its merge base; on main, clean (or changed elsewhere than in their Python files): HEAD~1. A base git cannot
    resolve, and a folder that is no git checkout, are usage errors. Plants: untracked files not looked at
    (`--untracked-files=no`) fails the untracked case; the merge base not tried fails the branch case."""
    root = _repo(tmp_path, {"spec/a.py": "x = 1\n", "notes.txt": "n\n"})
    _commit(root, {"spec/a.py": "x = 2\n"}, "second")
    assert default_base(root) == "HEAD~1"
    (root / "notes.txt").write_text("changed\n", encoding="utf-8")
    (root / "spec" / "data.txt").write_text("not Python\n", encoding="utf-8")
    assert default_base(root) == "HEAD~1"
    (root / "spec" / "new.py").write_text("y = 1\n", encoding="utf-8")
    assert default_base(root) == "HEAD"
    (root / "spec" / "new.py").unlink()
    (root / "spec" / "a.py").write_text("x = 3\n", encoding="utf-8")
    assert default_base(root) == "HEAD"
    _git(root, "checkout", "-q", "--", "spec/a.py")
    main_head = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "-b", "feature")
    assert default_base(root) == "HEAD~1"  # the branch has no commit of its own yet: the merge base is HEAD
    _commit(root, {"spec/a.py": "x = 4\n"}, "on the branch")
    _commit(root, {"spec/a.py": "x = 5\n"}, "again")
    assert default_base(root) == main_head
    with pytest.raises(ChangeError, match="cannot resolve"):
        check_base(root, "no-such-commit")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(ChangeError, match="not a git checkout"):
        check_base(elsewhere, "HEAD")


def test_changed_lines_are_the_current_lines_added_or_modified(tmp_path: Path) -> None:
    """A modified line and added lines are numbered as in the current file; a deleted line gives no line; a file new
    since the base (committed or untracked) has all its lines; a file outside the given modules, or unchanged, is
    absent. Plant: a hunk without a count read as zero lines (git writes `+5` for one line) fails."""
    old = "".join(f"v{n} = {n}\n" for n in range(1, 11))
    root = _repo(tmp_path, {"spec/a.py": old, "spec/same.py": "s = 1\n", "delta/other.py": "o = 1\n"})
    base = _git(root, "rev-parse", "HEAD")
    lines = old.splitlines(keepends=True)
    lines[4] = "v5 = 50\n"  # modified: line 5
    del lines[7]  # v8 deleted
    lines[1:1] = ["new_a = 1\n", "new_b = 2\n"]  # added after line 1: lines 2 and 3; v5 is now line 7
    _commit(root, {"spec/a.py": "".join(lines), "spec/b.py": "b = 1\nc = 2\n", "delta/other.py": "o = 2\n"}, "edit")
    (root / "spec" / "untracked.py").write_text("u = 1\nw = 2\nz = 3\n", encoding="utf-8")
    modules = ["spec/a.py", "spec/b.py", "spec/same.py", "spec/untracked.py"]
    assert changed_lines_since(root, base, modules) == {"spec/a.py": {2, 3, 7}, "spec/b.py": {1, 2},
                                                        "spec/untracked.py": {1, 2, 3}}
    with pytest.raises(ChangeError):
        changed_lines_since(root, "no-such-commit", modules)


ARID = '''"""Module docstring."""
import logging
from functools import lru_cache

logger = logging.getLogger(__name__)


@lru_cache(
    maxsize=64)
def f(x):
    """Doc."""
    print("x is", x)
    logger.debug("x=%s",
                 x)
    logging.getLogger("a").info("b")
    self_log = logger
    warnings.warn("careful")
    "a bare string"
    y = print(x)
    return x + 1


@lru_cache(8)
def g(x):
    return x
'''


def test_arid_lines_are_logging_docstrings_and_memo_sizes() -> None:
    """The docstrings and a bare string, print, logging through a logger or the logging module (a multi-line call
    with all its lines), warnings.warn and the size of lru_cache (positional or maxsize) are arid; an assignment of
    a logger, a print whose value is used and the computing lines are not. Plant: bare strings not arid fails."""
    assert arid_lines(ARID) == {1, 9, 11, 12, 13, 14, 15, 17, 18, 23}


def _candidates(*specs: tuple[int, str]) -> list[Candidate]:
    return [Candidate(f"j{i}", op, 0, line, i) for i, (line, op) in enumerate(specs)]


def test_the_selection_takes_a_few_mutants_of_each_changed_line_distinct_kinds_first() -> None:
    """Only candidates on changed, non-arid lines; at most `per_line` per line; one of each operator kind before a
    second of the same kind; the same picks for the same candidates. Plant: the kinds not preferred (the first
    `per_line` candidates of a line) fails."""
    assert operator_kind("core/ReplaceComparisonOperator_Lt_LtE") == "core/ReplaceComparisonOperator"
    assert operator_kind("core/NumberReplacer") == "core/NumberReplacer"
    assert operator_kind("core/RemoveDecorator") == "core/RemoveDecorator"
    candidates = _candidates((3, "core/ReplaceComparisonOperator_Lt_LtE"), (3, "core/ReplaceComparisonOperator_Lt_GtE"),
                             (3, "core/NumberReplacer"), (3, "core/NumberReplacer"), (4, "core/NumberReplacer"),
                             (5, "core/ReplaceTrueWithFalse"), (6, "core/NumberReplacer"))
    choose = choose_for_change({3, 4, 6, 9}, {6}, 2)
    assert choose(candidates) == {"j0", "j2", "j4"}
    assert choose(candidates) == choose(list(candidates))
    assert choose_for_change({3}, set(), 1)(candidates) == {"j0"}
    assert choose_for_change({3}, set(), 3)(candidates) == {"j0", "j2", "j1"}
    with pytest.raises(ValueError):
        choose_for_change({3}, set(), 0)


OLD = "def a(x):\n    y = x\n    return y\n\n\ndef b(x):\n    return x\n\n\nTOP = 1\n"
NEW = "def a(x):\n    y = x\n    z = y + 1\n    return z\n\n\ndef b(x):\n    return x\n\n\nTOP = 2\n"


def test_a_carried_map_keeps_unchanged_lines_and_gives_changed_lines_their_functions_tests(tmp_path: Path) -> None:
    """Carried from a map of the measured copy to the current code: an unchanged line keeps its old line's tests
    (numbered anew); a changed or added line of a function gets the tests of any line of that function; a changed
    line outside every function gets every test of the module; a changed test file is added whole to every line
    of the changed module and replaces its tests by name everywhere (none of its old ids is left), a deleted one is
    gone, a new one is added whole; an unchanged module keeps its lines; the digest is the current code's and the
    map says where it was carried from. Plants: a changed line given the whole module's tests fails; a changed test
    file's old ids kept fails."""
    assert function_spans("class K:\n    @d\n    def m(self):\n        def inner():\n            pass\n") == {
        "K.m": (2, 4, 5), "K.m.inner": (4, 5, 5)}
    measured, root = tmp_path / "measured", tmp_path / "root"
    for tree, toy, t_changed in ((measured, OLD, "def test_a():\n    pass\n"),
                                 (root, NEW, "def test_a_renamed():\n    pass\n")):
        (tree / "toy").mkdir(parents=True)
        (tree / "toy" / "m.py").write_text(toy, encoding="utf-8")
        (tree / "toy" / "same.py").write_text("S = 1\n", encoding="utf-8")
        (tree / "test_changed.py").write_text(t_changed, encoding="utf-8")
        (tree / "test_same.py").write_text("def test_b():\n    pass\n", encoding="utf-8")
    (measured / "test_gone.py").write_text("def test_c():\n    pass\n", encoding="utf-8")
    (root / "test_new.py").write_text("def test_d():\n    pass\n", encoding="utf-8")
    tests = [("test_changed.py", 1.0), ("test_same.py", 2.0), ("test_gone.py", 3.0), ("test_changed.py::test_a", 0.5),
             ("test_same.py::test_b", 0.25), ("test_gone.py::test_c", 0.5)]
    old_lines = {"toy/m.py": {1: [0, 1, 2], 2: [3], 3: [3], 6: [1], 7: [4], 10: [2, 5]}, "toy/same.py": {1: [3, 4]}}
    cmap = CoverageMap(python_digest(measured), "abc123", tests, old_lines)
    changed = changed_test_files(measured, root, ["test_changed.py", "test_same.py", "test_new.py", "test_gone.py"])
    assert changed == ["test_changed.py", "test_new.py"]
    carried = carried_map(cmap, measured, root, changed, ["toy/m.py", "toy/same.py"], {"test_new.py": 4.0})
    assert carried.digest == python_digest(root) and carried.carried_from == "abc123"
    assert [t for t, _ in carried.tests] == ["test_same.py", "test_same.py::test_b", "test_changed.py", "test_new.py"]
    assert dict(carried.tests)["test_new.py"] == 4.0 and dict(carried.tests)["test_changed.py"] == 1.0

    def at(module: str, line: int) -> set[str]:
        return {carried.tests[i][0] for i in carried.lines[module].get(line, [])}

    added = {"test_changed.py", "test_new.py"}
    assert at("toy/m.py", 1) == {"test_same.py"} | added  # unchanged def line: its old tests (the renamed test whole)
    assert at("toy/m.py", 3) == at("toy/m.py", 4) == added  # in a: its body's old tests (not the def line's)
    assert at("toy/m.py", 8) == {"test_same.py::test_b"} | added  # b's body, unchanged, one line down
    assert at("toy/m.py", 11) == {"test_same.py", "test_changed.py", "test_new.py", "test_same.py::test_b"}
    assert at("toy/m.py", 5) == added  # an unchanged blank line: the changed test files only
    assert at("toy/same.py", 1) == {"test_changed.py", "test_same.py::test_b"}  # unchanged module: its lines
    ids = {carried.tests[i][0] for per in carried.lines.values() for ix in per.values() for i in ix}
    assert not {i for i in ids if i.startswith(("test_changed.py::", "test_gone.py"))}
    # in one function, the function's tests: not the module's
    assert carried_lines(OLD, NEW, {2: [7], 6: [8], 10: [9]}) == {2: [7], 3: [7], 4: [7], 7: [8], 11: [7, 8, 9]}
    (measured / "toy" / "m.py").write_text(NEW, encoding="utf-8")  # the copy is not what was measured any more
    with pytest.raises(MapError, match="no longer the code"):
        carried_map(cmap, measured, root, changed, ["toy/m.py"])


TOY = "def below(x):\n    return x < 3\n\n\ndef unused(x):\n    return x + 1\n"
TOY_TEST = "from toy.below import below\n\n\ndef test_below():\n    assert below(2) and not below(5)\n"
EDGE_TEST = "from toy.below import below\n\n\ndef test_edges():\n    assert below(3) and not below(4)\n"


def test_nothing_to_mutate_a_missing_map_and_a_bad_base(tmp_path: Path, capsys) -> None:
    """No change since the base, or only arid lines changed: exit 0 and saying so, before any map is needed (a
    report is written); a change to mutate without a coverage map: an environment error telling to measure it; the
    command exits 2 on a base git cannot resolve and on `--per-line 0`. Plants: the arid lines not left out fails
    the second case (it asks for the map); ChangeError not caught by the command (a traceback) fails the last."""
    root = _repo(tmp_path, {"toy/__init__.py": "", "toy/below.py": TOY, "test_toy.py": TOY_TEST})
    work, said = tmp_path / "work", []
    args = {"modules": ["toy/below.py"], "tests": ["test_toy.py"], "out": said.append}
    assert run_change(root, "HEAD", work, work / "map.json", **args) == 0
    assert said == ["no line to mutate: no change to toy since HEAD"] and (work / "diff" / "report.json").exists()
    (root / "toy" / "below.py").write_text('"""Doc."""\n' + TOY, encoding="utf-8")
    assert run_change(root, "HEAD", work, work / "map.json", **args) == 0
    assert said[-1] == "no line to mutate: only arid lines changed since HEAD"
    (root / "toy" / "below.py").write_text(TOY.replace("x < 3", "x < 4"), encoding="utf-8")
    with pytest.raises(MapError, match="no coverage map"):
        run_change(root, None, work, work / "map.json", **args)
    assert mutation_main(["diff", "no-such-commit", "--work", str(work)]) == 2
    assert "error: " in capsys.readouterr().err  # cannot resolve it (or, in a copy outside git: no checkout)
    with pytest.raises(SystemExit) as stop:
        mutation_main(["diff", "--per-line", "0", "--work", str(work)])
    assert stop.value.code == 2
    with pytest.raises(SystemExit) as stop:
        mutation_main(["diff", "--jobs", "0", "--work", str(work)])
    assert stop.value.code == 2


SLOW_SECONDS, BUDGET_SECONDS = 0.25, 0.1  # the toy's covering test outlasts the budget (its clock starts first)
SLOW_TOY_TEST = ("import time\n\nfrom toy.below import below\n\n\ndef test_below():\n"
                 f"    time.sleep({SLOW_SECONDS})\n    assert below(2) and not below(5)\n")


def test_a_budget_lists_the_mutants_whose_tests_outrun_it_as_unfinished(tmp_path: Path, capsys) -> None:
    """`diff --budget S`: a changed line whose covering test takes longer than S leaves both its mutants unfinished,
    neither killed nor survived: each is printed as unfinished within S s with its line, the summary and the report
    count them apart, and the result is 1 (the change is not shown to be seen). `--budget 0` is a usage error.
    Plants: the budget not passed to the sessions (the mutants are judged: one survives), and unfinished mutants
    left out of the exit status (0), each fail it."""
    root = _repo(tmp_path, {"toy/__init__.py": "", "toy/below.py": TOY, "test_toy.py": SLOW_TOY_TEST})
    work = tmp_path / "work"
    cmap = build_map(root, work / "_map", tests=["test_toy.py"], sources=("toy",))
    assert cmap.seconds(["test_toy.py"]) > SLOW_SECONDS > BUDGET_SECONDS
    save_map(cmap, work / "coverage-map.json")
    (root / "toy" / "below.py").write_text(TOY.replace("x < 3", "x < 4"), encoding="utf-8")
    said: list[str] = []
    code = run_change(root, None, work, work / "coverage-map.json", modules=["toy/below.py"], tests=["test_toy.py"],
                      tier="off", use_server=False, budget=BUDGET_SECONDS, out=said.append)
    text = "\n".join(said)
    report = json.loads((work / "diff" / "report.json").read_text(encoding="utf-8"))
    assert code == 1, text
    assert text.count(f"(unfinished within {BUDGET_SECONDS:g} s") == 2 and "    return x < 4" in text
    summary = said[-1]
    assert "0 killed" in summary and "0 survived" in summary and f"2 unfinished within {BUDGET_SECONDS:g} s" in summary
    assert report["budget"] == BUDGET_SECONDS and len(report["unfinished"]) == 2 and not report["survivors"]
    assert {k: report["totals"][k] for k in ("mutants", "unfinished", "killed", "survived")} == {
        "mutants": 2, "unfinished": 2, "killed": 0, "survived": 0}
    with pytest.raises(SystemExit) as stop:
        mutation_main(["diff", "--budget", "0", "--work", str(work)])
    assert stop.value.code == 2 and "--budget: must be above 0" in capsys.readouterr().err


# slow tier: a real coverage measurement and four cosmic-ray sessions (about 25 s)
@pytest.mark.slow
def test_the_mutants_of_a_change_on_a_toy_checkout(tmp_path: Path) -> None:
    """A toy module committed and its map measured; one line changed (`x < 3` -> `x < 4`): `diff` runs only that
    line's mutants (two: one comparison, one number; the other line is untouched), with the map carried to the
    changed code; the number's mutant survives the old test and is listed with its line and diff (exit 1), a report
    is written and the results file is not. A new test file that kills it, added whole by the carried map, makes it
    exit 0; the same new test failing on the unmutated code is an environment error naming it. Plant: the
    selection left out (every mutant of the module runs) fails."""
    root = _repo(tmp_path, {"toy/__init__.py": "", "toy/below.py": TOY, "test_toy.py": TOY_TEST})
    work = tmp_path / "work"
    kwargs = {"modules": ["toy/below.py"], "tier": "off", "use_server": False}
    save_map(build_map(root, work / "_map", tests=["test_toy.py"], sources=("toy",)), work / "coverage-map.json")
    (root / "toy" / "below.py").write_text(TOY.replace("x < 3", "x < 4"), encoding="utf-8")
    said: list[str] = []
    assert run_change(root, None, work, work / "coverage-map.json", tests=["test_toy.py"], out=said.append,
                      **kwargs) == 1
    report = (work / "diff" / "report.json").read_text(encoding="utf-8")
    text = "\n".join(said)
    assert "toy/below.py:2:" in text and "core/NumberReplacer" in text and "    return x < 4" in text
    assert "+    return x < " in text and "-    return x < 4" in text  # the survivor's diff
    assert "2 mutants on 1 changed lines (0 arid lines skipped) of 1 modules" in text and "1 survived" in text
    assert "map carried from" in text and json.loads(report)["map"]["carried_from"]
    assert {k: json.loads(report)["totals"][k] for k in ("mutants", "lines", "survived")} == {
        "mutants": 2, "lines": 1, "survived": 1}
    assert not (root / "mutation").exists()
    (root / "test_edge.py").write_text(EDGE_TEST.replace("below(3) and", "below(2) and below(9) and"),
                                       encoding="utf-8")
    with pytest.raises(MapError, match="test_edge.py"):
        run_change(root, None, work, work / "coverage-map.json", tests=["test_toy.py", "test_edge.py"], **kwargs)
    (root / "test_edge.py").write_text(EDGE_TEST, encoding="utf-8")
    said.clear()
    assert run_change(root, None, work, work / "coverage-map.json", tests=["test_toy.py", "test_edge.py"],
                      out=said.append, **kwargs) == 0, "\n".join(said)
    assert "2 mutants on 1 changed lines" in said[-1] and "0 survived" in said[-1]

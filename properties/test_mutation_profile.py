"""The mutation profile (mutation/): the coverage map that picks each mutant's test files (subprocesses measured,
statements found from changed lines), the operator filter, a real cosmic-ray session on a toy module (kills through
a child process, survivors with the files that execute them, resume, a stale map refused, SIGTERM stopping the
mutant's tests with the session), verdicts matched to
survivors, the exit statuses, and the committed results:
every survivor of spec/ and delta/ in mutation/results.json has a verdict (the issue's goal), and the report shows
the score without counting it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cosmic_ray.plugins import operator_names
from delta_suite.ledger.lock import FolderLock
from delta_suite.reports.mutation_score import mutation_rows, mutation_sentence, survivor_rows

import mutation.coverage_map as coverage_map
from mutation.carry import carried_result, finished_mutants, seed
from mutation.cli import main as mutation_main
from mutation.coverage_map import (
    CoverageMap,
    MapError,
    build_map,
    cached_function_lines,
    changed_lines,
    load_map,
    read_measurements,
    save_map,
    signature_body_lines,
    statement_lines,
)
from mutation.modules import INSTALLED_FOLDERS, dotted_name, module_path, mutated_modules
from mutation.mutant_tests import (
    ANNOTATION_MARK,
    ANNOTATION_REASON,
    BUDGET_MARK,
    INTERRUPT_MARK,
    LEFT_OUT_MARK,
    MEMO_MARK,
    MEMO_REASON,
    NOT_SELECTED,
    TIMEOUT_MARK,
    annotation_only,
    cache_methods_called_in,
    in_own_process,
    memo_only,
    mutant_selection,
    mutant_time_limit,
    run_with_limit,
    unmutated,
)
from mutation.operators import EXCLUDED_OPERATORS, KEPT_BINARY, KEPT_COMPARISON, is_excluded
from mutation.results import (
    RESULTS_FILE,
    all_survivors,
    judged_survivors,
    merge_partial,
    partial_survivors,
    read_results,
    score,
    summary,
    update_partial,
    update_results,
)
from mutation.session import (
    SessionError,
    checkpoint,
    forget_interrupted,
    read_dump,
    run_module,
    sigterm_as_interrupt,
)
from mutation.tree import python_digest
from mutation.verdicts import VerdictFileError, ambiguous_verdicts, find_verdict, mutated_line, read_verdicts, tomllib

ROOT = Path(__file__).resolve().parents[1]
TOY = "def below(x):\n    return x < 3\n\n\ndef unused(x):\n    return x + 1\n\n\ndef in_child(x):\n    return x * 2\n"
TOY_TEST = "from toy.below import below\n\n\ndef test_below():\n    assert below(2) and not below(5)\n"
CHILD_TEST = ("import subprocess\nimport sys\n\n\ndef test_child():\n    code = 'from toy.below import in_child; "
              "print(in_child(3))'\n    out = subprocess.run([sys.executable, '-c', code], capture_output=True, "
              "text=True)\n    assert out.stdout.strip() == '6'\n")
TOY_TESTS = ["test_toy.py", "test_child.py"]
PLAIN_TEST = "import sys\n\n\ndef test_plain():\n    assert 'coverage' not in sys.modules\n"  # fails only measured


def test_every_module_of_spec_and_delta_is_mutated() -> None:
    """The mutated modules are every module of spec/ and delta/ but package files, and the names round-trip."""
    modules = mutated_modules()
    assert "spec/cut.py" in modules and "delta/cut_map.py" in modules and "spec/proofs/pieces.py" in modules
    assert not [m for m in modules if m.endswith(("__init__.py", "__main__.py"))]
    for module in modules:
        assert module_path(dotted_name(module)) == module


def test_changed_lines_and_their_statements() -> None:
    """A replaced line counts itself; a deletion its lines; the statement of a line inside a multi-line call is
    found from its first line, and a decorator line brings its def line (coverage records either)."""
    before = "@cache\ndef f(x):\n    y = g(x,\n          2)\n    return y\n"
    assert changed_lines(before, before.replace("2)", "3)")) == {4}
    assert changed_lines(before, before.replace("@cache\n", "")) == {1}
    assert statement_lines(before, {4}) == {3, 4}
    assert statement_lines(before, {1}) == {1, 2}
    assert statement_lines(before, {5}) == {5}


def test_unreadable_measurement_marks_the_file_partial(tmp_path: Path) -> None:
    """A data file a child could not finish (truncated under a file-size limit) is skipped, and the test file it
    belongs to is reported as partial, not silently taken as complete."""
    (tmp_path / "a.host.pid1.x").write_bytes(b"SQLite format 3\x00" + bytes(100))
    files = [("a.py", 1.0), ("b.py", 2.0)]
    assert read_measurements(tmp_path, tmp_path, files) == (files, {}, {0})


def test_a_data_file_still_being_written_marks_the_file_partial(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A child's data file read while that child still creates it (coverage finds no schema, then fails to create
    the one the child just wrote: sqlite's own error, not coverage's) is skipped like a truncated one, and its test
    file is partial: the map goes on instead of stopping on a traceback."""
    (tmp_path / "a.host.pid1.x").write_bytes(b"")

    def racing_read(self) -> None:
        raise sqlite3.OperationalError("table coverage_schema already exists")

    monkeypatch.setattr(coverage_map.CoverageData, "read", racing_read)
    files = [("a.py", 1.0), ("b.py", 2.0)]
    assert read_measurements(tmp_path, tmp_path, files) == (files, {}, {0})


def test_a_data_file_whose_tables_are_not_written_yet_marks_the_file_partial(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child's data file that reads but whose line table its child has not written yet (coverage's "no such
    table: line_bits", a child still running when its test ended) is skipped whole and its test file is partial,
    instead of the map stopping on a traceback."""
    (tmp_path / "a.host.pid1.x").write_bytes(b"")
    monkeypatch.setattr(coverage_map.CoverageData, "read", lambda self: None)
    monkeypatch.setattr(coverage_map.CoverageData, "measured_files", lambda self: {str(tmp_path / "m.py")})

    def unfinished(self, _path):
        raise coverage_map.DataError("Couldn't use data file: no such table: line_bits")

    monkeypatch.setattr(coverage_map.CoverageData, "lines", unfinished)
    monkeypatch.setattr(coverage_map.CoverageData, "contexts_by_lineno", unfinished)
    files = [("a.py", 1.0), ("b.py", 2.0)]
    assert read_measurements(tmp_path, tmp_path, files) == (files, {}, {0})


def _toy_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "__init__.py").write_text("", encoding="utf-8")
    (root / "toy" / "below.py").write_text(TOY, encoding="utf-8")
    (root / "test_toy.py").write_text(TOY_TEST, encoding="utf-8")
    (root / "test_child.py").write_text(CHILD_TEST, encoding="utf-8")
    (root / "test_plain.py").write_text(PLAIN_TEST, encoding="utf-8")
    return root


def _toy_map(tmp_path: Path, root: Path, tests: list[str] = TOY_TESTS) -> CoverageMap:
    return build_map(root, tmp_path / "map", tests=tests, sources=("toy",))


CACHED = ("import functools\nfrom functools import lru_cache\n\n\n@lru_cache(maxsize=1)\ndef env():\n    return 1\n\n\n"
          "@functools.cache\ndef table():\n    return 2\n\n\ndef plain():\n    return 3\n")


def test_a_memoized_body_runs_its_callers_files_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement of a function under lru_cache or functools.cache runs once per process, so the map charges it to
    the first caller of each file only (delta/chat.py's environment, whose lstrip_blocks mutant the later test of
    the same file kills): when its callers cannot all be found through the map (here a file of a folder the map
    does not measure calls it; mutation.observers), its mutant runs the files of every test charged with the
    function, whole; a plain function's mutant keeps the tests charged with its statement."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "use.py").write_text("from m import env, table\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert cached_function_lines(CACHED, {7}) == {5, 6, 7}
    assert cached_function_lines(CACHED, {12}) == {10, 11, 12}
    assert cached_function_lines(CACHED, {16}) == set()
    cmap = CoverageMap("d", "c", [("a.py::first", 1.0), ("b.py", 2.0), ("a.py::later", 0.5), ("c.py::other", 0.1)],
                       {"m.py": {7: [0], 6: [1], 16: [3]}})
    save_map(cmap, tmp_path / "m.json")
    pristine = tmp_path / "pristine.py"
    pristine.write_text(CACHED, encoding="utf-8")
    mutated = tmp_path / "mutated.py"
    mutated.write_text(CACHED.replace("return 1", "return 0"), encoding="utf-8")
    assert mutant_selection(tmp_path / "m.json", "m.py", pristine, mutated) == ["a.py", "b.py"]
    mutated.write_text(CACHED.replace("return 3", "return 0"), encoding="utf-8")
    assert mutant_selection(tmp_path / "m.json", "m.py", pristine, mutated) == ["c.py::other"]


def test_a_changed_default_runs_the_tests_calling_the_function(tmp_path: Path) -> None:
    """A default value is evaluated when the module is imported (the map charges the def line to whole files), but
    only a call can show a changed one: its mutant runs the tests executing the function's body. A change in the
    body, or in a decorator, is not a signature change."""
    src = "from functools import cache\n\n\n@cache\ndef f(a=0,\n      b=1):\n    c = a + b\n    return c\n"
    assert signature_body_lines(src, {5}) == {7, 8} and signature_body_lines(src, {6}) == {7, 8}
    assert signature_body_lines(src, {7}) == set() and signature_body_lines(src, {4}) == set()
    assert signature_body_lines(src, {5, 7}) == set()
    plain = "def f(a=0):\n    return a\n\n\ndef g():\n    return 2\n"
    cmap = CoverageMap("d", "c", [("imports.py", 9.0), ("t.py::calls_f", 0.5), ("t.py::calls_g", 0.1)],
                       {"m.py": {1: [0], 2: [1], 6: [2]}})
    save_map(cmap, tmp_path / "m.json")
    pristine, mutated = tmp_path / "pristine.py", tmp_path / "mutated.py"
    pristine.write_text(plain, encoding="utf-8")
    mutated.write_text(plain.replace("a=0", "a=1"), encoding="utf-8")
    assert mutant_selection(tmp_path / "m.json", "m.py", pristine, mutated) == ["t.py::calls_f"]


def test_annotation_only_mutants_are_recognized() -> None:
    """A mutant changing only annotations (a parameter's, a return's, a variable's) of a module with postponed
    evaluation is recognized; one changing a default value, or any annotation of a module evaluating them, is not."""
    src = ("from __future__ import annotations\n\nx: int | None = None\n\n\n"
           "def f(a: int | None = None, b: str = 'b') -> int | None:\n    return a\n")
    assert annotation_only(src, src.replace("def f(a: int | None", "def f(a: int & None"))
    assert annotation_only(src, src.replace("-> int | None", "-> int & None"))
    assert annotation_only(src, src.replace("x: int | None", "x: int & None"))
    assert not annotation_only(src, src.replace("b: str = 'b'", "b: str = 'c'"))
    assert not annotation_only(src, src.replace("return a", "return None"))
    evaluated = src.replace("from __future__ import annotations\n", "")
    assert not annotation_only(evaluated, evaluated.replace("-> int | None", "-> int & None"))


# slow tier: a real cosmic-ray session or coverage measurement of the opt-in mutation profile (25 to 45 s)
@pytest.mark.slow
def test_coverage_map_attributes_lines_to_the_tests_executing_them(tmp_path: Path) -> None:
    """Each test's lines are recorded under its name, its children's too: `below`'s body by test_toy.py's test
    only, `in_child`'s by test_child.py's (it runs in a subprocess there), `unused` by none; the def lines, run when
    test_toy.py imports the module at collection, are charged to that whole file. A saved map reads back equal, and
    the per-mutant command picks the tests from the mutated line. A file failing on the unmutated copy is an error;
    one failing only under coverage is kept and listed as partial."""
    root = _toy_checkout(tmp_path)
    cmap = _toy_map(tmp_path, root, [*TOY_TESTS, "test_plain.py"])
    assert cmap.partial == ["test_plain.py"]
    assert cmap.tests_executing("toy/below.py", [2]) == ["test_toy.py::test_below"]
    assert cmap.tests_executing("toy/below.py", [10]) == ["test_child.py::test_child"]
    assert cmap.tests_executing("toy/below.py", [6]) == []
    assert sorted(cmap.tests_executing("toy/below.py", [1])) == ["test_child.py::test_child", "test_toy.py"]
    assert sorted(cmap.module_files("toy/below.py")) == sorted(TOY_TESTS)
    save_map(cmap, tmp_path / "m.json")
    assert load_map(tmp_path / "m.json") == cmap
    mutated = tmp_path / "mutated.py"
    mutated.write_text(TOY.replace("x * 2", "x // 2"), encoding="utf-8")
    pristine = root / "toy" / "below.py"
    assert mutant_selection(tmp_path / "m.json", "toy/below.py", pristine, mutated) == ["test_child.py::test_child"]
    assert sorted(mutant_selection(tmp_path / "m.json", "toy/below.py", pristine, mutated, every=True)) == \
        sorted(TOY_TESTS)
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    with pytest.raises(MapError):
        load_map(tmp_path / "bad.json")
    (root / "test_toy.py").write_text(TOY_TEST.replace("not below(5)", "below(5)"), encoding="utf-8")
    with pytest.raises(MapError, match="fail on the unmutated copy"):
        _toy_map(tmp_path, root)


# slow tier: a real cosmic-ray session or coverage measurement of the opt-in mutation profile (25 to 45 s)
@pytest.mark.slow
def test_the_map_measures_again_only_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The map is incremental: a test file keeps its earlier measurement while the file, the modules it executed
    and the harness (every other Python file but the mutation tool) are unchanged. An interrupted measurement goes
    on from the files it finished (a half-written file's data is removed), and the result equals an uninterrupted
    map; an edited test file is measured again alone; a new module no test executes, a new harness file (nothing
    imports it yet), a change of a measured module no file executes, or a change of the mutation tool, changes
    nothing; a module the files execute, a changed
    harness file, a new conftest.py, a changed measuring plugin, or a work folder copied to another path (its data
    name files by absolute path) measures them all again."""
    root = _toy_checkout(tmp_path)
    whole = _toy_map(tmp_path, root)
    progress = tmp_path / "map" / coverage_map.PROGRESS_FILE
    recorded = json.loads(progress.read_text(encoding="utf-8"))
    assert sorted(recorded["files"]) == TOY_TESTS[::-1]
    assert "toy/below.py" in recorded["files"]["test_child.py"]["modules"]
    del recorded["files"]["test_child.py"]  # as if stopped while test_child.py ran: its data is left half-written
    progress.write_text(json.dumps(recorded), encoding="utf-8")
    (tmp_path / "map" / "data" / "test_child.stale").write_bytes(b"half")
    measured: list[str] = []
    real = coverage_map._measure

    def counting(tree: Path, work: Path, rc: Path, test: str, *rest):
        measured.append(test)
        return real(tree, work, rc, test, *rest)

    monkeypatch.setattr(coverage_map, "_measure", counting)
    lines: list[str] = []
    resumed = build_map(root, tmp_path / "map", tests=TOY_TESTS, sources=("toy",), progress=lines.append)
    assert measured == ["test_child.py"] and lines[0].startswith("kept: 1 of 2")
    assert not (tmp_path / "map" / "data" / "test_child.stale").exists()
    assert (resumed.lines, resumed.digest) == (whole.lines, whole.digest)
    assert [t for t, _ in resumed.tests] == [t for t, _ in whole.tests]

    def remeasured(change: Callable[[], None]) -> list[str]:
        change()
        measured.clear()
        _toy_map(tmp_path, root)
        return sorted(measured)

    assert remeasured(lambda: None) == []
    assert remeasured(lambda: (root / "test_child.py").write_text(CHILD_TEST + "# edited\n")) == ["test_child.py"]
    assert remeasured(lambda: (root / "toy" / "other.py").write_text("Y = 2\n")) == []
    assert remeasured(lambda: (root / "toy" / "below.py").write_text(TOY + "\n\nX = 1\n")) == sorted(TOY_TESTS)
    # a module of the measured folders that no file executes (coverage lists it, with no line) changes nothing
    assert remeasured(lambda: (root / "toy" / "other.py").write_text("Y = 3\n")) == []
    assert remeasured(lambda: (root / "helper.py").write_text("Z = 3\n")) == []  # new: nothing imports it yet
    assert remeasured(lambda: (root / "helper.py").write_text("Z = 4\n")) == sorted(TOY_TESTS)  # changed
    assert remeasured(lambda: (root / "conftest.py").write_text("C = 1\n")) == sorted(TOY_TESTS)  # loaded unasked
    (root / "mutation").mkdir()
    assert remeasured(lambda: (root / "mutation" / "session.py").write_text("S = 1\n")) == []  # the tool
    assert remeasured(lambda: (root / "mutation" / "pytest_contexts.py").write_text("P = 1\n")) == []
    assert remeasured(lambda: (root / "mutation" / "pytest_contexts.py").write_text("P = 2\n")) == sorted(TOY_TESTS)
    shutil.copytree(tmp_path / "map", tmp_path / "moved")
    measured.clear()
    moved = build_map(root, tmp_path / "moved", tests=TOY_TESTS, sources=("toy",))
    assert sorted(measured) == sorted(TOY_TESTS)
    assert moved.lines == _toy_map(tmp_path, root).lines and moved.lines["toy/below.py"]


SLOW_TEST = ("import os\nimport time\nfrom pathlib import Path\n\n\ndef test_slow():\n"
             "    Path(os.environ['SLOW_PID']).write_text(str(os.getpid()))\n    time.sleep(600)\n"
             "    Path(os.environ['SLOW_PID'] + '.done').write_text('x')\n")
STARTED_TEST = "import os\nfrom pathlib import Path\n\nPath(os.environ['SLOW_PID'] + '.late').write_text('x')\n"


def test_an_interrupted_map_stops_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the map measures (a KeyboardInterrupt in its loop) stops the file being measured (its process is
    gone and never got past its sleep), starts none of the queued ones, and keeps the files finished so far for
    the resumed measurement."""
    root = _toy_checkout(tmp_path)
    (root / "test_slow.py").write_text(SLOW_TEST, encoding="utf-8")
    (root / "test_late.py").write_text(STARTED_TEST, encoding="utf-8")
    pid_file = tmp_path / "slow.pid"
    monkeypatch.setenv("SLOW_PID", str(pid_file))

    def interrupt_once_slow_runs(line: str) -> None:
        for _ in range(1200):  # the slow file has started when it wrote its pid (at most 120 s)
            if pid_file.exists() and pid_file.read_text():
                raise KeyboardInterrupt
            time.sleep(0.1)

    with pytest.raises(KeyboardInterrupt):
        build_map(root, tmp_path / "map", jobs=1, tests=["test_toy.py", "test_slow.py", "test_late.py"],
                  sources=("toy",), progress=interrupt_once_slow_runs)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not Path(str(pid_file) + ".done").exists()  # stopped, not waited for
    assert not Path(str(pid_file) + ".late").exists()
    recorded = json.loads((tmp_path / "map" / coverage_map.PROGRESS_FILE).read_text(encoding="utf-8"))
    assert sorted(recorded["files"]) == ["test_toy.py"]


def test_operator_filter_keeps_the_hand_written_kinds() -> None:
    """The filter keeps the variants named in mutation/operators.py and drops the rest, and cosmic-ray's own
    combination of the patterns (re.match over the alternation) decides every operator name the same way."""
    names = sorted(operator_names())
    kept = [n for n in names if not is_excluded(n)]
    assert {f"core/ReplaceBinaryOperator_{k}" for k in KEPT_BINARY} <= set(kept)
    assert {f"core/ReplaceComparisonOperator_{k}" for k in KEPT_COMPARISON} <= set(kept)
    assert "core/ReplaceBinaryOperator_Add_Pow" not in kept and "core/VariableReplacer" not in kept
    assert "core/NumberReplacer" in kept and "core/ReplaceUnaryOperator_Delete_Not" in kept
    combined = re.compile("|".join(f"(:?{e})" for e in EXCLUDED_OPERATORS))
    assert [n for n in names if bool(combined.match(n)) != is_excluded(n)] == []
    assert 20 <= len(kept) < len(names) / 4


def test_read_dump_names_the_mutated_line() -> None:
    """A dump line becomes a mutant with its outcome and the stripped source line it mutates."""
    item = {"job_id": "x", "mutations": [{"module_path": "toy.py", "operator_name": "core/NumberReplacer",
                                          "occurrence": 0, "start_pos": [2, 15], "end_pos": [2, 16]}]}
    lines = [json.dumps([item, {"worker_outcome": "normal", "test_outcome": "survived", "diff": "d"}]),
             json.dumps([item, {"worker_outcome": "normal", "test_outcome": "killed", "output": "timeout"}]),
             json.dumps([item, {"worker_outcome": "normal", "test_outcome": "killed",
                                "output": f"..F\n{TIMEOUT_MARK} after 42 s\n"}]),
             json.dumps([item, {"worker_outcome": "normal", "test_outcome": "killed", "output": "1 failed"}]),
             json.dumps([item, {"worker_outcome": "skipped"}]), json.dumps([item, None])]
    mutants = read_dump("\n".join(lines), TOY.splitlines())
    assert [m.outcome for m in mutants] == ["survived", "timeout", "timeout", "killed", "skipped", "pending"]
    assert mutants[0].line == "return x < 3" and mutants[0].line_number == 2 and mutants[0].column == 15
    assert mutants[0].equivalent == ""


def test_the_unmutated_module_stands_in_for_the_block_and_the_mutant_comes_back(tmp_path: Path) -> None:
    """Every check on the unmutated module (a failing test's, the tier's baseline) runs with the pristine text in the
    mutant's place, and the mutant is back afterwards, also when the check raises: the tests after it see the
    mutant."""
    module, pristine = tmp_path / "m.py", tmp_path / "pristine.py"
    module.write_text("x = 2\n", encoding="utf-8")
    pristine.write_text("x = 1\n", encoding="utf-8")
    with unmutated(module, pristine):
        assert module.read_text(encoding="utf-8") == "x = 1\n"
    assert module.read_text(encoding="utf-8") == "x = 2\n"
    with pytest.raises(KeyboardInterrupt), unmutated(module, pristine):
        raise KeyboardInterrupt
    assert module.read_text(encoding="utf-8") == "x = 2\n" and pristine.read_text(encoding="utf-8") == "x = 1\n"


def test_a_test_failing_unmutated_in_its_own_process_never_kills(tmp_path: Path, monkeypatch, capfd) -> None:
    """In a process of its own, a test that fails on the unmutated module as well (it needs something the copy
    lacks: here a variable) is left out and the rest run again: alone it does not kill the mutant (a survivor), next
    to a test the mutant fails it does not hide the kill; it is checked once per session (the verified file) and
    left out from the start afterwards."""
    repo = Path(__file__).resolve().parents[1]
    (tmp_path / "m.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "pristine.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "test_env.py").write_text("import os\n\n\ndef test_needs_a_variable():\n"
                                          "    assert os.environ.get('MISSING_HERE')\n", encoding="utf-8")
    (tmp_path / "test_m.py").write_text("from m import below, in_child\n\n\ndef test_below():\n"
                                        "    assert below(2) and not below(5)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(repo)]))
    monkeypatch.delenv("MISSING_HERE", raising=False)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as in a session: a same-size mutant must not reuse a .pyc
    verified = tmp_path / "verified.json"
    args = ["-q", "-p", "no:cacheprovider", "-x", "test_env.py", "test_m.py"]
    (tmp_path / "m.py").write_text(TOY.replace("x * 2", "x * 3"), encoding="utf-8")  # no test reads in_child
    status = in_own_process(args, tmp_path / "m.py", tmp_path / "pristine.py", verified, 60)
    out = capfd.readouterr().out
    assert status == 0, out
    assert f"{LEFT_OUT_MARK} test_env.py::test_needs_a_variable" in out and "checking test_env.py" in out, out
    assert json.loads(verified.read_text())["fail"] == ["own:test_env.py::test_needs_a_variable"]
    assert (tmp_path / "m.py").read_text() == TOY.replace("x * 2", "x * 3")  # the mutant written back
    (tmp_path / "m.py").write_text(TOY.replace("x < 3", "x < 6"), encoding="utf-8")  # test_below fails
    status = in_own_process(args, tmp_path / "m.py", tmp_path / "pristine.py", verified, 60)
    out = capfd.readouterr().out
    assert status == 1, out
    assert "checking test_m.py::test_below" in out and "test_env.py" not in out, out  # left out from the start
    assert "own:test_m.py::test_below" in json.loads(verified.read_text())["pass"]
    assert in_own_process(args, tmp_path / "m.py", tmp_path / "pristine.py", None, 60) == 1  # no verified file


def test_an_interrupted_mutant_is_run_again_not_judged(tmp_path: Path) -> None:
    """SIGTERM to a mutant's tests stops them and prints the interrupt mark (exit 130), never a verdict: the dump reads
    such a result as pending, a checkpoint does not carry it, and the session database forgets it so that the next
    `exec` runs the mutant again."""
    (tmp_path / "m.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "test_slow.py").write_text("import time\nimport m\n\n\ndef test_slow():\n    time.sleep(600)\n",
                                           encoding="utf-8")
    cmap = CoverageMap("d", "c", [("test_slow.py", 5.0)], {"m.py": {2: [0]}})
    save_map(cmap, tmp_path / "map.json")
    (tmp_path / "pristine.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "m.py").write_text(TOY.replace("x < 3", "x <= 3"), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "mutation.mutant_tests", "--map", str(tmp_path / "map.json"),
                             "--module", "m.py", "--pristine", str(tmp_path / "pristine.py")], cwd=tmp_path,
                            stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)])))
    for _ in range(600):  # wait until its pytest runs (at most 60 s), then stop it
        if (tmp_path / ".mutant-tests").exists():
            break
        time.sleep(0.1)
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130 and INTERRUPT_MARK in out
    item = {"job_id": "j", "mutations": [{"module_path": "m.py", "operator_name": "core/NumberReplacer",
                                          "occurrence": 0, "start_pos": [2, 15], "end_pos": [2, 16]}]}
    stopped = {"worker_outcome": "normal", "test_outcome": "killed", "output": out}
    assert read_dump(json.dumps([item, stopped]), TOY.splitlines())[0].outcome == "pending"
    assert finished_mutants(json.dumps([item, stopped]), "c") == []
    db = tmp_path / "s.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE work_results (worker_outcome, output, test_outcome, diff, job_id)")
        conn.execute("INSERT INTO work_results VALUES ('normal', ?, 'killed', '', 'j')", (out,))
        conn.execute("INSERT INTO work_results VALUES ('normal', '1 failed', 'killed', '', 'k')")
    assert forget_interrupted(db) == 1
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert [r[0] for r in conn.execute("SELECT job_id FROM work_results")] == ["k"]


STOPPED_TEST = ("import os\nimport time\nfrom pathlib import Path\n\nimport toy.below\n\n\ndef test_below():\n"
                "    if Path(toy.below.__file__).read_text() != {toy!r}:  # a mutant: run until stopped\n"
                "        with open({pids!r}, 'a') as f:\n            f.write(f'{{os.getpid()}}\\n')\n"
                "        time.sleep(600)\n    assert toy.below.below(2)\n")


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, dead and not yet reaped, does not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


# The fork-server variant (the default runner) in the default run; the process-per-mutant one (--no-server) in the
# slow tier (a real cosmic-ray session, about 17 s).
@pytest.mark.parametrize("use_server", [True, pytest.param(False, marks=pytest.mark.slow)],
                         ids=["fork server", "process per mutant"])
def test_sigterm_stops_a_session_and_its_mutants_tests(tmp_path: Path, use_server: bool) -> None:
    """SIGTERM to a running session (a batch scheduler's stop; `kill` by hand), not to its children: the session
    stops cosmic-ray's whole process group and the test server, so the tests of the mutant it was judging end too
    (none outlives it), and raises KeyboardInterrupt (the command then checkpoints and exits 130); the stopped mutant
    is not judged: the session's finished mutants hold no mutant of the tested statement."""
    root = _toy_checkout(tmp_path)
    pids = tmp_path / "pids"
    (root / "test_toy.py").write_text(STOPPED_TEST.format(toy=TOY, pids=str(pids)), encoding="utf-8")
    cmap = CoverageMap(python_digest(root), "c", [("test_toy.py", 1.0)], {"toy/below.py": {2: [0]}})
    save_map(cmap, tmp_path / "map.json")
    work = tmp_path / "work"
    code = ("import sys\nfrom pathlib import Path\nfrom mutation.coverage_map import load_map\n"
            "from mutation.session import run_module\ntry:\n"
            "    run_module('toy/below.py', load_map(Path(sys.argv[1])), Path(sys.argv[2]), root=Path(sys.argv[3]),"
            " use_server=sys.argv[4] == '1')\nexcept KeyboardInterrupt:\n    sys.exit(130)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "map.json"), str(work), str(root),
                             "1" if use_server else "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for _ in range(1200):  # until a mutant's test runs (at most 120 s)
        if pids.exists() or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert pids.exists(), proc.communicate(timeout=60)[0]
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    stopped = [int(p) for p in pids.read_text(encoding="utf-8").split()]
    assert stopped and not [p for p in stopped if _alive(p)]
    keep = checkpoint("toy/below.py", work)
    finished = keep["mutants"] if keep else []
    assert not [m for m in finished if str(m["line"]) == "2" and m["worker_outcome"] != "skipped"], finished


def test_sigterm_is_an_interrupt_while_a_command_runs() -> None:
    """Inside a `python -m mutation` command SIGTERM raises KeyboardInterrupt, the path of Ctrl-C (children stopped,
    finished mutants checkpointed, exit 130); the previous handler is back afterwards."""
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"), sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at the next bytecode; never reached
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_memo_mutant_is_told_apart(tmp_path: Path) -> None:
    """A change of an lru_cache's size, alone, is a memo mutant, and so is the removal of an lru_cache or cache
    decorator from a function none of whose cache methods is called anywhere; a changed body, a size change together
    with another change, or the removal from a function whose `cache_clear` a file calls are not. Its session's
    survivor carries the reason, so does its checkpoint (with the mutated source line), and a session seeded from
    the checkpoint reads it back."""
    src = ("from functools import cache, lru_cache\n\n\n@lru_cache(maxsize=64)\ndef f(x):\n    return x + 1\n\n\n"
           "@lru_cache(8)\ndef g(x):\n    return x\n\n\n@cache\ndef h(x):\n    return x\n")
    assert memo_only(src, src.replace("maxsize=64", "maxsize=63"))
    assert memo_only(src, src.replace("lru_cache(8)", "lru_cache(9)"))
    assert memo_only(src, src.replace("@lru_cache(8)\n", ""), lambda _name: False)
    assert memo_only(src, src.replace("@cache\n", ""), lambda _name: False)
    assert not memo_only(src, src.replace("@lru_cache(8)\n", ""))  # by default a cache method may be called
    assert not memo_only(src, src)
    assert not memo_only(src, src.replace("x + 1", "x - 1"))
    assert not memo_only(src, src.replace("maxsize=64", "maxsize=63").replace("x + 1", "x + 2"))
    assert not memo_only(src, src.replace("@lru_cache(8)\n", "").replace("x + 1", "x + 2"), lambda _name: False)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "test_g.py").write_text("from m import g\n\n\ndef test_g():\n    g.cache_clear()\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("h.cache_info()\n")  # not the suite's
    called = cache_methods_called_in(tmp_path)
    assert called("g") and not called("h") and not called("f")
    assert not memo_only(src, src.replace("@lru_cache(8)\n", ""), called)
    assert memo_only(src, src.replace("@cache\n", ""), called)
    item = {"job_id": "x", "mutations": [{"module_path": "m.py", "operator_name": "core/NumberReplacer",
                                          "occurrence": 0, "start_pos": [4, 20], "end_pos": [4, 22]}]}
    said = {"worker_outcome": "normal", "test_outcome": "survived", "output": f"{MEMO_MARK} in m.py"}
    assert read_dump(json.dumps([item, said]), src.splitlines())[0].equivalent == MEMO_REASON
    (kept,) = finished_mutants(json.dumps([item, said]), "c", src.splitlines())
    assert (kept["source"], kept["equivalent"]) == ("@lru_cache(maxsize=64)", MEMO_REASON)
    assert partial_survivors({"mutants": [kept]})[0]["equivalent"] == MEMO_REASON
    seeded = carried_result(kept)
    again = {"worker_outcome": seeded.worker_outcome.value, "test_outcome": seeded.test_outcome.value,
             "output": seeded.output}
    assert read_dump(json.dumps([item, again]), src.splitlines())[0].equivalent == MEMO_REASON
    assert read_dump(json.dumps([item, {**again, "output": "carried from commit c"}]),
                     src.splitlines())[0].equivalent == ""


def test_a_samples_checkpoint_carries_its_judged_mutants_only() -> None:
    """A sample's session, checkpointed, carries what it judged (killed, survived, skipped by the operator filter)
    and neither the mutants it left out nor those unfinished within its budget: a complete run seeded from it must
    judge those itself. Its checkpoint joins, never replaces, a checkpoint of the same module source by another
    session (the complete run's, or the other way round), the newer result of a mutant winning; one of the same
    session, or of other source, is replaced whole."""
    def row(column: int, worker: str, test: str | None, output: str) -> str:
        item = {"job_id": f"j{column}", "mutations": [{"module_path": "m.py", "operator_name": "core/NumberReplacer",
                                                       "occurrence": 0, "start_pos": [2, column],
                                                       "end_pos": [2, column + 1]}]}
        return json.dumps([item, {"worker_outcome": worker, "test_outcome": test, "output": output}])
    dump = "\n".join([row(1, "normal", "killed", "1 failed"), row(2, "normal", "survived", "6 passed"),
                      row(3, "skipped", None, NOT_SELECTED), row(4, "normal", "survived", f"{BUDGET_MARK} (30 s)"),
                      row(5, "skipped", None, "excluded operator")])
    kept = finished_mutants(dump, "s", TOY.splitlines())
    assert [(m["column"], m["worker_outcome"], m["test_outcome"]) for m in kept] == \
        [(1, "normal", "killed"), (2, "normal", "survived"), (5, "skipped", None)]
    sample = {"module": "m.py", "session": "samples/s/m", "commit": "s", "module_sha": "a", "mutants": kept}
    complete = {"module": "m.py", "session": "m", "commit": "c", "module_sha": "a",
                "mutants": [{**kept[1], "commit": "c"}, {**kept[0], "column": 3, "commit": "c"}]}
    joined = merge_partial(merge_partial({}, sample), complete)["partial"]["m.py"]
    assert joined["commit"] == "c"
    assert [(m["column"], m["commit"]) for m in joined["mutants"]] == [(1, "s"), (2, "c"), (3, "c"), (5, "s")]
    other = {**complete, "module_sha": "b"}
    assert merge_partial(merge_partial({}, sample), other)["partial"]["m.py"]["mutants"] == other["mutants"]
    again = {**complete, "mutants": complete["mutants"][:1]}  # the same session, one result removed since
    assert merge_partial(merge_partial({}, complete), again)["partial"]["m.py"]["mutants"] == again["mutants"]


def test_an_annotation_mutant_is_judged_equivalent_by_its_session(tmp_path: Path) -> None:
    """A survivor whose tests said it changes only annotations (never evaluated) carries the reason, and the results
    give it the verdict equivalent without an entry in the verdicts file; one from the file still wins, and a
    survivor without either has none."""
    item = {"job_id": "x", "mutations": [{"module_path": "toy.py", "operator_name": "core/ReplaceBinaryOperator_"
                                          "BitOr_BitAnd", "occurrence": 0, "start_pos": [2, 15], "end_pos": [2, 16]}]}
    said = {"worker_outcome": "normal", "test_outcome": "survived", "output": f"{ANNOTATION_MARK} of toy.py"}
    (mutant,) = read_dump(json.dumps([item, said]), TOY.splitlines())
    assert mutant.equivalent == ANNOTATION_REASON
    killed = {**said, "test_outcome": "killed"}
    assert read_dump(json.dumps([item, killed]), TOY.splitlines())[0].equivalent == ""
    entry = {"module": "toy.py", "survivors": [
        {"operator": mutant.operator, "line": mutant.line, "column": 15, "equivalent": ANNOTATION_REASON},
        {"operator": mutant.operator, "line": mutant.line, "column": 20}]}
    auto, plain = judged_survivors(entry, {})
    assert (auto["verdict"], auto["reason"], plain["verdict"]) == ("equivalent", ANNOTATION_REASON, None)
    (tmp_path / "v.toml").write_text(f'''[[verdict]]
module = "toy.py"
operator = "{mutant.operator}"
line = "{mutant.line}"
column = 15
verdict = "open"
reason = "judged by hand"
''', encoding="utf-8")
    assert judged_survivors(entry, read_verdicts(tmp_path / "v.toml"))[0]["verdict"] == "open"


def _read_entries(tmp_path: Path, *entries: str) -> dict:
    """The verdicts of a file made of `entries` (TOML text, one [[verdict]] each)."""
    (tmp_path / "v.toml").write_text("\n".join(entries), encoding="utf-8")
    return read_verdicts(tmp_path / "v.toml")


def test_a_verdict_can_name_one_of_the_mutants_at_a_place(tmp_path: Path) -> None:
    """Two mutants of one operator at one place (`+ 1` -> `+ 0` and `+ 2`) share module, operator, line and column;
    a verdict naming the mutated line judges that one only and wins over one naming the place; a verdict matching no
    survivor is found by neither, and two verdicts on the same mutants are an input error."""
    line = "first = max(0, lo - self.longest + 1)"
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-    {}\n+    {}\n"
    zero = {"operator": "core/NumberReplacer", "line": line, "column": 43,
            "diff": diff.format(line, line.replace("+ 1", "+ 0"))}
    two = {**zero, "diff": diff.format(line, line.replace("+ 1", "+ 2"))}
    assert mutated_line(zero["diff"]) == "first = max(0, lo - self.longest + 0)"
    assert mutated_line("--- a/m.py\n+++ b/m.py\n-@cache\n") == ""
    place = f'[[verdict]]\nmodule = "m.py"\noperator = "core/NumberReplacer"\nline = "{line}"\ncolumn = 43\n'
    one = 'mutant = "first = max(0, lo - self.longest + 0)"\nverdict = "equivalent"\nreason = "r"\n'
    verdicts = _read_entries(tmp_path, place + one, place + 'verdict = "open"\nreason = "any other"\n')
    assert find_verdict(verdicts, "m.py", zero).verdict == "equivalent"
    assert find_verdict(verdicts, "m.py", two).verdict == "open"
    assert find_verdict(verdicts, "other.py", zero) is None
    assert [s["verdict"] for s in judged_survivors({"module": "m.py", "survivors": [zero, two]}, verdicts)] == \
        ["equivalent", "open"]
    (tmp_path / "v.toml").write_text((place + 'verdict = "open"\nreason = "r"\n\n') * 2, encoding="utf-8")
    with pytest.raises(VerdictFileError, match="same mutants"):
        read_verdicts(tmp_path / "v.toml")


def test_a_verdict_can_name_one_of_the_places_of_a_line(tmp_path: Path) -> None:
    """One line at two places of a module (two `@dataclass(frozen=True)`): a verdict naming a context line judges
    only the survivor whose diff shows that line, and wins over one naming the place only; without a context the
    verdict is ambiguous (`ambiguous_verdicts` names it), with one it is not, unless the context stands near both."""
    source = "@dataclass(frozen=True)\nclass Params:\n    a: int = 1\n\n\n\n\n@dataclass(frozen=True)\nclass Result:\n"
    diff = ("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-@dataclass(frozen=True)\n+@dataclass(frozen=False)\n"
            " class {}:\n")
    params = {"operator": "core/ReplaceTrueWithFalse", "line": "@dataclass(frozen=True)", "column": 18,
              "diff": diff.format("Params")}
    result = {**params, "diff": diff.format("Result")}
    place = '[[verdict]]\nmodule = "m.py"\noperator = "core/ReplaceTrueWithFalse"\nline = "@dataclass(frozen=True)"\n' \
            'column = 18\n'
    one = 'context = "class Params:"\nverdict = "killed"\ntest = "t.py::t"\nreason = "r"\n'
    verdicts = _read_entries(tmp_path, place + one, place + 'verdict = "equivalent"\nreason = "any other"\n')
    assert find_verdict(verdicts, "m.py", params).verdict == "killed"
    assert find_verdict(verdicts, "m.py", result).verdict == "equivalent"
    assert [v.verdict for v in ambiguous_verdicts(verdicts, {"m.py": source}.get)] == ["equivalent"]
    only = {k: v for k, v in verdicts.items() if v.context}
    assert find_verdict(only, "m.py", result) is None
    assert ambiguous_verdicts(only, {"m.py": source}.get) == []
    assert ambiguous_verdicts(only, {}.get) == []  # a module no longer there: nothing to tell apart
    assert len(ambiguous_verdicts(only, {"m.py": source.replace("Result", "Params")}.get)) == 1


def test_no_committed_verdict_judges_two_places() -> None:
    """Every verdict of mutation/verdicts.toml names one place of its module as the module stands: a line found at
    several places carries a context that picks one (a verdict on one `@dataclass(frozen=True)` must not judge
    another class's)."""
    verdicts = read_verdicts()

    def source_of(module: str) -> str | None:
        path = ROOT / module
        return path.read_text(encoding="utf-8") if path.exists() else None

    assert [(v.module, v.line, v.column) for v in ambiguous_verdicts(verdicts, source_of)] == []


def test_a_mutant_that_hangs_is_stopped_at_its_tests_limit(capfd) -> None:
    """The selected tests' limit stops a run that outlives it (a mutant looping forever): the process group is
    killed, the exit status is 1 (a kill) and the timeout mark is printed; a run inside its limit keeps its own
    status. The limit is three times the selected tests' measured time plus 30 s."""
    hang = [sys.executable, "-c", "import time\nwhile True: time.sleep(0.05)"]
    assert run_with_limit(hang, 0.5) == 1
    assert TIMEOUT_MARK in capfd.readouterr().out
    assert run_with_limit([sys.executable, "-c", "raise SystemExit(5)"], 60.0) == 5
    assert TIMEOUT_MARK not in capfd.readouterr().out
    assert mutant_time_limit(10.0) == 60.0 and mutant_time_limit(0.0) == 30.0


# slow tier: a real cosmic-ray session or coverage measurement of the opt-in mutation profile (25 to 45 s)
@pytest.mark.slow
def test_session_on_a_toy_module(tmp_path: Path, capsys) -> None:
    """A real cosmic-ray session in a scratch copy: `x < 3` -> `x <= 3` and `3` -> `4` survive the test (it checks 2
    and 5 only), the other mutants of `below` are killed, those of `in_child` too (through the child process), those
    of `unused` survive with no file executing them; the checkout itself is never modified; a second run resumes
    with nothing pending, from the unmutated module even when a stopped run left a mutant in the copy; a fresh run
    forgets what the session knew of the unmutated module (its tests, tier, killers); a map of
    other code is refused; the session's checkpoint (carried elsewhere: the next test) makes `status` name it as
    unfinished until the module's entry replaces it; the results merge, the survivors without verdicts make `status`
    exit 1 and verdicts make it exit 0."""
    root = _toy_checkout(tmp_path)
    cmap = _toy_map(tmp_path, root)
    work = tmp_path / "work"
    run = run_module("toy/below.py", cmap, work, root=root)
    assert run.runner == "fork server"  # its kills checked on the unmutated module, through the server too
    assert "test_toy.py::test_below" in json.loads((work / "server-verified.json").read_text(encoding="utf-8"))["pass"]
    assert (root / "toy" / "below.py").read_text(encoding="utf-8") == TOY
    judged = {(m.line_number, m.operator): m for m in run.mutants if m.outcome != "skipped"}
    assert judged[2, "core/ReplaceComparisonOperator_Lt_LtE"].outcome == "survived"
    assert judged[2, "core/ReplaceComparisonOperator_Lt_LtE"].executed_by == ["test_toy.py::test_below"]
    assert judged[2, "core/ReplaceComparisonOperator_Lt_GtE"].outcome == "killed"
    assert judged[10, "core/ReplaceBinaryOperator_Mul_FloorDiv"].outcome == "killed"
    unused = [m for m in run.mutants if m.line_number == 6 and m.outcome != "skipped"]
    assert unused and all(m.outcome == "survived" and m.executed_by == [] for m in unused)
    assert run.count("survived") == 2 + len(unused) and run.count("pending") == 0
    assert run.count("skipped") > 0  # the filtered operators
    copy = work / "tree" / "toy" / "below.py"
    copy.write_text(TOY.replace("x < 3", "x > 3"), encoding="utf-8")  # as a run stopped mid-mutant leaves it
    again = run_module("toy/below.py", cmap, work, root=root)
    assert [(m.operator, m.outcome) for m in again.mutants] == [(m.operator, m.outcome) for m in run.mutants]
    assert copy.read_text(encoding="utf-8") == TOY  # a resumed session mutates the unmutated module, never a mutant
    verified = work / "server-verified.json"
    known = json.loads(verified.read_text(encoding="utf-8"))
    verified.write_text(json.dumps({**known, "killers": ["gone.py::test_stale"]}), encoding="utf-8")
    fresh = run_module("toy/below.py", cmap, work, root=root, resume=False)  # perhaps on other code: starts over
    assert "gone.py::test_stale" not in json.loads(verified.read_text(encoding="utf-8"))["killers"]
    assert [(m.operator, m.outcome) for m in fresh.mutants] == [(m.operator, m.outcome) for m in run.mutants]
    keep = checkpoint("toy/below.py", work)  # what an interrupted session keeps (carried: the next test)
    assert keep is not None and len(keep["mutants"]) == len(run.mutants)
    other = CoverageMap("0" * 64, "elsewhere", cmap.tests, cmap.lines)
    with pytest.raises(SessionError, match="other code"):
        run_module("toy/below.py", other, work, root=root)
    with pytest.raises(SessionError, match="measured on other code"):
        run_module("toy/below.py", other, tmp_path / "work2", root=root)

    results = tmp_path / "results.json"
    update_partial(keep, results)
    verdicts = tmp_path / "verdicts.toml"
    verdicts.write_text("", encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 1
    said = capsys.readouterr().out  # an unfinished session's survivors need verdicts as much as a module's
    assert "unfinished: toy/below.py" in said and "no verdict: toy/below.py:2:15" in said
    entries = "".join(
        f'[[verdict]]\nmodule = "toy/below.py"\noperator = "{m.operator}"\nline = "{m.line}"\ncolumn = {m.column}\n'
        f'verdict = "open"\nreason = "the test checks 2 and 5 only"\n\n'
        for m in {(m.operator, m.line, m.column): m for m in run.mutants if m.outcome == "survived"}.values())
    # one verdict per place covers every mutant made there (x + 1 becomes x + 2 and x + 0 at one place)
    verdicts.write_text(entries, encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 0  # source matched
    update_results(run.entry("cosmic-ray test"), results)
    assert "partial" not in read_results(results)  # the finished module's entry replaces its checkpoint
    verdicts.write_text("", encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 1
    verdicts.write_text(entries, encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 0
    s = summary(read_results(results), read_verdicts(verdicts))
    assert s["modules"][0]["survivors"] == {"killed": 0, "equivalent": 0, "open": run.count("survived"), "none": 0}
    assert s["score"] == score(run.entry("x")["counts"]) and 0 < s["score"] < 1


TINY = "def below(x):\n    return x < 3\n"  # the toy's first function alone: a session of a few mutants


# slow tier: a real cosmic-ray session or coverage measurement of the opt-in mutation profile (25 to 45 s)
@pytest.mark.slow
def test_a_checkpoint_carries_a_session_to_another_machine(tmp_path: Path) -> None:
    """Half of a session's finished mutants, kept as a checkpoint, seed a fresh session elsewhere: the same outcomes,
    the carried ones named with the commit whose tests judged them, the others run (the first session's tests
    through the test server, this one's each in a process of their own); a checkpoint of other module source seeds
    nothing. (Apart from the toy session's test, on a smaller module, so neither holds a gate worker long.)"""
    root = _toy_checkout(tmp_path)
    (root / "toy" / "below.py").write_text(TINY, encoding="utf-8")
    cmap = _toy_map(tmp_path, root, ["test_toy.py"])
    work = tmp_path / "work"
    run = run_module("toy/below.py", cmap, work, root=root)
    assert run.runner == "fork server"
    keep = checkpoint("toy/below.py", work)
    assert keep is not None and len(keep["mutants"]) == len(run.mutants)
    half = {**keep, "mutants": keep["mutants"][::2]}
    moved = run_module("toy/below.py", cmap, tmp_path / "elsewhere", root=root, partial=half, use_server=False)
    assert moved.runner == "a process per mutant"  # and the same outcomes as through the server
    assert [(m.operator, m.line_number, m.outcome) for m in moved.mutants] == \
        [(m.operator, m.line_number, m.outcome) for m in run.mutants]
    carried = sum(m["worker_outcome"] != "skipped" for m in half["mutants"])
    judged = sum(m.outcome != "skipped" for m in run.mutants)
    assert 0 < carried < judged  # some carried, some run again
    assert moved.carried == [keep["commit"]] * carried
    assert moved.entry("x")["carried_from"] == [keep["commit"]]
    assert seed(tmp_path / "no.sqlite", {**keep, "module_sha": "0" * 64}, work / "pristine.py") == []


@pytest.mark.parametrize(("text", "why"), [
    ('[[verdict]]\nmodule = "m.py"\noperator = "o"\nline = "x"\ncolumn = 1\nverdict = "fine"\nreason = "r"\n', "kind"),
    ('[[verdict]]\nmodule = "m.py"\noperator = "o"\nline = "x"\ncolumn = 1\nverdict = "killed"\nreason = "r"\n',
     "test"),
    ('[[verdict]]\nmodule = "m.py"\noperator = "o"\nline = "x"\nverdict = "open"\nreason = "r"\n', "column"),
    ('[[verdict]]\nmodule = "m.py"\noperator = "o"\nline = "x"\ncolumn = 1\nverdict = "equivalent"\n'
     'reason = "the same on every provisioned tokenizer"\n', "set"),
    ("[[verdict]\n", "toml"),
])
def test_bad_verdicts_file_is_an_input_error(tmp_path: Path, text: str, why: str, capsys) -> None:
    """A verdicts file with an unknown kind, a 'killed' without its test, a missing field, an 'equivalent' resting on
    the provisioned tokenizers or broken TOML is refused with a message and exit status 2, no traceback."""
    path = tmp_path / "verdicts.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VerdictFileError):
        read_verdicts(path)
    assert mutation_main(["--verdicts", str(path), "status"]) == 2
    assert "error:" in capsys.readouterr().err


def test_usage_and_environment_errors(tmp_path: Path, monkeypatch, capsys) -> None:
    """No module named, an unknown module (to run or to checkpoint): 2; a checkpoint with no local session writes
    nothing and exits 0; a results file that is not one: 2; a map that cannot be measured (a
    test file failing on the unmutated copy): 3, no traceback; `list` without a map names the modules only."""
    assert mutation_main(["run"]) == 2
    assert mutation_main(["run", "--module", "spec/nope.py"]) == 2
    assert mutation_main(["checkpoint", "--module", "spec/nope.py"]) == 2
    kept = tmp_path / "kept.json"  # no local session: nothing to keep, nothing written
    assert mutation_main(["checkpoint", "--work", str(tmp_path / "none"), "--results", str(kept)]) == 0
    assert not kept.exists()
    bad = tmp_path / "results.json"
    bad.write_text("{}", encoding="utf-8")
    assert mutation_main(["status", "--results", str(bad)]) == 2

    def failing(*args, **kwargs):
        raise MapError("test files fail on the unmutated copy: x")

    monkeypatch.setattr("mutation.cli.build_map", failing)
    assert mutation_main(["map", "--work", str(tmp_path / "w")]) == 3
    assert "fail on the unmutated copy" in capsys.readouterr().err
    assert mutation_main(["list", "--work", str(tmp_path / "w")]) == 0
    out = capsys.readouterr()
    assert "no coverage map" in out.err and "spec/cut.py:" in out.out


def test_one_session_per_module(tmp_path: Path, monkeypatch, capsys) -> None:
    """A module whose session is running elsewhere (its work folder locked) is refused at once with exit 3 and the
    holder named; the results of two modules merged one after the other keep both."""
    monkeypatch.setattr("mutation.cli._current_map", lambda *a, **k: (CoverageMap("x", "x", []), tmp_path))
    with FolderLock(tmp_path / "spec__patterns"):
        assert mutation_main(["run", "--module", "spec/patterns.py", "--work", str(tmp_path),
                              "--results", str(tmp_path / "r.json")]) == 3
    assert "in use by process" in capsys.readouterr().err
    results = tmp_path / "results.json"
    for module in ("a.py", "b.py"):
        update_results({"module": module, "counts": {}, "survivors": []}, results)
    assert sorted(read_results(results)["modules"]) == ["a.py", "b.py"]


def test_an_interrupted_run_exits_130(tmp_path: Path, monkeypatch, capsys) -> None:
    """Ctrl-C during a session: exit 130, the resume hint, no traceback, the results file untouched."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("mutation.cli.run_module", interrupted)
    monkeypatch.setattr("mutation.cli._current_map", lambda *a, **k: (CoverageMap("x", "x", []), tmp_path))
    results = tmp_path / "results.json"
    assert mutation_main(["run", "--module", "spec/patterns.py", "--work", str(tmp_path),
                          "--results", str(results)]) == 130
    assert "resume" in capsys.readouterr().err and not results.exists()


def test_committed_survivors_all_have_verdicts() -> None:
    """The goal of the profile: every survivor in the committed results, of an unfinished session too, has a verdict
    in mutation/verdicts.toml, and every verdict names a survivor that exists (no stale entry); every 'killed' verdict
    was confirmed by `python -m mutation confirm` with its test (a claim nobody checked is not a kill)."""
    data = read_results(RESULTS_FILE)
    verdicts = read_verdicts()
    s = summary(data, verdicts)
    assert s["killed_confirmed"] == s["killed_claims"], "a 'killed' verdict unconfirmed: python -m mutation confirm"
    assert s["unjudged"] == [], [f"{u['module']}:{u['line_number']} {u['operator']}" for u in s["unjudged"]]
    used = {v.key for m, x, _ in all_survivors(data) if (v := find_verdict(verdicts, m, x)) is not None}
    assert [k for k in verdicts if k not in used] == []
    for row in s["modules"]:
        c = row["counts"]
        assert c["pending"] == 0, f"{row['module']}: an unfinished session was committed"


def test_report_shows_the_score_and_flags_a_survivor_without_verdict(tmp_path: Path) -> None:
    """The report's rows come from the results: a survivor without a verdict is shown as NO VERDICT and counted in
    the sentence; modules not run are named, an unfinished one with the mutants kept and its survivors, which are
    listed (marked unfinished) and need verdicts too, without entering the finished modules' counts."""
    entry = {"module": "spec/cut.py", "tests": ["properties/test_cut_spec.py"], "commit": "abc", "date": "d",
             "seconds": 1.0, "counts": {"killed": 8, "timeout": 1, "survived": 1, "incompetent": 0, "skipped": 3,
                                        "pending": 0},
             "survivors": [{"operator": "core/NumberReplacer", "line_number": 5, "column": 4, "line": "n = 1",
                            "diff": ""}]}
    unfinished = {"operator": "core/NumberReplacer", "line": 7, "column": 3, "source": "x = 0",
                  "diff": "--- a/delta/cuts.py\n+++ b/delta/cuts.py\n-x = 0\n+x = 1\n",
                  "worker_outcome": "normal", "test_outcome": "survived"}
    data = {"modules": {"spec/cut.py": entry},
            "partial": {"delta/cuts.py": {"module": "delta/cuts.py", "commit": "abc", "date": "d",
                                          "mutants": [{}] * 30 + [unfinished]}}}
    s = summary(data, {})
    s["survivor_list"] = [{"module": m, "finished": finished, **x, "verdict": None, "reason": "", "test": ""}
                          for m, x, finished in all_survivors(data)]
    rows = mutation_rows(s)
    assert rows[0][0] == "spec/cut.py" and rows[0][6] == "90.0%" and rows[0][7] == "90.0%"
    assert rows[0][8] == "0 / 0 / 0 / 1"
    assert [r[:6] for r in survivor_rows(s)] == [
        ["spec/cut.py", "5", "NumberReplacer", "n = 1", "", "NO VERDICT"],
        ["delta/cuts.py (unfinished)", "7", "NumberReplacer", "x = 0", "x = 1", "NO VERDICT"]]
    assert len(s["unjudged"]) == 2 and s["total"]["survived"] == 1
    sentence = mutation_sentence(s)
    assert "Score 90.0%" in sentence and "1 survived, 1 of them without a verdict" in sentence
    assert f"not run yet: {len(mutated_modules()) - 1} modules" in sentence
    assert ("delta/cuts.py unfinished, 31 mutants kept (31 judged: 0 killed, 1 survived, 1 of them without a "
            "verdict;") in sentence
    kept = [{**unfinished, "worker_outcome": "skipped", "test_outcome": "None"},
            {**unfinished, "test_outcome": "killed"}, unfinished]
    partial = summary({"modules": {}, "partial": {"m.py": {"module": "m.py", "mutants": kept}}}, {})["partial"]
    assert (partial[0]["finished"], partial[0]["judged"], partial[0]["killed"], partial[0]["survived"]) == (3, 2, 1, 1)
    assert mutation_sentence(None).startswith("No module")
    copy = tmp_path / "results.json"
    shutil.copy(RESULTS_FILE, copy)
    assert read_results(copy)["modules"]


def test_the_installed_folders_are_the_wheels_package_dirs() -> None:
    """The profile names a mutated module by the name Python imports it by: its folder's, under `delta_suite` for
    exactly the folders pyproject.toml installs there (a floor), never for this profile's or the tests' own."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    installed = {folder for name, folder in mapping.items() if name.startswith("delta_suite.")}
    assert installed == set(INSTALLED_FOLDERS)
    assert dotted_name("spec/cut.py") == "delta_suite.spec.cut" and module_path("delta_suite.spec.cut") == "spec/cut.py"
    assert dotted_name("mutation/cli.py") == "mutation.cli"
    assert dotted_name("properties/test_x.py") == "properties.test_x"

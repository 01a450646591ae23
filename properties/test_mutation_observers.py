"""The tests that can observe a statement run at import (mutation.observers): the readers of what it binds, followed
through the statements that read it at import, and the whole files whenever a reading cannot be resolved."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutation.coverage_map import CoverageMap, load_map, save_map
from mutation.mutant_tests import mutant_selection
from mutation.observers import Readings, binding_of, observers, read_names

MODULE = """\
from dataclasses import dataclass, field

LIMIT = 3
DOUBLE = LIMIT * 2


def below(x):
    return x < LIMIT


def doubled():
    return DOUBLE


def other():
    return 1


@dataclass(frozen=True)
class Box:
    size: int = 1
    tags: list = field(default_factory=list)

    def area(self):
        return self.size * self.size


def make():
    return Box()


def registered(f):
    return f


@registered
def hook():
    return 2
"""
# line numbers of MODULE
LIMIT_LINE, DOUBLE_LINE, BELOW_BODY, DOUBLED_BODY, OTHER_BODY = 3, 4, 8, 12, 16
BOX_DECORATOR, BOX_SIZE, AREA_BODY, MAKE_BODY, HOOK_DECORATOR = 19, 21, 25, 29, 36

FILES = ["properties/test_a.py", "properties/test_b.py"]  # the two test files that import the module
TESTS = ["properties/test_a.py::test_below", "properties/test_a.py::test_doubled", "properties/test_a.py::test_other",
         "properties/test_b.py::test_make", "properties/test_b.py::test_area"]


def _checkout(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    root = tmp_path / "checkout"
    files = {"spec/m.py": MODULE, "properties/test_a.py": "from delta_suite.spec.m import below, doubled, other\n",
             "properties/test_b.py": "from delta_suite.spec.m import make\n", **(extra or {})}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _map(sources: tuple[str, ...] = ("spec",), carried_from: str = "") -> CoverageMap:
    """The map of MODULE as a measurement would charge it: every line run at import to both files whole, each body
    to the test calling it."""
    ids = [(f, 30.0) for f in FILES] + [(t, 1.0) for t in TESTS]
    index = {name: i for i, (name, _) in enumerate(ids)}
    import_time = [index[f] for f in FILES]
    runtime = {BELOW_BODY: ["properties/test_a.py::test_below"], DOUBLED_BODY: ["properties/test_a.py::test_doubled"],
               OTHER_BODY: ["properties/test_a.py::test_other"], MAKE_BODY: ["properties/test_b.py::test_make"],
               AREA_BODY: ["properties/test_b.py::test_area"]}
    lines = {n: import_time for n in (1, LIMIT_LINE, DOUBLE_LINE, 7, 11, 15, BOX_DECORATOR, 20, BOX_SIZE, 22, 24,
                                      28, 32, HOOK_DECORATOR, 36)}
    lines.update({n: [index[t] for t in tests] for n, tests in runtime.items()})
    return CoverageMap("d", "c", ids, {"spec/m.py": lines}, carried_from=carried_from, sources=list(sources))


def test_the_forms_of_a_statement_run_at_import_and_their_names() -> None:
    """An assignment binds its targets; a decorated definition its name when every decorator only wraps; a class's
    field binds its name within the class. A line inside a function's body, or a definition under a decorator that
    may register it, has no such binding."""
    assert binding_of(MODULE, {LIMIT_LINE}).names == {"LIMIT"}
    assert binding_of(MODULE, {BOX_DECORATOR}).names == {"Box"}
    field_binding = binding_of(MODULE, {BOX_SIZE})
    assert field_binding.names == {"size"} and [c[0] for c in field_binding.classes] == ["Box"]
    assert binding_of(MODULE, {BELOW_BODY}) is None
    assert binding_of(MODULE, {HOOK_DECORATOR}) is None
    assert binding_of("import os\nif os.sep:\n    X = 1\n", {3}) is None
    assert binding_of("from a import b as c, d\n", {1}).names == {"c", "d"}


def test_readings_are_names_attributes_imports_and_identifier_strings_not_keywords_or_postponed_annotations() -> None:
    """What reads a name: a variable, an attribute, an import, a string equal to it (getattr); a keyword argument
    (it names a parameter) and an annotation that is never evaluated do not."""
    src = ("from __future__ import annotations\nfrom delta_suite.spec.m import LIMIT\nimport delta_suite.spec.other\n\n"
           "def f(x: Box) -> Box:\n"
           "    return getattr(x, 'size') + x.area() + g(tags=1) + LIMIT + delta_suite.spec.other.N\n")
    into = Readings()
    read_names("pkg/f.py", src, into)
    assert into.imports["LIMIT"] == {"delta_suite.spec.m": {"pkg/f.py": {2}}}
    assert into.names["LIMIT"] == {"pkg/f.py": {6}}
    assert into.strings["size"] == {"pkg/f.py": {6}} and into.attrs["area"] == {"pkg/f.py": {6}}
    assert "Box" not in into.names and "tags" not in into.names and "tags" not in into.attrs
    assert into.module_readers("LIMIT", "spec/m.py") == {"pkg/f.py": {2}}  # its import; the use follows from there
    assert into.module_readers("N", "spec/other.py") == {"pkg/f.py": {6}}  # through the imported module
    assert into.module_readers("N", "spec/third.py") == {} and into.attribute_readers("N") == {"pkg/f.py": {6}}
    evaluated = Readings()
    read_names("pkg/f.py", src.replace("from __future__ import annotations\n", ""), evaluated)
    assert set(evaluated.names["Box"]["pkg/f.py"]) == {4}


def test_a_constant_is_observed_by_its_readers_and_through_the_constants_computed_from_it(tmp_path: Path) -> None:
    """LIMIT is read by `below`'s body and, at import, by DOUBLE, which `doubled` reads: those two tests, not the
    two whole files the map charges the line to, and not `other`."""
    root = _checkout(tmp_path)
    assert observers(_map(), root, "spec/m.py", {LIMIT_LINE}) == [
        "properties/test_a.py::test_below", "properties/test_a.py::test_doubled"]
    assert observers(_map(), root, "spec/m.py", {DOUBLE_LINE}) == ["properties/test_a.py::test_doubled"]


def test_a_class_is_observed_where_it_is_built_and_where_its_methods_run(tmp_path: Path) -> None:
    """A class decorator's mutant (frozen) is seen where the class is named; a field's default also where its
    methods run (`cls(...)` builds one without naming the class)."""
    root = _checkout(tmp_path)
    assert observers(_map(), root, "spec/m.py", {BOX_DECORATOR}) == ["properties/test_b.py::test_make"]
    assert observers(_map(), root, "spec/m.py", {BOX_SIZE}) == [
        "properties/test_b.py::test_area", "properties/test_b.py::test_make"]
    assert observers(_map(), root, "spec/m.py", {BOX_SIZE + 1}) == [  # `tags`, which no line reads by name
        "properties/test_b.py::test_area", "properties/test_b.py::test_make"]


def test_a_reading_the_map_cannot_resolve_keeps_the_whole_files(tmp_path: Path) -> None:
    """A test file reading the name runs whole; a reading in a folder the map does not measure, a definition under a
    registering decorator, or (in a carried map) a file the map has no line of, leaves the question open."""
    root = _checkout(tmp_path, {"properties/test_c.py": "from delta_suite.spec.m import LIMIT\n"})
    assert observers(_map(), root, "spec/m.py", {LIMIT_LINE}) == [  # fastest first: test_c.py has no time yet
        "properties/test_c.py", "properties/test_a.py::test_below", "properties/test_a.py::test_doubled"]
    assert observers(_map(), root, "spec/m.py", {HOOK_DECORATOR}) is None
    tools = _checkout(tmp_path / "t", {"tools/use.py": "from delta_suite.spec.m import LIMIT\nprint(LIMIT)\n"})
    assert observers(_map(), tools, "spec/m.py", {LIMIT_LINE}) is None
    assert observers(_map(("spec", "tools")), tools, "spec/m.py", {LIMIT_LINE}) == [
        "properties/test_a.py::test_below", "properties/test_a.py::test_doubled"]  # measured, and run by no test
    assert observers(_map(("spec", "tools"), carried_from="abc"), tools, "spec/m.py", {LIMIT_LINE}) is None


@pytest.mark.parametrize("line, expected", [
    (LIMIT_LINE, ["properties/test_a.py::test_below", "properties/test_a.py::test_doubled"]),
    (BELOW_BODY, ["properties/test_a.py::test_below"]),
    (HOOK_DECORATOR, FILES),
])
def test_a_mutants_selection_uses_the_readers_only_for_a_statement_run_at_import(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: int, expected: list[str]) -> None:
    """The per-mutant command (run in the session's copy) picks the readers for a statement run at import, the
    tests executing the statement otherwise, and the whole files when the readers are open; the map keeps the
    folders it measured."""
    root = _checkout(tmp_path)
    cmap = _map()
    save_map(cmap, tmp_path / "m.json")
    assert load_map(tmp_path / "m.json").sources == ["spec"]
    pristine = tmp_path / "pristine.py"
    pristine.write_text(MODULE, encoding="utf-8")
    lines = MODULE.splitlines()
    lines[line - 1] = lines[line - 1].replace("3", "4").replace("x <", "x <=").replace("@registered", "")
    (root / "spec" / "m.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(root)
    assert mutant_selection(tmp_path / "m.json", "spec/m.py", pristine, root / "spec" / "m.py") == expected


MEMO = """\
from functools import cache


@cache
def table():
    return {"a": 1}


def lookup(key):
    return table()[key]


def unrelated():
    return 0


@cache
def summary():
    return len(table())


def report():
    return summary()
"""


def test_a_memoized_body_is_observed_by_its_callers_every_call_not_only_the_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The map charges a memo's body to the first caller of each file (test_first); every later caller sees its
    result through a call, which reads its name (`lookup` calls it: test_second and test_lookup too). Its mutant
    runs those, not the whole files and not `unrelated`'s test; and, through `summary`, a memo calling it whose
    body is charged to test_first only, `report`'s test, which sees it through `summary`."""
    root = _checkout(tmp_path, {"spec/memo.py": MEMO})
    ids = [("properties/test_x.py", 20.0), ("properties/test_y.py", 20.0), ("properties/test_x.py::test_first", 1.0),
           ("properties/test_x.py::test_second", 3.0), ("properties/test_y.py::test_lookup", 2.0),
           ("properties/test_y.py::test_unrelated", 0.5), ("properties/test_y.py::test_report", 4.0)]
    lines = {n: [0, 1] for n in (1, 4, 5, 9, 13, 17, 18, 22)} | {6: [2], 10: [2, 3, 4], 14: [5], 19: [2], 23: [6]}
    cmap = CoverageMap("d", "c", ids, {"spec/memo.py": lines}, sources=["spec"])
    save_map(cmap, tmp_path / "m.json")
    pristine = tmp_path / "pristine.py"
    pristine.write_text(MEMO, encoding="utf-8")
    (root / "spec" / "memo.py").write_text(MEMO.replace('"a": 1', '"a": 2'), encoding="utf-8")
    monkeypatch.chdir(root)
    assert mutant_selection(tmp_path / "m.json", "spec/memo.py", pristine, root / "spec" / "memo.py") == [
        "properties/test_x.py::test_first", "properties/test_y.py::test_lookup", "properties/test_x.py::test_second",
        "properties/test_y.py::test_report"]
    (root / "tools").mkdir()
    # not measured
    (root / "tools" / "use.py").write_text("from delta_suite.spec.memo import table\n", encoding="utf-8")
    assert mutant_selection(tmp_path / "m.json", "spec/memo.py", pristine, root / "spec" / "memo.py") == [
        "properties/test_x.py", "properties/test_y.py"]


TEST_FILE = """\
import pytest
from delta_suite.spec.m import DOUBLE, Box


def test_box():
    assert Box().size


@pytest.mark.parametrize("n", [DOUBLE])
def test_double(n):
    assert n
"""


def test_a_measured_test_file_is_read_test_by_test(tmp_path: Path) -> None:
    """When the map measures the tests' own folder, a test file's reading runs the test executing it (its import
    passes on only the names it imports that are being followed); a reading at import in a statement of another
    form (a parametrization) runs that file whole, as no other file imports a test file."""
    root = _checkout(tmp_path, {"properties/test_c.py": TEST_FILE})
    cmap = _map(("spec", "properties"))
    cmap.tests += [("properties/test_c.py", 5.0), ("properties/test_c.py::test_box", 0.2)]
    whole, one = len(cmap.tests) - 2, len(cmap.tests) - 1
    cmap.lines["properties/test_c.py"] = {1: [whole], 2: [whole], 5: [whole], 6: [one], 9: [whole], 10: [whole]}
    assert observers(cmap, root, "spec/m.py", {BOX_DECORATOR}) == [
        "properties/test_c.py::test_box", "properties/test_b.py::test_make"]
    assert observers(cmap, root, "spec/m.py", {DOUBLE_LINE}) == [
        "properties/test_a.py::test_doubled", "properties/test_c.py"]

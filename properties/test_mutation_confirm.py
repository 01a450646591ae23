"""`python -m mutation confirm`: a 'killed' verdict is checked, not believed (mutation.confirm).

On a toy checkout (no tokenizers): a verdict whose test fails on the mutant and passes without it is confirmed; one
whose test passes on the mutant is reported and exits 1, as does one whose module changed since its session
(stale); a test that does not exist exits 2, a test failing on the unmutated copy exits 3. The checkout is never
touched and the copy's module is restored after each mutant.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from delta_suite.reports.mutation_score import mutation_sentence, survivor_rows

import mutation.cli
from mutation.cli import main as mutation_main
from mutation.confirm import confirm_killed, exit_status
from mutation.results import (
    SCHEMA,
    confirmations_by_survivor,
    judged_survivors,
    read_results,
    summary,
    update_confirmations,
    update_results,
)
from mutation.verdicts import read_verdicts
from properties.mutation_toys import toy_checkout

TOY = "def below(x):\n    return x < 3\n\n\ndef unused(x):\n    return x + 1\n"
TESTS = {
    "test_toy.py": "from toy.below import below\n\n\ndef test_below():\n    assert below(2) and not below(5)\n",
    "test_edge.py": "from toy.below import below\n\n\ndef test_edge():\n    assert not below(3)\n",
    "test_broken.py": "def test_broken():\n    assert False\n",
}


def _checkout(tmp_path: Path) -> Path:
    return toy_checkout(tmp_path / "checkout", TESTS, TOY)


def _survivor(operator: str, line_number: int, column: int, old: str, new: str, source: str = TOY) -> dict:
    """A survivor as a session records it: its diff made from the module's source split at each newline, so one
    near the module's end carries an empty line past it (as the sessions' diffs do)."""
    lines = source.split("\n")
    assert lines[line_number - 1].strip() == old
    mutated = [*lines[: line_number - 1], lines[line_number - 1].replace(old, new), *lines[line_number:]]
    diff = "\n".join(difflib.unified_diff(lines, mutated, "a/toy/below.py", "b/toy/below.py", lineterm=""))
    return {"operator": operator, "line_number": line_number, "column": column, "line": old,
            "diff": "--- mutation diff ---\n" + diff}


def _verdicts(path: Path, *entries: tuple[dict, str]) -> Path:
    path.write_text("".join(
        f'[[verdict]]\nmodule = "toy/below.py"\noperator = "{s["operator"]}"\nline = "{s["line"]}"\n'
        f'column = {s["column"]}\nverdict = "killed"\ntest = "{test}"\nreason = "r"\n\n' for s, test in entries),
        encoding="utf-8")
    return path


LE = _survivor("core/ReplaceComparisonOperator_Lt_LtE", 2, 13, "return x < 3", "return x <= 3")
PLUS = _survivor("core/NumberReplacer", 6, 15, "return x + 1", "return x + 2")


def _confirm(tmp_path: Path, root: Path, *entries: tuple[dict, str]):
    data = {"modules": {"toy/below.py": {"survivors": [s for s, _ in entries]}}}
    return confirm_killed(data, read_verdicts(_verdicts(tmp_path / "v.toml", *entries)), root, tmp_path / "work")


def test_a_killed_verdict_is_confirmed_only_when_its_test_fails_on_the_mutant(tmp_path: Path) -> None:
    """test_edge fails on `x <= 3` and passes on `x < 3`: confirmed. test_below passes on `x + 2` (it never calls
    unused; the module's last line, whose diff reaches past the end): the verdict does not hold, exit 1. The
    checkout is untouched, the copy restored."""
    root = _checkout(tmp_path)
    assert PLUS["diff"].endswith("\n ") and "@@ -3,5 +3,5 @@" in PLUS["diff"]  # lines 3-7 of a 6-line module
    found = _confirm(tmp_path, root, (LE, "test_edge.py::test_edge"), (PLUS, "test_toy.py::test_below"))
    assert [(c.line_number, c.outcome) for c in found] == [(2, "confirmed"), (6, "passes on the mutant")]
    assert found[0].detail == "pytest exit 1" and found[0].held and not found[1].held
    assert [c.mutant for c in found] == ["return x <= 3", "return x + 2"]
    assert exit_status(found) == 1 and exit_status(found[:1]) == 0 and exit_status([]) == 0
    assert (root / "toy" / "below.py").read_text(encoding="utf-8") == TOY
    assert (tmp_path / "work" / "tree" / "toy" / "below.py").read_text(encoding="utf-8") == TOY
    assert "1 failed" in (tmp_path / "work" / "logs" / "mutant-1.log").read_text(encoding="utf-8")


def test_a_changed_module_a_missing_test_and_a_failing_test_are_told_apart(tmp_path: Path) -> None:
    """A survivor whose diff no longer applies (the module changed since its session) is stale (exit 1); a verdict
    naming a test that does not exist is an input error (2); a test failing on the unmutated copy proves nothing
    (3), and its mutant is not run."""
    root = _checkout(tmp_path)
    moved = _survivor("core/ReplaceComparisonOperator_Lt_LtE", 2, 13, "return x < 3", "return x <= 3",
                      source=TOY.replace("def below(x):", "def below(x, y=0):"))
    stale = _confirm(tmp_path, root, (moved, "test_edge.py::test_edge"))
    assert [c.outcome for c in stale] == ["stale"] and exit_status(stale) == 1
    missing = _confirm(tmp_path, root, (LE, "test_edge.py::test_nothing"))
    assert [c.outcome for c in missing] == ["no such test"] and exit_status(missing) == 2
    broken = _confirm(tmp_path, root, (LE, "test_broken.py::test_broken"))
    assert [(c.outcome, c.detail) for c in broken] == [("fails unmutated", "pytest exit 1")]
    assert exit_status(broken) == 3 and not (tmp_path / "work" / "logs" / "mutant-1.log").exists()


def test_the_command_prints_each_verdict_and_keeps_what_it_checked(tmp_path: Path, monkeypatch, capsys) -> None:
    """`confirm` prints one line per 'killed' verdict and the count, records them in the results file, and exits
    with exit_status; the summary and the report's survivor rows say which claims held; a module run again drops
    its records; an unknown module is a usage error."""
    root = _checkout(tmp_path)
    monkeypatch.setattr(mutation.cli, "ROOT", root)
    results = tmp_path / "results.json"
    counts = {"killed": 3, "timeout": 0, "survived": 2, "incompetent": 0, "skipped": 0, "pending": 0}
    entry = {"module": "toy/below.py", "survivors": [LE, PLUS], "counts": counts}
    results.write_text(json.dumps({"schema": SCHEMA, "modules": {"toy/below.py": entry}}), encoding="utf-8")
    verdicts = _verdicts(tmp_path / "v.toml", (LE, "test_edge.py::test_edge"), (PLUS, "test_toy.py::test_below"))
    work = tmp_path / "work"
    argv = ["--verdicts", str(verdicts), "confirm", "--results", str(results), "--work", str(work)]
    assert mutation_main(argv) == 1
    said = capsys.readouterr().out
    assert "confirmed: toy/below.py:2:13 core/ReplaceComparisonOperator_Lt_LtE" in said
    assert "passes on the mutant: toy/below.py:6:15" in said and "1 of 2 'killed' verdicts confirmed" in said
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 0
    assert "'killed' verdicts confirmed: 1 of 2 (`confirm` checks the others)" in capsys.readouterr().out
    data = read_results(results)
    assert [(c["line_number"], c["outcome"], c["test"]) for c in data["confirmations"]] == \
        [(2, "confirmed", "test_edge.py::test_edge"), (6, "passes on the mutant", "test_toy.py::test_below")]
    s = summary(data, read_verdicts(verdicts))
    assert (s["killed_claims"], s["killed_confirmed"]) == (2, 1)
    assert "of the 2 survivors judged killed by a test added since, 1 were confirmed" in mutation_sentence(s)
    s["survivor_list"] = [{"module": "toy/below.py", "finished": True, **x} for x in
                          judged_survivors(data["modules"]["toy/below.py"], read_verdicts(verdicts),
                                           confirmations_by_survivor(data))]
    cells = [row[5] for row in survivor_rows(s)]
    assert cells[0].startswith("killed (confirmed at ") and "NOT CONFIRMED" in cells[1]
    assert "passes on the mutant" in cells[1]
    # a verdict naming another test than the one confirmed is not confirmed by that record
    other = _verdicts(tmp_path / "other.toml", (LE, "test_toy.py::test_below"), (PLUS, "test_toy.py::test_below"))
    assert summary(data, read_verdicts(other))["killed_confirmed"] == 0
    # a record counts only for the mutant it checked: the same place with another diff is not confirmed
    moved = {**data, "modules": {"toy/below.py": {**entry, "survivors": [{**LE, "diff": LE["diff"] + "\n"}, PLUS]}}}
    assert summary(moved, read_verdicts(verdicts))["killed_confirmed"] == 0
    # the module run again: the records of survivors it still has stay (older tests let them survive again), the
    # others go (its session counted the kills)
    update_results({**entry, "survivors": [LE]}, results)
    assert [c["line_number"] for c in read_results(results)["confirmations"]] == [2]
    update_results({**entry, "survivors": []}, results)
    assert "confirmations" not in read_results(results)
    # a section another version of the tool wrote is kept by this one's merges
    later = read_results(results)
    results.write_text(json.dumps({**later, "newer": {"x": 1}}), encoding="utf-8")
    update_results(entry, results)
    update_confirmations([], results)
    assert read_results(results)["newer"] == {"x": 1}
    assert mutation_main([*argv, "--module", "toy/nothing.py"]) == 2
    assert "not a module" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["", "--- mutation diff ---\n"])
def test_a_survivor_without_a_diff_is_stale(tmp_path: Path, bad: str) -> None:
    """A survivor recorded without a diff cannot be written into the copy: stale, never confirmed."""
    root = _checkout(tmp_path)
    found = _confirm(tmp_path, root, ({**LE, "diff": bad}, "test_edge.py::test_edge"))
    assert [c.outcome for c in found] == ["stale"]

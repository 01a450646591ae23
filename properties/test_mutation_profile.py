"""The mutation profile (mutation/): test selection per module, the operator filter, a real cosmic-ray session on a
toy module (kills, a survivor, resume), verdicts matched to survivors, the exit statuses, and the committed results:
every survivor of spec/ and delta/ in mutation/results.json has a verdict (the issue's goal), and the report shows
the score without counting it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cosmic_ray.plugins import operator_names

from ledger.lock import FolderLock
from mutation.cli import main as mutation_main
from mutation.modules import ROOT, dotted_name, module_path, mutated_modules
from mutation.operators import EXCLUDED_OPERATORS, KEPT_BINARY, KEPT_COMPARISON, is_excluded
from mutation.results import RESULTS_FILE, read_results, score, summary, update_results
from mutation.selection import Selection, select
from mutation.session import read_dump, run_module
from mutation.verdicts import VerdictFileError, read_verdicts
from reports.mutation_score import mutation_rows, mutation_sentence, survivor_rows

TOY = "def below(x):\n    return x < 3\n"
TOY_TEST = "from toy import below\n\n\ndef test_below():\n    assert below(2) and not below(5)\n"


def test_every_module_of_spec_and_delta_has_tests() -> None:
    """Each mutated module gets test files, nearest importers first, and the names round-trip."""
    modules = mutated_modules()
    assert "spec/cut.py" in modules and "delta/cut_map.py" in modules
    assert not [m for m in modules if m.endswith(("__init__.py", "__main__.py"))]
    for module in modules:
        assert module_path(dotted_name(module)) == module
        sel = select(module)
        assert sel.tests, module
        assert all((ROOT / t).is_file() and Path(t).name.startswith("test_") for t in sel.tests)
    assert select("spec/cut.py").tests[:8].count("properties/test_cut_spec.py") == 1
    with pytest.raises(KeyError):
        select("spec/no_such_module.py")


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
             json.dumps([item, {"worker_outcome": "skipped"}]), json.dumps([item, None])]
    mutants = read_dump("\n".join(lines), TOY.splitlines())
    assert [m.outcome for m in mutants] == ["survived", "timeout", "skipped", "pending"]
    assert mutants[0].line == "return x < 3" and mutants[0].line_number == 2 and mutants[0].column == 15


def _toy_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    (root / "toy.py").write_text(TOY, encoding="utf-8")
    (root / "test_toy.py").write_text(TOY_TEST, encoding="utf-8")
    return root


def test_session_on_a_toy_module(tmp_path: Path) -> None:
    """A real cosmic-ray session in a scratch copy: `x < 3` -> `x <= 3` and `3` -> `4` survive the test (it checks 2
    and 5 only), the others are killed; the checkout itself is never modified; a second run resumes with nothing
    pending; the results merge, the survivors without verdicts make `status` exit 1 and verdicts make it exit 0."""
    root = _toy_checkout(tmp_path)
    work = tmp_path / "work"
    run = run_module(Selection("toy.py", ("test_toy.py",)), work, root=root)
    assert (root / "toy.py").read_text(encoding="utf-8") == TOY
    judged = {m.operator: m.outcome for m in run.mutants if m.outcome != "skipped"}
    assert judged["core/ReplaceComparisonOperator_Lt_LtE"] == "survived"
    assert judged["core/ReplaceComparisonOperator_Lt_GtE"] == "killed"
    assert run.count("survived") == 2 and run.count("killed") >= 2 and run.count("pending") == 0
    assert run.count("skipped") > 0  # the filtered operators
    again = run_module(Selection("toy.py", ("test_toy.py",)), work, root=root)
    assert [(m.operator, m.outcome) for m in again.mutants] == [(m.operator, m.outcome) for m in run.mutants]

    results = tmp_path / "results.json"
    update_results(run.entry("cosmic-ray test"), results)
    verdicts = tmp_path / "verdicts.toml"
    verdicts.write_text("", encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 1
    entries = "".join(
        f'[[verdict]]\nmodule = "toy.py"\noperator = "{m.operator}"\nline = "{m.line}"\ncolumn = {m.column}\n'
        f'verdict = "open"\nreason = "the test checks 2 and 5 only"\n\n'
        for m in run.mutants if m.outcome == "survived")
    verdicts.write_text(entries, encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 0
    s = summary(read_results(results), read_verdicts(verdicts))
    assert s["modules"][0]["survivors"] == {"killed": 0, "equivalent": 0, "open": 2, "none": 0}
    assert s["score"] == score(run.entry("x")["counts"]) and 0 < s["score"] < 1


@pytest.mark.parametrize(("text", "why"), [
    ('[[verdict]]\nmodule = "m.py"\noperator = "o"\nline = "x"\ncolumn = 1\nverdict = "fine"\nreason = "r"\n', "kind"),
    ('[[verdict]]\nmodule = "m.py"\noperator = "o"\nline = "x"\ncolumn = 1\nverdict = "killed"\nreason = "r"\n',
     "test"),
    ('[[verdict]]\nmodule = "m.py"\noperator = "o"\nline = "x"\nverdict = "open"\nreason = "r"\n', "column"),
    ("[[verdict]\n", "toml"),
])
def test_bad_verdicts_file_is_an_input_error(tmp_path: Path, text: str, why: str, capsys) -> None:
    """A verdicts file with an unknown kind, a 'killed' without its test, a missing field or broken TOML is refused
    with a message and exit status 2, no traceback."""
    path = tmp_path / "verdicts.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VerdictFileError):
        read_verdicts(path)
    assert mutation_main(["--verdicts", str(path), "status"]) == 2
    assert "error:" in capsys.readouterr().err


def test_usage_and_environment_errors(tmp_path: Path, capsys) -> None:
    """No module named, an unknown module: 2; a results file that is not one: 2; the selected tests failing on the
    unmutated tree: 3 (no score from a broken baseline)."""
    assert mutation_main(["run"]) == 2
    assert mutation_main(["run", "--module", "spec/nope.py"]) == 2
    bad = tmp_path / "results.json"
    bad.write_text("{}", encoding="utf-8")
    assert mutation_main(["status", "--results", str(bad)]) == 2
    root = _toy_checkout(tmp_path)
    (root / "test_toy.py").write_text(TOY_TEST.replace("not below(5)", "below(5)"), encoding="utf-8")
    with pytest.raises(Exception, match="fail on the unmutated copy"):
        run_module(Selection("toy.py", ("test_toy.py",)), tmp_path / "w", root=root)
    capsys.readouterr()


def test_one_session_per_module(tmp_path: Path, capsys) -> None:
    """A module whose session is running elsewhere (its work folder locked) is refused at once with exit 3 and the
    holder named; the results of two modules merged one after the other keep both."""
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
    results = tmp_path / "results.json"
    assert mutation_main(["run", "--module", "spec/patterns.py", "--work", str(tmp_path),
                          "--results", str(results)]) == 130
    assert "resume" in capsys.readouterr().err and not results.exists()


def test_committed_survivors_all_have_verdicts() -> None:
    """The goal of the profile: every survivor in the committed results has a verdict in mutation/verdicts.toml,
    and every verdict names a survivor that exists (no stale entry)."""
    data = read_results(RESULTS_FILE)
    verdicts = read_verdicts()
    s = summary(data, verdicts)
    assert s["unjudged"] == [], [f"{u['module']}:{u['line_number']} {u['operator']}" for u in s["unjudged"]]
    keys = {(m, x["operator"], x["line"], x["column"]) for m, e in data["modules"].items() for x in e["survivors"]}
    assert [k for k in verdicts if k not in keys] == []
    for row in s["modules"]:
        c = row["counts"]
        assert c["pending"] == 0, f"{row['module']}: an unfinished session was committed"


def test_report_shows_the_score_and_flags_a_survivor_without_verdict(tmp_path: Path) -> None:
    """The report's rows come from the results: a survivor without a verdict is shown as NO VERDICT and counted in
    the sentence; modules not run are named."""
    entry = {"module": "spec/cut.py", "tests": ["properties/test_cut_spec.py"], "commit": "abc", "date": "d",
             "seconds": 1.0, "counts": {"killed": 8, "timeout": 1, "survived": 1, "incompetent": 0, "skipped": 3,
                                        "pending": 0},
             "survivors": [{"operator": "core/NumberReplacer", "line_number": 5, "column": 4, "line": "n = 1",
                            "diff": ""}]}
    s = summary({"modules": {"spec/cut.py": entry}}, {})
    s["survivor_list"] = [{"module": "spec/cut.py", **x, "verdict": None, "reason": "", "test": ""}
                          for x in entry["survivors"]]
    rows = mutation_rows(s)
    assert rows[0][0] == "spec/cut.py" and rows[0][6] == "90.0%" and rows[0][7] == "90.0%"
    assert rows[0][8] == "0 / 0 / 0 / 1"
    assert survivor_rows(s)[0][4] == "NO VERDICT"
    sentence = mutation_sentence(s)
    assert "Score 90.0%" in sentence and "1 of them without a verdict" in sentence
    assert f"not run yet: {len(mutated_modules()) - 1} modules" in sentence
    assert mutation_sentence(None).startswith("No module")
    copy = tmp_path / "results.json"
    shutil.copy(RESULTS_FILE, copy)
    assert read_results(copy)["modules"]

"""A stated sample of the mutation profile (mutation/sample.py, mutation/estimate.py): the seeded, stratified draw
(the same seed the same mutants, every operator kind represented, at most K); the estimate per module (Wilson,
exact when every mutant was drawn) and overall (weighted by population, an exhaustive module adding no error); a
real session that runs only the drawn mutants; the results file's "samples" section, which `status` and the report
show apart from the complete runs, its survivors needing verdicts like any other.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from delta_suite.reports.mutation_score import mutation_sentence, sample_rows, survivor_rows

from mutation.carry import source_sha
from mutation.cli import main as mutation_main
from mutation.cli import parse_shard
from mutation.coverage_map import build_map
from mutation.estimate import module_estimate, overall, wilson
from mutation.mutant_tests import BUDGET_MARK, TIMEOUT_MARK, Overrun, run_with_limit
from mutation.operators import operator_kind
from mutation.results import read_results, summary, update_results, update_sample
from mutation.sample import sample_entry, stratified_choice
from mutation.session import Candidate, ModuleRun, Mutant, forget_unfinished, run_module, unfinished_budget
from mutation.settle import judged_keys, settle
from properties.mutation_toys import toy_checkout

OPERATORS = ["core/ReplaceComparisonOperator_Lt_LtE", "core/ReplaceComparisonOperator_Lt_Gt",
             "core/NumberReplacer", "core/ReplaceBinaryOperator_Add_Sub", "core/ReplaceTrueWithFalse"]


def _candidates(n: int) -> list[Candidate]:
    return [Candidate(f"job{i}", OPERATORS[i % len(OPERATORS)], i // len(OPERATORS), 10 + i, 4) for i in range(n)]


def test_the_draw_is_seeded_stratified_and_bounded() -> None:
    """Same seed and module: the same mutants; another seed: others; K of them, every kind among them when K
    allows; all of them when there are fewer than K."""
    pool = _candidates(40)
    first = stratified_choice(7, 6, "spec/cut.py")(pool)
    assert first == stratified_choice(7, 6, "spec/cut.py")(list(pool))
    assert first != stratified_choice(8, 6, "spec/cut.py")(pool)
    assert len(first) == 6
    kinds = {operator_kind(c.operator) for c in pool if c.job_id in first}
    assert kinds == {operator_kind(o) for o in OPERATORS}  # four kinds, six drawn: each kind at least once
    assert stratified_choice(7, 100, "spec/cut.py")(pool) == {c.job_id for c in pool}
    assert operator_kind("core/ReplaceComparisonOperator_Lt_LtE") == "core/ReplaceComparisonOperator"
    assert operator_kind("core/NumberReplacer") == "core/NumberReplacer"


def test_the_estimates_and_their_intervals() -> None:
    """Wilson's interval for 8 of 10 (0.490 to 0.943); a module drawn whole is exact; the overall estimate weights
    modules by population and an exhaustive module adds no sampling error."""
    lo, hi = wilson(8, 10)
    assert round(lo, 3) == 0.490 and round(hi, 3) == 0.943
    assert module_estimate(8, 10, 10) == {"score": 0.8, "interval": [0.8, 0.8], "exact": True}
    assert module_estimate(8, 10, 50)["interval"] == [lo, hi]
    o = overall([{"killed": 8, "judged": 10, "population": 100}, {"killed": 20, "judged": 20, "population": 50}])
    assert o["score"] == pytest.approx((100 * 0.8 + 50 * 1.0) / 150) and o["population"] == 150
    assert o["interval"][0] < o["score"] < o["interval"][1] < 1.0
    whole = overall([{"killed": 8, "judged": 10, "population": 10}, {"killed": 3, "judged": 4, "population": 4}])
    assert whole["interval"] == [whole["score"], whole["score"]]  # every mutant judged: exact
    narrower = overall([{"killed": 80, "judged": 100, "population": 1000}])
    assert narrower["interval"][1] - narrower["interval"][0] < o["interval"][1] - o["interval"][0]


def _run(module: str, outcomes: list[str]) -> ModuleRun:
    mutants = [Mutant("core/NumberReplacer", 3 + i, 4, "x = 1", outcome, diff=f"-x = 1\n+x = {i}" if
                      outcome == "survived" else "") for i, outcome in enumerate(outcomes)]
    return ModuleRun(module, ("properties/test_x.py",), 1.0, 60.0, 12.5, mutants, "abc1234")


def test_a_sample_is_recorded_and_shown_apart(tmp_path: Path, capsys) -> None:
    """A module's sample entry counts what was drawn of which population; `status` prints the sample apart from
    the complete runs, with its interval, and exits 1 while a sampled survivor has no verdict; the report's rows
    and sentence say estimate and interval; the complete run of another module keeps its own score."""
    results, verdicts = tmp_path / "results.json", tmp_path / "verdicts.toml"
    verdicts.write_text("", encoding="utf-8")
    run = _run("spec/cut.py", ["killed", "killed", "timeout", "survived", "unselected", "unselected", "skipped"])
    entry = sample_entry(run, "cosmic-ray test")
    assert (entry["population"], entry["drawn"], entry["judged"], entry["killed"]) == (6, 4, 4, 3)
    assert entry["score"] == 0.75 and not entry["exact"] and len(entry["survivors"]) == 1
    update_sample(3, 4, entry, results)
    update_results(_run("spec/guard.py", ["killed", "killed"]).entry("cosmic-ray test"), results)
    data = read_results(results)
    assert list(data["samples"]) == ["seed 3, 4 per module"] and "spec/guard.py" in data["modules"]
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 1
    said = capsys.readouterr().out
    assert "sample (seed 3, 4 per module): score 75.0% [" in said and "drawn from a population of 6" in said
    assert "no verdict: spec/cut.py:6:4 core/NumberReplacer  x = 1  (sample seed 3, 4 per module)" in said
    s = summary(data, {})
    assert s["score"] == 1.0  # the complete run's score: the sample is not added to it
    rows = sample_rows(s)
    assert rows[0][:2] == ["seed 3, 4 per module", "spec/cut.py"] and rows[0][2] == "4 of 6" and "%" in rows[0][8]
    assert rows[-1][1].startswith("all 1 modules sampled")
    assert "a stated sample (seed 3, 4 per module) estimates 75.0%" in mutation_sentence(s)
    assert any("(sample seed 3, 4 per module)" in r[0] for r in survivor_rows({**s, "survivor_list": [
        {"module": "spec/cut.py", "sample": "seed 3, 4 per module", "line_number": 6, "operator": "o", "line": "",
         "diff": "", "verdict": None, "reason": "", "test": ""}]}))
    verdicts.write_text('[[verdict]]\nmodule = "spec/cut.py"\noperator = "core/NumberReplacer"\nline = "x = 1"\n'
                        'column = 4\nverdict = "equivalent"\nreason = "planted"\n', encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 0


TOY = ("def below(x):\n    return x < 3\n\n\ndef above(x):\n    return x > 3 and x != 10\n\n\n"
       "def twice(x):\n    return x * 2 + 0\n")
TOY_TEST = ("from toy.below import above, below, twice\n\n\ndef test_toy():\n    assert below(2) and not below(5)\n"
            "    assert above(5) and not above(2)\n    assert twice(3) == 6\n")


def test_a_session_runs_only_the_drawn_mutants(tmp_path: Path) -> None:
    """A real cosmic-ray session of a toy module with a draw of three: three mutants judged, the rest unselected,
    never run; the entry's population is every mutant the operator filter kept."""
    root = toy_checkout(tmp_path / "checkout", {"test_toy.py": TOY_TEST}, TOY)
    cmap = build_map(root, tmp_path / "map", tests=["test_toy.py"], sources=("toy",))
    run = run_module("toy/below.py", cmap, tmp_path / "work", root=root, choose=stratified_choice(1, 3, "toy"))
    judged = [m for m in run.mutants if m.outcome in ("killed", "survived", "timeout", "incompetent")]
    assert len(judged) == 3 and run.count("pending") == 0
    assert run.count("unselected") > 3
    entry = sample_entry(run, "test")
    assert entry["drawn"] == 3 and entry["population"] == 3 + run.count("unselected")


def test_sample_usage_errors_exit_2(tmp_path: Path, capsys) -> None:
    """A sample of fewer than one mutant per module, or of a module outside spec/ and delta/, is a usage error (2),
    before any map is measured or session started."""
    results = tmp_path / "results.json"
    assert mutation_main(["sample", "--seed", "1", "--per-module", "0", "--results", str(results),
                          "--work", str(tmp_path / "work")]) == 2
    assert mutation_main(["sample", "--seed", "1", "--per-module", "3", "--module", "frozen/loader.py",
                          "--results", str(results), "--work", str(tmp_path / "work")]) == 2
    assert "unknown: ['frozen/loader.py']" in capsys.readouterr().err
    assert not results.exists() and not (tmp_path / "work").exists()


# the toy's covering test sleeps SLOW_SECONDS, longer than the budget: the budget's clock starts before the test's
# process does, so the test cannot end within it however fast the machine
SLOW_SECONDS = 0.25
BUDGET_SECONDS = 0.1
SLOW_TEST = ("import time\n\nfrom toy.below import below\n\n\ndef test_slow():\n"
             f"    time.sleep({SLOW_SECONDS})\n    assert below(2) and not below(5)\n")


def test_a_budget_leaves_slow_mutants_unfinished_and_a_later_run_judges_them(tmp_path: Path) -> None:
    """With a budget shorter than its covering tests, a drawn mutant is unfinished, not survived nor killed: the
    entry counts it as not killed (a lower bound) and lists it; the same sample run again without a budget judges
    exactly those mutants, unless another run of the same source judged them (then they are left as they are)."""
    root = toy_checkout(tmp_path / "checkout", {"test_toy.py": SLOW_TEST})
    cmap = build_map(root, tmp_path / "map", tests=["test_toy.py"], sources=("toy",))
    choose = stratified_choice(1, 2, "toy")
    assert cmap.seconds(["test_toy.py"]) > SLOW_SECONDS > BUDGET_SECONDS  # the covering test outlasts the budget
    first = run_module("toy/below.py", cmap, tmp_path / "work", root=root, choose=choose, budget=BUDGET_SECONDS)
    assert first.count("unfinished") == 2 and first.count("killed") + first.count("survived") == 0
    entry = sample_entry(first, "test", BUDGET_SECONDS)
    assert (entry["judged"], entry["killed"], entry["unfinished"], entry["lower_bound"]) == (2, 0, 2, True)
    assert entry["score"] == 0.0 and len(entry["unfinished_mutants"]) == 2 and not entry["survivors"]
    judged = {(m.operator, m.occurrence, m.line_number, m.column) for m in first.mutants if m.outcome == "unfinished"}
    asked: list[str] = []
    kept = run_module("toy/below.py", cmap, tmp_path / "work", root=root, choose=choose,
                      judged_elsewhere=lambda sha: asked.append(sha) or judged)  # another run judged both
    assert kept.count("unfinished") == 2 and asked == [source_sha(root / "toy/below.py")]
    again = run_module("toy/below.py", cmap, tmp_path / "work", root=root, choose=choose)
    assert again.count("unfinished") == 0 and again.count("killed") + again.count("survived") == 2
    assert not sample_entry(again, "test")["lower_bound"]


def test_unfinished_results_are_run_again_only_under_a_larger_budget(tmp_path: Path) -> None:
    """A result unfinished within 60 s is forgotten (run again) under a budget of 120 s or none, kept under 60 s or
    30 s; other results are never touched; the budget is read back from the mark; a mutant another run of the same
    source judged (`keep`: operator, occurrence, line, column) is kept unfinished under any budget."""
    db = tmp_path / "session.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE work_results (job_id VARCHAR PRIMARY KEY, output TEXT)")
        conn.execute("CREATE TABLE mutation_specs (job_id VARCHAR PRIMARY KEY, operator_name VARCHAR, "
                     "occurrence INTEGER, start_pos_row INTEGER, start_pos_col INTEGER)")
        rows = [("a", f"{BUDGET_MARK} (60 s) after 60 s"), ("b", "killed"),
                ("c", f"x\n{BUDGET_MARK} (30 s) after 30 s"), ("d", f"{BUDGET_MARK} (30 s) after 30 s")]
        conn.executemany("INSERT INTO work_results VALUES (?, ?)", rows)
        conn.executemany("INSERT INTO mutation_specs VALUES (?, 'core/NumberReplacer', ?, 5, 4)",
                         [(job, i) for i, (job, _) in enumerate(rows)])
    assert unfinished_budget(rows[0][1]) == 60.0 and unfinished_budget("killed") is None
    keep = {("core/NumberReplacer", 3, 5, 4)}  # d
    assert forget_unfinished(db, 30.0, keep) == 0
    assert forget_unfinished(db, 60.0, keep) == 1  # only c (30 s)
    assert forget_unfinished(db, None, keep) == 1  # then a
    with sqlite3.connect(db) as conn:
        assert sorted(r[0] for r in conn.execute("SELECT job_id FROM work_results")) == ["b", "d"]
    assert forget_unfinished(db, None) == 1  # d, when no other run judged it


def test_over_the_budget_is_unfinished_not_a_timeout(capfd) -> None:
    """Tests outliving a budget are stopped: status 0 and BUDGET_MARK (the session reads unfinished), where the
    same overrun of a mutant's own limit is 1 and TIMEOUT_MARK (a kill)."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    assert run_with_limit(sleeper, 0.3, Overrun(f"{BUDGET_MARK} (0.3 s)", 0)) == 0
    assert run_with_limit(sleeper, 0.3) == 1
    out = capfd.readouterr().out
    assert f"{BUDGET_MARK} (0.3 s) after 0 s" in out and f"{TIMEOUT_MARK} after 0 s" in out


def test_an_unfinished_sample_is_shown_as_a_lower_bound(tmp_path: Path, capsys) -> None:
    """A sampled module with unfinished mutants: `status` says '>=' and lower bound, lists each unfinished mutant
    and exits 1 (work is left); the report's row and sentence say lower bound; --shard splits the modules and a
    malformed shard or budget is a usage error (2)."""
    results, verdicts = tmp_path / "results.json", tmp_path / "verdicts.toml"
    verdicts.write_text("", encoding="utf-8")
    run = _run("spec/cut.py", ["killed", "killed", "killed", "unfinished"])
    entry = sample_entry(run, "cosmic-ray test", 60.0)
    assert entry["score"] == 0.75 and entry["lower_bound"] and entry["unfinished_mutants"][0]["line_number"] == 6
    update_sample(3, 4, entry, results)
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 1
    said = capsys.readouterr().out
    assert "score >= 75.0% [75.0%, 100.0%]" in said and "a lower bound: 1 mutants unfinished within the budget" in said
    assert "(exact)" not in said  # every mutant drawn, one unfinished: between 3 and 4 of 4
    assert "unfinished: spec/cut.py:6:4 core/NumberReplacer  x = 1" in said and "1 unfinished within 60 s" in said
    s = summary(read_results(results), {})
    rows = sample_rows(s)
    assert rows[0][6] == "0 (+1 unfinished within 60 s)" and rows[0][7] == ">= 75.0% (lower bound)"
    assert "estimates >= 75.0% (lower bound)" in mutation_sentence(s)
    for bad in (["--shard", "3/2"], ["--shard", "x"], ["--budget", "0"]):
        assert mutation_main(["sample", "--seed", "1", "--per-module", "2", *bad, "--results", str(results),
                              "--work", str(tmp_path / "work")]) == 2
    assert parse_shard("2/3") == (2, 3) and parse_shard("0/3") is None
    assert not (tmp_path / "work").exists()


def _sampled_run(module: str, outcomes: list[str], sha: str) -> ModuleRun:
    """A run whose mutants are one NumberReplacer each on lines 3, 4, ... (occurrence = index), a survivor's diff
    naming its line."""
    mutants = [Mutant("core/NumberReplacer", 3 + i, 4, "x = 1", outcome, diff=f"-x = 1\n+x = {i}",
                      occurrence=i) for i, outcome in enumerate(outcomes)]
    return ModuleRun(module, ("properties/test_x.py",), 1.0, 60.0, 12.5, mutants, "abc1234", module_sha=sha)


def test_an_unfinished_mutant_is_settled_by_a_run_of_the_same_source(tmp_path: Path, capsys) -> None:
    """A sampled mutant left unfinished within its budget takes the outcome the complete run of the same module
    source recorded for that mutant (killed, or survived with the run's survivor and its verdict), or the outcome a
    checkpoint of the same source holds; the estimate is no longer a lower bound once none is left, and a settled
    survivor is listed once, with its own run. Another source's run, or a run that recorded no per-mutant outcomes,
    settles nothing."""
    results, verdicts = tmp_path / "results.json", tmp_path / "verdicts.toml"
    verdicts.write_text("", encoding="utf-8")
    sample = sample_entry(_sampled_run("spec/cut.py", ["killed", "unfinished", "killed", "unfinished"], "s1"),
                          "cosmic-ray test", 30.0)
    assert sample["lower_bound"] and [m["occurrence"] for m in sample["unfinished_mutants"]] == [1, 3]
    whole = _sampled_run("spec/cut.py", ["killed", "timeout", "killed", "survived"], "s1").entry("cosmic-ray test")
    assert whole["outcomes"]["timeout"] == [["core/NumberReplacer", 1, 4, 4]]
    assert settle(sample, {**whole, "module_sha": "s0"}) == sample  # another source: nothing settled
    assert settle(sample, {k: v for k, v in whole.items() if k != "outcomes"}) == sample  # no outcomes recorded
    settled = settle(sample, whole)
    assert (settled["killed"], settled["timeouts"], settled["survived"], settled["judged"]) == (3, 1, 1, 4)
    assert (settled["unfinished"], settled["lower_bound"], settled["score"]) == (0, False, 0.75)
    assert settled["settled"]["by"] == ["complete run at abc1234"] and settled["settled"]["survived"] == 1
    assert [s["line_number"] for s in settled["survivors"] if s.get("settled")] == [6]
    checkpoint = {"module": "spec/cut.py", "module_sha": "s1", "commit": "def5678", "mutants": [
        {"operator": "core/NumberReplacer", "occurrence": 1, "line": 4, "column": 4, "source": "x = 1",
         "worker_outcome": "normal", "test_outcome": "killed", "timeout": False, "diff": "", "commit": "def5678"}]}
    data = {"modules": {"spec/cut.py": whole}, "partial": {"spec/cut.py": checkpoint}}
    assert judged_keys(data, "spec/cut.py", "s1") == {("core/NumberReplacer", i, 3 + i, 4) for i in range(4)}
    assert judged_keys(data, "spec/cut.py", "s0") == set() and judged_keys(data, "spec/guard.py", "s1") == set()
    partly = settle(sample, None, checkpoint)
    assert (partly["killed"], partly["unfinished"], partly["lower_bound"]) == (3, 1, True)
    assert partly["settled"]["by"] == ["checkpoint at def5678"]
    assert [m["occurrence"] for m in partly["unfinished_mutants"]] == [3]

    update_sample(3, 4, sample, results)
    update_results(whole, results)
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 1
    said = capsys.readouterr().out
    assert "2 settled by complete run at abc1234: 1 killed, 1 survived" in said
    assert said.count("no verdict: spec/cut.py:6:4") == 1  # the complete run's survivor, not again for the sample
    assert "unfinished: spec/cut.py" not in said
    s = summary(read_results(results), {})
    assert s["samples"][0]["overall"]["settled"] == 2 and not s["samples"][0]["overall"]["lower_bound"]
    assert "2 unfinished settled by complete run at abc1234" in sample_rows(s)[0][6]
    verdicts.write_text('[[verdict]]\nmodule = "spec/cut.py"\noperator = "core/NumberReplacer"\nline = "x = 1"\n'
                        'column = 4\nverdict = "equivalent"\nreason = "planted"\n', encoding="utf-8")
    assert mutation_main(["--verdicts", str(verdicts), "status", "--results", str(results)]) == 0

"""The benchmark command's quick run writes well-formed ledger records with positive ratios (no timing asserted);
the gate-durations figure parses JUnit XML into its bound and goal."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from delta_suite.benchmarks import campaign, gate_compare
from delta_suite.benchmarks.__main__ import FIGURES, main
from delta_suite.benchmarks.gate_durations import GOAL_BOUND_S, durations_of_junit, durations_record
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.ledger.records import LEVELS, SCHEMA, read_ledgers

from properties.conftest import ADMITTED

EXPECTED_CHECKS = {
    "benchmark.repair_vs_whole",
    "benchmark.repair_growth",
    "benchmark.chunked",
    "benchmark.chunked_fit",
    "benchmark.fallback_confinement",
    "benchmark.suite_throughput",
    "benchmark.scale",
    "benchmark.campaign",
}


def _problems(rec: dict) -> list[str]:
    """What is wrong with one benchmark record: schema, kind and level, machine facts, timings, ratio."""
    bad = []
    d = rec.get("details", {})
    if rec.get("schema") != SCHEMA or rec.get("kind") != "benchmark" or rec.get("level") != "benchmark":
        bad.append("schema/kind/level")
    if rec.get("level") not in LEVELS:
        bad.append("unknown level")
    if not isinstance(d.get("cores"), int) or d["cores"] < 1:
        bad.append("cores")
    if rec["check"] != "benchmark.gate_wall" and not rec.get("tokenizer_sha256"):
        bad.append("tokenizer digest")
    if "ratio" in d and not (isinstance(d["ratio"], float) and math.isfinite(d["ratio"]) and d["ratio"] > 0):
        bad.append(f"ratio {d.get('ratio')!r}")
    for name, t in d.get("timings", {}).items():
        if not (0 < t["min_s"] <= t["median_s"] <= t["max_s"]) or len(t["samples_s"]) != d.get("repetitions"):
            bad.append(f"timing {name}")
    if rec.get("differences"):
        bad.append(f"{rec['differences']} outputs differ from the reference")
    return bad


# the quick run in three parts, each `--only` its figures (so no part runs long on one core); every figure of
# the command but the peer (which the quick run skips) is in exactly one part, and the parts' checks together are
# EXPECTED_CHECKS
QUICK_PARTS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "repair-chunked-fallback-suite": (("repair", "chunked", "fallback", "suite"), frozenset({
        "benchmark.repair_vs_whole", "benchmark.repair_growth", "benchmark.chunked", "benchmark.chunked_fit",
        "benchmark.fallback_confinement", "benchmark.suite_throughput"})),
    "scale": (("scale",), frozenset({"benchmark.scale"})),
    "campaign": (("campaign",), frozenset({"benchmark.campaign"})),
}


def test_quick_parts_cover_every_figure() -> None:
    """The parts of the quick run together run every figure of `python -m delta_suite.benchmarks` except the peer, each
    once,
    and expect exactly EXPECTED_CHECKS between them."""
    figures = [f for figs, _ in QUICK_PARTS.values() for f in figs]
    assert sorted(figures) == sorted(f for f in FIGURES if f != "peer")
    assert frozenset().union(*(checks for _, checks in QUICK_PARTS.values())) == EXPECTED_CHECKS


# The two parts that take about 20 s each are in the slow tier (`./run bench` is an opt-in profile); the default
# run keeps the quick parts, and test_quick_parts_cover_every_figure keeps the parts whole.
SLOW_QUICK_PARTS = frozenset({"repair-chunked-fallback-suite", "campaign"})


@pytest.mark.parametrize("part", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_QUICK_PARTS else p
                                  for p in sorted(QUICK_PARTS)])
def test_quick_run_writes_wellformed_records(part: str, tmp_path: Path, ledger) -> None:
    """`python -m delta_suite.benchmarks --quick --only FIGURE...` on one tokenizer, for this part's figures, writes
    records of
    every figure it runs; each carries the machine's cores, the tokenizer digest, median <= max and min <= median
    per candidate, a positive finite ratio, and no output that differs from the reference encode."""
    figures, expected = QUICK_PARTS[part]
    name = "qwen3_8b" if "qwen3_8b" in ADMITTED else ADMITTED[0]
    tok = load_tokenizer(name)
    only = [arg for figure in figures for arg in ("--only", figure)]
    assert main(["--quick", "--tokenizer", name, "--out", str(tmp_path), *only]) == 0
    read = read_ledgers(sorted(tmp_path.glob("*.jsonl")))
    assert read.errors == []
    records = read.records
    assert expected <= {r["check"] for r in records}
    problems = {i: p for i, r in enumerate(records) if (p := _problems(r))}
    assert problems == {}
    assert all(r["details"].get("ratio", 1.0) > 0 for r in records)
    ledger.record("benchmark", "benchmark.quick_run_wellformed", tok, comparisons=len(records),
                  differences=len(problems), unit="records",
                  details={"checks": sorted({r["check"] for r in records}), "part": part, "figures": list(figures)},
                  oracle="self")


def test_campaign_goals_are_computed_not_assumed() -> None:
    """The campaign figure's goals come from the points: library share >= 60% and 3x the baseline's cases/s on
    one worker, 1.8x the 1-worker cases/s on two; a missing point leaves a goal unmeasured (None), never met."""
    baseline = {"cases_per_s": 400.0, "source": "measured", "error": None}
    one = {"cases_per_s": 1200.0, "library_share": 0.61, "speedup_over_baseline": 3.0}
    two = {"cases_per_s": 1.79 * one["cases_per_s"]}
    g = campaign.goals({1: one, 2: two}, baseline)
    assert g["library_share"]["met"] is True and g["speedup"]["met"] is True
    assert g["speedup"]["baseline_cases_per_s"] == 400.0
    assert g["scaling_2_workers"]["met"] is False and abs(g["scaling_2_workers"]["value"] - 1.79) < 1e-9
    assert campaign.goals({1: {**one, "library_share": 0.59}})["library_share"]["met"] is False
    assert campaign.goals({1: one})["scaling_2_workers"]["met"] is None
    assert campaign.goals({})["speedup"]["met"] is None


@pytest.mark.skipif("qwen3_8b" not in ADMITTED, reason="qwen3_8b not provisioned")
def test_the_speedup_baseline_is_measured_in_the_same_run(ledger) -> None:
    """The 3x goal's baseline is a campaign of the baseline commit run now, beside the current one (a 1 s budget:
    the structure, no timing): the record's baseline rate is that campaign's cases / elapsed, the speedup is the
    current rate over it, and no rate is a constant of the module. A baseline commit that does not exist leaves
    the baseline and the goal "not measured", with the reason, and runs no campaign."""
    tok = load_tokenizer("qwen3_8b")
    assert not [n for n in vars(campaign) if "CASES_PER_S" in n]
    (rec,) = [r for r in campaign.campaign_figures(tok, quick=True, budget="1s") if r["check"] == "benchmark.campaign"]
    d = rec["details"]
    base, speedup = d["baseline"], d["goals"]["speedup"]
    assert base["commit"] == campaign.BASELINE_COMMIT and base["error"] is None, base
    assert base["cases"] > 0 and base["cases_per_s"] == base["cases"] / base["elapsed_s"]
    assert speedup["baseline_cases_per_s"] == base["cases_per_s"]
    assert speedup["value"] == d["cases_per_s"] / base["cases_per_s"] == d["speedup_over_baseline"]
    missing = campaign.baseline_campaign(tok, "1s", commit="0" * 40)
    assert missing["cases_per_s"] is None and missing["returncode"] is None and "git archive" in missing["error"]
    g = campaign.goals({1: {"cases_per_s": 1200.0, "library_share": 0.61, "speedup_over_baseline": None}}, missing)
    assert g["speedup"]["met"] is None and g["speedup"]["baseline_cases_per_s"] is None
    ledger.record("benchmark", "benchmark.campaign_baseline_in_run", tok, comparisons=2,
                  differences=int(base["cases_per_s"] is None) + int(g["speedup"]["met"] is not None),
                  unit="baselines", details={"baseline": base}, oracle="none")


# a pytest JUnit XML as `pytest --junitxml` writes it (xunit2), by hand: times in seconds, one test of each outcome
_JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="{failures}" skipped="1" tests="4" time="30.0">
<testcase classname="properties.test_a" name="test_fast" time="0.5" />
<testcase classname="properties.test_a" name="test_slow[x]" time="{slow}" />
<testcase classname="properties.test_b" name="test_other" time="2.25">{failure}</testcase>
<testcase classname="properties.test_b" name="test_skipped" time="0.0"><skipped message="skip">why</skipped></testcase>
</testsuite></testsuites>
"""


def _junit(tmp_path: Path, slow: float = 8.0, failing: bool = False) -> Path:
    path = tmp_path / "gate.xml"
    failure = '<failure message="assert 0">trace</failure>' if failing else ""
    path.write_text(_JUNIT.format(failures=int(failing), slow=slow, failure=failure), encoding="utf-8")
    return path


def test_gate_durations_parses_a_passing_run(tmp_path: Path) -> None:
    """From a hand-made JUnit XML of a passing run: every testcase counted with its time, the total, the longest
    test and the longest ten in order, and bound_64_s = max(longest, total / 64) + collection; with the longest
    under 10 s and the bound under 30 s the goal is met, and the record is a benchmark record of its check."""
    details = durations_of_junit(_junit(tmp_path), collection_s=9.0, wall_s=40.0, returncode=0, workers=2)
    assert details["tests"] == 4 and details["outcomes"] == {"passed": 3, "failed": 0, "error": 0, "skipped": 1}
    assert details["total_test_s"] == 10.75
    assert (details["longest_test"], details["longest_s"]) == ("properties.test_a::test_slow[x]", 8.0)
    assert [t["test"] for t in details["longest"]] == [
        "properties.test_a::test_slow[x]", "properties.test_b::test_other", "properties.test_a::test_fast",
        "properties.test_b::test_skipped"]
    assert details["bound_64_s"] == max(8.0, 10.75 / 64) + 9.0 == 17.0
    assert details["worst_case_64_s"] == round(8.0 + 10.75 / 64 + 9.0, 3) == 17.168  # a greedy order's worst case
    assert details["goal_bound_s"] == GOAL_BOUND_S == 30
    assert details["outcome"] == "passed" and details["goal_met"] is True and details["over_goal_longest"] == []
    rec = durations_record(details)
    assert (rec["kind"], rec["level"], rec["check"]) == ("benchmark", "benchmark", "benchmark.gate_durations")
    assert rec["differences"] == 0 and rec["comparisons"] == 1 and rec["details"]["cores"] >= 1


def test_gate_durations_records_a_failing_or_unbalanced_run_as_not_met(tmp_path: Path) -> None:
    """A run with a failing test (or a non-zero return code) is recorded as failed with the failing test named and
    differences=1, never as a goal met, even when its bound is small; a passing run with a test over 10 s, or a
    bound over 30 s, does not meet the goal either."""
    failing = durations_of_junit(_junit(tmp_path, failing=True), collection_s=1.0, returncode=1)
    assert failing["outcome"] == "failed" and failing["goal_met"] is False
    assert failing["failing_tests"] == ["properties.test_b::test_other"] and failing["outcomes"]["failed"] == 1
    assert failing["bound_64_s"] < GOAL_BOUND_S
    assert durations_record(failing)["differences"] == 1
    crashed = durations_of_junit(_junit(tmp_path), collection_s=1.0, returncode=2)
    assert crashed["outcome"] == "failed" and crashed["goal_met"] is False
    long = durations_of_junit(_junit(tmp_path, slow=12.0), collection_s=1.0, returncode=0)
    assert long["outcome"] == "passed" and long["bound_64_s"] == 13.0 and long["goal_met"] is False
    assert long["over_goal_longest"] == [{"test": "properties.test_a::test_slow[x]", "seconds": 12.0}]
    slow_collection = durations_of_junit(_junit(tmp_path), collection_s=25.0, returncode=0)
    assert slow_collection["bound_64_s"] == 33.0 and slow_collection["goal_met"] is False
    unmeasured = durations_of_junit(_junit(tmp_path))
    assert unmeasured["collection_s"] is None and unmeasured["bound_64_s"] == 8.0
    assert "not measured" in unmeasured["bound_of"]



def _junit_of_cases(path: Path, cases: list[tuple[str, str, float, str]]) -> Path:
    """A JUnit XML file of (classname, name, seconds, outcome) testcases."""
    body = []
    for cls, name, seconds, outcome in cases:
        inner = {"passed": "", "skipped": "<skipped/>", "failed": "<failure/>"}[outcome]
        body.append(f'<testcase classname="{cls}" name="{name}" time="{seconds}">{inner}</testcase>')
    path.write_text(f"<testsuites><testsuite>{''.join(body)}</testsuite></testsuites>", encoding="utf-8")
    return path


def test_gate_compare_names_every_dropped_or_skipped_test(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`python -m delta_suite.benchmarks.gate_compare BEFORE AFTER`: the figures of both runs (the per-code-point files
    apart),
    exit 0 when every test of BEFORE is in AFTER and none that passed is skipped; exit 1 naming a test that was
    dropped and one that was moved to a skip; exit 2 for a file that is not JUnit XML."""
    before = _junit_of_cases(tmp_path / "b.xml", [("properties.test_cut_map", "t1", 30.0, "passed"),
                                         ("properties.test_x", "t2", 5.0, "passed"),
                                         ("properties.test_x", "t3", 1.0, "skipped")])
    same = _junit_of_cases(tmp_path / "s.xml", [("properties.test_cut_map", "t1", 7.0, "passed"),
                                       ("properties.test_x", "t2", 4.0, "passed"),
                                       ("properties.test_x", "t3", 1.0, "skipped"),
                                       ("properties.test_x", "new", 1.0, "passed")])
    assert gate_compare.main([str(before), str(same)]) == 0
    out = capsys.readouterr().out
    assert "| per-code-point files (test_cut_exhaustive, test_cut_map) | 30 s | 7 s |" in out
    assert "| tests over 20 s | 1 | 0 |" in out and "missing from after: 0" in out
    assert "longest + total / 64, collection apart | 30.6 s | 7.2 s |" in out  # 30 + 36/64 and 7 + 13/64
    worse = _junit_of_cases(tmp_path / "w.xml", [("properties.test_cut_map", "t1", 7.0, "skipped")])
    assert gate_compare.main([str(before), str(worse)]) == 1
    out = capsys.readouterr().out
    assert "- properties.test_x::t2" in out and "- properties.test_cut_map::t1" in out
    (tmp_path / "bad.xml").write_text("not xml")
    assert gate_compare.main([str(before), str(tmp_path / "bad.xml")]) == 2

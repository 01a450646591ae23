"""The report's Performance section shows only benchmark records that were read, marks each goal met or not met from
those records (worst point at a size for repair, best chunk count for chunked, worst path for the suite), takes the
latest run of each figure and says how many older runs it ignored, and says so when there is no benchmark run."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from delta_suite.ledger.records import append_records, make_record
from delta_suite.reports.cli import main as reports_main
from delta_suite.reports.performance import (
    CHUNKED_GOAL,
    NO_BENCHMARKS,
    REPAIR_GOALS,
    SUITE_OVERHEAD_GOAL,
    build_performance,
)
from delta_suite.reports.table3 import load_records

from properties.expectations import Expectations

REPO = Path(__file__).resolve().parent.parent
SHA = "ab" * 32


def _timing(median: float) -> dict:
    return {"median_s": median, "min_s": median * 0.9, "max_s": median * 1.2, "samples_s": [median],
            "cpu_over_wall": 1.0}


def _bench(check: str, details: dict, tok: str | None = "qwen3_8b", differences: int = 0) -> dict:
    details = {"cores": 2, "repetitions": 3, **details}
    return make_record("benchmark", "benchmark", check, tokenizer=tok, tokenizer_sha256=SHA if tok else None,
                       comparisons=3, differences=differences, unit="encodes", details=details, oracle="reference")


def repair_point(kind: str, context: int, append: int, ratio: float | None, timings: bool = True) -> dict:
    d = {"text_kind": kind, "context_chars": context, "append_chars": append, "paths": {"repaired:window=0": 3}}
    if ratio is not None:
        d["ratio"] = ratio
    if timings:
        d["timings"] = {"repair": _timing(0.004), "whole": _timing(0.004 * (ratio or 1))}
    return _bench("benchmark.repair_vs_whole", d)


def chunked_point(size: int, workers: int, k: int, ratio: float) -> dict:
    return _bench("benchmark.chunked", {
        "chars": size, "workers": workers, "chunks": k, "ratio": ratio, "planning_share": 0.01, "cuts_found": k - 1,
        "timings": {"serial": _timing(2.0), "chunked": _timing(2.0 / ratio), "plan": _timing(0.01)}})


def synthetic_runs(root: Path, chunked_best: float) -> tuple[Path, Path]:
    """An older run (chunked only, a high ratio that must be ignored) and a newer full run."""
    old = root / "benchmarks-old.jsonl"
    older = [chunked_point(1_000_000, 2, 4, 9.0)]
    for r in older:
        r["provenance"]["time"] = "2020-01-01T00:00:00Z"
    append_records(old, older)
    new = root / "benchmarks-new.jsonl"
    records = [
        repair_point("prose", 400_000, 1, 80.0), repair_point("code", 400_000, 1_300, 55.0),
        repair_point("prose", 1_000_000, 400, 350.0), repair_point("code", 1_000_000, 400, 250.0),
        repair_point("chat", 16_000, 1, 3.0, timings=False),  # timings missing: shown as not recorded
        repair_point("chat", 100_000, 1, None),  # ratio missing: not plotted, not counted for a goal
        chunked_point(1_000_000, 1, 2, 0.95), chunked_point(1_000_000, 2, 2, 1.3),
        chunked_point(1_000_000, 2, 8, chunked_best), chunked_point(1_000_000, 2, 16, chunked_best - 0.2),
        chunked_point(1_000_000, 2, 32, 1.1) | {"details": chunked_point(1_000_000, 2, 32, 1.1)["details"]
                                               | {"ratio_same_call": 1.25}},
        _bench("benchmark.chunked_fit", {"chars": 1_000_000, "workers": 2, "fit": {"T1_s": 2.0,
                                                                                   "c_s_per_chunk": 0.004}}),
        _bench("benchmark.suite_throughput", {"path": "cut", "strings": 10, "chars": 1000, "suite_overhead": 0.1,
                                              "overhead_with_subject": 0.6, "check_chars_per_s_per_core": 5e4,
                                              "timings": {"check": _timing(1.6), "reference": _timing(1.0),
                                                          "subject": _timing(0.5)}}),
        _bench("benchmark.suite_throughput", {"path": "repair", "strings": 5, "chars": 900, "overhead": 0.5}),
        _bench("benchmark.peer", {"peer": "toktier", "status": "not installed", "reason": "no environment"}),
    ]
    append_records(new, records)
    return old, new


def _goal(perf, key: str, index: int = 0):
    fig = next(f for f in perf.figures if f.key == key)
    return fig.goals[index]


@pytest.mark.parametrize("chunked_best", [1.9, 1.7])
def test_goals_are_computed_from_the_records(tmp_path: Path, chunked_best: float, ledger) -> None:
    """Repair goal at a size = the worst (kind, append) point meets it; chunked goal = the best chunk count at 1M with
    2 workers meets it; suite goal = the worst path's overhead is within it; the older run is ignored and counted."""
    synthetic_runs(tmp_path, chunked_best)
    records, errors, _files = load_records([tmp_path])
    assert errors == []
    perf = build_performance(records, records.files)
    assert perf.available
    at400 = [r["details"]["ratio"] for r in records if r["details"].get("context_chars") == REPAIR_GOALS[0][0]]
    at1m = [r["details"]["ratio"] for r in records if r["details"].get("context_chars") == REPAIR_GOALS[1][0]]
    g400, g1m = _goal(perf, "repair", 0), _goal(perf, "repair", 1)
    want_chunked = "met" if chunked_best >= CHUNKED_GOAL[2] else "not met"
    goals = Expectations()  # each goal's status against the one the records call for
    goals.check(g400.status == "met" and min(at400) >= REPAIR_GOALS[0][1], "repair at 400 met")
    goals.check(g1m.status == "not met" and min(at1m) < REPAIR_GOALS[1][1], "repair at 1M not met")
    goals.check(_goal(perf, "chunked").status == want_chunked, "chunked")
    goals.check(_goal(perf, "suite").status == "not met", "suite")
    goals.check(next(f for f in perf.figures if f.key == "gate").tables == [], "gate not measured")
    goals.record(ledger, "harness", "reports.performance_goals", oracle="self")
    goals.assert_all()
    assert (g400.status == "met") == (min(at400) >= REPAIR_GOALS[0][1]) and g400.status == "met"
    assert (g1m.status == "met") == (min(at1m) >= REPAIR_GOALS[1][1]) and g1m.status == "not met"
    assert "worst 250.0x: code, append of 400" in g1m.detail
    chunked = _goal(perf, "chunked")
    want = "met" if chunked_best >= CHUNKED_GOAL[2] else "not met"
    assert chunked.status == want and f"best k=8: {chunked_best:.2f}x" in chunked.detail
    fig = next(f for f in perf.figures if f.key == "chunked")
    assert fig.ledger_file.endswith("benchmarks-new.jsonl")
    assert [Path(f).name for f in fig.older_runs_ignored] == ["benchmarks-old.jsonl"]
    assert "1 older run of this figure ignored" in fig.source and "9.00x" not in str(fig.tables)
    suite = _goal(perf, "suite")
    assert suite.status == "not met" and "50.0% on the repair path" in suite.detail  # old field, worst path
    assert 0.5 > SUITE_OVERHEAD_GOAL >= 0.1
    gate = next(f for f in perf.figures if f.key == "gate")
    assert gate.tables == [] and "not measured" in gate.notes[0]
    peer = next(f for f in perf.figures if f.key == "peer")
    assert peer.notes == ["toktier: not installed (no environment)"]
    assert "2 cores" in fig.source and "qwen3_8b (sha256 abababababab" in fig.source


def test_rendered_section_has_the_rows_marks_and_plots(tmp_path: Path) -> None:
    """The md and html carry each figure's rows, the goal marks, 'not recorded' for missing fields, and two inline SVG
    plots; the CSV has one line per record used (not the ignored run); rebuilding is byte-identical."""
    synthetic_runs(tmp_path / "l", 1.7)
    outs = [tmp_path / "r1", tmp_path / "r2"]
    for out in outs:
        assert reports_main(["table3", "--ledgers", str(tmp_path / "l"), "--out", str(out)]) == 0
    for name in sorted(p.name for p in outs[0].iterdir()):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    md = (outs[0] / "table3.md").read_text()
    section = md[md.index("## Performance"):md.index("## Subjects")]
    assert "at 400,000 characters (worst kind and append): **met**" in section
    assert "at 1,000,000 characters (worst kind and append): **NOT MET**" in section
    assert "(best chunk count): **NOT MET** (best k=8: 1.70x" in section
    assert "| 400,000 | 1,300 | 55.00x |" in section
    assert "| 16,000 | 1 | 3.00x | not recorded | not recorded |" in section
    assert "| 100,000 | 1 | not recorded |" in section
    assert "| 2 | 8 | 1.70x | not recorded |" in section and "| 2 | 32 | 1.10x | 1.25x |" in section
    assert "| 2 | 8 | 1.70x |" in section and "| 1,000,000 | 2 | 2,000.0 ms | 4.000 ms |" in section
    assert "| cut | 10 | 1,000 | 50,000 |" in section and "| 10.0% | 60.0% |" in section
    assert "toktier: not installed (no environment)" in section
    html = (outs[0] / "table3.html").read_text()
    perf_html = html[html.index('<h2 id="performance">'):html.index('<h2 id="subjects">')]
    assert perf_html.count("<svg") == 2 and 'class="notmet">not met</td>' in perf_html
    assert 'class="met">met</td>' in perf_html and "<td>55.00x</td>" in perf_html
    assert re.search(r"<script|<link|src=", html) is None
    rows = (outs[0] / "table3-performance.csv").read_text().splitlines()
    used = (tmp_path / "l" / "benchmarks-new.jsonl").read_text().splitlines()
    assert len(rows) == 1 + len(used) and not any(",9.0," in r for r in rows)
    data = json.loads((outs[0] / "table3.json").read_text())["performance"]
    assert [g["status"] for f in data["figures"] for g in f["goals"]] == ["met", "not met", "not met", "not met"]


def test_no_benchmark_records_says_so(tmp_path: Path) -> None:
    """Ledgers without benchmark records: every format says no benchmark ran, and no performance plot is drawn."""
    append_records(tmp_path / "l" / "a.jsonl", [make_record("gate", "encoder", "corpus.whole", tokenizer="qwen3_8b",
                                                            comparisons=4, unit="documents", oracle="reference")])
    out = tmp_path / "r"
    args = ["table3", "--ledgers", str(tmp_path / "l"), "--out", str(out), "--format", "md,html,json"]
    assert reports_main(args) == 0
    assert NO_BENCHMARKS in (out / "table3.md").read_text()
    html = (out / "table3.html").read_text()
    assert "No benchmark run in these ledgers" in html[html.index('<h2 id="performance">'):]
    assert json.loads((out / "table3.json").read_text())["performance"]["available"] is False


class _Svg(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.svgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.svgs += tag == "svg"


def test_real_benchmark_ledger_renders(tmp_path: Path, ledger) -> None:
    """A ledger written by `python -m delta_suite.benchmarks` (the committed run in benchmarks/results, else one in
    out/ledgers/benchmarks, copied) renders: every repair and chunked ratio of the ledger appears in the section,
    and the goal marks equal the worst/best computed here."""
    found = sorted((REPO / "benchmarks" / "results").glob("benchmarks-*.jsonl"))
    found = found or sorted((REPO / "out" / "ledgers" / "benchmarks").glob("benchmarks-*.jsonl"),
                            key=lambda p: p.stat().st_size)
    if not found:
        pytest.skip("no benchmark ledger in benchmarks/results or out/ledgers/benchmarks")
    src = found[0]
    shutil.copy(src, tmp_path / src.name)
    out = tmp_path / "r"
    assert reports_main(["table3", "--ledgers", str(tmp_path / src.name), "--out", str(out)]) == 0
    raw = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    md = (out / "table3.md").read_text()
    section = md[md.index("## Performance"):md.index("## Subjects")]
    compared, missing = 0, []  # figures of the ledger looked for in the report, and those it does not show
    for r in raw:
        if r["check"] in ("benchmark.repair_vs_whole", "benchmark.chunked") and "ratio" in r["details"]:
            if f"| {r['details']['ratio']:,.2f}x |" not in section:
                missing.append(f"{r['check']} ratio {r['details']['ratio']}")
            compared += 1
    for size, minimum in REPAIR_GOALS:
        recs = [r for r in raw
                if r["check"] == "benchmark.repair_vs_whole" and r["details"].get("context_chars") == size]
        at = [r["details"]["ratio"] for r in recs]
        if at:
            mark = "**met**" if min(at) >= minimum and not any(r["differences"] for r in recs) else "**NOT MET**"
            if f"at {size:,} characters (worst kind and append): {mark} (worst {min(at):,.1f}x" not in section:
                missing.append(f"repair goal at {size:,}: {mark}")
            compared += 1
    ledger.record("harness", "reports.performance_real_ledger", comparisons=compared, differences=len(missing),
                  unit="figures", details={"missing": missing[:5]}, oracle="self")
    assert missing == []
    parser = _Svg()
    parser.feed((out / "table3.html").read_text())
    plots = any(r["check"] == "benchmark.repair_vs_whole" for r in raw) + any(r["check"] == "benchmark.chunked"
                                                                             for r in raw)
    assert parser.svgs == 1 + plots  # the comparisons plot, plus one per figure with a series
    assert compared > 0


def _bench_run(check: str, details: dict, differences: int = 0) -> dict:
    return make_record("benchmark", "benchmark", check, comparisons=1, differences=differences, unit="runs",
                       details={"cores": 2, **details}, oracle="none")


def test_gate_and_campaign_goals_follow_the_records() -> None:
    """The gate figure's goals come from the durations record (a bound under 30 s is met, a test over 10 s is
    not), the campaign figure shows the goals the benchmark computed, and a failed gate run meets no goal."""
    gate = {"figure": "gate_durations", "workers": 2, "wall_s": 600.0, "outcome": "passed", "tests": 1000,
            "total_test_s": 1100.0, "longest_s": 24.5, "longest_test": "a::b",
            "longest": [{"test": "a::b", "seconds": 24.5}], "over_goal_longest": [{"test": "a::b", "seconds": 24.5}],
            "collection_s": 4.0, "bound_64_s": 28.5, "goal_bound_s": 30.0, "goal_longest_s": 10.0}
    campaign = {"figure": "campaign", "workers": 1, "cases": 100, "cases_per_s": 500.0, "chars_per_s": 1e5,
                "library_share": 0.65, "reference_share": 0.55, "ratio_to_reference_chars_per_s": 0.2,
                "speedup_over_baseline": 1.26,
                "goals": {"library_share": {"goal": 0.6, "value": 0.65, "met": True},
                          "speedup": {"goal": 3.0, "value": 1.26, "met": False, "baseline_cases_per_s": 397.0},
                          "scaling_2_workers": {"goal": 1.8, "value": None, "met": None}}}
    perf = build_performance([_bench_run("benchmark.gate_durations", gate), _bench_run("benchmark.campaign", campaign)])
    figures = {f.key: f for f in perf.figures}
    assert [g.status for g in figures["gate"].goals] == ["met", "not met"]
    assert [g.status for g in figures["campaign"].goals] == ["met", "not met", "not measured"]
    failed = build_performance([_bench_run("benchmark.gate_durations", {**gate, "outcome": "failed"}, differences=1)])
    assert {f.key: f for f in failed.figures}["gate"].goals[0].status == "not met"

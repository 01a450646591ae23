"""The report prices the paper's volumes only with measured rates: core-hours = volume / (rate per core) / 3600 and
wall hours on N cores = core-hours / (N x efficiency), computed from the benchmark.scale records read (the
efficiency measured, capped at 100%, or 100% said to be assumed); the section prints the formula in Markdown and
HTML, says "not measured" without a record, and the benchmark figure's quick run measures positive rates with no
output differing from the reference."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from delta_suite.benchmarks.scale import (
    QUICK,
    ScalePlan,
    corpus_set,
    efficiency,
    efficiency_of_runs,
    level_rate,
    sample_docs,
    scale_figures,
    written_set,
)
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.ledger.records import append_records, make_record
from delta_suite.reports.cli import main as reports_main
from delta_suite.reports.performance import build_performance
from delta_suite.reports.scale_on_paper import (
    FORMULA,
    L1_CHARACTERS,
    L1_DOCUMENTS,
    L1_ENCODES,
    L1_TOKENIZERS,
    core_hours,
    duration,
    used_efficiency,
    wall_hours,
)

from properties.conftest import ADMITTED

SHA = "cd" * 32
CHARS_RATE_1, DOCS_RATE_1 = 1e6, 500.0  # level 1: 1e6 chars/s/core -> 12.3e12 / 1e6 / 3600 = 3,416.7 core-hours
CHARS_RATE_2, DOCS_RATE_2 = 2e5, 50.0


def scale_record(level: int, chars_rate: float, docs_rate: float, differences: int = 0) -> dict:
    """A hand-made benchmark.scale record of `level` with the given per-core rates."""
    details = {"cores": 2, "repetitions": 1, "comparison_level": level, "documents_set": "corpus:small",
               "documents": 100, "chars": 300_000, "encodes": 200, "seconds": 0.3, "chunk_counts": [2, 4, 8],
               "document_chars": {"min": 600, "median": 2_000, "mean": 3_000, "max": 9_000},
               "chars_per_s_per_core": chars_rate, "docs_per_s_per_core": docs_rate, "encodes_per_s_per_core": 2e3}
    return make_record("benchmark", "benchmark", "benchmark.scale", tokenizer="qwen3_8b", tokenizer_sha256=SHA,
                       comparisons=100, differences=differences, unit="documents", details=details, oracle="reference")


def efficiency_record(level: int, value: float) -> dict:
    return make_record("benchmark", "benchmark", "benchmark.scale_efficiency", tokenizer="qwen3_8b",
                       tokenizer_sha256=SHA, comparisons=4, unit="runs",
                       details={"cores": 2, "comparison_level": level, "status": "measured", "efficiency": value,
                                "efficiency_basis": "wall", "tasks_per_worker": 2}, oracle="none")


def _figure(records: list[dict]):
    return next(f for f in build_performance(records).figures if f.key == "scale")


def _row(fig, caption_start: str, label_start: str) -> list[str]:
    table = next(t for t in fig.tables if t.caption.startswith(caption_start))
    return next(r for r in table.rows if r[0].startswith(label_start))


def test_arithmetic_on_a_hand_made_record(ledger) -> None:
    """12.3e12 chars at 1e6 chars/s/core = 3,416.7 core-hours (one tokenizer; x11 for all eleven); the documents row
    = 41.8e9 / docs rate; level 2 = 409.6e6 documents / docs rate, bounded at 512 and 400,000 chars; wall on N cores
    = core-hours / (N x efficiency): 100% assumed without an efficiency record, the measured one with it."""
    assert L1_DOCUMENTS * L1_TOKENIZERS == L1_ENCODES
    hours = core_hours(L1_CHARACTERS, CHARS_RATE_1)
    assert math.isclose(hours, 12.3e12 / 1e6 / 3600) and f"{hours:,.1f}" == "3,416.7"
    assert core_hours(L1_CHARACTERS, None) is None and core_hours(L1_CHARACTERS, 0.0) is None
    assert math.isclose(wall_hours(hours, 64, 0.8), hours / (64 * 0.8)) and wall_hours(None, 64, 1.0) is None
    assert duration(hours / 64) == "53.4 h (2.2 days)" and duration(0.5) == "30.0 min" and duration(None) == \
        "not measured"
    assert used_efficiency(None)[0] == 1.0 and "assumed" in used_efficiency(None)[1]
    assert used_efficiency(1.3)[0] == 1.0 and "capped" in used_efficiency(1.3)[1]
    assert used_efficiency(0.75, "wall") == (0.75, "75.0% (measured, 2 worker processes vs 1, wall basis)")

    fig = _figure([scale_record(1, CHARS_RATE_1, DOCS_RATE_1), scale_record(2, CHARS_RATE_2, DOCS_RATE_2)])
    expected = {  # (caption, row label) -> core-hours, computed here from the paper's numbers and the rates
        ("level 1", "12.3 trillion characters, one"): 12.3e12 / CHARS_RATE_1 / 3600,
        ("level 1", "12.3 trillion characters × 11"): 12.3e12 * 11 / CHARS_RATE_1 / 3600,
        ("level 1", "41.8 billion encodes"): 41.8e9 / DOCS_RATE_1 / 3600,
        ("level 2", "102.4 million documents"): 102.4e6 * 4 / DOCS_RATE_2 / 3600,
        ("level 2", "the same if every document had 512"): 102.4e6 * 4 * 512 / CHARS_RATE_2 / 3600,
        ("level 2", "the same if every document had 400,000"): 102.4e6 * 4 * 400_000 / CHARS_RATE_2 / 3600,
    }
    wrong = [label for (caption, label), want in expected.items()
             if _row(fig, caption, label)[4:] != [f"{want:,.1f}", *(duration(want / n) for n in (64, 512, 4_096))]]
    for (caption, label), want in expected.items():
        row = _row(fig, caption, label)
        assert row[4] == f"{want:,.1f}", (label, row)
        assert row[5:] == [duration(want / n) for n in (64, 512, 4_096)], (label, row)
    assert _row(fig, "level 1", "12.3 trillion characters, one")[4:6] == ["3,416.7", "53.4 h (2.2 days)"]
    assert any("100% (assumed" in n for n in fig.notes)

    measured = _figure([scale_record(1, CHARS_RATE_1, DOCS_RATE_1), efficiency_record(1, 0.8),
                        efficiency_record(2, 1.25), scale_record(2, CHARS_RATE_2, DOCS_RATE_2)])
    row = _row(measured, "level 1", "12.3 trillion characters, one")
    level2 = _row(measured, "level 2", "102.4 million documents")
    wrong += [label for label, ok in (
        ("level 1 at 80% measured", row[5] == duration(3416.6666 / (64 * 0.8)) == "66.7 h (2.8 days)"),
        ("level 2 capped at 100%", level2[5] == duration(102.4e6 * 4 / DOCS_RATE_2 / 3600 / 64))) if not ok]
    ledger.record("harness", "reports.scale_on_paper_arithmetic", comparisons=len(expected) + 2,
                  differences=len(wrong), unit="figures", details={"wrong": wrong}, oracle="self")
    assert wrong == []
    assert any("level 1 80.0% (measured" in n and "capped at 100%" in n for n in measured.notes)


def test_rendered_section_shows_formula_and_numbers(tmp_path: Path) -> None:
    """Markdown and HTML carry the formula, the measured rate and the core-hours and wall hours computed from it."""
    append_records(tmp_path / "l" / "benchmarks-a.jsonl",
                   [scale_record(1, CHARS_RATE_1, DOCS_RATE_1), scale_record(2, CHARS_RATE_2, DOCS_RATE_2)])
    out = tmp_path / "r"
    assert reports_main(["table3", "--ledgers", str(tmp_path / "l"), "--out", str(out), "--format", "md,html"]) == 0
    md = (out / "table3.md").read_text()
    section = md[md.index("### Scale"):md.index("## Subjects")]
    assert f"Formula: {FORMULA}" in section
    assert ("| 12.3 trillion characters, one tokenizer | 12.3 trillion characters | corpus:small | "
            "1,000,000.0 chars/s/core | 3,416.7 | 53.4 h (2.2 days) | 6.7 h | 50.0 min |") in section
    assert "| 1 | corpus:small | 100 | 300,000 | 3,000 (600-9,000) |" in section
    html = (out / "table3.html").read_text()
    perf = html[html.index('<h2 id="performance">'):html.index('<h2 id="subjects">')]
    assert "core-hours = volume / (rate per core) / 3600" in perf and "(N × efficiency)" in perf
    assert "<td>3,416.7</td><td>53.4 h (2.2 days)</td>" in perf and "<td>1,000,000.0 chars/s/core</td>" in perf


def test_not_measured_without_a_scale_record(tmp_path: Path) -> None:
    """Benchmark records but none of the scale figure: the section says it was not measured and states no cost; an
    efficiency record alone prices nothing either."""
    suite = make_record("benchmark", "benchmark", "benchmark.suite_throughput", tokenizer="qwen3_8b",
                        tokenizer_sha256=SHA, comparisons=3, unit="comparisons",
                        details={"cores": 2, "path": "cut", "check_chars_per_s_per_core": 5e4}, oracle="reference")
    append_records(tmp_path / "l" / "benchmarks-a.jsonl", [suite])
    out = tmp_path / "r"
    assert reports_main(["table3", "--ledgers", str(tmp_path / "l"), "--out", str(out), "--format", "md,html"]) == 0
    md = (out / "table3.md").read_text()
    section = md[md.index("### Scale"):md.index("### Gate")]
    assert "not measured: no benchmark.scale record" in section and "core-hours" not in section
    html = (out / "table3.html").read_text()
    assert "not measured: no benchmark.scale record" in html
    only_eff = _figure([efficiency_record(1, 0.9)])
    rows = [r for t in only_eff.tables if t.caption.startswith("level") for r in t.rows]
    assert rows and all(r[2:5] == ["not measured"] * 3 and set(r[5:]) == {"not measured"} for r in rows)
    assert any(n.startswith("Level 1: not measured") for n in only_eff.notes)


def test_efficiency_of_runs_picks_its_basis() -> None:
    """Workers that had their cores: the wall efficiency; workers on a shared machine: the CPU one, said so."""
    base = {"workers": 1, "wall_s": 1.0, "task_cpu_s": [1.0], "chars": 1_000_000}
    free = {"workers": 2, "wall_s": 1.25, "task_cpu_s": [1.2, 1.2], "chars": 2_000_000}
    shared = {"workers": 2, "wall_s": 4.0, "task_cpu_s": [1.25, 1.25], "chars": 2_000_000}
    got = efficiency_of_runs(base, free)
    assert got["efficiency_basis"] == "wall" and math.isclose(got["efficiency"], 2e6 / 1.25 / (2 * 1e6))
    got = efficiency_of_runs(base, shared)
    assert got["efficiency_basis"] == "cpu" and math.isclose(got["efficiency"], (2e6 / 2.5) / 1e6)
    assert math.isclose(got["wall_efficiency"], 2e6 / 4.0 / 2e6) and "shared" in got["efficiency_basis_why"]


# slow tier: a quick run of the opt-in benchmark profile (`./run bench`; about 20 s)
@pytest.mark.slow
@pytest.mark.skipif(not ADMITTED, reason="no tokenizer provisioned")
def test_quick_scale_figure_measures_positive_rates(tmp_path: Path, ledger) -> None:
    """`scale_figures(tok, quick=True)`: one record per level with positive per-core rates, comparisons made and no
    difference (and so do the fallback documents of a machine without the built corpus, at level 2); the
    efficiency measurement runs on a real pool (1 task per worker) and compares as much."""
    name = "qwen3_8b" if "qwen3_8b" in ADMITTED else ADMITTED[0]
    tok = load_tokenizer(name)
    records = scale_figures(tok, quick=True)
    assert sorted(r["details"]["comparison_level"] for r in records) == [1, 2]
    samples = level_rate(tok, written_set("samples", "test", sample_docs(), tmp_path, (2,)), 2, 1)
    assert samples["details"]["documents"] == len(sample_docs())  # every sample is in the 512-400,000 range
    records.append(samples)
    for r in records:
        d = r["details"]
        assert r["check"] == "benchmark.scale" and r["comparisons"] > 0 and r["differences"] == 0
        assert d["repetitions"] == QUICK.repetitions and d["documents"] > 0 and d["chars"] > 0
        for key in ("chars_per_s_per_core", "encodes_per_s_per_core", "docs_per_s_per_core", "seconds"):
            assert isinstance(d[key], float) and math.isfinite(d[key]) and d[key] > 0, key
    dset = corpus_set()
    if dset is not None:  # a pool needs the shard to outlive the figure: only the built corpus does
        eff = efficiency(tok, dset, 1, ScalePlan(1, (), 1))
        d = eff["details"]
        assert d["status"] == "measured" and eff["differences"] == 0 and eff["comparisons"] > 0
        assert d["efficiency"] > 0 and d["efficiency_basis"] in ("wall", "cpu")
        records.append(eff)
    for oracle in sorted({r["oracle"] for r in records}):  # level 1 compares the library with itself: apart
        mine = [r for r in records if r["oracle"] == oracle]
        ledger.record("benchmark", "benchmark.scale_quick", tok, comparisons=sum(r["comparisons"] for r in mine),
                      differences=sum(r["differences"] for r in mine), unit="comparisons", oracle=oracle,
                      details={"checks": sorted({r["check"] for r in mine})})

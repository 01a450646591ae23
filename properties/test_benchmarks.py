"""The benchmark command's quick run writes well-formed ledger records with positive ratios (no timing asserted)."""

from __future__ import annotations

import math

from benchmarks import campaign
from benchmarks.__main__ import main
from frozen.loader import load_tokenizer
from ledger.records import LEVELS, SCHEMA, read_ledgers
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


def test_quick_run_writes_wellformed_records(tmp_path, ledger):
    """`python -m benchmarks --quick` on one tokenizer writes records of every figure it runs; each carries the
    machine's cores, the tokenizer digest, median <= max and min <= median per candidate, a positive finite
    ratio, and no output that differs from the reference encode."""
    name = "qwen3_8b" if "qwen3_8b" in ADMITTED else ADMITTED[0]
    tok = load_tokenizer(name)
    assert main(["--quick", "--tokenizer", name, "--out", str(tmp_path)]) == 0
    read = read_ledgers(sorted(tmp_path.glob("*.jsonl")))
    assert read.errors == []
    records = read.records
    assert EXPECTED_CHECKS <= {r["check"] for r in records}
    problems = {i: p for i, r in enumerate(records) if (p := _problems(r))}
    assert problems == {}
    assert all(r["details"].get("ratio", 1.0) > 0 for r in records)
    ledger.record("benchmark", "benchmark.quick_run_wellformed", tok, comparisons=len(records),
                  differences=len(problems), unit="records",
                  details={"checks": sorted({r["check"] for r in records})})


def test_campaign_goals_are_computed_not_assumed() -> None:
    """The campaign figure's goals come from the points: library share >= 60% and 3x the baseline's cases/s on
    one worker, 1.8x the 1-worker cases/s on two; a missing point leaves a goal unmeasured (None), never met."""
    one = {"cases_per_s": 3.0 * campaign.BASELINE_CASES_PER_S, "library_share": 0.61,
           "speedup_over_baseline": 3.0}
    two = {"cases_per_s": 1.79 * one["cases_per_s"]}
    g = campaign.goals({1: one, 2: two})
    assert g["library_share"]["met"] is True and g["speedup"]["met"] is True
    assert g["scaling_2_workers"]["met"] is False and abs(g["scaling_2_workers"]["value"] - 1.79) < 1e-9
    assert campaign.goals({1: {**one, "library_share": 0.59}})["library_share"]["met"] is False
    assert campaign.goals({1: one})["scaling_2_workers"]["met"] is None
    assert campaign.goals({})["speedup"]["met"] is None

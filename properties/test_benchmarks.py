"""The benchmark command's quick run writes well-formed ledger records with positive ratios (no timing asserted)."""

from __future__ import annotations

import math

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

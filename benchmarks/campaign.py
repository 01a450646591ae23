"""The campaign figure: what a user's `fuzz --tokenizer qwen3 --budget 30s` achieves, and how it scales with workers.

One `benchmark.campaign` record per worker count (1 and 2), each from a real `fuzz` process (the CLI, a fresh
output folder, RAYON_NUM_THREADS=1 so that one worker is one core), read from the campaign's own summary: cases,
characters, checking seconds, seconds inside the reference encodes it compares with (the oracle) and inside the
reference library in all (the oracle's encodes and the implementation's own chunk and window encodes), and 0
differences expected. In the same run, `reference_chars_per_s` is the reference's own speed on the same case mix
(every text of the campaign's first batches encoded once, whole, one thread), so the campaign's characters per
second are also stated as a ratio to the reference. `benchmark.compare_workers`: `corpora compare --profile
small --tokenizer all --levels 1,2` at 1 and 2 workers, compared characters per wall second.

Goals (issue 22): at least 60% of the checking time inside the reference library, at least 3x the cases per
second measured before the array cut evaluation (`BASELINE_CASES_PER_S`, 397 on this machine, main at dad58aa),
and at least 1.8x the 1-worker throughput on 2 workers, for the campaign and for the corpus comparison. Goals
are marked met or not, never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.suite import REPO, record
from frozen.loader import FrozenTokenizer
from fuzz.generate import PROFILES, generate_batch
from spec.reference import LIBRARY, reference_encode

BASELINE_CASES_PER_S = 397.0  # issue 22: fuzz --tokenizer qwen3 --budget 30s on main before this work
BASELINE_SOURCE = "issue 22 (fuzz --tokenizer qwen3 --budget 30s, 2 cores, main before the array cut evaluation)"
GOAL_LIBRARY_SHARE = 0.60
GOAL_SPEEDUP = 3.0
GOAL_SCALING = 1.8
SAMPLE_BATCHES = 16


def reference_speed(tok: FrozenTokenizer, seed: int = 0) -> dict:
    """The reference's own characters per second on the campaign's case mix: the texts of the first
    `SAMPLE_BATCHES` batches of each path, each encoded once, whole (this process, one thread)."""
    profile = PROFILES["ci"]
    texts = [c.text for path in ("cut", "repair") for b in range(SAMPLE_BATCHES)
             for c in generate_batch(tok, path, seed, b, profile)]
    t0, lib0 = time.perf_counter(), LIBRARY.seconds
    for text in texts:
        reference_encode(tok, text)
    wall = time.perf_counter() - t0
    chars = sum(map(len, texts))
    return {"texts": len(texts), "chars": chars, "seconds": wall, "library_seconds": LIBRARY.seconds - lib0,
            "chars_per_s": chars / wall if wall > 0 else None}


def run_campaign(tok: FrozenTokenizer, budget: str, workers: int) -> dict:
    """One `fuzz` run in its own process; its summary JSON plus the wall time and exit status."""
    with tempfile.TemporaryDirectory(prefix="delta-bench-campaign-") as tmp:
        env = {**os.environ, "RAYON_NUM_THREADS": "1"}
        cmd = [sys.executable, "-m", "fuzz.cli", "--tokenizer", tok.name, "--budget", budget, "--workers",
               str(workers), "--out", tmp]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        summaries = sorted(Path(tmp).glob("summary-*.json"))
        summary = json.loads(summaries[-1].read_text(encoding="utf-8")) if summaries else {}
    return {"summary": summary, "wall_s": wall, "returncode": proc.returncode,
            "stderr_tail": proc.stderr.strip().splitlines()[-3:], "command": ["fuzz", *cmd[3:-2]]}


def campaign_point(run: dict, reference: dict, workers: int) -> dict:
    """The figures of one campaign run: rates, the reference and library shares, the ratio to the reference."""
    s = run["summary"]
    elapsed = float(s.get("elapsed") or 0.0)
    cases, chars = int(s.get("cases") or 0), int(s.get("chars") or 0)
    cases_per_s = cases / elapsed if elapsed > 0 else None
    chars_per_s = chars / elapsed if elapsed > 0 else None
    ref_speed = reference.get("chars_per_s")
    return {
        "workers": workers, "cases": cases, "chars": chars, "elapsed_s": elapsed,
        "cases_per_s": cases_per_s, "chars_per_s": chars_per_s,
        "reference_share": float(s.get("reference_seconds") or 0.0) / (elapsed * workers) if elapsed else None,
        "library_share": float(s.get("library_seconds") or 0.0) / (elapsed * workers) if elapsed else None,
        "ratio_to_reference_chars_per_s": chars_per_s / ref_speed if chars_per_s and ref_speed else None,
        "speedup_over_baseline": cases_per_s / BASELINE_CASES_PER_S if cases_per_s else None,
        "differences": int(s.get("differences") or 0), "returncode": run["returncode"],
    }


def goals(points: dict[int, dict]) -> dict:
    """Each goal with its measured value and whether it is met (None: not measured)."""
    one, two = points.get(1), points.get(2)
    scaling = (two["cases_per_s"] / one["cases_per_s"]) if one and two and one["cases_per_s"] and \
        two["cases_per_s"] else None

    def met(value: float | None, goal: float) -> bool | None:
        return None if value is None else value >= goal

    share = one["library_share"] if one else None
    speedup = one["speedup_over_baseline"] if one else None
    return {
        "library_share": {"goal": GOAL_LIBRARY_SHARE, "value": share, "met": met(share, GOAL_LIBRARY_SHARE)},
        "speedup": {"goal": GOAL_SPEEDUP, "value": speedup, "met": met(speedup, GOAL_SPEEDUP),
                    "baseline_cases_per_s": BASELINE_CASES_PER_S, "baseline": BASELINE_SOURCE},
        "scaling_2_workers": {"goal": GOAL_SCALING, "value": scaling, "met": met(scaling, GOAL_SCALING)},
    }


def run_compare(workers: int, tokenizer: str) -> dict:
    """One `corpora compare --profile small` run (levels 1 and 2, no transcripts) in its own process: wall time,
    exit status, and the characters and comparisons its records hold."""
    with tempfile.TemporaryDirectory(prefix="delta-bench-compare-") as tmp:
        env = {**os.environ, "RAYON_NUM_THREADS": "1"}
        cmd = [sys.executable, "-m", "corpora.cli", "compare", "--profile", "small", "--tokenizer", tokenizer,
               "--levels", "1,2", "--transcripts", "none", "--workers", str(workers), "--out", tmp]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        ledger = Path(tmp) / "corpus-ledger.jsonl"
        records = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines() if line.strip()] \
            if ledger.exists() else []
    chars = sum(int(r["details"].get("characters") or 0) for r in records if r.get("kind") == "corpus")
    return {"workers": workers, "wall_s": wall, "returncode": proc.returncode, "units": len(records),
            "chars": chars, "chars_per_s": chars / wall if wall > 0 else None,
            "comparisons": sum(int(r.get("comparisons") or 0) for r in records),
            "differences": sum(int(r.get("differences") or 0) for r in records),
            "command": ["corpora", *cmd[3:-2]]}


def compare_figures(tokenizer: str = "all") -> list[dict]:
    """`benchmark.compare_workers`: the corpus comparison at 1 and 2 workers (after a warm-up run that builds
    the corpus cache), throughput in compared characters per wall second, and the 2-worker goal."""
    run_compare(1, "qwen3_8b")  # warm-up: the small corpus is built once, outside the timed runs
    runs = {w: run_compare(w, tokenizer) for w in (1, 2)}
    one, two = runs[1]["chars_per_s"], runs[2]["chars_per_s"]
    scaling = two / one if one and two else None
    goal = {"goal": GOAL_SCALING, "value": scaling, "met": None if scaling is None else scaling >= GOAL_SCALING}
    return [record("benchmark.compare_workers", None, {"figure": "compare_workers", **run, "tokenizers": tokenizer,
                                                       "scaling": goal},
                   comparisons=run["comparisons"], differences=run["differences"] + int(run["returncode"] != 0),
                   unit="comparisons") for run in runs.values()]


def campaign_figures(tok: FrozenTokenizer, quick: bool = False) -> list[dict]:
    """`benchmark.campaign` records for 1 and 2 workers (quick: a 3 s budget, 1 worker only)."""
    reference = reference_speed(tok)
    budget = "3s" if quick else "30s"
    worker_counts = (1,) if quick else (1, 2)
    points = {w: campaign_point(run_campaign(tok, budget, w), reference, w) for w in worker_counts}
    verdicts = goals(points)
    compare = [] if quick else compare_figures()
    out = []
    for point in points.values():
        details = {"figure": "campaign", **point, "budget": budget, "reference": reference, "goals": verdicts}
        out.append(record("benchmark.campaign", tok, details, comparisons=point["cases"],
                          differences=point["differences"] + int(point["returncode"] not in (0,)), unit="cases"))
    return out + compare

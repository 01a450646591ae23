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
second of the campaign before the array cut evaluation, and at least 1.8x the 1-worker throughput on 2 workers,
for the campaign and for the corpus comparison. Goals are marked met or not, never asserted.

The 3x goal's baseline is measured in the same run, never copied from an earlier one: the same `fuzz` command
(tokenizer, budget, 1 worker, RAYON_NUM_THREADS=1) run from the tree of `BASELINE_COMMIT` (main before the array
cut evaluation: candidate cuts judged offset by offset by the spec), extracted with `git archive` into a temporary
folder, just before the current tree's 1-worker run. Where that tree cannot be had (no git, a shallow clone) or its
campaign fails, the baseline and the goal are "not measured", with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from delta_suite.benchmarks.suite import REPO, record
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.fuzz.generate import PROFILES, generate_batch
from delta_suite.spec.reference import LIBRARY, reference_encode

BASELINE_COMMIT = "dad58aa"  # main before the array cut evaluation (issue 22's "today"), whose campaign is rerun
BASELINE_SOURCE = (f"the same fuzz command run from {BASELINE_COMMIT} (main before the array cut evaluation), "
                   "1 worker, in this run")
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


def run_campaign(tok: FrozenTokenizer, budget: str, workers: int, tree: Path = REPO) -> dict:
    """One `fuzz` run in its own process, of the code of `tree` (default this checkout); its summary JSON plus the
    wall time and exit status."""
    with tempfile.TemporaryDirectory(prefix="delta-bench-campaign-") as tmp:
        env = {**os.environ, "RAYON_NUM_THREADS": "1", "PYTHONPATH": str(tree)}
        cmd = [sys.executable, "-m", "delta_suite.fuzz.cli", "--tokenizer", tok.name, "--budget", budget, "--workers",
               str(workers), "--out", tmp]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        summaries = sorted(Path(tmp).glob("summary-*.json"))
        summary = json.loads(summaries[-1].read_text(encoding="utf-8")) if summaries else {}
    return {"summary": summary, "wall_s": wall, "returncode": proc.returncode,
            "stderr_tail": proc.stderr.strip().splitlines()[-3:], "command": ["fuzz", *cmd[3:-2]]}


def extract_tree(commit: str, dest: Path) -> str | None:
    """The files of `commit` of this repository written under `dest` (`git archive`); None, or why not. The archive
    is made from the repository's top level: from a copy of the checkout kept inside it (the mutation profile's,
    under the ignored out/), git refuses to archive ("current working directory is untracked")."""
    archive = dest / "tree.tar"
    try:
        top = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             timeout=60).stdout.strip() or str(REPO)
        proc = subprocess.run(["git", "-C", top, "archive", "--format=tar", f"--output={archive}", commit],
                              capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"git archive {commit}: {exc}"
    if proc.returncode != 0:
        return f"git archive {commit}: {proc.stderr.strip() or f'exit {proc.returncode}'}"
    with tarfile.open(archive) as tar:
        tar.extractall(dest / "tree", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    archive.unlink()
    return None


def baseline_campaign(tok: FrozenTokenizer, budget: str, commit: str = BASELINE_COMMIT) -> dict:
    """The 3x goal's baseline, measured now: the same campaign (1 worker) of the tree of `commit`.

    `cases_per_s` is None, with `error` saying why, when the tree cannot be extracted or its campaign fails."""
    with tempfile.TemporaryDirectory(prefix="delta-bench-baseline-") as tmp:
        error = extract_tree(commit, Path(tmp))
        run = None if error else run_campaign(tok, budget, 1, Path(tmp) / "tree")
    s = run["summary"] if run else {}
    elapsed, cases = float(s.get("elapsed") or 0.0), int(s.get("cases") or 0)
    if run and (run["returncode"] != 0 or not cases or elapsed <= 0):
        error = f"its campaign exited {run['returncode']} with {cases} cases: {' '.join(run['stderr_tail'])}"
    return {"commit": commit, "source": BASELINE_SOURCE.replace(BASELINE_COMMIT, commit), "budget": budget,
            "cases": cases, "elapsed_s": elapsed, "cases_per_s": None if error else cases / elapsed,
            "returncode": run["returncode"] if run else None, "error": error}


def campaign_point(run: dict, reference: dict, workers: int, baseline_cases_per_s: float | None = None) -> dict:
    """The figures of one campaign run: rates, the reference and library shares, the ratio to the reference, and
    the speedup over the baseline measured in the same run (None when it was not)."""
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
        "speedup_over_baseline": cases_per_s / baseline_cases_per_s if cases_per_s and baseline_cases_per_s
        else None,
        "differences": int(s.get("differences") or 0), "returncode": run["returncode"],
    }


def goals(points: dict[int, dict], baseline: dict | None = None) -> dict:
    """Each goal with its measured value and whether it is met (None: not measured); the speedup's baseline is
    the one measured in this run (`baseline_campaign`), or none."""
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
                    "baseline_cases_per_s": (baseline or {}).get("cases_per_s"),
                    "baseline": (baseline or {}).get("source", "not measured"),
                    "baseline_error": (baseline or {}).get("error", "no baseline campaign ran")},
        "scaling_2_workers": {"goal": GOAL_SCALING, "value": scaling, "met": met(scaling, GOAL_SCALING)},
    }


def run_compare(workers: int, tokenizer: str) -> dict:
    """One `corpora compare --profile small` run (levels 1 and 2, no transcripts) in its own process: wall time,
    exit status, and the characters and comparisons its records hold."""
    with tempfile.TemporaryDirectory(prefix="delta-bench-compare-") as tmp:
        env = {**os.environ, "RAYON_NUM_THREADS": "1"}
        cmd = [sys.executable, "-m", "delta_suite.corpora.cli", "compare", "--profile", "small", "--tokenizer",
               tokenizer,
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


def campaign_figures(tok: FrozenTokenizer, quick: bool = False, budget: str | None = None) -> list[dict]:
    """`benchmark.campaign` records for 1 and 2 workers (quick: a 3 s budget, 1 worker only), each with the
    baseline campaign measured just before them (`baseline_campaign`)."""
    reference = reference_speed(tok)
    budget = budget or ("3s" if quick else "30s")
    worker_counts = (1,) if quick else (1, 2)
    baseline = baseline_campaign(tok, budget)
    points = {w: campaign_point(run_campaign(tok, budget, w), reference, w, baseline["cases_per_s"])
              for w in worker_counts}
    verdicts = goals(points, baseline)
    compare = [] if quick else compare_figures()
    out = []
    for point in points.values():
        details = {"figure": "campaign", **point, "budget": budget, "reference": reference, "baseline": baseline,
                   "goals": verdicts}
        out.append(record("benchmark.campaign", tok, details, comparisons=point["cases"],
                          differences=point["differences"] + int(point["returncode"] not in (0,)), unit="cases"))
    return out + compare

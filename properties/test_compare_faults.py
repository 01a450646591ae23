"""`corpora compare` under bad counts, zero work and SIGTERM: exit 2 with one `error:` line for counts below one
and for a run that compared nothing; SIGTERM (a scheduler's stop) ends a pooled run with exit 130, stops its
worker processes, keeps every finished unit, and the same command then resumes without redoing them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from delta_suite.corpora.cli import main

from properties.conftest import PROVISIONED

TOKENIZER = "qwen3_8b" if "qwen3_8b" in PROVISIONED else (PROVISIONED[0] if PROVISIONED else None)
pytestmark = pytest.mark.skipif(TOKENIZER is None, reason="no tokenizer provisioned")
CORPORA = Path(sys.executable).parent / "corpora"


def _corpus(folder: Path, files: int, docs: int, size: int) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    words = "the quick brown fox jumps over 12 lazy dogs; naïve café, 東京 and Ünïcödé.\n"
    for f in range(files):
        with open(folder / f"part-{f}.jsonl", "w", encoding="utf-8") as fh:
            for d in range(docs):
                fh.write(json.dumps({"id": f"{f}-{d}", "text": f"{d} " + words * (size // len(words))}) + "\n")
    return str(folder / "*.jsonl")


@pytest.mark.parametrize("flags", [["--workers", "0"], ["--chunks", "0"], ["--chunks", "2,-1"],
                                   ["--local-cluster", "0"], ["--levels", ""]])
def test_counts_below_one_are_usage_errors(tmp_path: Path, flags: list[str], capsys) -> None:
    corpus = _corpus(tmp_path / "c", 1, 1, 100)
    assert main(["compare", "--corpus", corpus, "--tokenizer", TOKENIZER, "--out", str(tmp_path / "o"), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "Traceback" not in err, err


def test_a_run_that_compared_nothing_exits_2(tmp_path: Path, capsys) -> None:
    """An empty corpus file: the units run, compare nothing, and the command says so with exit 2."""
    (tmp_path / "empty.jsonl").write_text("")
    assert main(["compare", "--corpus", str(tmp_path / "empty.jsonl"), "--tokenizer", TOKENIZER,
                 "--out", str(tmp_path / "o")]) == 2
    assert "compared nothing" in capsys.readouterr().err


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_stops_the_pool_and_the_rerun_resumes(tmp_path: Path, ledger) -> None:
    """SIGTERM to a 2-worker run: exit 130 within seconds, no worker left running (its process group empties),
    the finished units kept; the same command then runs only the rest and the ledger holds each unit once."""
    corpus = _corpus(tmp_path / "c", 6, 40, 3000)
    out = tmp_path / "o"
    argv = [str(CORPORA), "compare", "--corpus", corpus, "--tokenizer", TOKENIZER, "--workers", "2",
            "--levels", "1,2", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(out.glob("units/*.json")):
        time.sleep(0.1)
    assert list(out.glob("units/*.json")), "no unit finished within 120 s"
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "resumes" in err and "Traceback" not in err, err
    for _ in range(100):  # the pool's workers were terminated with the run
        if not _group_alive(proc.pid):
            break
        time.sleep(0.1)
    assert not _group_alive(proc.pid), "worker processes outlived the interrupted run"
    kept = len(list((out / "units").glob("*.json")))
    again = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"reused {kept} finished ones" in again.stdout
    lines = (out / "corpus-ledger.jsonl").read_text(encoding="utf-8").splitlines()
    units = [json.loads(line)["details"]["unit"] for line in lines]
    twice = len(units) - len(set(units))  # a unit counted twice, or (below) one lost: each a difference
    ledger.record("harness", "corpus.sigterm_resume", comparisons=12, differences=twice + abs(12 - len(set(units))),
                  unit="units", details={"kept_before_rerun": kept, "units": len(units)}, oracle="self")
    assert len(units) == len(set(units)) == 12  # 6 files x 2 levels, each once

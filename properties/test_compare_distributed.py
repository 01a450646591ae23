"""The same units on one machine, on a process pool and on a Dask cluster give the same records; a killed unit is
redone whole, a finished one never, and the merged ledger counts every unit exactly once.

The corpus is a tiny user corpus written by the test (JSONL, .zst and Parquet shards with prose and a chat),
compared under one provisioned tokenizer at levels 1-3.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from corpora.cli import main
from corpora.compare import (
    Options,
    finished_record,
    merge_ledger,
    outcome,
    plan_units,
    shards_of_files,
    slice_units,
    unit_path,
)
from corpora.run_units import run_dask, run_local
from ledger.records import read_ledgers
from properties.conftest import PROVISIONED

pytestmark = pytest.mark.skipif(not PROVISIONED, reason="no tokenizer provisioned")

PROSE = [
    "The quick brown fox jumps over the lazy dog. It's 2026; we've shipped it.\r\n" * 12,
    "Привет, мир! Καλημέρα κόσμε. مَرْحَبًا بِالْعَالَمِ. שָׁלוֹם. नमस्ते दुनिया. สวัสดีชาวโลก. " * 9,
    "def encode(self, text: str) -> list[int]:\n    return [ord(c) for c in text]  # TODO\n\n" * 10,
    "中文文本测试，日本語のテキスト、カタカナとひらがな。한국어 텍스트 테스트입니다. " * 20,
]
CHAT = {"id": "chat-1", "messages": [
    {"role": "user", "content": "Hello! How are you today?"},
    {"role": "assistant", "content": "I'm fine, thanks. Café, naïve, e\u0301 — and you?"},
    {"role": "user", "content": "Good. Tell me about 👩\u200d👩\u200d👧 emoji."},
    {"role": "assistant", "content": "They are ZWJ sequences: several code points, one picture."},
]}


def _corpus(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    a = folder / "a.jsonl"
    a.write_text("".join(json.dumps({"id": f"a{i}", "text": t}, ensure_ascii=False) + "\n"
                         for i, t in enumerate(PROSE[:2])) + json.dumps(CHAT, ensure_ascii=False) + "\n",
                 encoding="utf-8")
    b = folder / "b.jsonl.zst"
    b.write_bytes(zstandard.ZstdCompressor().compress(
        "".join(json.dumps({"id": f"b{i}", "text": t}, ensure_ascii=False) + "\n" for i, t in enumerate(PROSE[2:]))
        .encode("utf-8")))
    c = folder / "c.parquet"
    pq.write_table(pa.table({"id": ["c0", "c1"], "text": [PROSE[3][:700], PROSE[0] + PROSE[1]]}), c)
    return [a, b, c]


@pytest.fixture(scope="module")
def units(tmp_path_factory):
    shards = shards_of_files(_corpus(tmp_path_factory.mktemp("corpus")))
    return plan_units(shards, [PROVISIONED[0]], (1, 2, 3))


@pytest.fixture(scope="module")
def single(units, tmp_path_factory):
    """The single-machine run (this process)."""
    out = tmp_path_factory.mktemp("single")
    return out, run_local(units, out)


def _differing(got: dict, want: dict) -> list[str]:
    """The unit keys whose outcome differs between two runs (a unit missing from either counts)."""
    return sorted(k for k in set(got) | set(want)
                  if k not in got or k not in want or outcome(got[k]) != outcome(want[k]))


def test_single_machine_run_compares_and_resumes(units, single, ledger) -> None:
    """Every unit has one record with zero differences; a second run redoes nothing; a deleted record (a unit
    killed before it was stored) is redone whole; the merged ledger holds each unit exactly once."""
    out, summary = single
    assert summary.ran == len(units) and set(summary.records) == {u.key for u in units}
    assert all(r["differences"] == 0 for r in summary.records.values())
    assert sum(r["comparisons"] for r in summary.records.values()) > 0
    again = run_local(units, out)
    assert (again.ran, again.reused) == (0, len(units))
    victim = units[0]
    unit_path(out, victim).unlink()
    redo = run_local(units, out)
    assert (redo.ran, redo.reused) == (1, len(units) - 1)
    merged = read_ledgers([merge_ledger(out)])
    once = Counter(r["details"]["unit"] for r in merged.records)
    wrong = [u.key for u in units if once.get(u.key) != 1
             or outcome(redo.records[u.key]) != outcome(summary.records[u.key])]
    ledger.record("harness", "corpus.resume_single_machine", comparisons=len(units), differences=len(wrong),
                  unit="units", details={"wrong": wrong[:5]}, oracle="self")
    assert wrong == []
    assert not merged.errors and sorted(once) == sorted(u.key for u in units)


def test_torn_record_is_redone(units, single, tmp_path: Path) -> None:
    """A unit record that is not a complete JSON record does not count as finished."""
    out, _ = single
    path = unit_path(out, units[-1])
    good = path.read_text()
    path.write_text(good[: len(good) // 2])
    assert finished_record(out, units[-1]) is None
    path.write_text(good)
    assert finished_record(out, units[-1]) is not None


def test_process_pool_equals_single_machine(units, single, tmp_path: Path, ledger) -> None:
    """`--workers 2` gives the same outcome for every unit as the single-machine run."""
    _, base = single
    pool = run_local(units, tmp_path, workers=2)
    wrong = _differing(pool.records, base.records)
    ledger.record("harness", "corpus.pool_equals_single", comparisons=len(units), differences=len(wrong), unit="units",
                  details={"wrong": wrong[:5]}, oracle="self")
    assert wrong == []


def _kill_first_running(folder: Path, killed: list[int]):
    """Wait for a unit to start on a worker, then SIGKILL that worker's process (mid-unit)."""

    def hook(client, futures) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            markers = sorted(folder.glob("*")) if folder.is_dir() else []
            if markers:
                pid = int(markers[0].name.rsplit(".", 1)[1])
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)
        raise AssertionError("no unit started on the cluster within 120 s")

    return hook


def test_dask_cluster_with_killed_worker_equals_single_machine(units, single, tmp_path: Path, ledger) -> None:
    """On a local 2-process Dask cluster with one worker SIGKILLed in the middle of a unit, every unit is
    recorded exactly once and each outcome equals the single-machine run's."""
    _, base = single
    running = tmp_path / "running"
    killed: list[int] = []
    options = Options(pause_seconds=1.5, running_dir=str(running))
    out = tmp_path / "cluster"
    summary = run_dask(units, out, local_workers=2, options=options, on_client=_kill_first_running(running, killed))
    assert len(killed) == 1
    stale = [m for m in running.glob("*") if m.name.endswith(f".{killed[0]}")]
    assert len(stale) == 1, "the killed worker must have been in the middle of a unit"
    assert summary.ran == len(units)
    wrong = _differing(summary.records, base.records)
    merged = read_ledgers([out / "corpus-ledger.jsonl"])
    ledger.record("harness", "corpus.dask_killed_worker_equals_single", comparisons=len(units),
                  differences=len(wrong), unit="units",
                  details={"killed_pid": killed[0], "redone_unit": stale[0].name.rsplit(".", 1)[0], "wrong": wrong[:5]},
                  oracle="self")
    assert wrong == []
    assert sorted(r["details"]["unit"] for r in merged.records) == sorted(u.key for u in units)


def test_job_array_slices_partition_the_units(units) -> None:
    """`--shard i/N` slices are disjoint and together hold every unit exactly once."""
    for n in (1, 2, 3, 7):
        keys = [u.key for i in range(n) for u in slice_units(units, i, n)]
        assert sorted(keys) == sorted(u.key for u in units)


def test_cli_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A missing corpus, a bad slice or an unknown tokenizer exits 2 with one `error:` line, no traceback."""
    cases = [
        ["compare", "--corpus", str(tmp_path / "missing-*.jsonl"), "--out", str(tmp_path / "o")],
        ["compare", "--corpus", str(tmp_path), "--shard", "3/2", "--out", str(tmp_path / "o")],
        ["compare", "--tokenizer", "no-such-tokenizer", "--out", str(tmp_path / "o")],
    ]
    (tmp_path / "x.jsonl").write_text('{"text": "hi"}\n')
    for argv in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error:") and "Traceback" not in err, err

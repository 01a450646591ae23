"""The same units on one machine, on a process pool and on a Dask cluster give the same records; a killed unit is
redone whole, a finished one never, and the merged ledger counts every unit exactly once.

The corpus is a tiny user corpus written by the test (JSONL, .zst and Parquet shards with prose and a chat),
compared under one provisioned tokenizer at levels 1-3.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from delta_suite.corpora.cli import main
from delta_suite.corpora.compare import (
    Options,
    Unit,
    finished_record,
    merge_ledger,
    outcome,
    plan_units,
    run_unit,
    shards_of_files,
    slice_units,
    unit_path,
)
from delta_suite.corpora.run_units import run_dask, run_local
from delta_suite.ledger.records import read_ledgers

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


HOLD_SECONDS = 60.0  # a started unit waits this long at most for the kill hook's release


def _release_file(folder: Path) -> Path:
    return folder.with_name(folder.name + ".released")


def _held(folder: Path) -> Options:
    """Options that hold every started unit open (its marker in `folder`) until the kill hook releases them."""
    return Options(pause_seconds=HOLD_SECONDS, running_dir=str(folder), release_file=str(_release_file(folder)))


def _kill_first_running(folder: Path, killed: list[int]):
    """Wait for a unit to start on a worker (held open by `_held(folder)`), SIGKILL that worker's process (mid-unit),
    then release the held units (also when no unit started)."""

    def hook(client, futures) -> None:
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                markers = sorted(folder.glob("*")) if folder.is_dir() else []
                if markers:
                    pid = int(markers[0].name.rsplit(".", 1)[1])
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.02)
            raise AssertionError("no unit started on the cluster within 120 s")
        finally:
            _release_file(folder).touch()

    return hook


def _in_thread(unit: Unit, options: Options) -> tuple[threading.Thread, list[dict]]:
    """`run_unit(unit, options)` started on a thread: (the thread, the list its record is appended to)."""
    out: list[dict] = []
    thread = threading.Thread(target=lambda: out.append(run_unit(unit, options)), daemon=True)
    thread.start()
    return thread, out


def test_a_held_unit_runs_until_it_is_released(units, single, tmp_path: Path) -> None:
    """A unit held open by the kill tests' options stays running, its marker in `running_dir`, until the release
    file exists, then finishes at once with the single-machine outcome and removes its marker; without the release
    file it waits `pause_seconds`, no longer."""
    _, base = single
    unit = min(units, key=lambda u: u.weight)
    running = tmp_path / "running"
    options = _held(running)
    thread, out = _in_thread(unit, options)
    deadline = time.monotonic() + 30
    while not (running.is_dir() and any(running.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.01)
    thread.join(0.3)
    assert thread.is_alive() and len(list(running.iterdir())) == 1, "held until released"
    Path(options.release_file).touch()
    thread.join(10)  # released: the unit itself takes milliseconds, the hold was HOLD_SECONDS
    assert not thread.is_alive() and not list(running.iterdir())
    assert outcome(out[0]) == outcome(base.records[unit.key])

    capped = Options(pause_seconds=0.3, release_file=str(tmp_path / "never-released"))
    started = time.monotonic()
    thread, out = _in_thread(unit, capped)
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started >= 0.3
    assert outcome(out[0]) == outcome(base.records[unit.key])


def test_dask_cluster_with_killed_worker_equals_single_machine(units, single, tmp_path: Path, ledger) -> None:
    """On a local 2-process Dask cluster with one worker SIGKILLed in the middle of a unit, every unit is
    recorded exactly once and each outcome equals the single-machine run's."""
    _, base = single
    running = tmp_path / "running"
    killed: list[int] = []
    out = tmp_path / "cluster"
    summary = run_dask(units, out, local_workers=2, options=_held(running),
                       on_client=_kill_first_running(running, killed))
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

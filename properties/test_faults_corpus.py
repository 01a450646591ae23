"""Fault injection on `corpora compare` (issue 19, items 4-6), each driven through the real CLI as a subprocess.

- Bad text: a JSONL line with a lone surrogate (a JSON `\\ud800` escape), with bytes that are not UTF-8, a chat
  message with a lone surrogate, a Parquet value that is not UTF-8 or null: each document is refused, named with
  file:line (or row) and id, recorded in every unit's `details.refused` / `details.refused_documents`; the other
  documents are compared (comparisons count them only) and the run exits 2 after finishing.
- Long documents: a document over 400,000 characters is not chunked at level 2 but counted and named
  (`details.skipped_documents`, `details.skipped`), printed in the summary; exit 0.
- One writer per output folder: while another process holds OUT/.lock, a run is refused with exit 2 and the
  holder's pid, and writes nothing.
- I/O errors: --out on a regular file, under a file or on a folder that cannot be written exits 3 with the path;
  a full disk (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG) exits 3 naming the unit file, leaves the
  unit records written before it whole and no temporary file, and a rerun completes with the same outcomes as
  a clean run, every unit once; an OSError in a pool worker reaches the caller as an OSError with its path.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_suite.corpora.compare import Shard, Unit, outcome
from delta_suite.corpora.run_units import run_local
from delta_suite.ledger.lock import LOCK_NAME, FolderLock

from properties.conftest import PROVISIONED

TOKENIZER = "qwen3_8b" if "qwen3_8b" in PROVISIONED else (PROVISIONED[0] if PROVISIONED else None)
pytestmark = pytest.mark.skipif(TOKENIZER is None, reason="no tokenizer provisioned")
REPO = Path(__file__).resolve().parent.parent
PROSE = "The quick brown fox jumps over 12 lazy dogs; naïve café, 東京 and Ünïcödé.\n"


def _compare(corpus: str | Path, out: Path, *extra: str, levels: str = "1,2",
             preexec=None) -> subprocess.CompletedProcess:
    """`corpora compare` on a user corpus, as a subprocess of this interpreter (one worker)."""
    argv = [sys.executable, "-m", "delta_suite.corpora.cli", "compare", "--corpus", str(corpus), "--tokenizer",
            TOKENIZER,
            "--levels", levels, "--workers", "1", "--out", str(out), *extra]
    return subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=300, preexec_fn=preexec)


def _records(out: Path) -> dict[str, dict]:
    """The unit records of `out` by level name ("encoder", "chunked", "repair"), one shard assumed."""
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "units").glob("*.json"))]
    return {r["level"]: r for r in recs}


def _ledger_units(out: Path) -> list[str]:
    lines = (out / "corpus-ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["details"]["unit"] for line in lines]


def _line(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")


def test_bad_text_is_refused_by_name_and_the_rest_compared(tmp_path: Path) -> None:
    """A JSONL corpus with five good documents and four of bad text (a lone surrogate escape, bytes that are not
    UTF-8, a lone surrogate in a chat message, one in the id as well): exit 2 after the whole run, each refusal
    printed with file:line and id, no traceback; every unit records the four refusals and compares exactly the
    five good documents; the rerun reuses the units and says the same."""
    corpus = tmp_path / "bad.jsonl"
    good = [{"id": f"g{i}", "text": f"{i} " + PROSE * (8 + 4 * i)} for i in range(5)]
    corpus.write_bytes(b"".join([
        _line(good[0]),
        b'{"id": "d7", "text": "ab\\ud800cd ' + json.dumps(PROSE * 8)[1:-1].encode() + b'"}\n',  # line 2
        _line(good[1]),
        b'{"id": "d8", "text": "ab\xff\xfecd"}\n',  # line 4: not UTF-8
        _line(good[2]),
        b'{"id": "chat-9", "messages": [{"role": "user", "content": "hi \\udc80"}]}\n',  # line 6: in a chat
        b'{"id": "x\\ud83d", "text": "\\ud83d"}\n',  # line 7: surrogate in the id and the text
        _line(good[3]),
        b"\n",
        _line(good[4]),
    ]))
    out = tmp_path / "o"
    run = _compare(corpus, out)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and run.stderr.startswith("error:"), run.stderr
    assert f"{corpus}:2 id d7" in run.stderr and "lone surrogate U+D800" in run.stderr, run.stderr
    assert "refused: 4 documents" in run.stdout, run.stdout
    for where in (f"{corpus}:2 id d7", f"{corpus}:4 id d8", f"{corpus}:6 id chat-9"):
        assert where in run.stdout, (where, run.stdout)
    recs = _records(out)
    assert set(recs) == {"encoder", "chunked"}
    for rec in recs.values():
        d = rec["details"]
        assert d["refused_documents"] == 4
        assert [(r["line"], r["id"]) for r in d["refused"]] == [(2, "d7"), (4, "d8"), (6, "chat-9"),
                                                               (7, "x\\ud83d")]
        assert all(r["file"] == str(corpus) and r["reason"] for r in d["refused"])
        assert "not UTF-8" in d["refused"][1]["reason"] and "messages[0].content" in d["refused"][2]["reason"]
        assert d["documents"] == 5 and rec["differences"] == 0
    assert recs["encoder"]["comparisons"] == 5  # the good documents only
    assert recs["chunked"]["comparisons"] == 5 * len(recs["chunked"]["details"]["chunk_counts"])
    again = _compare(corpus, out)
    assert again.returncode == 2 and "reused 2 finished ones" in again.stdout, again.stdout + again.stderr
    assert f"{corpus}:2 id d7" in again.stderr


def test_bad_parquet_values_are_refused_by_row(tmp_path: Path) -> None:
    """A Parquet string value that is not UTF-8 and a null text are refused with file, row and id; the other
    rows are compared."""
    texts = pa.array([PROSE.encode() * 10, b"ab\xffcd", None, PROSE.encode() * 12],
                     type=pa.binary()).view(pa.string())
    corpus = tmp_path / "p.parquet"
    pq.write_table(pa.table({"id": ["p1", "p2", "p3", "p4"], "text": texts}), corpus)
    out = tmp_path / "o"
    run = _compare(corpus, out, levels="1")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stdout + run.stderr
    assert f"{corpus} row 2 id p2" in run.stderr and "not UTF-8" in run.stderr, run.stderr
    assert f"{corpus} row 3 id p3" in run.stdout, run.stdout
    rec = _records(out)["encoder"]
    assert rec["comparisons"] == 2 and rec["details"]["refused_documents"] == 2
    assert [(r["row"], r["id"]) for r in rec["details"]["refused"]] == [(2, "p2"), (3, "p3")]


def test_documents_too_long_for_level_2_are_counted_not_dropped(tmp_path: Path) -> None:
    """A document of 400,001+ characters is skipped at level 2 by name and count, printed in the summary; the
    others are compared (short ones counted as short); nothing is refused, so the run exits 0."""
    long_text = "x" * 400_001
    corpus = tmp_path / "long.jsonl"
    corpus.write_bytes(b"".join([_line({"id": "a", "text": PROSE * 10}), _line({"id": "huge", "text": long_text}),
                                 _line({"id": "tiny", "text": "short"}), _line({"id": "b", "text": PROSE * 20})]))
    out = tmp_path / "o"
    run = _compare(corpus, out, levels="2")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "skipped: 1 documents" in run.stdout and "over 400,000 characters" in run.stdout, run.stdout
    assert "huge (400,001 characters)" in run.stdout, run.stdout
    d = _records(out)["chunked"]["details"]
    assert d["skipped_documents"] == 1 and d["short_documents"] == 1 and d["refused_documents"] == 0
    assert d["skipped"] == [{"id": "huge", "characters": 400_001, "reason": d["skipped"][0]["reason"]}]
    assert d["documents"] == 2 and _records(out)["chunked"]["comparisons"] == 2 * len(d["chunk_counts"])


def test_a_held_output_folder_refuses_a_second_run(tmp_path: Path) -> None:
    """While this process holds OUT/.lock, `corpora compare --out OUT` exits 2 at once naming this pid, runs no
    unit; a `--shard` slice of the same folder is refused too; once released, the run goes through."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(_line({"id": "a", "text": PROSE * 10}))
    out = tmp_path / "o"
    with FolderLock(out):
        for extra in ([], ["--shard", "0/2"]):
            run = _compare(corpus, out, *extra, levels="1")
            assert run.returncode == 2, run.stdout + run.stderr
            assert run.stderr.startswith("error:") and f"process {os.getpid()}" in run.stderr, run.stderr
            assert "Traceback" not in run.stderr
            assert not (out / "units").exists()
    run = _compare(corpus, out, levels="1")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (out / LOCK_NAME).is_file() and _ledger_units(out) == [r["details"]["unit"]
                                                                  for r in _records(out).values()]


def _unwritable(tmp_path: Path) -> Path:
    """A folder path this process cannot create: under a read-only folder, or (as root, who may write anywhere
    chmod forbids) under /sys."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        return ro / "o"
    return Path("/sys/delta-suite-unwritable")


@pytest.mark.parametrize("case", ["regular_file", "under_a_file", "unwritable"])
def test_an_unusable_out_folder_exits_3_with_its_path(tmp_path: Path, case: str) -> None:
    """--out on an existing file, under a file, or where nothing can be written: exit 3, "error: PATH: ...", no
    traceback, nothing compared."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(_line({"id": "a", "text": PROSE * 10}))
    (tmp_path / "file").write_text("not a folder\n")
    out = {"regular_file": tmp_path / "file", "under_a_file": tmp_path / "file" / "o",
           "unwritable": _unwritable(tmp_path)}[case]
    try:
        run = _compare(corpus, out, levels="1")
    finally:
        if case == "unwritable" and out.parent.parent == tmp_path:
            out.parent.chmod(0o700)
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr.startswith("error:") and str(out) in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert (tmp_path / "file").read_text() == "not a folder\n"


def _full_disk(limit: int):
    """preexec_fn: files of this process may not grow beyond `limit` bytes; SIGXFSZ ignored, so a write past it
    fails with EFBIG instead of killing the process (a full disk as far as the run can tell)."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_exits_3_keeps_whole_records_and_the_rerun_completes(tmp_path: Path) -> None:
    """Three shards; the last unit's record is the largest (a long shard name), and the file size limit lies
    between it and the others: exit 3 naming that unit's file, the two records written before it whole (each
    parses, same outcome as a clean run), no temporary file left; the rerun without the limit runs only the
    missing unit, exits 0, and its ledger holds every unit once with the clean run's outcomes."""
    folder = tmp_path / "c"
    folder.mkdir()
    names = {"a": 60, "b": 50, "c" + "x" * 170: 5}  # largest first: a, b, then the long-named small shard
    for name, size in names.items():
        (folder / f"{name}.jsonl").write_bytes(b"".join(_line({"id": f"{name[0]}{d}", "text": PROSE * size})
                                                        for d in range(3)))
    clean = tmp_path / "clean"
    base = _compare(folder, clean, levels="1")
    assert base.returncode == 0, base.stdout + base.stderr
    sizes = {p.name: p.stat().st_size for p in (clean / "units").glob("*.json")}
    long_unit = next(n for n in sizes if n.startswith("cxxx"))
    small = max(s for n, s in sizes.items() if n != long_unit)
    assert sizes[long_unit] - small > 120, sizes
    out = tmp_path / "o"
    run = _compare(folder, out, levels="1", preexec=_full_disk((small + sizes[long_unit]) // 2))
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr.startswith("error:") and "Traceback" not in run.stderr, run.stderr
    assert str(out / "units" / long_unit) in run.stderr and "File too large" in run.stderr, run.stderr
    kept = sorted(p.name for p in (out / "units").iterdir())
    assert kept == sorted(n for n in sizes if n != long_unit), kept  # whole records only, no temporary file
    base_recs = {p.name: json.loads(p.read_text()) for p in (clean / "units").glob("*.json")}
    for name in kept:
        assert outcome(json.loads((out / "units" / name).read_text())) == outcome(base_recs[name])
    again = _compare(folder, out, levels="1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "ran 1 units, reused 2 finished ones" in again.stdout, again.stdout
    units = _ledger_units(out)
    assert len(units) == len(set(units)) == 3  # no unit lost, none counted twice
    assert sorted(units) == sorted(_ledger_units(clean))
    for p in (out / "units").glob("*.json"):
        assert outcome(json.loads(p.read_text())) == outcome(base_recs[p.name])


def _unreadable(tmp_path: Path) -> Path:
    """A corpus file whose read fails with EIO: a link to /proc/self/mem (offset 0 is never mapped)."""
    broken = tmp_path / "eio.jsonl"
    broken.symlink_to("/proc/self/mem")
    try:
        broken.read_bytes()
    except OSError:
        return broken
    pytest.skip("/proc/self/mem is readable at offset 0 here")


def test_a_corpus_file_that_cannot_be_read_exits_3_with_its_path(tmp_path: Path) -> None:
    """An I/O error reading a corpus file is the machine's fault, not the input's: exit 3, "error: PATH: ...",
    no traceback."""
    broken = _unreadable(tmp_path)
    run = _compare(broken, tmp_path / "o", levels="1")
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr.startswith(f"error: {broken}: ") and "Traceback" not in run.stderr, run.stderr


def test_an_os_error_in_a_pool_worker_arrives_as_an_os_error(tmp_path: Path) -> None:
    """A corpus file the machine cannot read (an I/O error: here a link to /proc/self/mem, whose offset 0 gives
    EIO) read in a pool worker: the run stops with an OSError naming the file (so the CLI prints
    "error: PATH: REASON" and exits 3), not a reader's input error, and stores nothing."""
    broken = _unreadable(tmp_path)
    unit = Unit(Shard(str(broken), "0" * 64, 10, False), TOKENIZER, 1)
    with pytest.raises(OSError) as info:
        run_local([unit], tmp_path / "o", workers=2)
    assert info.value.filename == str(broken) and info.value.errno is not None, info.value
    assert not list((tmp_path / "o").glob("units/*.json"))

"""The corpus build is deterministic, skips non-UTF-8 files whole, and the readers stream every format.

A tiny local source list (files written by the test, registry "local") stands in for the package registries,
so these checks run without the network.
"""

from __future__ import annotations

import gzip
import json
import threading
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from delta_suite.corpora import build as build_module
from delta_suite.corpora import readers
from delta_suite.corpora.build import build_corpus
from delta_suite.corpora.readers import UnreadableCorpus, read_documents
from delta_suite.frozen.cache import ensure_writable
from delta_suite.frozen.digests import sha256_file
from delta_suite.frozen.errors import SourceUnavailable

NON_NFC = "Vie\u0323\u0302t Nam, cafe\u0301, \u1100\u1161\u11a8"  # decomposed: must survive byte-exact


def _fixture(tmp_path: Path) -> Path:
    """A two-source list: prose in three scripts (one file not UTF-8, one duplicate, one empty) and a chat."""
    root = tmp_path / "src"
    (root / "prose" / "ru").mkdir(parents=True)
    (root / "prose" / "el").mkdir(parents=True)
    (root / "prose" / "vi").mkdir(parents=True)
    (root / "prose" / "ru" / "a.txt").write_text("Привет, мир! " * 60 + "\r\n", encoding="utf-8")
    (root / "prose" / "el" / "b.txt").write_text("Καλημέρα κόσμε. " * 50, encoding="utf-8")
    (root / "prose" / "el" / "dup.txt").write_text("Καλημέρα κόσμε. " * 50, encoding="utf-8")
    (root / "prose" / "vi" / "c.txt").write_text(NON_NFC * 20, encoding="utf-8")
    (root / "prose" / "vi" / "empty.txt").write_text("  \n", encoding="utf-8")
    (root / "prose" / "vi" / "latin1.txt").write_bytes("good start, then caf\xe9".encode("latin-1"))
    (root / "chat").mkdir()
    (root / "chat" / "c.yml").write_text(
        "conversations:\n- - Hello there\n  - Hi! How are you?\n  - Fine, thanks.\n- - שלום\n  - מה שלומך?\n",
        encoding="utf-8",
    )
    sources = {
        "schema": "delta-suite.corpus-sources.v1",
        "profiles": {
            "tiny": {"group_cap": None, "shard_bytes": 1500, "groups": ["latin", "cyrillic", "greek", "chat"]}
        },
        "sources": [
            {"id": "prose", "registry": "local", "package": "prose", "path": "src/prose", "extractor": "plain",
             "files": ["*/*.txt"], "lang_from": "^([a-z]+)/", "group": "by-script", "caps": {"tiny": {}}},
            {"id": "talk", "registry": "local", "package": "talk", "path": "src/chat", "extractor": "chatterbot",
             "files": ["*.yml"], "lang": "mul", "group": "chat", "caps": {"tiny": {}}},
        ],
    }
    path = tmp_path / "sources.json"
    path.write_text(json.dumps(sources), encoding="utf-8")
    return path


def _shard_lines(out: Path) -> list[dict]:
    return [json.loads(line) for p in sorted(out.glob("*.jsonl")) for line in p.read_bytes().split(b"\n") if line]


def test_build_is_deterministic_and_byte_exact(tmp_path: Path, ledger) -> None:
    """Two builds of the same source list give byte-identical shards and manifest; documents keep their exact
    code points (CRLF and decomposed marks included); empties and duplicates are dropped; groups by script."""
    sources = _fixture(tmp_path)
    a = build_corpus("tiny", tmp_path / "a", sources_path=sources)
    b = build_corpus("tiny", tmp_path / "b", sources_path=sources)
    files_a = sorted(p.name for p in a.out.iterdir())
    files_b = sorted(p.name for p in b.out.iterdir())
    differing = sorted(set(files_a) ^ set(files_b)) + [
        n for n in files_a if n in files_b and sha256_file(a.out / n) != sha256_file(b.out / n)]
    ledger.record("harness", "corpus.build_determinism", comparisons=len(set(files_a) | set(files_b)),
                  differences=len(differing), unit="files", details={"differing": differing}, oracle="self")
    assert differing == []
    docs = _shard_lines(a.out)
    texts = {d["id"]: d.get("text") for d in docs}
    assert texts["prose:vi/c.txt"] == NON_NFC * 20 and unicodedata.normalize("NFC", NON_NFC) != NON_NFC
    assert texts["prose:ru/a.txt"].endswith("\r\n")
    assert "prose:el/dup.txt" not in texts and "prose:el/b.txt" in texts  # duplicate keeps the first in order
    assert "prose:vi/empty.txt" not in texts
    groups = {s["name"]: s["group"] for s in a.manifest["shards"]}
    assert set(groups.values()) == {"latin", "cyrillic", "greek", "chat"}
    assert a.manifest["totals"]["documents"] == len(docs) == 5  # ru, el, vi and two chats
    chats = [d for d in docs if "messages" in d]
    assert [len(c["messages"]) for c in chats] == [3, 2]
    for shard in a.manifest["shards"]:
        assert shard["sha256"] == sha256_file(a.out / shard["name"])
        assert shard["bytes"] <= 1500 or shard["documents"] == 1
        assert sum(shard["scripts"].values()) == shard["characters"]


def test_invalid_utf8_file_is_logged_and_skipped_whole(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A file that is not UTF-8 is named with its path in the manifest and on stderr; none of it is read."""
    sources = _fixture(tmp_path)
    result = build_corpus("tiny", tmp_path / "out", sources_path=sources)
    skipped = result.manifest["skipped_files"]
    assert [(s["source"], s["path"]) for s in skipped] == [("prose", "vi/latin1.txt")]
    assert "not valid UTF-8" in skipped[0]["reason"]
    assert "vi/latin1.txt" in capsys.readouterr().err
    assert not any("good start" in (d.get("text") or "") for d in _shard_lines(result.out))


def test_rebuild_is_reused_when_nothing_changed(tmp_path: Path) -> None:
    """A second build of an unchanged source list reuses the corpus; a changed list rebuilds it."""
    sources = _fixture(tmp_path)
    first = build_corpus("tiny", tmp_path / "out", sources_path=sources)
    again = build_corpus("tiny", tmp_path / "out", sources_path=sources, verify=True)
    assert not first.reused and again.reused and again.manifest == first.manifest
    data = json.loads(sources.read_text())
    data["sources"][0]["files"] = ["ru/*.txt"]
    sources.write_text(json.dumps(data))
    changed = build_corpus("tiny", tmp_path / "out", sources_path=sources)
    assert not changed.reused and changed.manifest["totals"]["documents"] == 3


TEXTS = ["plain", "line\u2028separator inside", "中文 " * 3, "x" * 5000]
DOCS = [{"id": f"d{i}", "text": t} for i, t in enumerate(TEXTS)]


def _write_all_formats(folder: Path) -> dict[str, Path]:
    lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCS).encode("utf-8")
    paths = {"jsonl": folder / "a.jsonl", "gz": folder / "a.jsonl.gz", "zst": folder / "a.jsonl.zst",
             "parquet": folder / "a.parquet"}
    paths["jsonl"].write_bytes(lines)
    paths["gz"].write_bytes(gzip.compress(lines))
    paths["zst"].write_bytes(zstandard.ZstdCompressor().compress(lines))
    pq.write_table(pa.table({"id": [d["id"] for d in DOCS], "body": [d["text"] for d in DOCS]}), paths["parquet"],
                   row_group_size=2)
    return paths


def test_readers_give_the_same_documents_in_every_format(tmp_path: Path, ledger) -> None:
    """JSONL, .gz, .zst and Parquet (column chosen) yield the same (id, text) pairs, U+2028 kept inside a line."""
    paths = _write_all_formats(tmp_path)
    want = [(d["id"], d["text"]) for d in DOCS]
    got = {kind: [(d["id"], d["text"]) for d in read_documents(path, "body" if kind == "parquet" else "text")]
           for kind, path in paths.items()}
    differing = {kind: sum(g != w for g, w in zip(docs, want, strict=False)) + abs(len(docs) - len(want))
                 for kind, docs in got.items()}
    ledger.record("harness", "corpus.readers_formats", comparisons=len(paths) * len(DOCS),
                  differences=sum(differing.values()), unit="documents", details={"differing": differing},
                  oracle="self")
    for kind, docs in got.items():
        assert docs == want, kind
    assert len(list(read_documents(str(tmp_path / "*.jsonl*")))) == 3 * len(DOCS)


def test_readers_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading is lazy: the first document comes out before the rest of the file is read (small read blocks,
    small Parquet batches), so a corpus larger than memory can be compared."""
    big = tmp_path / "big.jsonl.zst"
    line = (json.dumps({"id": "x", "text": "y" * 1000}) + "\n").encode()
    big.write_bytes(zstandard.ZstdCompressor().compress(line * 5000))
    reads: list[int] = []
    original = readers._lines

    def counting(stream):
        for raw in original(stream):
            reads.append(1)
            yield raw

    monkeypatch.setattr(readers, "_lines", counting)
    first = next(iter(read_documents(big)))
    assert first["text"] == "y" * 1000 and len(reads) < 5000
    pq.write_table(pa.table({"text": ["t"] * 5000}), tmp_path / "p.parquet", row_group_size=500)
    monkeypatch.setattr(readers, "PARQUET_BATCH_ROWS", 100)
    stream = read_documents(tmp_path / "p.parquet")
    assert next(stream)["id"] == "p.parquet:1"


def test_reader_errors_are_clear(tmp_path: Path) -> None:
    """Bad corpus input is an UnreadableCorpus naming the file and line, never a traceback of the parser."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\nnot json\n', encoding="utf-8")
    with pytest.raises(UnreadableCorpus, match=r"bad.jsonl:2"):
        list(read_documents(bad))
    with pytest.raises(UnreadableCorpus, match="no corpus files"):
        list(read_documents(tmp_path / "nothing-*.jsonl"))
    pq.write_table(pa.table({"body": ["a"]}), tmp_path / "p.parquet")
    with pytest.raises(UnreadableCorpus, match="--column"):
        list(read_documents(tmp_path / "p.parquet"))


def test_sources_are_fetched_together_in_order_and_the_first_failure_in_order_raises(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`fetch_all` fetches several sources at once yet returns them in the specs' order, and when sources fail it
    raises the failure of the first failing spec in that order (what fetching one by one would raise), even when a
    later spec fails sooner."""
    started: list[str] = []
    gate = threading.Event()
    b_saw_c_fail: list[bool] = []

    def fake_fetch(spec: dict, *, base: Path, refresh: bool) -> str:
        started.append(spec["id"])
        if spec["id"] == "b":
            b_saw_c_fail.append(gate.wait(5))  # "b" fails last in time, after "c" has failed
            raise SourceUnavailable("b is down")
        if spec["id"] == "c":
            gate.set()
            raise SourceUnavailable("c is down")
        return spec["id"]

    monkeypatch.setattr(build_module, "fetch_source", fake_fetch)
    assert build_module.fetch_all([{"id": i} for i in "xyz"], Path("."), False) == ["x", "y", "z"]
    with pytest.raises(SourceUnavailable, match="b is down"):
        build_module.fetch_all([{"id": i} for i in "abcd"], Path("."), False)
    assert b_saw_c_fail == [True]  # "c" ran while "b" waited: they were fetched together


def test_the_cache_is_probed_by_many_threads_at_once(tmp_path: Path) -> None:
    """`ensure_writable` from many threads of one process at once (the corpus build fetches its sources eight at a
    time, each probing the cache folder): every probe succeeds and leaves no file behind. Plant: a probe file named
    by the process id alone -> threads remove each other's probe and one raises CacheNotWritable."""
    folder = tmp_path / "cache"
    barrier = threading.Barrier(16)
    errors: list[BaseException] = []

    def probe() -> None:
        barrier.wait()
        try:
            for _ in range(50):
                ensure_writable(folder)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=probe) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and list(folder.iterdir()) == []

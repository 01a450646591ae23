"""The long-transcript builder (`corpora.transcripts`): deterministic, sized by its profile, reused while its
inputs stay the same, and a clear error for a corpus without chats or documents."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from delta_suite.corpora.transcripts import (
    ACCENT,
    NoConversations,
    TranscriptProfile,
    build_transcript,
    build_transcripts,
    with_accent,
)


def _corpus(folder: Path, chats: int = 6, docs: int = 4) -> Path:
    """A tiny built corpus: one chat shard and one document shard with a manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    shards = []
    rows = {
        "0000-text.jsonl": [{"id": f"d{i}", "text": f"line {i}\n" + f"documento número {i}. " * 40}
                            for i in range(docs)],
        "0001-chat.jsonl": [{"id": f"c{i}", "messages": [{"role": "user", "content": f"привет {i}?"},
                                                         {"role": "assistant", "content": f"hello {i}."}]}
                            for i in range(chats)],
    }
    for name, docs_ in rows.items():
        data = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs_).encode()
        (folder / name).write_bytes(data)
        shards.append({"name": name, "sha256": hashlib.sha256(data).hexdigest(), "characters": len(data)})
    (folder / "manifest.json").write_text(json.dumps({"shards": shards}))
    return folder


def test_build_is_deterministic_and_reused(tmp_path) -> None:
    """Two builds of the same inputs give the same bytes; a second call reuses the parts (same mtime)."""
    a = build_transcripts(_corpus(tmp_path / "a"), "small")
    b = build_transcripts(_corpus(tmp_path / "b"), "small")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    mtimes = [p.stat().st_mtime_ns for p in a]
    assert [p.stat().st_mtime_ns for p in build_transcripts(tmp_path / "a", "small")] == mtimes
    docs = [json.loads(line) for p in a for line in p.read_text(encoding="utf-8").splitlines()]
    assert len(docs) == 60  # 30 transcripts, each with its accent variant in the small profile
    assert {d["variant"] for d in docs} == {"clean", "accent"}
    first_user = [m for m in docs[1]["messages"] if m["role"] == "user"][0]["content"]
    assert docs[1]["variant"] == "accent" and ACCENT in first_user


def test_changed_corpus_rebuilds(tmp_path) -> None:
    """A different corpus (another manifest digest) gives a different set."""
    a = build_transcripts(_corpus(tmp_path / "c", chats=6), "small")
    before = [p.read_bytes() for p in a]
    build_transcripts(_corpus(tmp_path / "c", chats=7), "small")
    assert [p.read_bytes() for p in a] != before


def test_transcript_shape() -> None:
    """System message, then user/assistant pairs; length near the drawn target; the accent only in the first
    user message of the variant."""
    chats = [[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]]
    prof = TranscriptProfile("t", 1, 5000, 0.0, (3, 3), 1, 1)
    msgs = build_transcript(chats, ["x" * 100 + "\n"] * 3, prof, 0, 0)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant"] * 1 + ["user", "assistant"] * 2
    assert 4000 < sum(len(m["content"]) for m in msgs) < 7000
    accented = with_accent(msgs)
    assert accented[1]["content"].startswith(f"Caf{ACCENT}") and msgs[1]["content"] != accented[1]["content"]
    assert all(ACCENT not in m["content"] for m in accented[2:])


def test_corpus_without_chats_is_refused(tmp_path) -> None:
    with pytest.raises(NoConversations, match="0 chats"):
        build_transcripts(_corpus(tmp_path / "e", chats=0), "small")

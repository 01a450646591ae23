"""Deterministic benchmark texts of a given size: web-like prose, code, and chat rendered through the template.

Sources, in order of preference: the built-in corpus (`corpora build --profile small` output under
$DELTA_HOME/corpus/small: prose shards, the code shard, the chat shard), else `corpora.samples.SAMPLES` and
`delta.chat_samples.CHATS`. A text longer than its source repeats the source with variation: every repetition
starts with its own numbered header, so no two stretches of the result are identical. The same (kind, size)
give the same text byte for byte; `text_digest` names it in the records.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from delta_suite.corpora.build import default_out
from delta_suite.corpora.samples import SAMPLES
from delta_suite.delta.chat import render
from delta_suite.delta.chat_samples import CHATS
from delta_suite.frozen.loader import FrozenTokenizer

KINDS = ("prose", "code", "chat")
PLAIN_KINDS = ("prose", "code", "cjk")  # cjk: the corpus's CJK shard alone (prose holds every script's shards)
CORPUS_PROFILE = "small"
NON_PROSE = ("code", "chat", "vectors")


@dataclass(frozen=True)
class Source:
    """Where a kind's text comes from: the corpus shards read, or the built-in samples."""
    origin: str  # "corpus:<dir>" or "samples"
    pieces: tuple[str, ...]


def _corpus_dir() -> Path | None:
    path = default_out(CORPUS_PROFILE)
    return path if any(path.glob("*.jsonl")) else None


def _read_shards(paths: list[Path], field: str) -> list:
    out = []
    for path in paths:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get(field):
                    out.append(row[field])
    return out


@lru_cache(maxsize=8)
def source(kind: str) -> Source:
    """The pieces a kind's texts are built from (documents, or for chat the transcripts' messages as JSON)."""
    if kind not in (*KINDS, "cjk"):
        raise ValueError(f"unknown text kind {kind!r}; one of {(*KINDS, 'cjk')}")
    root = _corpus_dir()
    if root is not None:
        shards = sorted(root.glob("*.jsonl"))
        if kind == "code":
            chosen = [p for p in shards if "code" in p.stem]
        elif kind in ("chat", "cjk"):
            chosen = [p for p in shards if kind in p.stem]
        else:
            chosen = [p for p in shards if not any(word in p.stem for word in NON_PROSE)]
        field = "messages" if kind == "chat" else "text"
        pieces = _read_shards(chosen, field)
        if pieces:
            if kind == "chat":
                pieces = [json.dumps(m, ensure_ascii=False) for m in pieces]
            return Source(f"corpus:{root}", tuple(pieces))
    if kind == "chat":
        return Source("samples", tuple(json.dumps(m, ensure_ascii=False) for m in CHATS.values()))
    if kind == "code":
        return Source("samples", tuple(s for s in SAMPLES if "def " in s or "return" in s) or SAMPLES)
    if kind == "cjk":
        return Source("samples", tuple(s for s in SAMPLES if any("\u4e00" <= ch <= "\u9fff" for ch in s)) or SAMPLES)
    return Source("samples", SAMPLES)


def _varied(pieces: tuple[str, ...], size: int, label: str) -> str:
    """The pieces in order, repeated with a numbered header per repetition, cut to `size` characters."""
    parts: list[str] = []
    total, rep = 0, 0
    while total < size:
        header = f"\n\n## {label} part {rep + 1}\n\n" if rep else ""
        for piece in (header, *pieces):
            parts.append(piece)
            total += len(piece)
            if total >= size:
                break
        rep += 1
    return "".join(parts)[:size]


@lru_cache(maxsize=32)
def plain_text(kind: str, size: int) -> str:
    """`size` characters of prose, code or CJK text (deterministic)."""
    if kind not in PLAIN_KINDS:
        raise ValueError(f"plain_text takes one of {PLAIN_KINDS}, not {kind!r}")
    return _varied(source(kind).pieces, size, kind)


def chat_messages(min_chars: int) -> list[dict]:
    """Transcripts of the chat source, concatenated (roles alternate), until their contents hold `min_chars`."""
    messages: list[dict] = []
    total, rep = 0, 0
    transcripts = [json.loads(p) for p in source("chat").pieces]
    while total < min_chars:
        for transcript in transcripts:
            for m in transcript:
                if m.get("role") not in ("user", "assistant") or not isinstance(m.get("content"), str):
                    continue
                role = "user" if len(messages) % 2 == 0 else "assistant"
                content = m["content"] if rep == 0 else f"({rep}) {m['content']}"
                messages.append({"role": role, "content": content})
                total += len(content)
            if total >= min_chars:
                break
        rep += 1
    return messages


@lru_cache(maxsize=16)
def chat_text(tok: FrozenTokenizer, size: int) -> str:
    """`size` characters of a long conversation rendered through `tok`'s chat template (delta.chat.render)."""
    messages = chat_messages(size)
    text = render(tok, messages).text
    while len(text) < size:  # templates add markup, rarely drop content; grow until long enough
        messages = messages + chat_messages(size // 4 + 1)
        text = render(tok, messages).text
    return text[:size]


def text_of(kind: str, size: int, tok: FrozenTokenizer | None = None) -> str:
    """A benchmark text of `kind` (prose, code, chat) and exactly `size` characters."""
    if kind == "chat":
        if tok is None:
            raise ValueError("chat text needs the tokenizer whose template renders it")
        return chat_text(tok, size)
    return plain_text(kind, size)


def appended(kind: str, length: int, index: int) -> str:
    """The `index`-th distinct append of `length` characters (prose for chat contexts), deterministic."""
    base = plain_text("code" if kind == "code" else "prose", 200_000)
    start = (7919 * index * max(length, 1)) % (len(base) - length - 1)
    return base[start : start + length]


def text_digest(text: str) -> str:
    """SHA-256 of the text's UTF-8 bytes (first 16 hex digits)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

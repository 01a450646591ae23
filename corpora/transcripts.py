"""The long chat transcripts of level 3: built from the real conversations and documents of a built corpus.

A transcript is what an agent session re-sends turn by turn: a system message, then user and assistant turns
whose words come from the corpus's real conversations (chitchat-dataset, chatterbot-corpus: English and 27 other
languages, taken in order, one conversation after another), with the corpus's documents (source files, manual
pages, web text in every script group) pasted into user turns as attachments, the way tool outputs and files
reach an agent. Each transcript grows to a length drawn around the profile's median; its turns are about even in
size. Transcripts also come as a variant with one decomposed accent ("e" + U+0301) in their first message (every
one in `small`, every fifth in `full`), the paper's stand-in for a history with one character the normalizer
changes.

The set is a function of (builder version, profile, seed, the corpus manifest's digests): the same inputs give
the same JSON lines byte for byte, written once to `<corpus>/transcripts/<profile>.jsonl` by write-and-rename
and reused while the inputs stay the same. Profiles: `small` (30 transcripts, median about 16,000 characters:
the gate and the main job) and `full` (600 transcripts, median about 300,000 characters, as the paper's 610 with
330K at the median).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from dataclasses import dataclass
from pathlib import Path

from delta_suite.corpora.readers import read_jsonl
from delta_suite.frozen.errors import SuiteError

BUILDER_VERSION = "delta-suite.transcripts.v2"
ACCENT = "e\u0301"  # one decomposed accent: NFC composes it to U+00E9
SYSTEM = "You are a helpful assistant. Answer in the language of the user; quote attached files exactly."


@dataclass(frozen=True)
class TranscriptProfile:
    """How many transcripts, their median length in characters, the spread of lengths (log-normal sigma), and
    the range of user turns."""

    name: str
    transcripts: int
    median_chars: int
    sigma: float
    turns: tuple[int, int]
    accent_every: int  # every n-th transcript also comes with the accent variant
    per_part: int  # transcripts per file (a part is one comparison unit: resumable, run in parallel)


TRANSCRIPT_PROFILES = {
    "small": TranscriptProfile("small", 30, 12_000, 0.5, (3, 6), accent_every=1, per_part=15),
    "full": TranscriptProfile("full", 600, 300_000, 0.35, (4, 10), accent_every=5, per_part=20),
}


class NoConversations(SuiteError):
    """The corpus has no chats (or no documents) to build transcripts from."""


def _corpus_pools(folder: Path) -> tuple[list[list[dict]], list[str], str]:
    """(conversations, documents, digest of the manifest's shard digests) of a built corpus folder."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    chats: list[list[dict]] = []
    docs: list[str] = []
    for shard in manifest["shards"]:
        for doc in read_jsonl(folder / shard["name"], "text"):
            if doc.get("messages"):
                chats.append([{"role": m["role"], "content": m["content"]} for m in doc["messages"]])
            elif doc.get("text"):
                docs.append(doc["text"])
    if not chats or not docs:
        raise NoConversations(f"{folder}: the corpus has {len(chats)} chats and {len(docs)} documents; "
                              "transcripts need both")
    digest = hashlib.sha256("\n".join(s["sha256"] for s in manifest["shards"]).encode()).hexdigest()
    return chats, docs, digest


class _Talk:
    """The real conversations as one stream of (role, content) messages, taken in order and wrapped around."""

    def __init__(self, chats: list[list[dict]], rng: random.Random) -> None:
        self.chats, self.at, self.msg = chats, rng.randrange(len(chats)), 0

    def next(self, role: str) -> str:
        """The next message of the stream with this role (a conversation ends: the next one begins)."""
        for _ in range(4 * len(self.chats) + 4):
            chat = self.chats[self.at]
            if self.msg >= len(chat):
                self.at, self.msg = (self.at + 1) % len(self.chats), 0
                continue
            m = chat[self.msg]
            self.msg += 1
            if m["role"] == role:
                return m["content"]
        return "..."


def _attachment(docs: list[str], rng: random.Random, size: int) -> str:
    """About `size` characters of documents, pasted whole or as a slice of one (from a line start)."""
    out, have = [], 0
    while have < size:
        doc = docs[rng.randrange(len(docs))]
        want = size - have
        if len(doc) > want:
            start = rng.randrange(len(doc) - want + 1)
            nl = doc.find("\n", start, start + 200)
            if 0 <= nl and nl + 1 + want <= len(doc):
                start = nl + 1  # from a line start when one is near and leaves room
            doc = doc[start : start + want]  # exactly `want` characters: the loop always progresses
        out.append(doc)
        have += len(doc)
    return "\n\n".join(out)


def build_transcript(chats: list[list[dict]], docs: list[str], profile: TranscriptProfile, seed: int,
                     index: int) -> list[dict]:
    """Transcript `index`: messages alternating user and assistant after a system message, about the drawn size."""
    rng = random.Random(int.from_bytes(hashlib.sha256(f"{BUILDER_VERSION}|{profile.name}|{seed}|{index}".encode())
                                       .digest()[:8], "big"))
    target = int(profile.median_chars * math.exp(rng.gauss(0.0, profile.sigma)))
    turns = rng.randint(*profile.turns)
    talk = _Talk(chats, rng)
    messages = [{"role": "system", "content": SYSTEM}]
    per_turn = max(200, target // turns)
    for _ in range(turns):
        said = talk.next("user")
        files = _attachment(docs, rng, max(0, per_turn - len(said)))
        name = f"attachment-{len(messages) // 2 + 1}.txt"
        messages.append({"role": "user", "content": f"{said}\n\n--- {name} ---\n{files}\n--- end of {name} ---"})
        messages.append({"role": "assistant", "content": talk.next("assistant")})
    return messages


def with_accent(messages: list[dict]) -> list[dict]:
    """The variant: one decomposed accent at the start of the first user message ("Cafe\u0301: ...")."""
    out = [dict(m) for m in messages]
    first = next(i for i, m in enumerate(out) if m["role"] == "user")
    out[first]["content"] = f"Caf{ACCENT}: " + out[first]["content"]
    return out


def transcripts_folder(corpus: Path) -> Path:
    return corpus / "transcripts"


def build_transcripts(corpus: Path, profile: str = "small", seed: int = 0) -> list[Path]:
    """Write (or reuse) the transcript set of `profile` from the built corpus in `corpus`; the paths of its parts.

    Each line is {"id", "src": "transcript", "variant": "clean"|"accent", "messages"}; a transcript's accent
    variant follows it. A sidecar `<profile>.json` records the inputs' digest and the parts, so a changed corpus,
    profile or builder rebuilds the set."""
    if profile not in TRANSCRIPT_PROFILES:
        raise SuiteError(f"unknown transcript profile {profile!r}; one of {', '.join(TRANSCRIPT_PROFILES)}")
    prof = TRANSCRIPT_PROFILES[profile]
    chats, docs, corpus_digest = _corpus_pools(corpus)
    inputs = hashlib.sha256(f"{BUILDER_VERSION}|{prof!r}|{seed}|{corpus_digest}".encode()).hexdigest()
    folder = transcripts_folder(corpus)
    sidecar = folder / f"{profile}.json"
    try:
        known = json.loads(sidecar.read_text(encoding="utf-8"))
        parts = [folder / name for name in known["parts"]]
        if known.get("inputs") == inputs and all(p.is_file() for p in parts):
            return parts
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        pass  # no or unreadable sidecar: rebuild
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for first in range(0, prof.transcripts, prof.per_part):
        path = folder / f"{profile}-{first // prof.per_part:03d}.jsonl"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for i in range(first, min(prof.transcripts, first + prof.per_part)):
                messages = build_transcript(chats, docs, prof, seed, i)
                variants = [("clean", messages)]
                if i % prof.accent_every == 0:
                    variants.append(("accent", with_accent(messages)))
                for variant, msgs in variants:
                    doc = {"id": f"transcript:{profile}:{i}:{variant}", "src": "transcript", "variant": variant,
                           "messages": msgs}
                    fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
        parts.append(path)
    header = {"builder": BUILDER_VERSION, "profile": profile, "seed": seed, "inputs": inputs,
              "corpus_digest": corpus_digest, "transcripts": prof.transcripts, "parts": [p.name for p in parts]}
    sidecar.write_text(json.dumps(header, indent=1) + "\n", encoding="utf-8")
    return parts

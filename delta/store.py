"""The session store: keyed sessions and content lookup, where a digest only proposes and the bytes decide.

`SessionStore.encode(text, key=None)`:

- an inadmissible tokenizer: the reference encode, nothing stored ("reference:not_admitted");
- with a key: that key's `Session` (identical text -> stored IDs; extension -> repair; anything else ->
  initialization); keyed sessions never consult the content index;
- without a key, a text shorter than `min_bytes` (4,096 UTF-8 bytes) is encoded directly and not stored;
- otherwise content lookup: one pass over the text computes its running BLAKE2b-128 digest at every indexed
  length (the end lengths of stored entries); the longest entry whose end digest matches is confirmed byte by
  byte before any reuse (a digest that matches but whose bytes differ is counted in `collision_rejects` and the
  next candidate is tried); an equal text returns its IDs, a proper prefix is extended by repair, and anything
  else is encoded whole and stored as a new entry. Entries also keep digests at byte offsets doubling from
  4,096 (`marks`), counted when they match (`mark_matches`) but never used for reuse.

Equivalent by construction: the digest (and a key) only choose which stored session to try; `Session.encode` checks
that the stored text is a prefix of the new one before it reuses anything. A weaker digest (a truncated one, or one
that collides on purpose: the store's tests inject it) or a key reused for another conversation therefore costs a
re-encode, never a wrong ID; mutants of the digest length or of the lookup order are equivalent for exactness.

Limits: at most `max_entries` (1,024) content entries, oldest dropped first; a memory bound in bytes over all
stored sessions with least-recently-used eviction (the entry just written is never the one evicted).
`switch_tokenizer` makes every stored state stale: keyed sessions re-initialize ("tokenizer_changed"), content
entries are dropped. The digest function is injectable so a test can force collisions.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from delta_suite.delta.session import Session, SessionStats
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.admission import admission_of
from delta_suite.spec.reference import check_text, reference_encode
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS, RepairParams

MIN_BYTES = 4096
MARK_FLOOR_BYTES = 4096
MAX_ENTRIES = 1024
DEFAULT_MEMORY_BYTES = 128 * 1024 * 1024
PERSON = b"delta.store.v1"


class Hasher(Protocol):
    def update(self, data: bytes) -> None: ...
    def copy(self) -> Hasher: ...
    def digest(self) -> bytes: ...


def blake2b_128() -> Hasher:
    """BLAKE2b with a 16-byte digest, personalized (not keyed: nothing here is secret)."""
    return hashlib.blake2b(digest_size=16, person=PERSON)


def mark_offsets(length: int) -> list[int]:
    """Byte offsets 4096, 8192, ... below `length`."""
    out, mark = [], MARK_FLOOR_BYTES
    while mark < length:
        out.append(mark)
        mark *= 2
    return out


@dataclass
class ContentEntry:
    """A stored text found by content: its session, its UTF-8 bytes, end digest and mark digests."""

    session: Session
    data: bytes
    end_digest: bytes
    marks: dict[int, bytes]


@dataclass
class StoreStats:
    """Cumulative counts; `add_up` states how they must relate."""

    calls: int = 0
    paths: Counter = field(default_factory=Counter)  # direct, keyed, content_identical, content_extended, ...
    collision_rejects: int = 0
    mark_matches: int = 0
    evictions: int = 0
    dropped_oldest: int = 0
    sessions: SessionStats = field(default_factory=SessionStats)  # every Session call made by the store

    def add_up(self) -> bool:
        """Each call took exactly one path; the Session calls are exactly the keyed and content-reuse calls plus
        the content misses (each miss initializes a new entry), and the sessions' own counts add up."""
        session_paths = sum(self.paths[p] for p in ("keyed", "content_identical", "content_extended", "content_miss"))
        return (
            sum(self.paths.values()) == self.calls
            and self.sessions.calls == session_paths
            and self.sessions.add_up()
        )


class SessionStore:
    """Keyed sessions and content lookup for one tokenizer at a time; every answer equals ref(text)."""

    def __init__(
        self,
        tok: FrozenTokenizer,
        params: RepairParams = DEFAULT_REPAIR_PARAMS,
        *,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
        max_entries: int = MAX_ENTRIES,
        min_bytes: int = MIN_BYTES,
        hasher: Callable[[], Hasher] = blake2b_128,
    ) -> None:
        self.tok = tok
        self.params = params
        self.memory_bytes = memory_bytes
        self.max_entries = max_entries
        self.min_bytes = min_bytes
        self.hasher = hasher
        self.keyed: dict[str, Session] = {}
        self.entries: OrderedDict[int, ContentEntry] = OrderedDict()  # insertion order = age
        self.lru: OrderedDict[tuple[str, object], None] = OrderedDict()  # ("key", k) | ("entry", id)
        self._next_id = 0
        self.last_path = "none"
        self.stats = StoreStats()

    # --- public API --------------------------------------------------------------------------------------

    def encode(self, text: str, key: str | None = None) -> list[int]:
        """ref(text)'s IDs, reusing stored work where the bytes confirm it."""
        self.stats.calls += 1
        if not admission_of(self.tok).admitted:
            self._path("reference", "reference:not_admitted")
            return reference_encode(self.tok, text)
        if key is not None:
            return self._encode_keyed(text, key)
        data = check_text(text).encode("utf-8")
        if len(data) < self.min_bytes:
            self._path("direct", "direct:short")
            return reference_encode(self.tok, text)
        return self._encode_by_content(text, data)

    def switch_tokenizer(self, tok: FrozenTokenizer) -> None:
        """Serve another tokenizer from now on; no stored ID of the old one is ever reused."""
        if tok is self.tok:
            return
        self.tok = tok
        for session in self.keyed.values():
            session.switch_tokenizer(tok)
        for entry_id in list(self.entries):
            self._drop_entry(entry_id)

    def evict(self, key: str) -> None:
        """Drop a keyed session's stored state (the key stays known; its next call initializes as "evicted")."""
        if key in self.keyed:
            self.keyed[key].evict()
            self.lru.pop(("key", key), None)

    def resident_bytes(self) -> int:
        """Bytes held by every stored session (text plus IDs and spans, as `Session.stored_bytes` counts them)."""
        return sum(s.stored_bytes() for s in self.keyed.values()) + sum(
            e.session.stored_bytes() for e in self.entries.values()
        )

    # --- keyed -------------------------------------------------------------------------------------------

    def _encode_keyed(self, text: str, key: str) -> list[int]:
        session = self.keyed.get(key)
        if session is None:
            session = self.keyed[key] = Session(self.tok, self.params)
        ids = self._session_call(session, text)
        self._path("keyed", f"keyed:{session.last_path}")
        self._touch(("key", key))
        return ids

    # --- content -----------------------------------------------------------------------------------------

    def _encode_by_content(self, text: str, data: bytes) -> list[int]:
        for entry_id in self._candidates(data):
            entry = self.entries[entry_id]
            if not data.startswith(entry.data):
                self.stats.collision_rejects += 1
                continue
            ids = self._session_call(entry.session, text)
            if len(data) == len(entry.data):
                self._path("content_identical", "content:identical")
            else:
                self._path("content_extended", f"content:{entry.session.last_path}")
                entry.data, entry.end_digest, entry.marks = data, *self._digests(data)
                self.entries.move_to_end(entry_id)
            self._touch(("entry", entry_id))
            return ids
        session = Session(self.tok, self.params)
        ids = self._session_call(session, text)
        self._add_entry(session, data)
        self._path("content_miss", f"content:miss:{session.last_path}")
        return ids

    def _candidates(self, data: bytes) -> list[int]:
        """Entries whose end digest equals the running digest of `data` at their length, longest first."""
        by_length: dict[int, list[int]] = {}
        mark_lengths: dict[int, list[int]] = {}
        for entry_id, entry in self.entries.items():
            if len(entry.data) <= len(data):
                by_length.setdefault(len(entry.data), []).append(entry_id)
            for offset in entry.marks:
                if offset <= len(data):
                    mark_lengths.setdefault(offset, []).append(entry_id)
        running = self.hasher()
        done = 0
        found: list[tuple[int, int]] = []
        for length in sorted(set(by_length) | set(mark_lengths)):
            running.update(data[done:length])
            done = length
            digest = running.digest()
            for entry_id in by_length.get(length, ()):
                if self.entries[entry_id].end_digest == digest:
                    found.append((length, entry_id))
            for entry_id in mark_lengths.get(length, ()):
                if self.entries[entry_id].marks[length] == digest:
                    self.stats.mark_matches += 1
        return [entry_id for _, entry_id in sorted(found, reverse=True)]

    def _digests(self, data: bytes) -> tuple[bytes, dict[int, bytes]]:
        running = self.hasher()
        marks: dict[int, bytes] = {}
        done = 0
        for offset in mark_offsets(len(data)):
            running.update(data[done:offset])
            done = offset
            marks[offset] = running.digest()
        running.update(data[done:])
        return running.digest(), marks

    def _add_entry(self, session: Session, data: bytes) -> None:
        entry_id = self._next_id
        self._next_id += 1
        end, marks = self._digests(data)
        self.entries[entry_id] = ContentEntry(session, data, end, marks)
        while len(self.entries) > self.max_entries:
            oldest = next(iter(self.entries))
            self._drop_entry(oldest)
            self.stats.dropped_oldest += 1
        self._touch(("entry", entry_id))

    def _drop_entry(self, entry_id: int) -> None:
        self.entries.pop(entry_id, None)
        self.lru.pop(("entry", entry_id), None)

    # --- bookkeeping -------------------------------------------------------------------------------------

    def _session_call(self, session: Session, text: str) -> list[int]:
        ids = session.encode(text)
        self.stats.sessions.count(session.last_path)
        return ids

    def _path(self, kind: str, path: str) -> None:
        self.stats.paths[kind] += 1
        self.last_path = path

    def _touch(self, slot: tuple[str, object]) -> None:
        """Mark `slot` most recently used, then evict least recently used slots while over the memory bound."""
        self.lru.pop(slot, None)
        self.lru[slot] = None
        while self.resident_bytes() > self.memory_bytes and len(self.lru) > 1:
            victim = next(iter(self.lru))
            kind, ident = victim
            if kind == "key":
                self.keyed[ident].evict()  # type: ignore[index]
                self.lru.pop(victim, None)
            else:
                self._drop_entry(ident)  # type: ignore[arg-type]
            self.stats.evictions += 1

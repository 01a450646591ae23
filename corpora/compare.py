"""Whole-corpus comparisons against the reference, as units (shard, tokenizer, level) that each write one record.

Levels (the ledger level in brackets):
- 1 [encoder]: the subject's whole encode of every document (chats rendered through the tokenizer's chat
  template) against `reference_encode`. For the minimal implementation (subject "delta") the whole encode is
  `delta.encode_chunked(tok, text, chunks=1)`: it plans no cut, so it is the delta package's path around one
  reference encode; level 1 proves that path leaves IDs untouched on real text and gives the throughput floor
  (the package has no encoder of its own to compare). Subject "reference-batch" compares the reference's own
  batch path instead.
- 2 [chunked]: every document of 512 to 400,000 characters split at the planner's cuts for each chunk count
  (2, 4, 8), `encode_chunked` against the whole reference encode. A (document, k) pair whose plan has at least
  one cut counts as fast path, one with none as fallback (the whole text went to the reference).
- 3 [repair]: every chat (the corpus's own and the long transcripts of `corpora.transcripts`, clean and with
  one decomposed accent) replayed turn by turn: each prefix as a server sees it (`delta.chat.render_turns`:
  generation prompt after user messages) through three front ends, the whole reference encode, the stateless
  chunked encode cut at role markers, and one `delta.Session`; the last two are compared with the whole
  reference encode on every turn. Record-level fast path = turns the session repaired, fallbacks = turns where
  the repair refused; per front end and variant, `details.front_ends` has turns, fast path, fallbacks,
  differences, CPU seconds per transcript and milliseconds per turn (medians, and for 250K-500K characters of
  history).

Throughput is CPU time of this process (all its threads, so the reference's Rust threads count too): characters
per CPU-second, i.e. per core, for the subject and for the reference encode alone (the floor), measured in the
same unit on the same documents.

Each unit returns ONE ledger record (`ledger.records.make_record`, kind "corpus") with its counts, the ids of
differing documents (first 20) in details, the fast-path share, the digests of shard, tokenizer and suite, the
reference version and wall/CPU time. `write_unit_record` stores it as `units/<key>.json` by write-to-temp and
rename, so a unit is either recorded whole or not at all: a finished unit is never redone, a killed one is
redone whole, and `merge_ledger` regenerates `corpus-ledger.jsonl` from the unit files (no document is lost
or counted twice). A write that fails (a full disk, EFBIG, a folder that cannot be written) removes its
temporary file and raises the OSError: the unit stays unrecorded and runs again on the next run.

Nothing is left out silently. Every document of the shard is, in each unit, either compared, refused or skipped:
- refused (`details.refused_documents`, and `details.refused`: the first 20 as {file, line | row, id, reason}):
  a document whose text is not valid Unicode (a lone surrogate, bytes that are not UTF-8, a null text; see
  `corpora.readers`). It is counted in no comparison; the other documents are compared as usual. Every unit of
  a shard refuses the same documents.
- skipped (`details.skipped_documents`, and `details.skipped`: the first 20 as {id, characters, reason}):
  level 2 does not chunk a document over MAX_CHUNKED_CHARS characters (its whole encode is compared at level 1);
  levels 1 and 3 skip nothing (level 3 compares the chats; a document without messages is not a chat).
- level 2 also counts the documents under MIN_CHUNKED_CHARS (`details.short_documents`): too short to cut,
  compared whole at level 1.
`comparisons` counts only what was compared.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from delta_suite.corpora.readers import Refused, read_documents
from delta_suite.corpora.remote import fetched, is_url, url_blocks, url_name, url_shard_digest
from delta_suite.delta.chat import render, render_turns, template_for
from delta_suite.delta.cuts import MAX_DEFAULT_CHUNKS, TARGET_CHUNK, encode_chunked, encode_planned, plan_cuts
from delta_suite.delta.session import Session
from delta_suite.frozen.digests import sha256_file
from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.frozen.user_table import tokenizer_key
from delta_suite.ledger.records import SCHEMA, make_record
from delta_suite.spec.cut import ACCEPTED_FREE_PAIR, ACCEPTED_SPECIAL, explain_cut
from delta_suite.spec.proofs.obligations import declare
from delta_suite.spec.reference import reference_encode, reference_encode_batch, reference_version
from delta_suite.subjects.protocol import DEFAULT_SUBJECT, SubjectUnavailable, is_user_spec, names, parse_subject
from delta_suite.subjects.protocol import UnknownSubject as BadSpec
from delta_suite.subjects.records import subject_record, unavailable_record
from delta_suite.subjects.wiring import check_on_subject, open_subject

CUT_RULE_NAMES = {ACCEPTED_SPECIAL: "special_token", ACCEPTED_FREE_PAIR: "free_pair"}  # else a transition

LEVEL_NAMES = {1: "encoder", 2: "chunked", 3: "repair"}
CHUNK_COUNTS = (2, 4, 8)
MIN_CHUNKED_CHARS = 512
MAX_CHUNKED_CHARS = 400_000
MAX_POINTERS = 20
SUBJECTS = ("delta", "reference-batch")


class UnknownSubject(SuiteError):
    """A `--subject` that is not one of SUBJECTS nor a subject of `subjects.names()`."""


def is_third_party(subject: str) -> bool:
    """Whether `subject` is an implementation of `subjects/` other than the minimal one (checked on its own paths)."""
    if subject in SUBJECTS:
        return False

    return parse_subject(subject).name != DEFAULT_SUBJECT


def _known_subject(subject: str) -> bool:
    """A subject this run can name: the built-in ones, an entry point, or a user's module:factory / exec:COMMAND."""
    if subject in SUBJECTS or is_user_spec(subject):
        return True
    try:
        return parse_subject(subject).name in names()
    except BadSpec:
        return False


def subject_slug(subject: str) -> str:
    """`subject` as a file-name part: unchanged when it is one, else its safe characters and a short digest."""
    safe = re.sub(r"[^A-Za-z0-9_.=+-]+", "_", subject)
    if safe == subject:
        return subject
    return f"{safe[:40]}-{hashlib.sha256(subject.encode('utf-8')).hexdigest()[:8]}"


@dataclass(frozen=True)
class Shard:
    """One corpus file compared as a unit: its path, digest, and (if known) size for largest-first ordering."""
    path: str
    sha256: str
    characters: int = 0
    has_chats: bool = True
    column: str = "text"
    levels: tuple[int, ...] = (1, 2, 3)  # the levels this shard is compared at (the transcripts: level 3 only)

    @property
    def name(self) -> str:
        return url_name(self.path) if is_url(self.path) else Path(self.path).name


@dataclass(frozen=True)
class Unit:
    """(shard, tokenizer, level) under one subject: what one ledger record covers."""
    shard: Shard
    tokenizer: str
    level: int
    subject: str = "delta"

    @property
    def key(self) -> str:
        """A stable name, unique per shard content, tokenizer (a user file's: with its digest), level and subject."""
        return (f"{self.shard.name}.{self.shard.sha256[:12]}.{tokenizer_key(self.tokenizer)}.L{self.level}."
                f"{subject_slug(self.subject)}")

    @property
    def weight(self) -> int:
        """Estimated cost, for largest-first scheduling: characters times encodes per character."""
        per_char = {1: 2, 2: 1 + len(CHUNK_COUNTS), 3: 4}[self.level]
        return self.shard.characters * per_char


@dataclass(frozen=True)
class Options:
    """Knobs of a comparison run. Kill tests only: `pause_seconds` holds each unit open after it starts (its marker
    in `running_dir`), for that long or, with `release_file`, until that file exists, whichever comes first."""
    chunk_counts: tuple[int, ...] = CHUNK_COUNTS
    pause_seconds: float = 0.0
    running_dir: str | None = None
    release_file: str | None = None


DEFAULT_OPTIONS = Options()


@lru_cache(maxsize=1)
def suite_digest() -> str:
    """SHA-256 over the subject's and the oracle's sources (delta/, spec/, corpora/compare.py)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    files = sorted([*root.glob("delta/*.py"), *root.glob("spec/*.py"), root / "corpora" / "compare.py"])
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def shards_of_manifest(folder: Path | str) -> list[Shard]:
    """The shards of a built corpus, with their manifest digests and sizes; `folder` may be a URL (the corpus
    served over HTTP or kept in an object store: shards are then read by URL, digest-checked)."""
    if is_url(folder):
        base = str(folder).rstrip("/")
        manifest = json.loads(b"".join(url_blocks(f"{base}/manifest.json")).decode("utf-8"))
        return [Shard(f"{base}/{s['name']}", s["sha256"], s["characters"], s.get("chats", 0) > 0)
                for s in manifest["shards"]]
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return [Shard(str(folder / s["name"]), s["sha256"], s["characters"], s.get("chats", 0) > 0)
            for s in manifest["shards"]]


def transcript_shard(path: Path) -> Shard:
    """The transcript set (`corpora.transcripts`) as a shard compared at level 3 only."""
    return Shard(str(path), sha256_file(path), path.stat().st_size, True, "text", (3,))


def _shard_of_file(path: Path | str, column: str) -> Shard:
    if is_url(path):
        sha, size = url_shard_digest(str(path))
        return Shard(str(path), sha, size, True, column)
    try:
        return Shard(str(path), sha256_file(path), path.stat().st_size, True, column)
    except OSError as exc:  # a read that fails (EIO) names no file: name the corpus file
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise


def shards_of_files(paths: list[Path | str], column: str = "text") -> list[Shard]:
    """User corpus files as shards (digest computed; chats possible, so level 3 runs and counts what it finds);
    a file the machine cannot read is an OSError naming it."""
    return [_shard_of_file(p, column) for p in paths]


def plan_units(shards: list[Shard], tokenizers: list[str], levels: tuple[int, ...] = (1, 2, 3),
               subject: str = "delta") -> list[Unit]:
    """Every (shard, tokenizer, level) unit, largest first (ties in name order); level 3 only for chat shards."""
    if not _known_subject(subject):
        raise UnknownSubject(f"unknown subject {subject!r}; one of {', '.join(dict.fromkeys([*SUBJECTS, *names()]))}")
    if subject not in SUBJECTS and not is_third_party(subject):
        subject = "delta"  # delta==VERSION: the minimal implementation of this checkout
    units = [Unit(s, t, lv, subject) for s in shards for t in tokenizers for lv in levels
             if (lv != 3 or s.has_chats) and lv in s.levels]
    return sorted(units, key=lambda u: (-u.weight, u.key))


def slice_units(units: list[Unit], index: int, count: int) -> list[Unit]:
    """The `index`-th of `count` slices (0-based): every count-th unit starting at index, so slices balance."""
    if count < 1 or not 0 <= index < count:
        raise SuiteError(f"--shard {index}/{count}: need 0 <= i < N")
    return units[index::count]


def document_text(tok: FrozenTokenizer, doc: dict) -> str:
    """The text a document stands for under `tok`: its text, or its whole chat rendered by `delta.chat.render`
    (the tokenizer's own template, or the generic fallback for tokenizers that ship none)."""
    if "messages" in doc:
        return render(tok, doc["messages"]).text
    return doc["text"]


def chat_rendering(tok: FrozenTokenizer) -> str:
    """Which template renders chats for `tok`: "own", "generic_fallback" or "no_config" (delta.chat)."""
    return template_for(tok)[1]


def _first_difference(a: list[int], b: list[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _subject_whole(subject: str):
    if subject == "reference-batch":
        return lambda tok, text: reference_encode_batch(tok, [text])[0]

    return lambda tok, text: encode_chunked(tok, text, chunks=1, workers=1)


class _Tally:
    """Counts of one unit, pointers to the documents that differ, and the documents refused or skipped (each
    count exact, each list capped at MAX_POINTERS)."""

    def __init__(self) -> None:
        self.documents = self.characters = self.comparisons = self.differences = 0
        self.fast = self.fallbacks = 0
        self.pointers: list[dict] = []
        self.paths: dict[str, int] = {}
        self.refused_documents = self.skipped_documents = self.short_documents = 0
        self.refused: list[dict] = []
        self.skipped: list[dict] = []

    def differ(self, doc_id: str, **where) -> None:
        self.differences += 1
        if len(self.pointers) < MAX_POINTERS:
            self.pointers.append({"id": doc_id, **where})

    def refuse(self, refusal: Refused) -> None:
        """A document the readers refused (bad text): counted, never compared."""
        self.refused_documents += 1
        if len(self.refused) < MAX_POINTERS:
            self.refused.append(refusal.as_dict())

    def skip(self, doc_id: str, characters: int, reason: str) -> None:
        """A document this level does not compare (level 2: too long to chunk): counted, with its reason."""
        self.skipped_documents += 1
        if len(self.skipped) < MAX_POINTERS:
            self.skipped.append({"id": doc_id, "characters": characters, "reason": reason})

    def chunkable(self, doc_id: str, text: str) -> bool:
        """Whether level 2 chunks `text`; a document outside 512-400,000 characters is counted as short or skipped."""
        if len(text) < MIN_CHUNKED_CHARS:
            self.short_documents += 1
            return False
        if len(text) > MAX_CHUNKED_CHARS:
            self.skip(doc_id, len(text), f"over {MAX_CHUNKED_CHARS:,} characters (level 2 chunks documents of "
                      f"{MIN_CHUNKED_CHARS:,} to {MAX_CHUNKED_CHARS:,} characters)")
            return False
        return True

    def accounting(self, level: int) -> dict:
        """The refused and skipped documents, for the unit record's details."""
        return {"refused_documents": self.refused_documents, "refused": self.refused,
                "skipped_documents": self.skipped_documents, "skipped": self.skipped,
                "short_documents": self.short_documents if level == 2 else None}


def _level1(tok: FrozenTokenizer, docs: Iterator[dict], subject: str, tally: _Tally, timing: dict) -> None:
    whole = _subject_whole(subject)
    for doc in docs:
        text = document_text(tok, doc)
        t0 = time.process_time()
        got = whole(tok, text)
        t1 = time.process_time()
        want = reference_encode(tok, text)
        t2 = time.process_time()
        timing["subject"] += t1 - t0
        timing["reference"] += t2 - t1
        tally.documents += 1
        tally.characters += len(text)
        tally.comparisons += 1
        if got != want:
            tally.differ(doc["id"], token=_first_difference(got, want))


def _level2(tok: FrozenTokenizer, docs: Iterator[dict], counts: tuple[int, ...], tally: _Tally, timing: dict) -> None:

    for doc in docs:
        text = document_text(tok, doc)
        if not tally.chunkable(doc["id"], text):
            continue
        t0 = time.process_time()
        want = reference_encode(tok, text)
        timing["reference"] += time.process_time() - t0
        tally.documents += 1
        tally.characters += len(text)
        for k in counts:
            t0 = time.process_time()
            got = encode_chunked(tok, text, chunks=k, workers=1)
            timing["subject"] += time.process_time() - t0
            cuts = plan_cuts(tok, text, k)
            tally.comparisons += 1
            if cuts:
                tally.fast += 1
            else:
                tally.fallbacks += 1
            if got != want:
                tally.differ(doc["id"], chunks=k, cuts=cuts[:16], token=_first_difference(got, want))


FRONT_ENDS = ("reference", "chunked", "session")
HISTORY_BAND = (250_000, 500_000)  # the paper's per-turn figures are for turns with this much history


def transcript_chunks(n: int) -> int:
    """Chunks asked of the stateless front end for an n-character turn: one per 65,536 characters, 2 to 16."""
    return max(2, min(MAX_DEFAULT_CHUNKS, math.ceil(n / TARGET_CHUNK)))


class _FrontEndTally:
    """One front end's counts and costs over the transcripts of one variant."""

    def __init__(self) -> None:
        self.turns = self.fast = self.fallbacks = self.differences = 0
        self.cuts = {"special_token": 0, "transition": 0, "free_pair": 0}
        self.transcript_cpu: list[float] = []
        self.turn_ms: list[float] = []
        self.band_ms: list[float] = []
        self.path_ms: dict[str, list[float]] = {}  # the session's turns by path kind (repaired, initialized, ...)

    def summary(self) -> dict:
        def med(xs: list[float], digits: int) -> float | None:
            return round(statistics.median(xs), digits) if xs else None
        return {"turns": self.turns, "fast_path": self.fast, "fallbacks": self.fallbacks,
                "differences": self.differences, "transcripts": len(self.transcript_cpu),
                "cpu_seconds_per_transcript_median": med(self.transcript_cpu, 6),
                "ms_per_turn_median": med(self.turn_ms, 4),
                "ms_per_turn_history_250k_500k_median": med(self.band_ms, 4),
                "turns_history_250k_500k": len(self.band_ms),
                # the raw figures, so medians over several units (parts) are exact, not medians of medians
                "cpu_seconds_per_transcript": [round(x, 6) for x in self.transcript_cpu],
                "ms_per_turn": [round(x, 3) for x in self.turn_ms],
                "ms_per_turn_history_250k_500k": [round(x, 3) for x in self.band_ms],
                **({"ms_per_turn_by_path": {k: [round(x, 3) for x in v] for k, v in sorted(self.path_ms.items())}}
                   if self.path_ms else {}),
                **({"cuts": dict(self.cuts)} if any(self.cuts.values()) else {})}


def _level3(tok: FrozenTokenizer, docs: Iterator[dict], tally: _Tally, timing: dict, fronts: dict) -> None:
    """Every chat replayed turn by turn (each prefix as a server sees it: `delta.chat.render_turns`) through three
    front ends: the whole reference encode (the oracle itself: its cost only), the stateless chunked encode
    (`encode_planned` at `transcript_chunks` chunks: role markers first), and one `delta.Session` (repair).
    Each turn of the last two is compared with the whole reference encode (2 comparisons per turn). Fast path:
    chunked = the plan had a cut, session = the turn was repaired; fallbacks: no cut / the repair refused (a
    session's first turn, or a turn whose template rewrote the history, is neither: Qwen3's template drops the
    empty think block of earlier assistant turns once a user message follows). Counts and costs are kept per
    variant, the session's turn costs also by path kind ("clean", "accent", or "chat" for
    the corpus's own short chats)."""
    for doc in docs:
        messages = doc.get("messages")
        if not messages:
            continue
        variant = doc.get("variant", "chat")
        ends = fronts.setdefault(variant, {f: _FrontEndTally() for f in FRONT_ENDS})
        session = Session(tok)
        cpu = dict.fromkeys(FRONT_ENDS, 0.0)
        tally.documents += 1
        for turn, rendered in enumerate(render_turns(tok, messages), start=1):
            text = rendered.text
            t0 = time.process_time()
            want = reference_encode(tok, text)
            t1 = time.process_time()
            got_chunked, cuts = encode_planned(tok, text, chunks=transcript_chunks(len(text)), workers=1)
            t2 = time.process_time()
            got = session.encode(text)
            t3 = time.process_time()
            costs = {"reference": t1 - t0, "chunked": t2 - t1, "session": t3 - t2}
            timing["reference"] += costs["reference"]
            timing["subject"] += costs["chunked"] + costs["session"]
            tally.characters += len(text)
            tally.comparisons += 2
            path = session.last_path
            tally.paths[path.split(":")[0]] = tally.paths.get(path.split(":")[0], 0) + 1
            history = len(text)
            for name, seconds in costs.items():
                end = ends[name]
                end.turns += 1
                cpu[name] += seconds
                end.turn_ms.append(seconds * 1000)
                if HISTORY_BAND[0] <= history < HISTORY_BAND[1]:
                    end.band_ms.append(seconds * 1000)
            chunked, sess = ends["chunked"], ends["session"]
            sess.path_ms.setdefault(path.split(":")[0], []).append(costs["session"] * 1000)
            if cuts:
                chunked.fast += 1
                for b in cuts:
                    rule = CUT_RULE_NAMES.get(explain_cut(tok, text, b), "transition")
                    chunked.cuts[rule] += 1
            else:
                chunked.fallbacks += 1
            if path.startswith("repaired"):
                tally.fast += 1
                sess.fast += 1
            elif path.startswith("fallback"):
                tally.fallbacks += 1
                sess.fallbacks += 1
            if got_chunked != want:
                chunked.differences += 1
                tally.differ(doc["id"], turn=turn, front_end="chunked", cuts=cuts[:16],
                             token=_first_difference(got_chunked, want))
            if got != want:
                sess.differences += 1
                tally.differ(doc["id"], turn=turn, front_end="session", path=path,
                             token=_first_difference(got, want))
        for name in FRONT_ENDS:
            ends[name].transcript_cpu.append(cpu[name])


def _mark_running(options: Options, unit: Unit) -> Path | None:
    if not options.running_dir:
        return None
    folder = Path(options.running_dir)
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / f"{unit.key}.{os.getpid()}"
    marker.write_text(str(os.getpid()))
    return marker


def _hold(options: Options) -> None:
    """Hold a started unit open (kill tests only): `pause_seconds`, ended early once `release_file` exists."""
    if not options.pause_seconds:
        return
    if options.release_file is None:
        time.sleep(options.pause_seconds)
        return
    release, deadline = Path(options.release_file), time.monotonic() + options.pause_seconds
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


@lru_cache(maxsize=32)
def _opened_subject(spec: str, tok_name: str):
    """The third-party subject `spec` bound to tokenizer `tok_name`, opened once per worker process and tokenizer."""
    return open_subject(spec, load_tokenizer(tok_name))


def _subject_turn_splits(tok: FrozenTokenizer, messages: list) -> tuple[str, tuple[int, ...]]:
    """The whole rendered chat and the ends of its earlier turns that are prefixes of it (the session's S values)."""
    texts = [r.text for r in render_turns(tok, messages)]
    final = texts[-1] if texts else ""
    return final, tuple(len(t) for t in texts[:-1] if 0 < len(t) < len(final) and final.startswith(t))


def run_subject_unit(unit: Unit, options: Options = DEFAULT_OPTIONS) -> dict:
    """One unit on a third-party subject: level 1 its whole encode, level 2 its chunked encode at each k, level 3
    one session per split (S, then the whole chat) - each equal to the reference (`check_on_subject`). A subject
    that cannot run (or lacks the level's path) gives its "not installed" row, never a pass."""
    wall0 = time.perf_counter()
    tok = load_tokenizer(unit.tokenizer)
    level, check = LEVEL_NAMES[unit.level], f"corpus.{LEVEL_NAMES[unit.level]}"
    stamp = {"unit": unit.key, "comparison_level": unit.level, "shard": unit.shard.name,
             "shard_sha256": unit.shard.sha256, "suite_digest": suite_digest(),
             "reference_version": reference_version()}
    tally = _Tally()
    example = None
    timing = {"subject": 0.0, "reference": 0.0}  # seconds in the subject's calls and in the reference's, apart
    try:
        subject = _opened_subject(unit.subject, tok.name)
        for doc in read_documents(unit.shard.path, unit.shard.column, refused=tally.refuse):
            if unit.level == 1:
                runs = [(document_text(tok, doc), {"path": "encoder"})]
            elif unit.level == 2:
                text = document_text(tok, doc)
                if not tally.chunkable(doc["id"], text):
                    continue
                runs = [(text, {"path": "chunked", "chunks": k}) for k in options.chunk_counts]
            else:
                if not doc.get("messages"):
                    continue
                text, splits = _subject_turn_splits(tok, doc["messages"])
                runs = [(text, {"path": "repair", "splits": splits})]
            tally.documents += 1
            tally.characters += len(runs[0][0])
            for text, how in runs:
                comparisons, differences, bad = check_on_subject(subject, tok, text, **how, timing=timing)
                tally.comparisons += comparisons
                if differences:
                    tally.differ(doc["id"], **{k: v for k, v in how.items() if k != "splits"},
                                 token=bad["position"] if bad else None)
                    tally.differences += differences - 1  # differ() counted one
                    if example is None and bad is not None:
                        example = {**bad, "document": doc["id"]}
    except SubjectUnavailable as exc:
        rec = unavailable_record(unit.subject, tok, level, check, exc.reason)
        rec["details"].update(stamp, documents=0, characters=0, wall_seconds=round(time.perf_counter() - wall0, 4),
                              subject_seconds=0.0, reference_seconds=0.0)
        return rec
    rec = subject_record(
        subject, tok, level, check, comparisons=tally.comparisons, differences=tally.differences,
        counterexample=example, unit={1: "documents", 2: "document_chunkings", 3: "turns"}[unit.level],
        documents=tally.documents, characters=tally.characters, differing_documents=tally.pointers,
        chunk_counts=list(options.chunk_counts) if unit.level == 2 else None,
        wall_seconds=round(time.perf_counter() - wall0, 4), subject_seconds=round(timing["subject"], 6),
        reference_seconds=round(timing["reference"], 6), **tally.accounting(unit.level),
    )
    rec["details"].update(stamp)
    return rec


def _name_the_url(record: dict, local: str, url: str) -> None:
    """Refused-document entries name the shard's URL, not the temporary copy it was read from."""
    for entry in record["details"].get("refused") or []:
        if entry.get("file") == local:
            entry["file"] = url


def run_unit(unit: Unit, options: Options = DEFAULT_OPTIONS) -> dict:
    """Compare one unit and return its single ledger record (no files written; the caller stores it). A shard
    named by URL is read from a verified temporary copy (`corpora.remote.fetched`: ShardDigestMismatch, nothing
    compared, when its bytes are not the planned ones)."""
    if is_url(unit.shard.path):
        with fetched(unit.shard.path, unit.shard.sha256) as local:
            record = run_unit(replace(unit, shard=replace(unit.shard, path=str(local))), options)
        _name_the_url(record, str(local), unit.shard.path)
        return record
    if is_third_party(unit.subject):
        return run_subject_unit(unit, options)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    marker = _mark_running(options, unit)
    _hold(options)
    tok = load_tokenizer(unit.tokenizer)
    tally = _Tally()
    docs = read_documents(unit.shard.path, unit.shard.column, refused=tally.refuse)
    timing = {"subject": 0.0, "reference": 0.0}
    fronts: dict[str, dict[str, _FrontEndTally]] = {}
    if unit.level == 1:
        _level1(tok, docs, unit.subject, tally, timing)
        check, what = f"corpus.whole_encode.{unit.subject}", "documents"
    elif unit.level == 2:
        _level2(tok, docs, options.chunk_counts, tally, timing)
        check, what = "corpus.chunked_encode", "document_chunkings"
    elif unit.level == 3:
        _level3(tok, docs, tally, timing, fronts)
        check, what = "corpus.session_replay", "turn_comparisons"
    else:
        raise SuiteError(f"unknown comparison level {unit.level}; levels are 1, 2, 3")
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    fast_total = tally.fast + tally.fallbacks
    details = {
        "unit": unit.key,
        "comparison_level": unit.level,
        "subject": unit.subject,
        "shard": unit.shard.name,
        "shard_sha256": unit.shard.sha256,
        "suite_digest": suite_digest(),
        "reference_version": reference_version(),
        "documents": tally.documents,
        "characters": tally.characters,
        "differing_documents": tally.pointers,
        **tally.accounting(unit.level),
        "fast_path_share": (tally.fast / fast_total) if fast_total else None,
        "chunk_counts": list(options.chunk_counts) if unit.level == 2 else None,
        "session_paths": tally.paths or None,
        "front_ends": {v: {f: t.summary() for f, t in ends.items()} for v, ends in fronts.items()} or None,
        "chat_rendering": chat_rendering(tok),
        "wall_seconds": round(wall, 4),
        "cpu_seconds": round(cpu, 4),
        "subject_seconds": round(timing["subject"], 4),
        "reference_seconds": round(timing["reference"], 4),
        "subject_chars_per_second": _rate(tally.characters * _encodes(unit, options), timing["subject"]),
        "reference_chars_per_second": _rate(tally.characters, timing["reference"]),
    }
    if marker is not None:
        marker.unlink(missing_ok=True)
    return declare(make_record(
        "corpus", LEVEL_NAMES[unit.level], check, tokenizer=tok.name, tokenizer_sha256=tok.sha256,
        comparisons=tally.comparisons, differences=tally.differences,
        fast_path=tally.fast if unit.level > 1 else None, fallbacks=tally.fallbacks if unit.level > 1 else None,
        unit=what, details=details, oracle=unit_oracle(unit),
    ))


def unit_oracle(unit: Unit) -> str:
    """What a built-in subject's unit compares with: at level 1 its whole encode is the library's own (subject "delta":
    `encode_chunked` with one chunk, the library's batch path; "reference-batch": the library's batch encode), so the
    comparison with `reference_encode` is the library against itself ("self"); levels 2 and 3 compare the delta
    paths with whole reference encodes ("reference")."""
    return "self" if unit.level == 1 else "reference"


def _encodes(unit: Unit, options: Options) -> int:
    return len(options.chunk_counts) if unit.level == 2 else 1


def _rate(chars: int, seconds: float) -> float | None:
    return round(chars / seconds, 1) if seconds > 0 else None


# ---- storing unit records: atomic, idempotent, merged without double counting ----

def unit_path(out: Path, unit: Unit) -> Path:
    return out / "units" / f"{unit.key}.json"


def finished_record(out: Path, unit: Unit) -> dict | None:
    """The stored record of a finished unit, or None (absent, unreadable, or made by another suite digest or
    reference version: the unit runs again, whole)."""
    path = unit_path(out, unit)
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(rec, dict) or rec.get("schema") != SCHEMA:
        return None
    d = rec.get("details", {})
    if (d.get("suite_digest"), d.get("reference_version")) != (suite_digest(), reference_version()):
        return None  # recorded by other code or another reference: stale, run again
    return rec


def _write_whole(path: Path, text: str) -> None:
    """Write `text` to `path` all at once (temporary file, fsync, rename); on any failure (a full disk: ENOSPC or
    EFBIG) the temporary file is removed and the OSError raised, and `path` keeps its previous content."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.filename is None:  # a failed buffered write names no file: name the one being written
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_unit_record(out: Path, unit: Unit, record: dict) -> Path:
    """Store a unit's record all at once: write a temporary file, fsync, rename over the final name."""
    path = unit_path(out, unit)
    # the record's identity (ledger.records): the same unit under the same suite is one record, however often stored
    record = {**record, "id": f"corpus:{unit.key}:{str(record['details'].get('suite_digest', ''))[:16]}"}
    text = json.dumps(record, sort_keys=True, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_whole(path, text)
    return path


def merge_ledger(out: Path) -> Path:
    """Regenerate `corpus-ledger.jsonl` from every current unit record in `out` (each unit once, sorted by key;
    records of another suite digest or reference version are left out), so slices run into one folder by a
    job array or several runs merge into one ledger without double counting."""
    folder = out / "units"
    lines = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            continue
        d = rec.get("details", {}) if isinstance(rec, dict) else {}
        if rec.get("schema") == SCHEMA and (d.get("suite_digest"), d.get("reference_version")) == (
            suite_digest(), reference_version()
        ):
            lines.append(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")
    target = out / "corpus-ledger.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_whole(target, "".join(lines))
    return target


def outcome(record: dict) -> dict:
    """What must agree between two runs of the same unit (everything but timing and provenance)."""
    d = record["details"]
    keep = ("unit", "documents", "characters", "differing_documents", "fast_path_share", "shard_sha256")
    accounting = ("refused_documents", "refused", "skipped_documents", "skipped", "short_documents")
    return {"tokenizer": record["tokenizer"], "level": record["level"], "comparisons": record["comparisons"],
            "differences": record["differences"], "fast_path": record["fast_path"],
            "fallbacks": record["fallbacks"], **{k: d[k] for k in keep}, **{k: d.get(k) for k in accounting}}

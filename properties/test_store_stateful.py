"""Stateful test of the session store: every answer equals the reference, whatever happened before.

A Hypothesis `RuleBasedStateMachine` drives one `SessionStore` through appends, rewrites of history, explicit
evictions and memory-bound evictions, content-lookup hits and misses, short direct texts, several keyed sessions
interleaved, and tokenizer switches (cycling through every admitted tokenizer). Invariants: the answer of every
call equals the reference, the stats add up, the content index never holds more than its entry limit, and the
resident bytes stay under the bound (or only the entry just written is left). A separate test injects a digest
that always collides and shows that it costs byte comparisons, never a wrong ID.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from delta_suite.delta.chat_samples import CHATS, RAW_SESSIONS
from delta_suite.delta.session import Session, SessionStats
from delta_suite.delta.store import MARK_FLOOR_BYTES, MIN_BYTES, SessionStore, StoreStats, mark_offsets
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.spec.reference import reference_encode
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS, RepairParams
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from properties.conftest import ADMITTED
from properties.repair_strategies import JUNCTIONS, PROSE

MEMORY_BYTES = 160_000  # a few sessions of ~5-10 KB text each, so LRU eviction happens
MAX_ENTRIES = 2  # small, so "oldest dropped first" happens
KEYS = ("alice", "bob", "carol")
DOCUMENTS = tuple(
    "".join(m["content"] for m in messages) for messages in CHATS.values()
) + tuple("".join(turns) for turns in RAW_SESSIONS.values())
TALLY: Counter = Counter()
FIRST: dict = {}  # the first difference of the failing (shrunk) run, for its ledger record


def _long(text: str) -> str:
    """`text` repeated until it is at least MIN_BYTES UTF-8 bytes (content lookup only considers such texts)."""
    out = text
    while len(out.encode("utf-8")) < MIN_BYTES:
        out += text
    return out


DELTAS = st.one_of(
    st.sampled_from([right for _, right in JUNCTIONS]),
    st.sampled_from(PROSE),
    st.text(alphabet=" \n\t'0123456789abcé中\u0301", min_size=1, max_size=12),
)


class StoreMachine(RuleBasedStateMachine):
    """Operations on one SessionStore; every answer is checked against the reference as it is returned."""

    texts = Bundle("texts")

    params = DEFAULT_REPAIR_PARAMS

    @initialize()
    def start(self) -> None:
        self.tok_index = 0
        self.calls_since_switch = 0
        self.store = SessionStore(load_tokenizer(ADMITTED[0]), self.params, memory_bytes=MEMORY_BYTES,
                                  max_entries=MAX_ENTRIES)

    def _check(self, text: str, key: str | None = None) -> None:
        got = self.store.encode(text, key)
        self.calls_since_switch += 1
        want = reference_encode(load_tokenizer(ADMITTED[self.tok_index]), text)  # the one the store was told to serve
        TALLY["comparisons"] += 1
        TALLY[self.store.last_path] += 1
        if self.store.last_path.endswith(tuple(f"repaired:window={k}" for k in range(6))):
            TALLY["repaired"] += 1
        elif ":fallback:" in self.store.last_path or self.store.last_path.startswith("fallback"):
            TALLY["fallback"] += 1
        if got != want:  # the last failing call is the shrunk example's: kept for the ledger record
            at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
            FIRST.clear()
            FIRST.update(tokenizer=self.store.tok.name, path=self.store.last_path, text=text, position=at,
                         store_ids=got[at:at + 3], reference_ids=want[at:at + 3])
        assert got == want, f"{self.store.tok.name}: {self.store.last_path}"

    @rule(target=texts, doc=st.sampled_from(DOCUMENTS), tail=DELTAS)
    def new_text(self, doc: str, tail: str) -> str:
        return _long(doc) + tail

    @rule(target=texts, text=texts, delta=DELTAS)
    def append(self, text: str, delta: str) -> str:
        return text + delta

    @rule(target=texts, text=texts, cut=st.floats(0.5, 0.99), new=DELTAS)
    def rewrite_history(self, text: str, cut: float, new: str) -> str:
        return text[: int(len(text) * cut)] + new + text[int(len(text) * cut) :]

    @rule(text=texts)
    def encode_by_content(self, text: str) -> None:
        self._check(text)

    @rule(text=texts, delta=DELTAS)
    def content_hit_then_extension(self, text: str, delta: str) -> None:
        self._check(text)
        self._check(text + delta)

    @rule(key=st.sampled_from(KEYS), text=texts)
    def encode_keyed(self, key: str, text: str) -> None:
        self._check(text, key)

    @rule(key=st.sampled_from(KEYS), text=texts, delta=DELTAS)
    def keyed_turns(self, key: str, text: str, delta: str) -> None:
        self._check(text, key)
        self._check(text + delta, key)

    @rule(text=st.sampled_from(PROSE))
    def short_direct(self, text: str) -> None:
        self._check(text)

    @rule(key=st.sampled_from(KEYS))
    def evict(self, key: str) -> None:
        self.store.evict(key)

    @precondition(lambda self: self.calls_since_switch >= 6)
    @rule()
    def switch_tokenizer(self) -> None:
        self.calls_since_switch = 0
        self.tok_index = (self.tok_index + 1) % len(ADMITTED)
        self.store.switch_tokenizer(load_tokenizer(ADMITTED[self.tok_index]))
        TALLY["switches"] += 1

    def teardown(self) -> None:
        stats = self.store.stats
        TALLY.update(evictions=stats.evictions, dropped_oldest=stats.dropped_oldest,
                     collision_rejects=stats.collision_rejects, mark_matches=stats.mark_matches)

    @invariant()
    def stats_add_up(self) -> None:
        assert self.store.stats.add_up(), self.store.stats

    @invariant()
    def limits_hold(self) -> None:
        assert len(self.store.entries) <= MAX_ENTRIES
        assert self.store.resident_bytes() <= MEMORY_BYTES or len(self.store.lru) <= 1


def test_store_state_machine(ledger) -> None:
    """Run the machine; every answer equals the reference and the stats add up at every step."""
    TALLY.clear()
    steps = settings(settings.default, max_examples=max(8, settings.default.max_examples // 4),
                     stateful_step_count=40)
    FIRST.clear()
    failed = False
    try:
        run_state_machine_as_test(StoreMachine, settings=steps)
    except Exception:
        failed = True  # the record below carries the difference, then the failure goes on to pytest
        raise
    finally:
        ledger.record("repair", "store_state_machine", None, comparisons=TALLY["comparisons"],
                      differences=1 if failed and FIRST else 0, fast_path=TALLY["repaired"],
                      fallbacks=TALLY["fallback"], unit="call",
                      details={k: v for k, v in TALLY.items() if k not in ("comparisons",)}
                      | {"tokenizers": ADMITTED, "first_difference": dict(FIRST) or None}, oracle="reference")
    assert TALLY["comparisons"] > 0


class UncheckedReuseMachine(StoreMachine):
    """The same machine over a store whose sessions reuse stored IDs without checking the seam (a broken variant)."""

    params = RepairParams(check_seam=False)


def test_state_machine_catches_unchecked_reuse() -> None:
    """The machine has teeth: over a store with unchecked reuse it finds an answer that differs from the reference."""
    quick = settings(settings.default, max_examples=200, stateful_step_count=40, phases=[Phase.generate],
                     database=None, derandomize=True)
    with pytest.raises(AssertionError, match="unchecked:reuse"):
        run_state_machine_as_test(UncheckedReuseMachine, settings=quick)


class CollidingHasher:
    """A digest that is the same for every input: every stored text of a fitting length is proposed."""

    def update(self, data: bytes) -> None:
        pass

    def copy(self) -> CollidingHasher:
        return self

    def digest(self) -> bytes:
        return b"\x00" * 16


def test_injected_collision_costs_a_comparison_never_a_wrong_id(tok, ledger) -> None:
    """With a digest that always collides, lookups propose texts that are not prefixes; the byte comparison rejects
    them (counted in collision_rejects), every answer equals the reference, and true prefixes are still reused."""
    store = SessionStore(tok, hasher=CollidingHasher)
    first = _long(DOCUMENTS[0]) + "a"
    other = first[:-1] + "b"  # same length, so the colliding digest proposes each for the other
    answers = []
    for text in (first, other, other + " more", first + " tail", other + " more!"):
        answers.append((store.encode(text) == reference_encode(tok, text), store.last_path))
    ledger.record("repair", "store_injected_collision", tok, comparisons=len(answers),
                  differences=sum(not ok for ok, _ in answers),
                  unit="call", details={"collision_rejects": store.stats.collision_rejects,
                                        "paths": [p for _, p in answers]}, oracle="reference")
    assert all(ok for ok, _ in answers), answers
    # Every digest collides, so each call tries the stored entries no longer than the text, longest first (ties: the
    # newer first): call 2 rejects `first` (1); call 3 finds `other` first (0); call 4 rejects `other more`, which
    # has its length, before `first` (1); call 5 finds `other more` first (0). Exactly two rejections.
    assert store.stats.collision_rejects == 2, store.stats
    assert answers[2][1].startswith("content:") and "miss" not in answers[2][1], answers
    assert answers[3][1].startswith("content:") and "miss" not in answers[3][1], answers  # found after a rejection
    assert store.stats.add_up()


def test_session_paths_and_stats(tok) -> None:
    """A Session names each path: new, repaired or fallback, identical, history changed, evicted, tokenizer
    changed; an inadmissible tokenizer always takes the reference path; every answer is the reference's."""
    base = _long(DOCUMENTS[0])
    session = Session(tok)
    expected = []
    for text, step in ((base, None), (base + " more", None), (base + " more", None), ("x" + base, None),
                       (base, "evict"), (base, "switch"), (base + "!", None)):
        if step == "evict":
            session.evict()
        elif step == "switch":
            session.switch_tokenizer(load_tokenizer(next((n for n in ADMITTED if n != tok.name), tok.name)))
        assert session.encode(text) == reference_encode(session.tok, text), session.last_path
        expected.append(session.last_path.split(":")[0] + ":" + session.last_path.split(":")[1]
                        if ":" in session.last_path else session.last_path)
    assert expected[0] == "initialized:new" and expected[2] == "identical"
    assert expected[1].startswith(("repaired", "fallback"))
    assert expected[3] == "initialized:history_changed" and expected[4] == "initialized:evicted"
    if len(ADMITTED) > 1:
        assert expected[5] == "initialized:tokenizer_changed"
    assert session.stats.calls == 7 and session.stats.add_up()
    not_bpe = dataclasses.replace(tok.admission_inputs, model_type="WordPiece")  # refused: model_not_bpe
    refused_tok = dataclasses.replace(tok, admission_inputs=not_bpe)
    refused, store = Session(refused_tok), SessionStore(refused_tok)
    for text in (base, base + " more"):
        assert refused.encode(text) == reference_encode(tok, text)
        assert refused.last_path == "reference:not_admitted"
        for key in (None, "k"):
            assert store.encode(text, key) == reference_encode(tok, text)
            assert store.last_path == "reference:not_admitted"
    assert store.stats.add_up() and not store.entries and not store.keyed
    assert refused.stats.reference == refused.stats.calls == 2 and refused.stats.add_up()
    assert Session(tok).stored_bytes() == 0 and refused.stored_bytes() == 0  # nothing stored holds no bytes
    session.evict()
    assert session.stored_bytes() == 0


def test_memory_bound_evicts_only_over_it_and_keeps_the_latest(tok, ledger) -> None:
    """The store's LRU bound: under the budget nothing is evicted (two keyed sessions stay resident); over it, the
    least recently used slots go until the store fits, but the slot just used always stays, even alone over the
    budget; the eviction count is exactly the slots that went. Every answer is the reference's (the ledger record
    counts the answers that differ, before any assertion)."""
    a, b = _long(DOCUMENTS[0]), _long(DOCUMENTS[1])
    roomy, tight = SessionStore(tok, memory_bytes=10**9), SessionStore(tok, memory_bytes=1)
    fresh_evictions = roomy.stats.evictions
    differences = sum(roomy.encode(text, key) != reference_encode(tok, text) for key, text in (("a", a), ("b", b)))
    roomy_state = (len(roomy.lru), roomy.stats.evictions)
    calls = (("a", a), ("b", b), (None, a + " more"))
    tight_states = []
    for key, text in calls:
        differences += tight.encode(text, key) != reference_encode(tok, text)
        tight_states.append((len(tight.lru), tight.stats.evictions))
    ledger.record("repair", "store_memory_bound", tok, comparisons=2 + len(calls), differences=differences,
                  unit="call", details={"evictions": tight.stats.evictions}, oracle="reference")
    assert differences == 0
    assert fresh_evictions == 0 and roomy_state == (2, 0)
    assert tight_states == [(1, 0), (1, 1), (1, 2)] and tight.stats.add_up()
    exact = SessionStore(tok, memory_bytes=roomy.resident_bytes())  # a budget the two sessions fill exactly
    for key, text in (("a", a), ("b", b)):
        exact.encode(text, key)
    assert exact.resident_bytes() == exact.memory_bytes and exact.stats.evictions == 0  # at the bound is not over it


def test_content_lookup_extends_the_longest_stored_prefix(tok, ledger) -> None:
    """With two stored entries that are both prefixes of a new text, the longer one is extended (the least work);
    the shorter one stays as it was."""
    base = _long(DOCUMENTS[0])
    longer, shorter = base + " and then some", base
    store = SessionStore(tok)
    for text in (longer, shorter):  # the shorter is stored second: the longer one is not its prefix
        store.encode(text)
    text = longer + " more"
    differences = int(store.encode(text) != reference_encode(tok, text))
    kept = sorted(entry.data.decode("utf-8") for entry in store.entries.values())
    ledger.record("repair", "store_longest_prefix", tok, comparisons=1, differences=differences, unit="call",
                  details={"path": store.last_path}, oracle="reference")
    assert differences == 0 and store.stats.paths["content_extended"] == 1
    assert kept == sorted([shorter, text])


def test_session_stats_count_every_path_once() -> None:
    """`SessionStats.count` puts each call under exactly one path, so the per-path counts add up to the calls;
    `extensions` counts the calls that extended the stored text (repaired, fell back, or unchecked reuse)."""
    stats = SessionStats()
    paths = ("initialized:new", "repaired:window=0", "repaired:window=2", "fallback:window_covers_all",
             "fallback:no_run", "identical", "noop", "reference:not_admitted", "unchecked")
    for path in paths:
        stats.count(path)
    assert stats.calls == len(paths) and stats.add_up()
    assert (sum(stats.initialized.values()), stats.repaired, stats.fallbacks, stats.identical, stats.reference,
            stats.unchecked) == (1, Counter({0: 1, 2: 1}), Counter({"window_covers_all": 1, "no_run": 1}), 2, 1, 1)
    assert stats.extensions == 5
    with pytest.raises(ValueError, match="unknown session path"):
        stats.count("teleported")


def test_session_stored_bytes_follow_their_definition(tok) -> None:
    """`Session.stored_bytes` is the UTF-8 text plus 20 bytes per token, kept incrementally across extensions (the
    count after repairs equals a recount), and 0 once nothing is stored."""
    session = Session(tok)
    text = _long(DOCUMENTS[0])
    for step in (text, text + " more", text + " more and \u00e9t\u00e9", text + " more and \u00e9t\u00e9!"):
        session.encode(step)
        assert session.stored_bytes() == len(step.encode("utf-8")) + 20 * len(reference_encode(tok, step))
    session.evict()
    assert session.stored_bytes() == 0


def test_store_stats_add_up_detects_each_miscount() -> None:
    """`StoreStats.add_up` is false when the paths do not sum to the calls, when the session calls are not the
    keyed and content calls, or when the sessions' own counts do not add up, each alone."""
    def stats(calls: int, paths: dict, session_paths: list[str]) -> StoreStats:
        out = StoreStats(calls=calls, paths=Counter(paths))
        for path in session_paths:
            out.sessions.count(path)
        return out

    assert stats(2, {"keyed": 1, "direct": 1}, ["initialized:new"]).add_up()
    assert not stats(3, {"keyed": 1, "direct": 1}, ["initialized:new"]).add_up()  # a call on no path
    assert not stats(2, {"keyed": 1, "direct": 1}, ["initialized:new", "identical"]).add_up()  # a session call too many
    broken = stats(2, {"keyed": 1, "direct": 1}, ["initialized:new"])
    broken.sessions.identical += 1  # the session's paths no longer sum to its calls
    assert not broken.add_up()


def test_switching_the_tokenizer_never_reuses_the_old_ones_ids(ledger) -> None:
    """After `switch_tokenizer`, keyed and content lookups answer with the new tokenizer's IDs (content entries of
    the old one are dropped, keyed sessions re-initialize); switching to the tokenizer already served changes
    nothing (the stored entry is still found)."""
    text = _long(DOCUMENTS[0])
    old = load_tokenizer(ADMITTED[0])
    others = (load_tokenizer(name) for name in ADMITTED[1:])
    new = next((t for t in others if reference_encode(t, text) != reference_encode(old, text)), None)
    if new is None:
        pytest.skip("needs two provisioned tokenizers that encode the text differently")
    store = SessionStore(old)
    store.encode(text)
    store.encode(text, "k")
    store.switch_tokenizer(new)
    answers = [(store.encode(text), store.last_path), (store.encode(text, "k"), store.last_path)]
    differences = sum(ids != reference_encode(new, text) for ids, _ in answers)
    store.switch_tokenizer(new)
    again = (store.encode(text), store.last_path)
    differences += again[0] != reference_encode(new, text)
    ledger.record("repair", "store_switch_tokenizer", new, comparisons=3, differences=differences, unit="call",
                  details={"paths": [p for _, p in answers] + [again[1]]}, oracle="reference")
    assert differences == 0
    assert answers[0][1].startswith("content:miss") and answers[1][1] == "keyed:initialized:tokenizer_changed"
    assert again[1] == "content:identical"


def test_content_lookup_finds_an_extended_text_by_its_digests(tok, ledger) -> None:
    """Without a key, a text that extends a stored one is found by content (the end digest of the stored bytes
    equals the running digest of the new text there) and every mark of the stored text matches on the way; a text
    that does not extend it is a miss and matches no mark. Every answer is the reference's (counted in the ledger
    record before any assertion)."""
    base = _long(DOCUMENTS[0])
    while len(base.encode("utf-8")) <= 2 * MARK_FLOOR_BYTES:
        base += base
    prefix_bytes = base.encode("utf-8")[:MARK_FLOOR_BYTES]
    prefix = prefix_bytes.decode("utf-8", errors="ignore")
    store = SessionStore(tok)
    states, differences = [], 0
    for text in (base, base + " more", "x" + base, prefix):
        differences += store.encode(text) != reference_encode(tok, text)
        states.append((store.stats.paths["content_miss"], store.stats.paths["content_extended"],
                       store.stats.mark_matches))
    ledger.record("repair", "store_content_lookup", tok, comparisons=len(states), differences=differences,
                  unit="call", details={"mark_matches": store.stats.mark_matches}, oracle="reference")
    marks = len(mark_offsets(len(base.encode("utf-8"))))
    floor = MARK_FLOOR_BYTES  # marks lie strictly below the length, doubling from the floor
    assert mark_offsets(floor) == [] and mark_offsets(floor + 1) == [floor]
    assert mark_offsets(4 * floor) == [floor, 2 * floor]
    assert mark_offsets(4 * floor + 1) == [floor, 2 * floor, 4 * floor]
    assert differences == 0 and marks >= 2
    assert len(prefix.encode("utf-8")) == MARK_FLOOR_BYTES  # the prefix ends on a mark, which matches there too
    assert states == [(1, 0, 0), (1, 1, marks), (2, 1, marks), (3, 1, marks + 1)]


def test_entry_bound_drops_the_oldest(tok, ledger) -> None:
    """Content entries beyond `max_entries` drop the oldest first, one per entry added, counted; the answers stay
    the reference's (counted in the ledger record before any assertion)."""
    store = SessionStore(tok, max_entries=2)
    fresh = store.stats.dropped_oldest
    texts = [_long(doc) for doc in DOCUMENTS[:3]]
    differences = sum(store.encode(text) != reference_encode(tok, text) for text in texts)
    ledger.record("repair", "store_entry_bound", tok, comparisons=len(texts), differences=differences, unit="call",
                  details={"dropped_oldest": store.stats.dropped_oldest}, oracle="reference")
    kept = [entry.data for entry in store.entries.values()]
    assert differences == 0 and fresh == 0
    assert kept == [t.encode("utf-8") for t in texts[1:]] and store.stats.dropped_oldest == 1

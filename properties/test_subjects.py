"""Third-party subjects: the same checks against other implementations, and the published divergences reproduced.

Each reproduction passes when the published divergence is found. A peer that cannot be installed here makes its
test skip with the reason, and the ledger gets a "not installed" row with zero comparisons (never a pass).
Long sweeps (every fastokens release, the LoPT search, Unicode skew over every scalar value, toktier on the full
battery) are marked `slow`; run them with `-m slow`.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import delta_suite.subjects.fastokens_repro as fastokens_repro
import pytest
from delta_suite.checks.battery import battery_case, get_profile
from delta_suite.corpora.compare import document_text
from delta_suite.corpora.readers import read_documents
from delta_suite.corpora.samples import SAMPLES
from delta_suite.frozen.cache import cache_root
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.spec.classes import N, S, class_table
from delta_suite.spec.engine_classes import scalar_values
from delta_suite.spec.reference import reference_encode
from delta_suite.subjects.by_name import get_subject
from delta_suite.subjects.envs import version_key
from delta_suite.subjects.fastokens_releases import (
    DIVERGES,
    FIRST_FIXED,
    KNOWN_RELEASES,
    MATCHES,
    NEWEST_KNOWN,
    NO_EXPECTATION,
    NOT_INSTALLED,
    WHITESPACE_REPLAY,
    expected_outcome,
    versions_to_sweep,
)
from delta_suite.subjects.fastokens_repro import (
    replay_transcript,
    sweep_versions,
    two_call_diverges,
    whitespace_seam_turns,
)
from delta_suite.subjects.lopt_repro import describe_trigger, find_trigger
from delta_suite.subjects.protocol import SubjectUnavailable, UnknownSubject, names, parse_subject
from delta_suite.subjects.records import compare_whole, subject_record, unavailable_record
from delta_suite.subjects.replay import replay
from delta_suite.subjects.unicode_skew import probe_skew, skew_candidates

from properties.conftest import PROVISIONED

FIXTURES = Path(__file__).resolve().parent.parent / "subjects" / "fixtures"
SGLANG_FASTOKENS = "0.1.2"


def _add(ledger, rec: dict) -> None:
    rec["details"]["test"] = ledger.test_id
    ledger.records.append(rec)


def _subject_or_skip(ledger, spec: str, tok, level: str, check: str):
    """The subject, or a "not installed" ledger row and a skip with the reason."""
    try:
        return get_subject(spec, tok)
    except SubjectUnavailable as exc:
        _add(ledger, unavailable_record(spec, tok, level, check, exc.reason))
        pytest.skip(f"{spec} not installed here: {exc.reason}")


def _tok_or_skip(name: str):
    if name not in PROVISIONED:
        pytest.skip(f"{name} not provisioned")
    return load_tokenizer(name)


# -- protocol ------------------------------------------------------------------------------------------------


def test_subject_names_parse_and_unknown_names_are_refused() -> None:
    """NAME[==VERSION] parses; an unknown name or a malformed spec is a SuiteError naming the known subjects."""
    assert parse_subject("fastokens==0.1.2").version == "0.1.2"
    assert parse_subject("lopt_ids").name == "lopt-ids"
    assert names()[0] == "delta"
    with pytest.raises(UnknownSubject, match="known"):
        parse_subject("fastokens==")
    tok = load_tokenizer(PROVISIONED[0]) if PROVISIONED else None
    with pytest.raises(UnknownSubject, match="known"):
        get_subject("no-such-subject", tok)


def test_uninstallable_version_is_reported_not_installed(ledger) -> None:
    """A version the index does not have raises SubjectUnavailable (and would be a "not installed" row)."""
    if not PROVISIONED:
        pytest.skip("no tokenizer provisioned")
    tok = load_tokenizer(PROVISIONED[0])
    with pytest.raises(SubjectUnavailable) as info:
        get_subject("gigatoken==0.0.0.dev999", tok)
    rec = unavailable_record("gigatoken==0.0.0.dev999", tok, "encoder", "subject_install", info.value.reason)
    assert rec["details"]["status"] == "not installed" and rec["comparisons"] == 0


# -- the default subject ----------------------------------------------------------------------------------------


def test_delta_subject_replays_and_chunks_exactly(tok, ledger) -> None:
    """The minimal implementation's session equals the reference on every turn of the whitespace-seam replay, and
    its chunked encode equals it on the joined turns."""
    subject = get_subject("delta", tok)
    turns = whitespace_seam_turns(turns=4)
    r = replay(subject, tok, turns)
    text = "".join(turns)
    chunked_ok = subject.encode_chunked(text, 8) == reference_encode(tok, text)
    _add(ledger, subject_record(subject, tok, "repair", "subject_session_replay", comparisons=r.turns,
                                differences=len(r.differences), unit="turns"))
    _add(ledger, subject_record(subject, tok, "chunked", "subject_chunked", comparisons=1,
                                differences=int(not chunked_ok), unit="documents"))
    assert not r.differences and chunked_ok


# -- LoPT --------------------------------------------------------------------------------------------------------


def _lopt_fixture() -> dict:
    return json.loads((FIXTURES / "lopt_cjk_qwen3.json").read_text(encoding="utf-8"))


def test_lopt_position_matching_gives_a_wrong_id_that_id_matching_does_not(ledger) -> None:
    """On the CJK fixture under Qwen3, position-only LoPT differs from the reference at one token (same length,
    a chunk-final character encoded whole where the whole encode splits its bytes), and LoPT with IDs equals it."""
    fx = _lopt_fixture()
    tok = _tok_or_skip(fx["tokenizer"])
    assert tok.sha256 == fx["tokenizer_sha256"]

    text = fx["text"]
    ref = reference_encode(tok, text)
    lopt, lopt_ids = get_subject("lopt", tok), get_subject("lopt-ids", tok)
    pos, ids = lopt.encode(text), lopt_ids.encode(text)
    trig = describe_trigger(tok, text, "cjk", 0, fx["trial"])
    wrong = [i for i, (a, b) in enumerate(zip(pos, ref, strict=False)) if a != b]
    _add(ledger, subject_record(lopt, tok, "chunked", "lopt_cjk_byte_split", comparisons=1,
                                differences=int(pos != ref), unit="documents",
                                counterexample=trig.describe(), path=lopt.last))
    _add(ledger, subject_record(lopt_ids, tok, "chunked", "lopt_cjk_byte_split", comparisons=1,
                                differences=int(ids != ref), unit="documents"))
    assert pos != ref and len(pos) == len(ref) and len(wrong) == 1, "published LoPT divergence not reproduced"
    assert lopt.last["path"] == "joined" and lopt.last["attempts"] == 0  # accepted at the first attempt
    assert len(tok.tokenizer.decode([pos[wrong[0]]]).encode("utf-8")) == 3  # one whole three-byte character
    assert ids == ref


def test_lopt_joins_ordinary_text_exactly(tok, ledger) -> None:
    """LoPT (both variants) returns the reference IDs on ordinary multi-script text long enough for 32 chunks."""
    text = ("".join(SAMPLES[:5]) + "\n") * 12
    ref = reference_encode(tok, text)
    for spec in ("lopt", "lopt-ids"):
        subject = get_subject(spec, tok)
        got = subject.encode(text)
        _add(ledger, subject_record(subject, tok, "chunked", "lopt_ordinary_text", comparisons=1,
                                    differences=int(got != ref), unit="documents", path=subject.last.get("path")))
        assert got == ref


@pytest.mark.slow
def test_lopt_search_regenerates_the_fixture(ledger) -> None:
    """The seeded search finds the fixture text again (the fixture is an output of the search, not hand-made)."""
    fx = _lopt_fixture()
    tok = _tok_or_skip(fx["tokenizer"])
    trig = find_trigger(tok, "cjk", seed=0, length=len(fx["text"]), max_trials=fx["trial"] + 1)
    assert trig is not None and trig.text == fx["text"]


# -- fastokens ---------------------------------------------------------------------------------------------------

_SHARED: dict[tuple[str, str], object] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_shared_peers():
    """Peers opened once for this module's fastokens tests are closed when the module ends."""
    yield
    for subject in _SHARED.values():
        subject.close()
    _SHARED.clear()


def _shared_subject(ledger, spec: str, tok, level: str, check: str):
    """`_subject_or_skip`, opened once per module (a fastokens peer takes ~2 s to start and load the tokenizer)."""
    key = (spec, tok.name)
    if key not in _SHARED:
        _SHARED[key] = _subject_or_skip(ledger, spec, tok, level, check)
    return _SHARED[key]


def test_fastokens_splits_a_whitespace_run_across_turns_in_one_process(ledger) -> None:
    """fastokens 0.1.2 (SGLang v0.5.19's pin), replayed in one session, diverges once a turn ending in newline +
    spaces is followed by one beginning with a newline: a lone newline (ID 198) where the reference keeps the
    newline-spaces-newline token whole; every later turn differs too; a fresh object encodes the same text right.
    The expectations table records this release as diverging."""
    tok = _tok_or_skip("qwen3_8b")
    subject = _shared_subject(ledger, f"fastokens=={SGLANG_FASTOKENS}", tok, "repair", "fastokens_whitespace_replay")
    turns = whitespace_seam_turns()
    r = replay_transcript(subject, tok, turns)
    first = r.first
    full = "".join(turns)
    fresh_ok = subject.encode_fresh(full) == reference_encode(tok, full)
    _add(ledger, subject_record(subject, tok, "repair", "fastokens_whitespace_replay", comparisons=r.turns,
                                differences=len(r.differences), unit="turns",
                                counterexample=None if first is None else vars(first), fresh_object_matches=fresh_ok,
                                expected=expected_outcome(tok.name, subject.version)))
    assert first is not None, "published fastokens divergence not reproduced"
    assert expected_outcome(tok.name, SGLANG_FASTOKENS) == DIVERGES
    assert first.subject_ids[0] == 198 and first.subject_len == first.reference_len + 1
    assert [d.turn for d in r.differences] == list(range(first.turn, len(turns)))
    assert fresh_ok


def test_fastokens_minimal_trigger(ledger) -> None:
    """The shrunk trigger: an earlier call of 4,096 characters ending "\\n " then the same text + "\\n" diverges on
    0.1.2; with 4,095 characters it does not (the reuse starts at 4,096)."""
    tok = _tok_or_skip("qwen3_8b")
    subject = _shared_subject(ledger, f"fastokens=={SGLANG_FASTOKENS}", tok, "repair", "fastokens_minimal_trigger")
    a = "x" * 4094 + "\n "
    hit, got, want = two_call_diverges(subject.session, tok, a, "\n")
    miss, *_ = two_call_diverges(subject.session, tok, a[1:], "\n")
    _add(ledger, subject_record(subject, tok, "repair", "fastokens_minimal_trigger", comparisons=2,
                                differences=int(hit) + int(miss), unit="sessions",
                                counterexample={"earlier": "x*4094 + '\\n '", "appended": "\\n",
                                                "subject_tail": got[-3:], "reference_tail": want[-3:]}))
    assert hit and not miss


def test_fastokens_forked_sessions_equal_objects_built_in_the_server(ledger) -> None:
    """A forked session (a copy of a template object that never encoded, in a process of its own) answers every call
    exactly as a session whose object `Tokenizer.from_file` builds in the server process: on the minimal trigger
    (both diverge) and on the 4,095-character miss (both match). Each forked session runs in a new process."""
    tok = _tok_or_skip("qwen3_8b")
    subject = _shared_subject(ledger, f"fastokens=={SGLANG_FASTOKENS}", tok, "repair", "fastokens_forked_sessions")
    a = "x" * 4094 + "\n "
    calls = [(a, a + "\n"), (a[1:], a[1:] + "\n")]
    pids, compared, unequal = set(), 0, 0
    answers = {}
    for mode, opener in (("forked", subject.session), ("in_process", subject.session_in_process)):
        for k, texts in enumerate(calls):
            with opener() as session:
                answers[mode, k] = [session.encode(t) for t in texts]
                if mode == "forked":
                    pids.add(session.last["session_pid"])
    for k in range(len(calls)):
        compared += len(calls[k])
        unequal += sum(x != y for x, y in zip(answers["forked", k], answers["in_process", k], strict=True))
    hit_ref, miss_ref = reference_encode(tok, calls[0][1]), reference_encode(tok, calls[1][1])
    _add(ledger, subject_record(subject, tok, "harness", "fastokens_forked_sessions", comparisons=compared,
                                differences=unequal, unit="encodes", session_processes=len(pids)))
    assert unequal == 0
    assert answers["forked", 0][1] != hit_ref and answers["forked", 1][1] == miss_ref  # the check can see the bug
    assert len(pids) == len(calls)


def test_fastokens_pinned_release_composes_pairs_the_reference_leaves_apart(ledger) -> None:
    """Found by `fuzz --subject fastokens==0.1.2 --path repair`: fastokens 0.1.2's NFC composes the Tulu-Tigalari
    vowel-sign pairs that Unicode 16 made canonical compositions (U+113C2 U+113C2 -> U+113C5, U+113C2 U+113B8 ->
    U+113C7), which the reference's NFC leaves apart; its whole encode of each decomposed pair equals the
    reference's encode of the composed character instead. (Releases up to 0.3.3 do this; 0.3.4 and 0.3.5 do not.)"""
    import unicodedata2

    tok = _tok_or_skip("qwen3_8b")
    subject = _shared_subject(ledger, f"fastokens=={SGLANG_FASTOKENS}", tok, "encoder", "fastokens_nfc_skew")
    composed = ["\U000113c5", "\U000113c7"]
    pairs = [unicodedata2.normalize("NFD", c) for c in composed]
    got = subject.encode_many(pairs)
    want = [reference_encode(tok, t) for t in pairs]
    as_composed = [reference_encode(tok, c) for c in composed]
    differing = [t for t, g, w in zip(pairs, got, want, strict=True) if g != w]
    example = {"text": pairs[0], "subject_ids": got[0], "reference_ids": want[0]}
    _add(ledger, subject_record(subject, tok, "encoder", "fastokens_nfc_skew", comparisons=len(pairs),
                                differences=len(differing), unit="strings", counterexample=example,
                                codepoints=[f"U+{ord(c):04X}" for c in composed]))
    assert all(len(t) == 2 for t in pairs)
    assert got == as_composed and len(differing) == len(pairs)


@pytest.mark.parametrize("version", ["0.3.5", "0.3.3"])
def test_fastokens_fixed_releases_match_on_the_same_replay(version: str, ledger) -> None:
    """The newest release the table knows (0.3.5, pinned) and the first fixed one (0.3.3) replay the same transcript
    with 0 differences under qwen3_8b, as the expectations table records."""
    assert {version} <= {NEWEST_KNOWN, FIRST_FIXED}
    tok = _tok_or_skip("qwen3_8b")
    subject = _subject_or_skip(ledger, f"fastokens=={version}", tok, "repair", "fastokens_whitespace_replay")
    try:
        r = replay_transcript(subject, tok)
    finally:
        subject.close()
    first = r.first
    _add(ledger, subject_record(subject, tok, "repair", "fastokens_whitespace_replay", comparisons=r.turns,
                                differences=len(r.differences), unit="turns",
                                counterexample=None if first is None else vars(first),
                                expected=expected_outcome(tok.name, version)))
    assert expected_outcome(tok.name, version) == MATCHES
    assert r.turns == 6 and r.differences == []


def test_fastokens_sweep_verdicts_follow_the_table(monkeypatch: pytest.MonkeyPatch, ledger) -> None:
    """The sweep compares each release with the table: a release that cannot be installed is "not installed" (never
    as expected), a release past the table is "no expectation recorded", an outcome other than the recorded one is
    "unexpected", the recorded one "as expected"; with no list given it covers every table release. (The peer is
    replaced by the minimal implementation, which matches the reference on the replay, so no install is needed.)"""
    tok = _tok_or_skip("qwen3_8b")

    class StandIn:
        """fastokens==VERSION played by the minimal implementation; 0.3.4 is "not installable"."""

        def __init__(self, tok, version):
            if version == "0.3.4":
                raise SubjectUnavailable("fastokens", "not installable here: stand-in")
            self.inner, self.name, self.version = get_subject("delta", tok), "fastokens", version

        def session(self):
            return self.inner.session()

        def close(self) -> None:
            pass

    monkeypatch.setattr(fastokens_repro, "FastokensSubject", StandIn)  # the class sweep_versions builds
    sweep = sweep_versions(tok, ["9.9.9", "0.3.5", "0.3.4", "0.1.2"])
    verdicts = {v: row["verdict"] for v, row in sweep.items()}
    want = {"9.9.9": NO_EXPECTATION, "0.3.5": "as expected", "0.3.4": NOT_INSTALLED, "0.1.2": "unexpected"}
    wrong = sum(verdicts.get(v) != w for v, w in want.items()) + len(set(verdicts) - set(want))
    _add(ledger, subject_record(SimpleNamespace(name="fastokens-stand-in", version="delta"), tok, "harness",
                                "fastokens_sweep_verdicts", comparisons=len(want),
                                differences=wrong,
                                unit="releases", verdicts=verdicts))
    assert verdicts == want
    assert sweep["0.3.4"]["status"] == NOT_INSTALLED and "turns" not in sweep["0.3.4"]
    assert versions_to_sweep(["9.9.9", "0.3.5"]) == sorted({"9.9.9", *KNOWN_RELEASES}, key=version_key, reverse=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen3_8b", "llama_3_1_8b", "gpt_oss_120b", "deepseek_v3"])
def test_fastokens_release_sweep(name: str, ledger) -> None:
    """Every release of the expectations table (and every newer one the index lists) replays the transcript; each
    installed release's outcome equals the table's. A release past the table is recorded as "no expectation
    recorded" (not failed); a table release that cannot be installed is recorded as "not installed" (not passed)."""
    tok = _tok_or_skip(name)
    sweep = sweep_versions(tok)
    unexpected = {}
    for version, row in sweep.items():
        if row["status"] == NOT_INSTALLED:
            rec = unavailable_record(f"fastokens=={version}", tok, "repair", "fastokens_sweep", row["reason"])
        else:
            rec = subject_record(SimpleNamespace(name="fastokens", version=version), tok, "repair",
                                 "fastokens_sweep", comparisons=row["turns"], differences=len(row["differing_turns"]),
                                 unit="turns", counterexample=row["first"])
        rec["details"].update(expected=row["expected"], verdict=row["verdict"])
        _add(ledger, rec)
        if row["verdict"] == "unexpected":
            unexpected[version] = (row["expected"], row["status"])
    assert set(KNOWN_RELEASES) <= set(sweep)
    assert all(row["verdict"] == NO_EXPECTATION for v, row in sweep.items() if v not in KNOWN_RELEASES)
    assert not unexpected, f"outcomes differ from the table (expected, measured): {unexpected}"
    ran = [v for v, row in sweep.items() if row["status"] != NOT_INSTALLED and v in KNOWN_RELEASES]
    if not ran:
        pytest.skip(f"no fastokens release of the table is installable here: {sweep}")
    assert all(sweep[v]["status"] == WHITESPACE_REPLAY[name][v] for v in ran)


# -- gigatoken ---------------------------------------------------------------------------------------------------


def test_gigatoken_unicode_skew_is_found_and_confirmed_on_whole_encodes(ledger) -> None:
    """Marks that newer Unicode data reorders (nonzero combining class there, zero in the reference's NFC) make
    gigatoken's Qwen3 encodes differ from the reference; the differing set is the 154 code points of toktier's guard
    (U+07FD ... U+1E6F5). Under Llama 3.1 (no normalizer) the Unicode 17 numbers the reference reads as O differ."""
    import unicodedata2

    qwen = _tok_or_skip("qwen3_8b")
    subject = _subject_or_skip(ledger, "gigatoken", qwen, "encoder", "gigatoken_unicode_skew")
    marks = [cp for cp in scalar_values() if unicodedata2.combining(chr(cp))]
    r = probe_skew(subject, qwen, marks)
    _add(ledger, subject_record(subject, qwen, "encoder", "gigatoken_unicode_skew", comparisons=r.comparisons,
                                differences=len(r.differing), unit="strings", counterexample=(r.examples or [None])[0],
                                codepoints=r.codepoints, ranges=r.ranges()))
    assert len(r.differing) == 154 and r.ranges()[0] == "U+07FD" and r.ranges()[-1] == "U+1E6F5"
    llama = _tok_or_skip("llama_3_1_8b")
    sub2 = _subject_or_skip(ledger, "gigatoken", llama, "encoder", "gigatoken_unicode_skew")

    table = class_table()
    numbers = [cp for cp in scalar_values() if table[cp] not in (N, S) and unicodedata2.category(chr(cp))[0] == "N"]
    r2 = probe_skew(sub2, llama, numbers)
    example = (r2.examples or [None])[0]
    _add(ledger, subject_record(sub2, llama, "encoder", "gigatoken_unicode_skew", comparisons=r2.comparisons,
                                differences=len(r2.differing), unit="strings", counterexample=example,
                                codepoints=r2.codepoints, ranges=r2.ranges()))
    assert r2.differing


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen3_8b", "llama_3_1_8b", "gpt_oss_120b", "deepseek_v3", "deepseek_v4_flash"])
def test_gigatoken_unicode_skew_all_candidates(name: str, ledger) -> None:
    """Every skew candidate (class differs, nonzero combining class, or canonical decomposition) on whole encodes."""
    tok = _tok_or_skip(name)
    subject = _subject_or_skip(ledger, "gigatoken", tok, "encoder", "gigatoken_unicode_skew_all")
    r = probe_skew(subject, tok, skew_candidates())
    _add(ledger, subject_record(subject, tok, "encoder", "gigatoken_unicode_skew_all", comparisons=r.comparisons,
                                differences=len(r.differing), unit="strings", counterexample=(r.examples or [None])[0],
                                codepoints=r.codepoints, ranges=r.ranges()))
    assert r.codepoints > 0


# -- toktier -----------------------------------------------------------------------------------------------------


def _battery_slice(tok, step: int) -> list[tuple[str, tuple[int, ...]]]:
    """(text, repair splits) of every `step`-th `ci` battery case."""
    cases = [battery_case(tok, "ci", 0, i) for i in range(0, get_profile("ci").strings, step)]
    return [(c.text, c.splits) for c in cases]


def _run_toktier(tok, ledger, step: int) -> None:

    subject = _subject_or_skip(ledger, "toktier", tok, "encoder", "toktier_battery")
    cases = _battery_slice(tok, step)
    texts = [t for t, _ in cases]
    info = {k: v for k, v in subject.info.items() if k != "explain"}
    n, bad, example = compare_whole(subject, tok, texts)
    _add(ledger, subject_record(subject, tok, "encoder", "toktier_battery", comparisons=n, differences=bad,
                                unit="strings", counterexample=example, admission=info))
    session_n = session_bad = 0
    session_example = None
    for text, splits in cases:  # S then S + D at each battery split (or at thirds), one session per case
        for split in splits or (len(text) // 3, (2 * len(text)) // 3):
            session = subject.session()
            for prefix in (text[:split], text):
                session_n += 1
                if session.encode(prefix) != reference_encode(tok, prefix):
                    session_bad += 1
                    session_example = session_example or {"text": text, "split": split}
    r = replay(subject, tok, whitespace_seam_turns())
    session_n += r.turns
    session_bad += len(r.differences)
    _add(ledger, subject_record(subject, tok, "repair", "toktier_session", comparisons=session_n,
                                differences=session_bad, unit="turns",
                                counterexample=session_example or (vars(r.first) if r.first else None)))
    doc = "\n".join(texts)
    chunk_n = chunk_bad = 0
    routes = []
    for k in (4, 16):
        chunk_n += 1
        ids = subject.encode_chunked(doc, k)
        routes.append({key: v for key, v in subject.last_chunked.items() if key not in ("ids", "ok")})
        chunk_bad += int(ids != reference_encode(tok, doc))
    _add(ledger, subject_record(subject, tok, "chunked", "toktier_chunked", comparisons=chunk_n,
                                differences=chunk_bad, unit="documents", routes=routes))
    subject.close()
    assert bad == 0 and session_bad == 0 and chunk_bad == 0


@pytest.mark.parametrize("name", [n for n in PROVISIONED] or ["qwen3_8b"])
def test_toktier_battery_slice_session_and_chunked(name: str, ledger) -> None:
    """toktier's routed encode, session appends and chunked encode equal the reference on a battery slice, for
    every provisioned tokenizer (its admission and routing facts are recorded with the counts)."""
    _run_toktier(_tok_or_skip(name), ledger, step=18)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in PROVISIONED] or ["qwen3_8b"])
def test_toktier_full_ci_battery(name: str, ledger) -> None:
    """The same on the whole `ci` battery."""
    _run_toktier(_tok_or_skip(name), ledger, step=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in PROVISIONED] or ["qwen3_8b"])
def test_toktier_corpus_slice(name: str, ledger) -> None:
    """toktier's whole, chunked (k=8) and session (document halves) encodes equal the reference on the first
    documents of every shard of the built `small` corpus under $DELTA_HOME/corpus/small (chat rows rendered)."""
    tok = _tok_or_skip(name)
    shards = sorted((cache_root() / "corpus" / "small").glob("*.jsonl"))
    if not shards:
        pytest.skip("the small corpus is not built here (corpora build --profile small)")
    docs = []
    for shard in shards:
        for i, doc in enumerate(read_documents(shard)):
            if i >= 3:
                break
            docs.append(document_text(tok, doc))
    subject = _subject_or_skip(ledger, "toktier", tok, "encoder", "toktier_corpus")
    n, bad, example = compare_whole(subject, tok, docs)
    chunk_bad = session_bad = 0
    for text in docs:
        ref = reference_encode(tok, text)
        chunk_bad += int(subject.encode_chunked(text, 8) != ref)
        session = subject.session()
        session.encode(text[: len(text) // 2])
        session_bad += int(session.encode(text) != ref)
    _add(ledger, subject_record(subject, tok, "encoder", "toktier_corpus", comparisons=n, differences=bad,
                                unit="documents", counterexample=example))
    _add(ledger, subject_record(subject, tok, "chunked", "toktier_corpus", comparisons=len(docs),
                                differences=chunk_bad, unit="documents"))
    _add(ledger, subject_record(subject, tok, "repair", "toktier_corpus", comparisons=len(docs),
                                differences=session_bad, unit="documents"))
    subject.close()
    assert bad == 0 and chunk_bad == 0 and session_bad == 0


# -- paralleltokenizer -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_paralleltokenizer_stitching(ledger) -> None:
    """paralleltokenizer's ID-run stitching on the LoPT fixture and on periodic text: differences are recorded."""
    fx = _lopt_fixture()
    tok = _tok_or_skip(fx["tokenizer"])
    subject = _subject_or_skip(ledger, "paralleltokenizer", tok, "chunked", "paralleltokenizer_stitch")
    cases = {"lopt_fixture": fx["text"], "periodic": "hello world " * 2000}
    diffs = {}
    for label, text in cases.items():
        ref = reference_encode(tok, text)
        ids = subject.encode_chunked_sized(text, 3000 if label == "periodic" else 600)
        diffs[label] = {"subject_len": len(ids), "reference_len": len(ref)} if ids != ref else None
    _add(ledger, subject_record(subject, tok, "chunked", "paralleltokenizer_stitch", comparisons=len(cases),
                                differences=sum(v is not None for v in diffs.values()), unit="documents",
                                counterexample=diffs))
    assert len(diffs) == 2

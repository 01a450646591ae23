"""Property: a Session on S, then on S + D, returns ref(S + D), with hazards where repair is fragile.

S and D come from properties/repair_strategies.py (hazards at ws and ws + margin for each drawn window width, and
across the S|D junction). Each check counts how many appends took the repair path and how many fell back, and
records both in the ledger: a run that mostly fell back proves little, so the share must be at least half.
"""

from __future__ import annotations

import sys
from collections import Counter

from delta_suite.delta.session import Session
from delta_suite.frozen.loader import FrozenTokenizer, load_tokenizer
from delta_suite.spec.reference import reference_encode, reference_encode_with_offsets
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS, RepairParams
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from properties.conftest import ADMITTED
from properties.repair_strategies import JUNCTIONS, RepairCase, repair_cases
from properties.strategy_cache import seam_texts

MIN_FAST_SHARE = 0.5
CHAINED_EXAMPLES = max(10, settings.default.max_examples // 4)  # each example is up to five appends
# widths whose ws and ws + margin carry hazards: 512 and 1,024 by default, all six under the thorough profile
MAX_DOUBLING = 5 if settings.default.max_examples >= 1000 else 1


def append_differs(tok: FrozenTokenizer, case: RepairCase, params: RepairParams = DEFAULT_REPAIR_PARAMS) -> str | None:
    """None when Session(S) then Session(S + D) returns ref(S + D) and stores the reference spans; else a message."""
    session = Session(tok, params)
    session.encode(case.old)
    got = session.encode(case.old + case.delta)
    want_ids, want_spans = reference_encode_with_offsets(tok, case.old + case.delta)
    if got != want_ids:
        return f"{session.last_path}: IDs differ ({case.notes})"
    if params.check_seam and session.spans != want_spans:
        return f"{session.last_path}: stored spans differ from the reference ({case.notes})"
    return None


def _count(paths: Counter, path: str) -> None:
    paths["repaired" if path.startswith("repaired") else "fallback" if path.startswith("fallback") else path] += 1


def test_session_append_equals_reference(tok, ledger) -> None:
    """For S, D with hazards at ws, ws + margin and S|D: Session(S) then Session(S + D) == ref(S + D).

    Each example passes or fails on its own comparison only (so Hypothesis shrinks to an example that fails); the
    record counts every append compared and every one that differed, and is written whether the property held or
    not, with the last failing example (after shrinking, the minimal one)."""
    paths: Counter = Counter()
    windows: Counter = Counter()
    differing: list[str] = []  # every append that differed, over generation and shrinking

    @given(repair_cases(tok, max_doubling=MAX_DOUBLING))
    def check(case: RepairCase) -> None:
        session = Session(tok)
        session.encode(case.old)
        got = session.encode(case.old + case.delta)
        _count(paths, session.last_path)
        windows[session.last_path] += 1
        differs = got != reference_encode(tok, case.old + case.delta)
        if differs:
            differing.append(f"{session.last_path} {case.notes}")
        assert not differs, f"{session.last_path} {case.notes}"

    try:
        check()
    finally:
        ledger.record("repair", "session_append", tok, comparisons=sum(paths.values()), differences=len(differing),
                      fast_path=paths["repaired"], fallbacks=paths["fallback"], unit="append",
                      details={"paths": dict(windows), "first_difference": differing[-1] if differing else None},
                      oracle="reference")
    total = paths["repaired"] + paths["fallback"]
    assert total and paths["repaired"] / total >= MIN_FAST_SHARE, dict(windows)


@st.composite
def chained_appends(draw, tok: FrozenTokenizer) -> tuple[str, list[str]]:
    """An initial text and several deltas, each starting with a junction hazard's right half or a seam piece."""
    case = draw(repair_cases(tok))
    deltas = [case.delta]
    for _ in range(draw(st.integers(1, 4))):
        head = draw(st.sampled_from([right for _, right in JUNCTIONS] + [""]))
        deltas.append(head + draw(seam_texts(tok, min_size=1, max_size=6)))
    return case.old, deltas


def test_session_chained_appends(tok, ledger) -> None:
    """Appends on top of repaired state: every turn equals the reference and the stored spans stay the reference's."""
    paths: Counter = Counter()
    first: dict = {}  # the last failing turn seen: after shrinking, the minimal example's

    @settings(settings.default, max_examples=CHAINED_EXAMPLES)
    @given(chained_appends(tok))
    def check(chain: tuple[str, list[str]]) -> None:
        text, deltas = chain
        session = Session(tok)
        session.encode(text)
        for delta in deltas:
            text += delta
            got = session.encode(text)
            _count(paths, session.last_path)
            want_ids, want_spans = reference_encode_with_offsets(tok, text)
            if got != want_ids or session.spans != want_spans:
                first.clear()
                first.update(text=text, path=str(session.last_path), ids_equal=got == want_ids,
                             spans_equal=session.spans == want_spans)
            assert got == want_ids, session.last_path
            assert session.spans == want_spans, session.last_path

    failed = False
    try:
        check()
    except Exception:
        failed = True  # the record below carries the difference, then the failure goes on to pytest
        raise
    finally:
        ledger.record("repair", "session_chained_appends", tok, comparisons=sum(paths.values()),
                      differences=1 if failed and first else 0, fast_path=paths["repaired"],
                      fallbacks=paths["fallback"], unit="append",
                      details={**paths, "first_difference": dict(first) or None}, oracle="reference")


def test_property_catches_unchecked_reuse(ledger) -> None:
    """The property has teeth: with check_seam=False (stored IDs + encode of D alone) it finds a wrong ID."""
    tok = load_tokenizer(ADMITTED[0])
    broken = RepairParams(check_seam=False)
    example = find(
        repair_cases(tok),
        lambda case: append_differs(tok, case, broken) is not None,
        settings=settings(max_examples=300, database=None, derandomize=True, phases=[Phase.generate]),
    )
    assert append_differs(tok, example, DEFAULT_REPAIR_PARAMS) is None
    killed = append_differs(tok, example, broken) is not None
    ledger.record("control", "repair_property_unchecked_reuse", tok, comparisons=2, differences=int(killed),
                  unit="example", details={"example": example.notes, "killed": killed}, oracle="reference")


class _RecordingLedger:
    """Stands in for the gate ledger fixture: keeps the records a test writes."""

    def __init__(self) -> None:
        self.records: list[dict] = []

    def record(self, level: str, check: str, tok=None, **counts) -> dict:
        rec = {"level": level, "check": check, **counts}
        self.records.append(rec)
        return rec


def test_a_failing_chained_append_records_its_difference(monkeypatch) -> None:
    """Test of the test: with a session that drops the last ID of every turn after the first, the chained-append
    property fails, and its ledger record carries differences=1 and the minimal failing text, not a constant 0."""
    class DropsLast(Session):
        def encode(self, text: str) -> list[int]:
            ids = super().encode(text)
            self.turns = getattr(self, "turns", 0) + 1
            return ids[:-1] if self.turns > 1 and ids else ids

    monkeypatch.setattr(sys.modules[__name__], "Session", DropsLast)
    fake = _RecordingLedger()
    try:
        test_session_chained_appends(load_tokenizer(ADMITTED[0]), fake)
    except AssertionError:
        pass
    else:
        raise AssertionError("the property passed on a session that drops IDs")
    (rec,) = fake.records
    assert rec["differences"] == 1 and rec["details"]["first_difference"]["text"]


def test_a_failing_append_fails_on_its_own_example_and_records_it(monkeypatch) -> None:
    """Test of the test: with a session that drops the last ID of an append only when the appended text holds a
    space, the append property fails on an example that fails by itself (each example is judged on its own
    comparison, so the shrunk example reproduces), and its record counts the differing appends, not a constant 0."""
    class DropsOnSpace(Session):
        def encode(self, text: str) -> list[int]:
            ids = super().encode(text)
            self.turns = getattr(self, "turns", 0) + 1
            tail = text[len(getattr(self, "seen", "")):]
            self.seen = text
            return ids[:-1] if self.turns > 1 and " " in tail and ids else ids

    monkeypatch.setattr(sys.modules[__name__], "Session", DropsOnSpace)
    fake = _RecordingLedger()
    tok = load_tokenizer(ADMITTED[0])
    try:
        test_session_append_equals_reference(tok, fake)
    except AssertionError as exc:
        reported = str(exc)
    else:
        raise AssertionError("the property passed on a session that drops IDs")
    (rec,) = fake.records
    assert 0 < rec["differences"] <= rec["comparisons"]
    assert rec["details"]["first_difference"] and rec["details"]["first_difference"] in reported

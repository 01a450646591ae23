"""The case checker a campaign drives: one interface, `checker_for(tok, path, control).check(case) -> CaseOutcome`.

- cut: the battery's per-case check (`checks.differential.check_cut_case`: every candidate cut the rules accept splits
  the reference encode, the pieces at all accepted cuts concatenate to it, and `delta.encode_chunked` equals it on
  texts long enough to plan), with its reference encodes timed;
- repair: a `delta.Session` holding S, given S + D, returns ref(S + D); its `last_path` (repaired on window k,
  unchecked reuse, fallback and why) is counted per case.
Rules and parameters come from the named control (`controls.get(name).rules / .params`), or are the correct
defaults. Controls named `internal.*` are the campaign's own self-test variants, always available
(`internal.accept_every_cut` accepts every offset, which any seam text kills quickly).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from delta_suite.checks import differential
from delta_suite.checks.battery import BatteryCase
from delta_suite.delta import cuts as delta_cuts
from delta_suite.delta.cut_map import cut_map
from delta_suite.delta.session import Session
from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.fuzz.cases import CaseOutcome, Difference, FuzzCase, first_difference
from delta_suite.spec.admission import WHOLE_WORD, admission_of
from delta_suite.spec.cut import DEFAULT_CUT_RULES
from delta_suite.spec.free_pair_cut import chunked_ids
from delta_suite.spec.reference import LIBRARY, reference_encode, reference_encode_batch
from delta_suite.spec.repair import DEFAULT_REPAIR_PARAMS
from delta_suite.subjects import wiring
from delta_suite.subjects.protocol import DEFAULT_SUBJECT, SubjectUnavailable, parse_subject

from delta_suite import controls

INTERNAL_CONTROLS = {"internal.accept_every_cut": "cut"}
# what each internal control breaks, in words (the registry's controls say it in `Control.breaks`)
INTERNAL_BREAKS = {"internal.accept_every_cut": "every offset accepted as a cut, no rule checked (the campaign's "
                   "own self-test: any seam text kills it)"}


class UnknownControl(SuiteError):
    """A control name that no control registry knows."""


class CaseChecker(Protocol):
    """Checks one case against the reference and says what it compared."""

    path: str
    subject: str

    def check(self, case: FuzzCase) -> CaseOutcome: ...


@dataclass
class ReferenceClock:
    """Time the reference library spent in the oracle's encodes (the floor a campaign cannot avoid).

    It adds the library meter's increment (`spec.reference.LIBRARY`) over each oracle encode, never a wall clock
    around it: the oracle's time is then part of the library's time by construction, integer nanoseconds of one
    meter, so a batch's `reference_seconds` never exceeds its `library_seconds` however loaded the machine."""

    nanoseconds: int = 0

    @property
    def seconds(self) -> float:
        return self.nanoseconds / 1e9

    @contextmanager
    def metering(self) -> Iterator[None]:
        """Count the library's time during the block as the oracle's."""
        before = LIBRARY.nanoseconds
        try:
            yield
        finally:
            self.nanoseconds += LIBRARY.nanoseconds - before

    def encode(self, tok: FrozenTokenizer, text: str) -> list[int]:
        with self.metering():
            return reference_encode(tok, text)

    def encode_batch(self, tok: FrozenTokenizer, texts: list[str]) -> list[list[int]]:
        with self.metering():
            return reference_encode_batch(tok, texts)


class DirectCutChecker:
    """Every accepted candidate cut splits the reference encode, and all accepted cuts together concatenate exactly."""

    path = "cut"

    def __init__(self, tok: FrozenTokenizer, accept: Callable[[str, int], bool], subject: str) -> None:
        self.tok, self.accept, self.subject = tok, accept, subject
        self.clock = ReferenceClock()
        self.subject_seconds = 0.0  # time in the implementation under test (here: the cut decisions)

    def check(self, case: FuzzCase) -> CaseOutcome:
        text = case.text
        t0 = time.perf_counter()
        accepted = [b for b in case.cuts if self.accept(text, b)]
        self.subject_seconds += time.perf_counter() - t0
        out = CaseOutcome(cuts_checked=len(accepted))
        out.paths["accepted"] += len(accepted)
        out.paths["refused"] += len(case.cuts) - len(accepted)
        if not accepted:
            out.fallbacks = 1
            return out
        bounds = [0, *accepted, len(text)]
        pieces = [text[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
        halves = [h for b in accepted for h in (text[:b], text[b:])]
        encoded = self.clock.encode_batch(self.tok, [text, *pieces, *halves])
        whole, piece_ids, half_ids = encoded[0], encoded[1 : 1 + len(pieces)], encoded[1 + len(pieces) :]
        out.fast_path = 1  # the text was cut (a text with no accepted cut is served whole: a fallback)
        for i, b in enumerate(accepted):
            got = half_ids[2 * i] + half_ids[2 * i + 1]
            if got != whole:
                out.cuts_checked = i + 1
                out.difference = Difference(whole, got, first_difference(whole, got), {"cuts": [b]})
                return out
        got = [t for ids in piece_ids for t in ids]
        if got != whole:
            out.difference = Difference(whole, got, first_difference(whole, got), {"cuts": accepted})
        return out


class DirectRepairChecker:
    """A session holding S, then given S + D, returns exactly ref(S + D)."""

    path = "repair"

    def __init__(self, tok: FrozenTokenizer, params, subject: str) -> None:
        self.tok, self.params, self.subject = tok, params, subject
        self.clock = ReferenceClock()
        self.subject_seconds = 0.0  # time inside the repairing Session.encode (initialization counts as reference)

    def check(self, case: FuzzCase) -> CaseOutcome:
        assert case.split is not None
        session = Session(self.tok, params=self.params)
        with self.clock.metering():
            session.encode(case.text[: case.split])  # initialization: one reference encode of S with offsets
        t1 = time.perf_counter()
        got = list(session.encode(case.text))  # the repair under test
        self.subject_seconds += time.perf_counter() - t1
        path = str(session.last_path)
        expected = self.clock.encode(self.tok, case.text)
        served_fast = path.startswith(("repaired", "unchecked"))  # anything else re-encoded through the reference
        out = CaseOutcome(repairs_checked=1, fast_path=int(served_fast), fallbacks=int(not served_fast))
        out.paths[path] += 1
        if got != expected:
            out.difference = Difference(expected, got, first_difference(expected, got), {"split": case.split})
        return out


class TimedMemo(differential.ReferenceMemo):
    """A `checks.differential.ReferenceMemo` whose reference encodes are timed on the `clock` it is given."""

    def __init__(self, tok: FrozenTokenizer, clock: ReferenceClock) -> None:
        super().__init__(tok)
        self.clock = clock

    def encoded(self, text: str):
        with self.clock.metering():
            return super().encoded(text)

    def with_offsets(self, text: str):
        with self.clock.metering():
            return super().with_offsets(text)


class BatteryCutChecker:
    """The battery's cut check (`checks.differential.check_cut_case`: every accepted cut, the partition at all of them,
    and `encode_chunked` on texts long enough to plan) on one case, under the given rules."""

    path = "cut"

    def __init__(self, tok: FrozenTokenizer, rules, subject: str, fault: str | None = None) -> None:
        self.tok, self.rules, self.subject, self.fault = tok, rules, subject, fault
        self.clock = ReferenceClock()
        self.subject_seconds = 0.0

    def check(self, case: FuzzCase) -> CaseOutcome:
        bcase = BatteryCase(0, case.origin or "fuzz", case.text, tuple(case.cuts), ())
        memo = TimedMemo(self.tok, self.clock)
        t0, ref0 = time.perf_counter(), self.clock.nanoseconds
        result = differential.check_cut_case(self.tok, bcase, self.rules, memo=memo, fault=self.fault)
        # the cut decisions and encode_chunked: everything in the check that is not a timed reference encode
        self.subject_seconds += time.perf_counter() - t0 - (self.clock.nanoseconds - ref0) / 1e9
        out = CaseOutcome(cuts_checked=result.paths.get("accepted", 0), fast_path=result.fast_path,
                          fallbacks=result.fallbacks, paths=Counter(result.paths))
        if result.first is not None:
            out.difference = self._materialize(case, result.first.where, memo)
        return out

    def _materialize(self, case: FuzzCase, where: str, memo) -> Difference:
        """The full expected and actual IDs of the comparison `where` names ("cut=b", "partition", "encode_chunked")."""
        text = case.text
        whole = memo.ids(text)
        whole_word = admission_of(self.tok).kind == WHOLE_WORD  # later chunks by the family's chunk encoder
        if where.startswith("cut="):
            b = int(where.split("=", 1)[1])
            cuts = [b]
            got = chunked_ids(self.tok, text, cuts) if whole_word else memo.ids(text[:b]) + memo.ids(text[b:])
        elif where == "partition":
            cuts = cut_map(self.tok, text, self.rules, self.fault).accepted_among(case.cuts)
            bounds = [0, *cuts, len(text)]
            got = chunked_ids(self.tok, text, cuts) if whole_word else \
                [t for i in range(len(bounds) - 1) for t in memo.ids(text[bounds[i] : bounds[i + 1]])]
        else:
            chunks = differential.CHUNKED_PIECES
            cuts = delta_cuts.plan_cuts(self.tok, text, chunks, self.rules, self.fault)
            got = list(delta_cuts.encode_chunked(self.tok, text, chunks=chunks, workers=1, rules=self.rules,
                                                 fault=self.fault))
        return Difference(whole, got, first_difference(whole, got), {"where": where, "cuts": cuts})


def _cut_rules(control: str | None):
    """The cut rules of `control` (None: the correct spec)."""
    if control is None:
        return DEFAULT_CUT_RULES
    rules = getattr(_control(control), "rules", None)
    if rules is None:
        raise UnknownControl(f"control {control!r} has no cut rules; it is not a cut-path control")
    return rules


def _cut_fault(control: str | None) -> str | None:
    """The broken variant of the array cut evaluation that `control` plants (None: none)."""
    return None if control is None else getattr(_control(control), "cut_fault", None)


def _repair_params(control: str | None):
    """The repair parameters of `control` (None: the correct spec)."""
    if control is None:
        return DEFAULT_REPAIR_PARAMS
    params = getattr(_control(control), "params", None)
    if params is None:
        raise UnknownControl(f"control {control!r} has no repair parameters; it is not a repair-path control")
    return params


def _control(name: str):
    try:
        return controls.get(name)
    except KeyError as exc:
        raise UnknownControl(f"unknown control {name!r}; known: {', '.join(control_names())}") from exc


def control_names() -> list[str]:
    """Every control a campaign can run against: the registry's and the campaign's own `internal.*` ones."""
    return [*INTERNAL_CONTROLS, *controls.names()]


def control_path(name: str) -> str:
    """The path ("cut" or "repair") a control breaks."""
    if name in INTERNAL_CONTROLS:
        return INTERNAL_CONTROLS[name]
    ctl = _control(name)
    path = getattr(ctl, "path", None) or getattr(ctl, "kind", None)
    if path in ("cut", "repair"):
        return path
    if getattr(ctl, "rules", None) is not None:
        return "cut"
    if getattr(ctl, "params", None) is not None:
        return "repair"
    raise UnknownControl(f"control {name!r} is neither a cut nor a repair control; a campaign cannot run it")


def control_breaks(name: str) -> str:
    """What a control breaks, in words: its one-line description (UnknownControl for an unknown name)."""
    if name in INTERNAL_BREAKS:
        return INTERNAL_BREAKS[name]
    return _control(name).breaks


def control_applies(name: str, tok: FrozenTokenizer) -> bool:
    """Whether the condition a control breaks exists for `tok` at all (e.g. normalization: NFC tokenizers only)."""
    if name in INTERNAL_CONTROLS:
        return True
    applies = getattr(_control(name), "applies", None)
    return bool(applies(tok)) if callable(applies) else True


class SubjectChecker:
    """A third-party subject on one case (`subjects.wiring.check_on_subject`): on the repair path a new session
    given S then S + D returns ref(S) and ref(S + D); on the cut path its `encode_chunked(text, k)` equals ref(text)."""

    def __init__(self, tok: FrozenTokenizer, path: str, subject) -> None:
        self.tok, self.path, self.opened = tok, path, subject
        self.subject = f"{subject.name}=={subject.version}"
        self.clock = ReferenceClock()  # seconds in the reference encodes, kept apart from the subject's
        self.subject_seconds = 0.0  # seconds in calls into the subject (sessions opened and closed included)
        # the cut path checks the subject's chunked encode, or its whole encode when it offers no chunked path (a
        # subject that is only a fast encoder is still checked on every case of the campaign)
        self.cut_path = "chunked" if wiring.supports(subject, "chunked") else "encoder"
        if path == "repair" and not wiring.supports(subject, "repair"):
            raise SubjectUnavailable(subject.name, "offers no repair path")

    def check(self, case: FuzzCase) -> CaseOutcome:
        timing: dict = {}
        if self.path == "repair":
            comparisons, differences, bad = wiring.check_on_subject(
                self.opened, self.tok, case.text, "repair", splits=(case.split,), timing=timing)
            out = CaseOutcome(repairs_checked=1)
            where = {"split": case.split}
        else:
            chunks = differential.CHUNKED_PIECES if self.cut_path == "chunked" else None
            comparisons, differences, bad = wiring.check_on_subject(
                self.opened, self.tok, case.text, self.cut_path, chunks=chunks, timing=timing)
            out = CaseOutcome(cuts_checked=comparisons)
            where = {"chunks": chunks} if chunks else {"path": "encoder"}
        self.subject_seconds += timing.get("subject", 0.0)
        self.clock.nanoseconds += timing.get("reference_library_ns", 0)
        out.paths[f"subject:{self.path if self.cut_path == 'chunked' or self.path == 'repair' else 'encoder'}"] += \
            comparisons
        if differences and bad is not None:
            # the subject's counterexample holds the IDs from the first differing position on
            want, got = list(bad["reference_ids"]), list(bad["subject_ids"])
            if "single_call_matches" in bad:  # False: the subject differs on S + D alone, not because of S
                where["single_call_matches"] = bad["single_call_matches"]
            out.difference = Difference(want, got, int(bad["position"]),
                                        {**where, "subject": self.subject, "text_chars": len(bad["text"])})
        return out


@lru_cache(maxsize=32)
def opened_subject(spec: str, tok: FrozenTokenizer):
    """The subject `spec` bound to `tok`, opened once per process and tokenizer (a peer starts one process)."""
    return wiring.open_subject(spec, tok)


def is_default_subject(subject: str | None) -> bool:
    """Whether `subject` names the minimal implementation (the campaign's own checkers), not a third-party one
    (a built-in peer, an entry point, `module:factory` or `exec:COMMAND`)."""
    if subject is None:
        return True
    return parse_subject(subject).name == DEFAULT_SUBJECT


def checker_for(tok: FrozenTokenizer, path: str, control: str | None = None, subject: str | None = None) -> CaseChecker:
    """The checker of `path` for `tok`: the correct implementation, the named control, or a third-party subject."""
    if not is_default_subject(subject):
        if path not in ("cut", "repair"):
            raise ValueError(f"unknown path {path!r}")
        return SubjectChecker(tok, path, opened_subject(subject, tok))
    subject = control or "delta"
    if control == "internal.accept_every_cut":
        return DirectCutChecker(tok, lambda text, b: True, subject)
    if path == "cut":
        return BatteryCutChecker(tok, _cut_rules(control), subject, _cut_fault(control))
    if path == "repair":
        return DirectRepairChecker(tok, _repair_params(control), subject)
    raise ValueError(f"unknown path {path!r}")

"""Session replay: drive a session subject the way a serving engine does and compare every turn.

One session object, one process, a transcript that grows turn by turn, each call re-sending the whole text,
and no unrelated call in between. Every turn's IDs are compared with a whole reference encode of the same text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from delta_suite.spec.reference import reference_encode
from delta_suite.subjects.protocol import SubjectUnavailable, has_session

if TYPE_CHECKING:
    from delta_suite.frozen.loader import FrozenTokenizer
    from delta_suite.subjects.protocol import Subject


@dataclass
class TurnDifference:
    """The first difference of one turn: the turn index, text length, token position and both ID windows."""

    turn: int
    chars: int
    position: int
    subject_ids: list[int]
    reference_ids: list[int]
    subject_len: int
    reference_len: int


@dataclass
class ReplayResult:
    """What one replay compared: turns, and the turns whose IDs differ from the reference."""

    turns: int = 0
    differences: list[TurnDifference] = field(default_factory=list)

    @property
    def first(self) -> TurnDifference | None:
        return self.differences[0] if self.differences else None


def first_difference(a: list[int], b: list[int]) -> int:
    """The first index where `a` and `b` differ, or the shorter length if one is a prefix of the other."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def cumulative(turns: list[str]) -> list[str]:
    """The whole text a serving engine sends at each turn: the concatenation of turns 0..k."""
    out, acc = [], ""
    for t in turns:
        acc += t
        out.append(acc)
    return out


def replay(subject: Subject, tok: FrozenTokenizer, turns: list[str], *, window: int = 4) -> ReplayResult:
    """Replay `turns` through ONE session of `subject`; every turn must equal the whole reference encode.

    The proposition checked per turn k: session.encode(turns[0] + ... + turns[k]) equals
    reference_encode(tok, the same text).
    """
    if not has_session(subject):
        raise SubjectUnavailable(subject.name, "offers no session path")
    session = subject.session()
    result = ReplayResult()
    for k, text in enumerate(cumulative(turns)):
        got = session.encode(text)
        want = reference_encode(tok, text)
        result.turns += 1
        if got != want:
            p = first_difference(got, want)
            result.differences.append(
                TurnDifference(k, len(text), p, got[p : p + window], want[p : p + window], len(got), len(want))
            )
    close = getattr(session, "close", None)
    if callable(close):
        close()
    return result

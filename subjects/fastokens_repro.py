"""The fastokens whitespace-seam divergence: a turn ending in a newline and spaces, replayed in one process.

The paper's shape: turn 15 ends "prev_host_state\n" + 6 spaces, turn 16 begins "\n" + 14 spaces; where the
reference keeps newline + spaces + newline as one token, the served object emits a lone newline. This module
builds such transcripts deterministically (code-like turns, as an agent reading sources sends), sweeps the released
versions, and shrinks a diverging pair of turns to a minimal trigger.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from delta_suite.spec.reference import reference_encode
from delta_suite.subjects.envs import available_versions
from delta_suite.subjects.fastokens_releases import NOT_INSTALLED, expected_outcome, verdict, versions_to_sweep
from delta_suite.subjects.fastokens_subject import FastokensSubject
from delta_suite.subjects.protocol import SubjectUnavailable
from delta_suite.subjects.replay import ReplayResult, first_difference, replay

_WORDS = ("state", "host", "prev", "buffer", "index", "count", "value", "result", "config", "node", "item", "path")


def _code_line(rng: random.Random, depth: int) -> str:
    a, b, c = rng.sample(_WORDS, 3)
    form = rng.randrange(4)
    if form == 0:
        return f"{'    ' * depth}{a}_{b} = {c}.get({rng.randrange(1000)!r})"
    if form == 1:
        return f"{'    ' * depth}if {a}_{b} is not None and {c} > {rng.randrange(100)}:"
    if form == 2:
        return f"{'    ' * depth}return self._{a}({b}, {c}_{rng.choice(_WORDS)})"
    return f"{'    ' * depth}# {a} {b} {c}: keep the {rng.choice(_WORDS)} in sync"


def whitespace_seam_turns(
    turns: int = 6, turn_chars: int = 1500, tail_spaces: int = 6, head_spaces: int = 14, seed: int = 0
) -> list[str]:
    """Code-like turns; each but the last ends "NAME\\n" + tail_spaces, the next begins "\\n" + head_spaces.

    Deterministic for a seed. With the default sizes the transcript passes 4,096 characters at the third turn.
    """
    rng = random.Random(seed)
    out = []
    for k in range(turns):
        lines, size = [], 0
        while size < turn_chars:
            line = _code_line(rng, rng.randrange(1, 4))
            lines.append(line)
            size += len(line) + 1
        body = "\n".join(lines)
        head = "\n" + " " * head_spaces if k else ""
        tail = "\n    prev_host_state\n" + " " * tail_spaces if k < turns - 1 else "\n"
        out.append(head + body + tail)
    return out


@dataclass
class Trigger:
    """A minimal diverging pair: the earlier text `a` (sent first) and the appended text `b` (sent as a + b)."""
    a: str
    b: str
    position: int
    subject_ids: list[int]
    reference_ids: list[int]

    def describe(self) -> dict:
        return {
            "earlier_chars": len(self.a),
            "earlier_tail": self.a[-12:],
            "appended": self.b,
            "first_difference_token": self.position,
            "subject_ids": self.subject_ids,
            "reference_ids": self.reference_ids,
        }


def two_call_diverges(session_factory: Callable[[], object], tok, a: str, b: str) -> tuple[bool, list[int], list[int]]:
    """Whether a fresh session that receives `a` and then `a + b` returns IDs for `a + b` other than the reference's."""
    s = session_factory()
    s.encode(a)
    got = s.encode(a + b)
    close = getattr(s, "close", None)
    if callable(close):
        close()
    want = reference_encode(tok, a + b)
    return got != want, got, want


def shrink_trigger(session_factory: Callable[[], object], tok, a: str, b: str) -> Trigger:
    """Shrink a diverging (a, b): cut `a` from the front and `b` from the back, then drop single characters.

    Every candidate is re-run on a new session in the same process; the result is re-checked before it is returned.
    """

    def bad(x: str, y: str) -> bool:
        return bool(x) and bool(y) and two_call_diverges(session_factory, tok, x, y)[0]

    assert bad(a, b), "shrink_trigger needs a diverging pair"
    lo, hi = 0, len(a) - 1  # largest front cut that still diverges
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bad(a[mid:], b):
            lo = mid
        else:
            hi = mid - 1
    a = a[lo:]
    lo, hi = 1, len(b)  # shortest head of b that still diverges
    while lo < hi:
        mid = (lo + hi) // 2
        if bad(a, b[:mid]):
            hi = mid
        else:
            lo = mid + 1
    b = b[:lo]
    changed = True
    while changed:  # drop single characters near the seam (the last 16 of a, all of b)
        changed = False
        for i in range(max(0, len(a) - 16), len(a)):
            if bad(a[:i] + a[i + 1 :], b):
                a, changed = a[:i] + a[i + 1 :], True
                break
        for i in range(len(b)):
            if len(b) > 1 and bad(a, b[:i] + b[i + 1 :]):
                b, changed = b[:i] + b[i + 1 :], True
                break
    diverges, got, want = two_call_diverges(session_factory, tok, a, b)
    assert diverges
    p = first_difference(got, want)
    return Trigger(a, b, p, got[p : p + 3], want[p : p + 3])


def replay_transcript(subject, tok, turns: list[str] | None = None) -> ReplayResult:
    """Replay the default whitespace-seam transcript (or `turns`) through one session of `subject`."""
    return replay(subject, tok, turns if turns is not None else whitespace_seam_turns())


def sweep_versions(tok, versions: list[str] | None = None) -> dict[str, dict]:
    """Replay the default transcript through every listed version (default: every release of the expectations table
    plus every release the package index lists), each in a session of its own.

    Per version: {"status": "diverges" | "matches" | "not installed", "turns", "differing_turns", "first", "reason",
    "expected", "verdict"}, where "expected" is the table's outcome (None past the table) and "verdict" says how the
    measured status compares with it (`fastokens_releases.verdict`).
    """
    out: dict[str, dict] = {}
    for v in versions or versions_to_sweep(available_versions("fastokens")):
        try:
            subject = FastokensSubject(tok, v)
        except SubjectUnavailable as exc:
            out[v] = {"status": NOT_INSTALLED, "reason": exc.reason}
        else:
            try:
                r = replay_transcript(subject, tok)
            finally:
                subject.close()
            first = r.first
            out[v] = {
                "status": "diverges" if r.differences else "matches",
                "turns": r.turns,
                "differing_turns": [d.turn for d in r.differences],
                "first": None if first is None else vars(first),
            }
        out[v]["expected"] = expected_outcome(tok.name, v)
        out[v]["verdict"] = verdict(tok.name, v, out[v]["status"])
    return out

"""Short texts, which no cut reaches: the empty text, one character of every engine class, CR, LF, the special
strings, and pairs of class representatives.

Texts under 256 characters are never cut (the planner serves them whole), so no property about cuts reaches them;
a change that returns wrong IDs for "a" must still be found. The checks here say which texts the chunked encode
or a session gets wrong (the gate's short-text tests and the mutation profile's kill tier both ask them).
"""

from __future__ import annotations

from delta_suite.delta import cuts
from delta_suite.delta.session import Session
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.classes import CLASS_NAMES, class_table
from delta_suite.spec.reference import reference_encode

SHORT_MAX = 255  # the longest text the planner serves whole


def class_representatives() -> list[str]:
    """The first scalar value of each engine class above U+0020, plus CR, LF and the empty text."""
    table = class_table()
    out = {"": "", "\r": "\r", "\n": "\n"}
    for cls in range(len(CLASS_NAMES)):
        cp = next(c for c in range(0x21, 0x110000) if table[c] == cls and not 0xD800 <= c < 0xE000)
        out[CLASS_NAMES[cls]] = chr(cp)
    return list(out.values())


def short_texts(tok: FrozenTokenizer) -> list[str]:
    """Deterministic short texts: every class representative, each special string, pairs of representatives."""
    reps = class_representatives()
    pairs = [a + b for a in reps for b in reps if a and b]
    return [*reps, *tok.special_strings[:8], *pairs, "a", " a", "a ", "don't", "12345", "e\u0301"]


def wrong_chunked(tok: FrozenTokenizer, texts: list[str]) -> list[str]:
    """The texts whose chunked encode (four chunks, one worker) differs from the reference encode."""
    return [t for t in texts if list(cuts.encode_chunked(tok, t, chunks=4, workers=1)) != reference_encode(tok, t)]


def wrong_session(tok: FrozenTokenizer, texts: list[str]) -> list[str]:
    """The texts a session gets wrong: for each text, a fresh session is given its first half S, then the whole
    S + D; each answer that differs from the reference encode of what it was given is listed (S or S + D)."""
    wrong = []
    for t in texts:
        session = Session(tok)
        for prefix in (t[: len(t) // 2], t):  # a short S, then S + D
            if session.encode(prefix) != reference_encode(tok, prefix):
                wrong.append(prefix)
    return wrong

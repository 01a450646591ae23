"""Short texts: the chunked encode, the session and the corpus comparison equal the reference on "", on single
characters of every engine class, and on every text of up to 255 characters the seam strategies draw.

Texts under 256 characters are never cut (the planner serves them whole), so no other property reaches them; a
change that returns wrong IDs for "a" must still fail here. `test_a_wrong_short_answer_is_caught` shows that it
does, on a broken chunked encoder and a broken session.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given

from corpora.cli import main as corpora_main
from delta import cuts
from delta.session import Session
from frozen.loader import FrozenTokenizer
from fuzz.strategies import seam_texts
from spec.classes import CLASS_NAMES, class_table
from spec.reference import reference_encode

SHORT_MAX = 255


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


def _check_chunked(tok: FrozenTokenizer, texts: list[str]) -> list[str]:
    return [t for t in texts if list(cuts.encode_chunked(tok, t, chunks=4, workers=1)) != reference_encode(tok, t)]


def _check_session(tok: FrozenTokenizer, texts: list[str]) -> list[str]:
    wrong = []
    for t in texts:
        session = Session(tok)
        for prefix in (t[: len(t) // 2], t):  # a short S, then S + D
            if session.encode(prefix) != reference_encode(tok, prefix):
                wrong.append(prefix)
    return wrong


def test_short_and_single_character_texts_are_exact(tok, ledger) -> None:
    """encode_chunked and a Session equal the reference on "", one character of every class, CR, LF, special
    strings and every pair of class representatives."""
    texts = short_texts(tok)
    wrong = _check_chunked(tok, texts) + _check_session(tok, texts)
    ledger.record("chunked", "short_texts_exact", tok, comparisons=3 * len(texts), differences=len(wrong),
                  unit="texts", details={"first": wrong[:3]}, oracle="reference")
    assert not wrong, wrong[:5]


def test_drawn_short_texts_are_exact(tok, ledger) -> None:
    """Texts of up to 255 characters from the seam strategies: chunked encode and session equal the reference."""
    seen = {"texts": 0, "wrong": 0}

    @given(seam_texts(tok, max_size=6).map(lambda t: t[:SHORT_MAX]))
    def run(text: str) -> None:
        seen["texts"] += 1
        wrong = _check_chunked(tok, [text]) + _check_session(tok, [text])
        seen["wrong"] += bool(wrong)
        assert not wrong, text

    try:
        run()
    finally:  # the record carries what was found, a failing example included
        ledger.record("chunked", "short_texts_drawn", tok, comparisons=3 * seen["texts"], differences=seen["wrong"],
                      unit="texts", oracle="reference")


def test_a_wrong_short_answer_is_caught(tok, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunked encoder or a session that is wrong only on "a" is found by the checks above."""
    real_chunked, real_encode = cuts.encode_chunked, Session.encode
    monkeypatch.setattr(cuts, "encode_chunked",
                        lambda t, text, **kw: [] if text == "a" else real_chunked(t, text, **kw))
    assert _check_chunked(tok, short_texts(tok)) == ["a"]
    monkeypatch.setattr(Session, "encode", lambda self, text: [] if text == "a" else real_encode(self, text))
    assert "a" in _check_session(tok, short_texts(tok))


def test_corpus_comparison_takes_one_and_two_character_rows(tmp_path: Path, ledger) -> None:
    """A user corpus of empty, one- and two-character rows is compared at every level, and nothing is skipped."""
    rows = ["", "a", "1", " ", "\n", "ab", "a1", "\u00e9"]
    corpus = tmp_path / "short.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(rows)))
    out = tmp_path / "out"
    rc = corpora_main(["compare", "--corpus", str(corpus), "--tokenizer", "qwen3", "--out", str(out)])
    records = [json.loads(line) for line in (out / "corpus-ledger.jsonl").read_text().splitlines() if line.strip()]
    compared = {r["level"]: r["comparisons"] for r in records}
    for oracle in sorted({r["oracle"] for r in records}):  # level 1 compares the library with itself: apart
        mine = [r for r in records if r["oracle"] == oracle]
        ledger.record("encoder", "corpus.short_rows", None, comparisons=sum(r["comparisons"] for r in mine),
                      differences=sum(r["differences"] for r in mine), unit="documents", oracle=oracle,
                      details={r["level"]: r["comparisons"] for r in mine})
    assert rc == 0 and all(r["differences"] == 0 for r in records)
    assert compared.get("encoder", 0) >= len(rows) - 1, compared

"""Short texts: the chunked encode, the session and the corpus comparison equal the reference on "", on single
characters of every engine class, and on every text of up to 255 characters the seam strategies draw.

Texts under 256 characters are never cut (the planner serves them whole), so no other property reaches them; a
change that returns wrong IDs for "a" must still fail here. `test_a_wrong_short_answer_is_caught` shows that it
does, on a broken chunked encoder and a broken session. The texts and the two checks are `checks.short_texts`
(the mutation profile's kill tier asks them too).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from delta_suite.checks.short_texts import SHORT_MAX, short_texts, wrong_chunked, wrong_session
from delta_suite.corpora.cli import main as corpora_main
from delta_suite.delta import cuts
from delta_suite.delta.session import Session
from delta_suite.fuzz.strategies import seam_texts
from hypothesis import given


def test_short_and_single_character_texts_are_exact(tok, ledger) -> None:
    """encode_chunked and a Session equal the reference on "", one character of every class, CR, LF, special
    strings and every pair of class representatives."""
    texts = short_texts(tok)
    wrong = wrong_chunked(tok, texts) + wrong_session(tok, texts)
    ledger.record("chunked", "short_texts_exact", tok, comparisons=3 * len(texts), differences=len(wrong),
                  unit="texts", details={"first": wrong[:3]}, oracle="reference")
    assert not wrong, wrong[:5]


def test_drawn_short_texts_are_exact(tok, ledger) -> None:
    """Texts of up to 255 characters from the seam strategies: chunked encode and session equal the reference."""
    seen = {"texts": 0, "wrong": 0}

    @given(seam_texts(tok, max_size=6).map(lambda t: t[:SHORT_MAX]))
    def run(text: str) -> None:
        seen["texts"] += 1
        wrong = wrong_chunked(tok, [text]) + wrong_session(tok, [text])
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
    assert wrong_chunked(tok, short_texts(tok)) == ["a"]
    monkeypatch.setattr(Session, "encode", lambda self, text: [] if text == "a" else real_encode(self, text))
    assert "a" in wrong_session(tok, short_texts(tok))


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

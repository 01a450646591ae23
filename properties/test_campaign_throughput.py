"""Campaign throughput work (issue 22) that must not cost exactness or honesty.

- The seam sampler (`fuzz.seam_sampler`) that replaced the Hypothesis engine in campaigns is deterministic per
  seed and reaches every seam family (special-token fragments, marks, Hangul, CR/LF, whitespace, digits, ...).
- Campaigns judge cuts by the array evaluation (`delta.cut_map`): a campaign against each control that breaks
  one array rule is killed by reference IDs (exit 1), on a tokenizer where the rule matters.
- The campaign's clock says where its time went: `library_seconds` (every encode inside the reference library)
  is recorded per batch and in the summary, at least the oracle's `reference_seconds`, and both positive. The
  oracle's time is the library meter's time inside the oracle's encodes, so it is part of the library's time
  however loaded the machine: time spent around a library call (checking the text, a wrapper) is not counted.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import delta_suite.spec.reference as reference
import pytest
from delta_suite.frozen.loader import load_tokenizer
from delta_suite.fuzz.checker import checker_for
from delta_suite.fuzz.generate import PROFILES, generate_batch
from delta_suite.fuzz.seam_sampler import SeamSampler
from delta_suite.fuzz.strategies import CR_LF, HANGUL, MARKS
from delta_suite.spec.classes import CLASS_NAMES, class_table

from delta_suite import controls
from properties.conftest import ADMITTED, REPO
from properties.expectations import Expectations

VECTOR_CONTROLS = [c for c in (controls.get(n) for n in controls.names()) if c.cut_fault]


def _fuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "delta_suite.fuzz.cli", *args], cwd=REPO, capture_output=True,
                          text=True,
                          timeout=600)


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned")
def test_seam_sampler_is_seeded_and_reaches_every_family() -> None:
    """Same seed, same texts; another seed, other texts; 400 texts contain a special-token fragment, a mark, a
    Hangul jamo, CR or LF, and a code point of every engine class."""
    tok = load_tokenizer(ADMITTED[0])
    first = SeamSampler(tok, random.Random(5)).texts(400, 1, 24)
    assert first == SeamSampler(tok, random.Random(5)).texts(400, 1, 24)
    assert first != SeamSampler(tok, random.Random(6)).texts(400, 1, 24)
    joined = "".join(first)
    table = class_table()
    assert {table[ord(ch)] for ch in joined} == set(range(len(CLASS_NAMES)))
    assert any(s[:2] in joined for s in tok.special_strings if len(s) > 2)
    for family in (MARKS, HANGUL[:3], CR_LF[:2]):
        assert any(piece in joined for piece in family), family
    assert all(t and all(not 0xD800 <= ord(c) < 0xE000 for c in t) for t in first)


def _where_it_applies(control) -> str | None:
    return next((n for n in ADMITTED if control.applies(load_tokenizer(n))), None)


@pytest.mark.parametrize("control", VECTOR_CONTROLS, ids=lambda c: c.name)
def test_campaign_kills_each_broken_array_rule(control, tmp_path: Path) -> None:
    """A cut campaign against a control that breaks one rule of the array evaluation finds a reference-ID
    difference (exit 1, "KILLED"), on the first admitted tokenizer where the broken rule changes a verdict."""
    name = _where_it_applies(control)
    if name is None:
        pytest.skip(f"no provisioned tokenizer where {control.name} applies")
    proc = _fuzz("--tokenizer", name, "--control", control.name, "--path", "cut", "--examples", "600",
                 "--stop-on-first", "--out", str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"control {control.name} KILLED" in proc.stdout + proc.stderr


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned")
def test_campaign_records_library_time(tmp_path: Path) -> None:
    """Every batch record and the summary carry library_seconds >= reference_seconds > 0, and the library's time of
    a one-worker campaign lies within its elapsed time (the meter adds the time each call took, not a clock
    reading); the printed summary states both (the oracle's encodes, and the library in all)."""
    proc = _fuzz("--tokenizer", ADMITTED[0], "--examples", "64", "--workers", "1", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(next(tmp_path.glob("summary-*.json")).read_text(encoding="utf-8"))
    assert summary["library_seconds"] >= summary["reference_seconds"] > 0
    assert summary["workers"] == 1 and summary["library_seconds"] <= summary["elapsed"]
    batches = [json.loads(line) for f in tmp_path.glob("*.jsonl") if not f.name.startswith("differences")
               for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    batches = [r for r in batches if r.get("kind") == "fuzz"]
    assert batches and all(r["details"]["library_seconds"] >= r["details"]["reference_seconds"] for r in batches)
    assert "inside the reference library in all" in proc.stdout + proc.stderr


AROUND_THE_LIBRARY = 0.02  # seconds added to each reference call outside the library's own encode (its text check)


@pytest.mark.skipif(not ADMITTED, reason="no admitted tokenizer provisioned")
@pytest.mark.parametrize(("path", "control", "subject"), [
    ("cut", None, None),  # the battery's cut check, its reference encodes through a memo
    ("cut", "internal.accept_every_cut", None),  # the direct cut check, one batch encode per case
    ("repair", None, None),  # a session's initialization and the whole encode it is compared with
    ("cut", None, "lopt"),  # a third-party subject: the reference encodes of the subject wiring
], ids=["battery-cut", "direct-cut", "repair", "subject"])
def test_oracle_time_is_the_library_time_inside_it(path: str, control: str | None, subject: str | None,
                                                   monkeypatch: pytest.MonkeyPatch, ledger) -> None:
    """Every checker's clock adds the library meter's time inside the oracle's encodes, not the time around them.
    With each reference call made 20 ms slower outside the library (its text check), the clock's increment over a
    batch of 6 cases is positive and at most the library meter's increment (exactly: integer nanoseconds of one
    meter). A clock that timed the oracle's calls from outside would count 20 ms per call, far more than the
    library's own time in these small encodes, and exceed the library (shown on such a clock: 30 to 320 times)."""
    expect = Expectations()
    tok = load_tokenizer(ADMITTED[0])
    checker = checker_for(tok, path, control, subject)
    cases = generate_batch(tok, path, 7, 1, PROFILES["ci"], 6)
    check_text = reference.check_text

    def slow_check_text(text: str) -> str:
        time.sleep(AROUND_THE_LIBRARY)
        return check_text(text)

    monkeypatch.setattr(reference, "check_text", slow_check_text)
    clock0, library0 = checker.clock.nanoseconds, reference.LIBRARY.nanoseconds
    for case in cases:
        checker.check(case)
    clock, library = checker.clock.nanoseconds - clock0, reference.LIBRARY.nanoseconds - library0
    expect.check(0 < clock <= library, f"clock {clock} ns, library {library} ns")
    expect.record(ledger, "harness", "campaign.oracle_time_in_library", tok,
                  details={"checker": type(checker).__name__, "cases": len(cases), "clock_ns": clock,
                           "library_ns": library, "delay_seconds": AROUND_THE_LIBRARY}, oracle="self")
    expect.assert_all()

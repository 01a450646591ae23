"""Campaign throughput work (issue 22) that must not cost exactness or honesty.

- The seam sampler (`fuzz.seam_sampler`) that replaced the Hypothesis engine in campaigns is deterministic per
  seed and reaches every seam family (special-token fragments, marks, Hangul, CR/LF, whitespace, digits, ...).
- Campaigns judge cuts by the array evaluation (`delta.cut_map`): a campaign against each control that breaks
  one array rule is killed by reference IDs (exit 1), on a tokenizer where the rule matters.
- The campaign's clock says where its time went: `library_seconds` (every encode inside the reference library)
  is recorded per batch and in the summary, at least the oracle's `reference_seconds`, and both positive.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import controls
from frozen.loader import load_tokenizer
from fuzz.seam_sampler import SeamSampler
from fuzz.strategies import CR_LF, HANGUL, MARKS
from properties.conftest import ADMITTED, REPO
from spec.classes import CLASS_NAMES, class_table

VECTOR_CONTROLS = [c for c in (controls.get(n) for n in controls.names()) if c.cut_fault]


def _fuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzz.cli", *args], cwd=REPO, capture_output=True, text=True,
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

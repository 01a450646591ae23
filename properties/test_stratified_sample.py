"""A strided per-code-point sample never misses the hazards: with DELTA_EXHAUSTIVE_STRIDE=k (the main job: every
16th) the checked code points of every range and of the whole space include the carve-out code points (U+000A,
U+000D, U+0027), every code point whose class differs from its predecessor's and the battery's hazard code points
(`conftest.stratum`); the default gate's sample of the unassigned planes 4-13 includes any of them there; and the
records say the sample is stratified. DELTA_EXHAUSTIVE=0 switches off every test marked `exhaustive`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from delta_suite.checks.battery import hazard_code_points
from delta_suite.spec.classes import class_table

from properties import conftest
from properties.conftest import (
    CARVE_OUTS,
    REPO,
    UNASSIGNED_PLANES,
    checked_scalars,
    class_changes,
    sampling_note,
    stratified_scalars,
    stratum,
    stride_note,
)

# ranges as the per-code-point files cut the code space (test_cut_exhaustive.RANGES), without importing that
# file (its import loads every admitted tokenizer)
RANGES = ((0, 0x800), (0x800, 0x10000), (0x10000, 0x40000), (0x40000, 0xE0000), (0xE0000, 0x110000))


def test_the_stratum_holds_the_carve_outs_every_class_change_and_the_hazards() -> None:
    table = class_table()
    changes = [cp for cp in range(1, 0x110000) if table[cp] != table[cp - 1] and not 0xD800 <= cp <= 0xDFFF]
    assert list(class_changes()) == changes and len(changes) > 1000
    assert {0x0A, 0x0D, 0x27} == set(CARVE_OUTS) <= set(stratum())
    assert set(changes) <= set(stratum()) and hazard_code_points() <= set(stratum())
    assert {0x0301, 0x2019, 0x20E3} <= hazard_code_points()  # a mark, the curly apostrophe, the keycap


@pytest.mark.parametrize("stride", [16, 97])
def test_a_strided_sample_includes_the_stratum_in_every_range(monkeypatch: pytest.MonkeyPatch, stride: int) -> None:
    """Fails when the stratification is removed: U+000A, U+000D and U+0027 are no multiples of 16 (nor of 97)."""
    monkeypatch.setenv("DELTA_EXHAUSTIVE_STRIDE", str(stride))
    want = set(stratum())
    got = set()
    for lo, hi in RANGES:
        cps = checked_scalars(lo, hi)
        assert cps == sorted(set(cps)) and all(lo <= cp < hi and not 0xD800 <= cp <= 0xDFFF for cp in cps)
        assert all(cp % stride == 0 for cp in cps if cp not in want and not UNASSIGNED_PLANES[0] <= cp < 0xE0000)
        got |= set(cps)
    assert want <= got, sorted(want - got)[:10]
    whole = stratified_scalars()
    assert want <= set(whole) and whole == sorted(set(whole))
    assert {0x0A, 0x0D, 0x27} <= set(checked_scalars(0, 0x80))
    assert len(got) < 0x110000 // stride + len(want) + 0x10  # a sample still: the stride plus the stratum


def test_the_default_sample_of_the_unassigned_planes_takes_the_stratum_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stride 1 with the planes 4-13 sampled every 16th: a stratum code point in them (none is today; one is
    planted here) is checked, and outside them every scalar value is."""
    monkeypatch.delenv("DELTA_EXHAUSTIVE_STRIDE", raising=False)
    monkeypatch.delenv("DELTA_EXHAUSTIVE", raising=False)
    monkeypatch.setattr(conftest, "stratum", lambda: (0x0A, 0x40001, 0xDFFFF))
    cps = checked_scalars(0x30000, 0xF0000)
    assert 0x40001 in cps and 0xDFFFF in cps and 0x40011 not in cps and 0x40010 in cps
    assert cps == sorted(cps) and checked_scalars(0, 0x100) == list(range(0x100))


def test_the_records_say_the_sample_is_stratified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DELTA_EXHAUSTIVE_STRIDE", "16")
    note = stride_note()
    assert note is not None and "stratified" in note and "U+000A, U+000D, U+0027" in note
    assert f"{len(class_changes()):,} code points whose class differs" in note
    assert "stratified" in (sampling_note(0, 0x80) or "")
    assert "any code point of the stratum" in (sampling_note(0x40000, 0xE0000) or "")


def test_delta_exhaustive_0_skips_every_exhaustive_test(tmp_path: Path) -> None:
    """Every test marked `exhaustive` is skipped with DELTA_EXHAUSTIVE=0 (here test_coverage.py's and
    test_alphabet.py's, which no skipif of their own switched off), and none of them runs."""
    env = {**os.environ, "DELTA_EXHAUSTIVE": "0", "DELTA_LEDGER_DIR": str(tmp_path), "DELTA_PREFETCH": "0"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "-rs",
                          "-m", "exhaustive", "properties/test_coverage.py", "properties/test_alphabet.py"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert " passed" not in out and " skipped" in out, out
    assert "exhaustive tests switched off with DELTA_EXHAUSTIVE=0" in out, out

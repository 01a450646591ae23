"""One computation per cache file across concurrent users (`frozen.cache_lock.computing`).

Invariants: while one holder is inside `computing(path)` a second waits at its entry; two threads missing the same
engine mask at once compute it once and return the same bytes; a cache whose lock cannot be created computes
without one.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from delta_suite.frozen.cache_lock import computing
from delta_suite.spec import engine_classes


def test_a_second_holder_waits_for_the_first(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "x.bin"
    events: list[str] = []
    inside = threading.Event()

    def first() -> None:
        with computing(path):
            events.append("first in")
            inside.set()
            time.sleep(0.3)
            events.append("first out")

    def second() -> None:
        inside.wait()
        with computing(path):
            events.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert events == ["first in", "first out", "second in"]


def test_a_mask_missed_at_once_is_computed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DELTA_HOME", str(tmp_path))
    calls: list[str] = []

    def slow_probe(regex: str) -> bytearray:
        calls.append(regex)
        time.sleep(0.3)
        return bytearray(engine_classes.CODE_SPACE)

    monkeypatch.setattr(engine_classes, "probe_membership", slow_probe)
    engine_classes.engine_mask.cache_clear()
    results: list[bytes] = []
    try:
        threads = [threading.Thread(target=lambda: results.append(engine_classes.engine_mask("[planted]")))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        engine_classes.engine_mask.cache_clear()
    assert calls == ["[planted]"] and len(results) == 2 and results[0] == results[1]


def test_an_unwritable_cache_computes_without_a_lock(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    ran = []
    with computing(blocked / "sub" / "x.bin"):  # its folder cannot be made under a file
        ran.append(True)
    assert ran == [True]

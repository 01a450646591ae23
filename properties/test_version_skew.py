"""The fuzzer's version-skew code points (fuzz.strategies.version_skew_codepoints) are exactly the scalar values whose
class under Python's `unicodedata2` (`_python_class`, the definition) differs from the engine's class table: the
inlined loop that computes them in every fuzz process is checked against the definition on every code point."""

from __future__ import annotations

from delta_suite.fuzz.strategies import _python_class, version_skew_codepoints
from delta_suite.spec.classes import class_table


def test_version_skew_is_the_definition_on_every_code_point(ledger) -> None:
    table = class_table()
    scalars = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    expected = tuple(cp for cp in scalars if _python_class(cp) != table[cp])
    got = version_skew_codepoints()
    ledger.record("harness", "fuzz.version_skew_codepoints", comparisons=len(scalars),
                  differences=len(set(got) ^ set(expected)), unit="code points",
                  details={"skew_code_points": len(expected)}, oracle="premise")
    assert expected, "no skew at all: the engine and unicodedata2 would agree on every class"
    assert got == expected, sorted(set(got) ^ set(expected))[:10]

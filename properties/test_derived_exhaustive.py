"""Per-code-point check of a derived family's abstract alphabet against the reference (marker `exhaustive`).

The six known families' class test (test_cut_exhaustive.py `test_classes_agree_with_reference_pretokenizer`)
compares every code point's behaviour with what the spec's class predicts from a table written from the pattern
text. A derived family (spec.proofs.derive) has no such table: its proof rests on the abstract alphabet, the
partition of the code points by the reference engine's membership in every atom of its stages, which says that
two code points of one block are interchangeable everywhere in the pattern. This checks that premise per code
point: in every probe context of the class test, the reference pre-tokenizer (the family's own Split stages)
starts a piece after every scalar value of [lo, hi) exactly where it does after the representative of the value's
block, and the block's class is the value's class in the spec's table. The transition and end-of-input checks run
on the derived families in test_cut_exhaustive.py itself (its FAMILIES include them). The families are those of
properties/derived_synthetic.py.
"""

from __future__ import annotations

import time
from functools import lru_cache

import pytest
from delta_suite.spec.classes import class_table
from delta_suite.spec.proofs.alphabet import Alphabet, family_alphabet

from properties.derived_synthetic import derived_families
from properties.test_cut_exhaustive import (
    CONTEXTS,
    COVERS,
    RANGE_IDS,
    RANGES,
    context_boundaries,
    family_pretokenizer,
    range_details,
    range_name,
    scalars,
)

pytestmark = [
    pytest.mark.exhaustive,
    pytest.mark.skipif(
        "os.environ.get('DELTA_EXHAUSTIVE') == '0'",
        reason="exhaustive per-code-point tests switched off with DELTA_EXHAUSTIVE=0",
    ),
]

DERIVED = derived_families()


@lru_cache(maxsize=8)
def block_of(family: str) -> tuple[Alphabet, bytes]:
    """The family's alphabet and one byte per code point: the index of its block (surrogates: 255, no block)."""
    alphabet = family_alphabet(family)
    assert len(alphabet) < 255
    table = bytearray([255]) * 0x110000
    for block in alphabet.blocks:
        for lo, hi in block.ranges:
            table[lo:hi] = bytes([block.index]) * (hi - lo)
    return alphabet, bytes(table)


def _observe(pt, cps: list[int]) -> list[str]:
    """Per code point, "S" (a piece starts after the context) or "J" (joined) in each context of CONTEXTS."""
    rows = []
    for prefix, suffix in CONTEXTS.values():  # a prefix or a suffix, never both: the transition into or out of c
        rows.append(context_boundaries(pt, prefix, cps, suffix))
    return ["".join("S" if row[i] else "J" for row in rows) for i in range(len(cps))]


@pytest.mark.parametrize("lo,hi", RANGES, ids=RANGE_IDS)
@pytest.mark.parametrize("family", sorted(DERIVED))
def test_derived_alphabet_predicts_reference_behaviour(family: str, lo: int, hi: int, ledger) -> None:
    """Every scalar value of [lo, hi) behaves in every probe context as its block's representative, and has its
    block's class (module docstring)."""
    t0 = time.process_time()
    tok = DERIVED[family]
    alphabet, blocks = block_of(family)
    pt = family_pretokenizer(family)
    table = class_table()
    cps = scalars(lo, hi)
    expected = _observe(pt, [b.representative for b in alphabet.blocks])
    got = _observe(pt, cps)
    wrong = [(hex(cp), blocks[cp], got[i], expected[blocks[cp]]) for i, cp in enumerate(cps)
             if got[i] != expected[blocks[cp]]]
    wrong_class = [hex(cp) for cp in cps if table[cp] != alphabet.blocks[blocks[cp]].cls]
    cpu = time.process_time() - t0
    print(f"{family} ({tok.name}) {range_name(lo, hi)}: {len(cps)} scalar values x {len(CONTEXTS)} contexts against "
          f"{len(alphabet)} block representatives, {len(wrong)} disagreements, {len(wrong_class)} class mismatches, "
          f"{cpu:.1f}s CPU; surrogates excluded")
    ledger.record("exhaustive", f"classes_{family}", tok, comparisons=len(cps) * (len(CONTEXTS) + 1),
                  differences=len(wrong) + len(wrong_class), unit="code point x context",
                  details={"cpu_seconds": round(cpu, 1), **range_details(lo, hi), "blocks": len(alphabet),
                           "examples": wrong[:20], "class_examples": wrong_class[:20], "covers": COVERS[family],
                           "family": family}, oracle="premise")
    assert not wrong, f"{family}: {len(wrong)} code points behave unlike their block, e.g. {wrong[:10]}"
    assert not wrong_class, wrong_class[:10]

"""The abstract alphabets are exact: proved against the reference engine over every code point.

Each pattern family's alphabet partitions the 1,112,064 scalar values into blocks by membership in every atom
its stages use. Checked here, exhaustively: the blocks cover every scalar value once; each block lies wholly
inside or outside every atom (engine masks) and inside one class of the class table; each atom's membership as
parsed (properties, \\s, characters, ranges, negation, case folding) equals the engine's membership of the atom's
source; the case-insensitive contraction group matches only apostrophe + per-letter fold partners. Then, on
sampled members of every block, the reference pre-tokenizer treats each member like the block's representative.
"""

from __future__ import annotations

import random
import re
from functools import cache

import pytest
from delta_suite.spec.classes import CLASS_NAMES, class_table
from delta_suite.spec.engine_classes import BATCH, CODE_SPACE, engine_mask, scalar_values
from delta_suite.spec.patterns import SPLIT_PATTERNS
from delta_suite.spec.proofs.alphabet import Alphabet, Block, family_alphabet, global_alphabet
from delta_suite.spec.proofs.pieces import family_pre_tokenizer
from delta_suite.spec.proofs.regex import Atom
from tokenizers import Regex
from tokenizers.pre_tokenizers import Split

FAMILIES = list(SPLIT_PATTERNS)
SCALARS = 0x110000 - 0x800
CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
SAMPLES_PER_BLOCK = 24


def _alphabet(name: str) -> Alphabet:
    return global_alphabet() if name == "all" else family_alphabet(name)


def _bits(mask: bytes) -> int:
    return int.from_bytes(mask, "big")


@cache
def _scalar_bits() -> int:
    mask = bytearray(b"\x01" * CODE_SPACE)
    mask[0xD800:0xE000] = b"\x00" * 0x800
    return _bits(bytes(mask))


@cache
def _fold_partners(letter: str) -> frozenset[int]:
    """Code points whose simple case fold is the fold of `letter`, from Python's Unicode data."""
    target = letter.casefold()
    return frozenset(cp for cp in scalar_values() if chr(cp).casefold() == target)


def _char_bits(chars: set[int]) -> int:
    mask = bytearray(CODE_SPACE)
    for cp in chars:
        mask[cp] = 1
    return _bits(bytes(mask))


def _composed(atom: Atom) -> int:
    """The atom's membership built from its parsed parts and primitive engine classes."""
    acc = 0
    for kind, value in atom.parts:
        if kind == "prop":
            acc |= _bits(engine_mask(rf"\p{{{value}}}"))
        elif kind == "nprop":
            acc |= _bits(engine_mask(rf"\p{{{value}}}")) ^ _scalar_bits()
        elif kind == "space":
            acc |= _bits(engine_mask(r"\s"))
        elif kind == "nonspace":
            acc |= _bits(engine_mask(r"\s")) ^ _scalar_bits()
        else:
            lo, hi = (value[0], value[-1]) if kind == "range" else (value, value)
            chars = set(range(ord(lo), ord(hi) + 1))
            if atom.icase:
                chars |= {p for c in list(chars) for p in _fold_partners(chr(c))}
            acc |= _char_bits(chars)
    return acc ^ _scalar_bits() if atom.negated else acc


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", [*FAMILIES, "all"])
def test_partition_is_exact_over_every_code_point(name: str, ledger) -> None:
    """The blocks cover every scalar value exactly once, and every block lies wholly inside or wholly outside
    every atom (the engine's masks) and inside one class of the class table."""
    alphabet = _alphabet(name)
    ranges = sorted(r for b in alphabet.blocks for r in b.ranges)
    expected = [(0, 0xD800), (0xE000, CODE_SPACE)]
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        assert not merged or lo >= merged[-1][1], f"blocks overlap at U+{lo:04X}"
        if merged and merged[-1][1] == lo:
            merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    assert merged == expected
    table = class_table()
    checked, differing, first = 0, 0, None  # memberships compared with the engine's, and those that differ
    for i, atom in enumerate(alphabet.atoms):
        mask = engine_mask(atom.source)
        for block in alphabet.blocks:
            for lo, hi in block.ranges:
                wrong = (hi - lo) - mask[lo:hi].count(block.signature[i])
                if wrong and first is None:
                    first = (atom.source, block.describe())
                differing += wrong
                checked += hi - lo
    ledger.record("exhaustive", "proofs.alphabet_partition", None, comparisons=checked, differences=differing,
                  unit="code point memberships",
                  details={"family": name, "symbols": len(alphabet), "atoms": [a.source for a in alphabet.atoms],
                           "class_counts": alphabet.class_counts(), "first_difference": first}, oracle="proof")
    assert differing == 0, first
    for block in alphabet.blocks:
        for lo, hi in block.ranges:
            assert table[lo:hi] == bytes([block.cls]) * (hi - lo), block.describe()
    counts = alphabet.class_counts()  # what the record and the proofs' summaries state per class
    assert sum(counts.values()) == len(alphabet.blocks)
    assert counts == {c: sum(CLASS_NAMES[b.cls] == c for b in alphabet.blocks) for c in CLASS_NAMES}
    print(f"\n{name}: {len(alphabet)} symbols over {len(alphabet.atoms)} atoms; per class {alphabet.class_counts()}")
    for block in alphabet.blocks:
        print(f"  {block.describe()}")


@pytest.mark.exhaustive
@pytest.mark.parametrize("family", FAMILIES)
def test_atoms_parse_like_the_engine(family: str, ledger) -> None:
    """Each atom's membership composed from its parsed parts equals the engine's membership of its source, on
    every scalar value (the parser reads brackets, ranges, escapes and negation as Oniguruma does)."""
    alphabet = family_alphabet(family)
    # each membership bit composed from the parse against the engine's (a byte per code point, 0 or 1)
    wrong = {atom.source: (_composed(atom) ^ _bits(engine_mask(atom.source))).bit_count() for atom in alphabet.atoms}
    ledger.record("exhaustive", "proofs.atom_parse", None, comparisons=len(alphabet.atoms) * SCALARS,
                  differences=sum(wrong.values()), unit="code point memberships",
                  details={"family": family, "differing_atoms": sorted(a for a, n in wrong.items() if n)},
                  oracle="proof")
    assert not any(wrong.values()), {a: n for a, n in wrong.items() if n}


def _members(mask: bytes) -> list[int]:
    return [m.start() for m in re.finditer(b"\x01", mask)]


def _kept_flags(regex: str, texts: list[str]) -> bytes:
    """Texts of one length n, run through Split(removed) with `regex` in NUL-separated batches: the kept flag
    (1 kept, 0 removed) of each character, n + 1 bytes per text (the separator's flag last)."""
    splitter = Split(Regex(regex), behavior="removed")
    out = bytearray()
    for start in range(0, len(texts), BATCH):
        joined = "\x00".join(texts[start : start + BATCH]) + "\x00"
        kept = bytearray(len(joined))
        for _, (lo, hi) in splitter.pre_tokenize_str(joined):
            kept[lo:hi] = b"\x01" * (hi - lo)
        out += kept
    return bytes(out)


@pytest.mark.exhaustive
def test_contraction_group_folds_letter_by_letter(ledger) -> None:
    """Under (?i:...) the engine matches the contraction group only as an apostrophe followed by per-letter
    fold partners of s, t, m, d (alone) or of r·e, v·e, l·l: no code point alone matches a contraction, and no
    code point after an apostrophe matches but those of the one-letter contractions (every scalar value)."""
    cps = [cp for cp in scalar_values() if cp != 0]
    after = _kept_flags(CONTRACTIONS, ["'" + chr(cp) for cp in cps])
    alone = _kept_flags(CONTRACTIONS, [chr(cp) for cp in cps])
    assert alone[0::2].count(0) == 0, "a single code point matched a whole contraction"
    apostrophe_kept, letter_kept = after[0::3], after[1::3]
    one_letter = {cp for letter in "stmd" for cp in _members(engine_mask(f"(?i:{letter})"))}
    matched = {cp for cp, k in zip(cps, letter_kept, strict=True) if not k}
    assert matched == one_letter
    assert apostrophe_kept == letter_kept, "a partial contraction match"
    partners = {letter: _members(engine_mask(f"(?i:{letter})")) for letter in "rvlesd"}
    combos = [(first, second, a, b) for first, second in ("re", "ve", "ll", "rl", "le", "ee", "se", "dl")
              for a in partners[first] for b in partners[second]]
    flags = _kept_flags(CONTRACTIONS, ["'" + chr(a) + chr(b) for _, _, a, b in combos])
    for n, (first, second, a, b) in enumerate(combos):
        if first + second in ("re", "ve", "ll"):
            expected = b"\x00\x00\x00"
        else:
            expected = b"\x00\x00\x01" if first in "stmd" else b"\x01\x01\x01"
        assert flags[4 * n : 4 * n + 3] == expected, (chr(a), chr(b))
    print(f"\none-letter contraction partners: {sorted(f'U+{cp:04X}' for cp in one_letter)}; {len(combos)} pairs")
    ledger.record("exhaustive", "proofs.contraction_folding", None, comparisons=2 * len(cps) + len(combos),
                  unit="strings", details={"one_letter_partners": len(one_letter)}, oracle="proof")


def _sample(block: Block, k: int, rng: random.Random) -> list[int]:
    """The first and last members and k evenly spaced or random members of a block."""
    size = block.size

    def nth(n: int) -> int:
        for lo, hi in block.ranges:
            if n < hi - lo:
                return lo + n
            n -= hi - lo
        raise IndexError(n)

    picks = {0, size - 1} | {i * size // k for i in range(k)} | {rng.randrange(size) for _ in range(k)}
    return sorted(nth(i) for i in picks if 0 <= i < size)


def representatives_note(members: int, total: int) -> str:
    """How the representatives check samples each block (`_sample`), with the members it checked of all."""
    return (f"{members:,} of {total:,} block members: per block its first and last members, {SAMPLES_PER_BLOCK} "
            f"evenly spaced and {SAMPLES_PER_BLOCK} random ones (seed 2026), not every member")


def _boundaries(pre_tokenizer, text: str) -> list[tuple[int, int]]:
    return [offsets for _, offsets in pre_tokenizer.pre_tokenize_str(text)]


def test_the_global_alphabet_holds_every_familys_atoms() -> None:
    """The global alphabet is the common refinement over the atoms of every family: each family's atoms are among
    its atoms, so it has at least as many blocks as the finest family's alphabet. (The exhaustive partition test
    checks its blocks against its own atoms, which an alphabet of too few atoms passes.)"""
    everyone = global_alphabet()
    sources = {atom.source for atom in everyone.atoms}
    for family in FAMILIES:
        assert {atom.source for atom in family_alphabet(family).atoms} <= sources, family
    assert len(everyone.blocks) >= max(len(family_alphabet(f).blocks) for f in FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_representatives_behave_like_their_blocks(family: str, ledger) -> None:
    """For sampled members of every block, the reference pre-tokenizer cuts every probe string (the member
    alone, doubled, and beside each representative on either side and both) at the offsets it cuts the same
    probe made with the block's representative."""
    alphabet = family_alphabet(family)
    pre_tokenizer = family_pre_tokenizer(family)
    reps = [alphabet.representative(b.index) for b in alphabet.blocks]
    templates = ["{c}", "{c}{c}", *(f"{r}{{c}}" for r in reps), *(f"{{c}}{r}" for r in reps),
                 *(f"{r}{{c}}{r}" for r in reps)]
    rng = random.Random(2026)
    compared, differing, members = 0, [], 0
    for block in alphabet.blocks:
        rep = chr(block.representative)
        expected = [_boundaries(pre_tokenizer, t.replace("{c}", rep)) for t in templates]
        sample = _sample(block, SAMPLES_PER_BLOCK, rng)
        members += len(sample)
        for cp in sample:
            c = chr(cp)
            for template, want in zip(templates, expected, strict=True):
                if _boundaries(pre_tokenizer, template.replace("{c}", c)) != want:
                    differing.append((block.describe(), f"U+{cp:04X}", template))
                compared += 1
    print(f"\n{family}: {compared} probe strings over {len(alphabet)} blocks "
          f"({', '.join(f'{n} {k}' for k, n in alphabet.class_counts().items())})")
    ledger.record("exhaustive", "proofs.representatives", None, comparisons=compared, differences=len(differing),
                  unit="probe strings",
                  details={"family": family, "symbols": len(alphabet), "classes": list(CLASS_NAMES),
                           "sampled": representatives_note(members, sum(b.size for b in alphabet.blocks)),
                           "first_difference": differing[0] if differing else None}, oracle="proof")
    assert differing == [], differing[:3]

"""The abstract alphabet of a split pattern: all code points partitioned by membership in every atom the pattern uses.

An atom is one single-character position of a pattern (a bracket class, \\p{..}, \\s, \\S, a literal, a
case-insensitive literal). Two code points that agree on membership in every atom are indistinguishable to
the pattern: wherever one can stand in a match the other can too. So each block of the partition is one
abstract symbol, and the pattern becomes a regular expression over a small finite alphabet without
approximation. Membership is read off the reference engine (`engine_mask`, Oniguruma's own Unicode data), never
from Python. The class atoms (\\s, \\p{L}, \\p{N}, \\p{M}) and the carve-out characters (CR, LF, apostrophe)
are always added, so the accepted transition set and its carve-outs are unions of blocks too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from delta_suite.spec.classes import CLASS_NAMES, L, M, N, O, S
from delta_suite.spec.engine_classes import CODE_SPACE, engine_mask
from delta_suite.spec.families import stages_of
from delta_suite.spec.patterns import SPLIT_PATTERNS
from delta_suite.spec.proofs.regex import Atom, atoms, parse

# the class atoms (the transition set speaks of them) and the carve-out characters (its exceptions speak of them)
CLASS_ATOMS: dict[int, Atom] = {
    S: Atom(source=r"\s", parts=(("space", ""),)),
    L: Atom(source=r"\p{L}", parts=(("prop", "L"),)),
    N: Atom(source=r"\p{N}", parts=(("prop", "N"),)),
    M: Atom(source=r"\p{M}", parts=(("prop", "M"),)),
}
CARVE_OUT_ATOMS: tuple[Atom, ...] = (
    Atom(source=r"\r", parts=(("char", "\r"),)),
    Atom(source=r"\n", parts=(("char", "\n"),)),
    Atom(source="'", parts=(("char", "'"),)),
)
SURROGATE_LO, SURROGATE_HI = 0xD800, 0xE000


@dataclass(frozen=True)
class Block:
    """One abstract symbol: the code points sharing one membership signature."""

    index: int
    signature: tuple[int, ...]  # 0/1 per atom of the alphabet, in the alphabet's atom order
    ranges: tuple[tuple[int, int], ...]  # half-open code point ranges, ascending
    cls: int  # O, S, L, N or M
    representative: int  # the lowest member

    @property
    def size(self) -> int:
        return sum(hi - lo for lo, hi in self.ranges)

    def members(self):
        for lo, hi in self.ranges:
            yield from range(lo, hi)

    def describe(self) -> str:
        return f"#{self.index} {CLASS_NAMES[self.cls]} U+{self.representative:04X} ({self.size} code points)"


@dataclass(frozen=True)
class Alphabet:
    """The partition of the scalar values into blocks by membership in `atoms`."""

    name: str
    atoms: tuple[Atom, ...]
    blocks: tuple[Block, ...]

    def __len__(self) -> int:
        return len(self.blocks)

    def atom_index(self, atom: Atom | str) -> int:
        source = atom if isinstance(atom, str) else atom.source
        for i, a in enumerate(self.atoms):
            if a.source == source:
                return i
        raise KeyError(source)

    def symbols_of(self, atom: Atom | str) -> frozenset[int]:
        """The blocks inside the atom (every block is inside or outside each atom)."""
        i = self.atom_index(atom)
        return frozenset(b.index for b in self.blocks if b.signature[i])

    def symbols_of_class(self, cls: int) -> frozenset[int]:
        return frozenset(b.index for b in self.blocks if b.cls == cls)

    def symbols_of_chars(self, chars: str) -> frozenset[int]:
        return frozenset(self.symbol_of(ord(c)) for c in chars)

    def symbol_of(self, cp: int) -> int:
        for b in self.blocks:
            for lo, hi in b.ranges:
                if lo <= cp < hi:
                    return b.index
        raise KeyError(f"U+{cp:04X} is not a scalar value")

    def representative(self, symbol: int) -> str:
        return chr(self.blocks[symbol].representative)

    def concretize(self, symbols) -> str:
        """The real string with each abstract symbol replaced by its representative code point."""
        return "".join(self.representative(s) for s in symbols)

    def class_counts(self) -> dict[str, int]:
        out = {name: 0 for name in CLASS_NAMES}
        for b in self.blocks:
            out[CLASS_NAMES[b.cls]] += 1
        return out


def _runs(mask: bytes) -> list[int]:
    """The code points where the mask changes value (including 0)."""
    return [m.start() for m in re.finditer(rb"\x00+|\x01+", mask)]


def _class_of(signature: dict[str, int]) -> int:
    if signature[CLASS_ATOMS[S].source]:
        return S
    for cls in (L, N, M):
        if signature[CLASS_ATOMS[cls].source]:
            return cls
    return O


def partition(name: str, pattern_atoms: list[Atom]) -> Alphabet:
    """Partition every scalar value by engine membership in the pattern atoms plus the class and carve-out atoms."""
    chosen: dict[str, Atom] = {}
    for atom in [*pattern_atoms, *CLASS_ATOMS.values(), *CARVE_OUT_ATOMS]:
        chosen.setdefault(atom.source, atom)
    atom_list = tuple(chosen.values())
    masks = [engine_mask(a.source) for a in atom_list]
    cuts = {0, SURROGATE_LO, SURROGATE_HI, CODE_SPACE}
    for mask in masks:
        cuts.update(_runs(mask))
    points = sorted(cuts)
    groups: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for lo, hi in zip(points, points[1:], strict=False):
        if SURROGATE_LO <= lo < SURROGATE_HI:
            continue
        sig = tuple(mask[lo] for mask in masks)
        groups.setdefault(sig, []).append((lo, hi))
    ordered = sorted(groups.items(), key=lambda kv: kv[1][0][0])
    blocks = []
    for index, (sig, ranges) in enumerate(ordered):
        merged: list[tuple[int, int]] = []
        for lo, hi in ranges:
            if merged and merged[-1][1] == lo:
                merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        named = {a.source: bit for a, bit in zip(atom_list, sig, strict=True)}
        blocks.append(Block(index, sig, tuple(merged), _class_of(named), merged[0][0]))
    return Alphabet(name, atom_list, tuple(blocks))


def family_atoms(family: str) -> list[Atom]:
    """Every atom of every Split stage of a pattern family, in order of appearance."""
    out: dict[str, Atom] = {}
    for stage in stages_of(family):
        for atom in atoms(parse(stage)):
            out.setdefault(atom.source, atom)
    return list(out.values())


@cache
def family_alphabet(family: str) -> Alphabet:
    """The abstract alphabet of one pattern family (all its stages share it)."""
    return partition(family, family_atoms(family))


@lru_cache(maxsize=1)
def global_alphabet() -> Alphabet:
    """The common refinement over the atoms of all six families."""
    every: dict[str, Atom] = {}
    for family in SPLIT_PATTERNS:
        for atom in family_atoms(family):
            every.setdefault(atom.source, atom)
    return partition("all", list(every.values()))

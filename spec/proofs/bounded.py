"""An engine-level bounded check of the transition set that does not trust the z3 model: every short string over
the abstract alphabet's representatives, cut at every accepted transition, pre-tokenized by the reference.

For every string s up to a length bound and every position p where (s[p-1], s[p]) is an accepted transition
(spec.transitions.is_accepted_transition, the predicate the cut planner uses), the reference's pieces of s must
equal its pieces of s[:p] followed by its pieces of s[p:]. The check enumerates two alphabets: one
representative per abstract symbol (all blocks) up to a short length, and a reduced set up to a longer one.

The reduced set is chosen so that, inside every character class, every atom the pattern uses is represented
both by a member and by a non-member whenever the class has both (a greedy cover of these features); the
carve-out characters, space, CR, LF and the largest block of each class are forced in. One symmetry is used:
the contraction letters occur nowhere but in the contraction group, where t, m and d play exactly the role of
s (one-letter contractions) and v that of r (first letter of a two-letter contraction ending in e), so
permuting them maps the pattern's matches onto themselves; their atoms count as one feature per group. So
the longer strings still exercise every class change, every atom boundary and every contraction shape ('s,
're, 'll); the full alphabet at the shorter length covers every pair of symbols with context, the dropped
letters included.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

from delta_suite.spec.classes import CLASS_NAMES, class_table
from delta_suite.spec.proofs.alphabet import Alphabet
from delta_suite.spec.proofs.pieces import Pieces
from delta_suite.spec.transitions import is_accepted_transition

FORCED = (" ", "\r", "\n", "'")
# contraction letters interchangeable by the symmetry of the contraction group (see the module docstring)
SYMMETRIC_ATOMS = {"(?i:t)": "(?i:s)", "(?i:m)": "(?i:s)", "(?i:d)": "(?i:s)", "(?i:v)": "(?i:r)"}


@dataclass
class BoundedResult:
    """What one enumeration compared and every difference it found (with the reference's own pieces)."""

    label: str
    representatives: list[str]
    max_length: int
    enumerated: int = 0  # every string up to the bound
    strings: int = 0  # those pre-tokenized (every shorter one, and every longest one with an accepted transition)
    transitions: int = 0
    differences: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict:
        return {
            "alphabet": self.label,
            "representatives": [f"U+{ord(c):04X}" for c in self.representatives],
            "max_length": self.max_length,
            "enumerated": self.enumerated,
            "strings": self.strings,
            "transitions_checked": self.transitions,
            "differences": len(self.differences),
            "first_differences": self.differences[:5],
            "seconds": round(self.seconds, 2),
        }


def reduced_representatives(alphabet: Alphabet) -> list[str]:
    """A small set of representatives covering, per class, each atom's members and non-members (see module doc)."""
    names = [SYMMETRIC_ATOMS.get(atom.source, atom.source) for atom in alphabet.atoms]
    features: dict[int, set[tuple[int, str, int]]] = {}
    for block in alphabet.blocks:
        features[block.index] = {(block.cls, names[i], bit) for i, bit in enumerate(block.signature)}
    chosen = [alphabet.symbol_of(ord(c)) for c in FORCED]
    for cls in range(len(CLASS_NAMES)):  # the commonest symbol of each class: what typical text is made of
        members = [b for b in alphabet.blocks if b.cls == cls]
        if members:
            chosen.append(max(members, key=lambda b: b.size).index)
    covered: set[tuple[int, str, int]] = set().union(*(features[s] for s in chosen))
    needed: set[tuple[int, str, int]] = set().union(*features.values())
    while covered != needed:
        best = max(sorted(features), key=lambda s: len(features[s] - covered))
        chosen.append(best)
        covered |= features[best]
    return [alphabet.representative(s) for s in sorted(set(chosen))]


def check_strings(pieces: Pieces, representatives: list[str], max_length: int, label: str) -> BoundedResult:
    """Every string over `representatives` up to `max_length`, cut at every accepted transition, must concatenate."""
    start = time.perf_counter()
    table = class_table()
    result = BoundedResult(label, list(representatives), max_length)
    accepted = {(a, b) for a in representatives for b in representatives if is_accepted_transition(a, b, table)}
    known: dict[str, list[str]] = {}
    for length in range(1, max_length + 1):
        for chars in itertools.product(representatives, repeat=length):
            result.enumerated += 1
            cuts = [p for p in range(1, length) if (chars[p - 1], chars[p]) in accepted]
            if not cuts and length == max_length:
                continue  # nothing to check, and no longer string needs its pieces
            text = "".join(chars)
            whole = pieces(text)
            result.strings += 1
            if length < max_length:
                known[text] = whole
            for p in cuts:
                result.transitions += 1
                split = known[text[:p]] + known[text[p:]]
                if whole != split:
                    result.differences.append(
                        {"text": text, "codepoints": [f"U+{ord(c):04X}" for c in text], "cut": p,
                         "pieces_whole": whole, "pieces_split": split}
                    )
    result.seconds = time.perf_counter() - start
    return result


def bounded_check(pieces: Pieces, alphabet: Alphabet, full_length: int, reduced_length: int) -> list[BoundedResult]:
    """The full alphabet up to `full_length` and the reduced set up to `reduced_length`."""
    full = [alphabet.representative(b.index) for b in alphabet.blocks]
    out = [check_strings(pieces, full, full_length, "full")]
    if reduced_length > full_length:
        out.append(check_strings(pieces, reduced_representatives(alphabet), reduced_length, "reduced"))
    return out


def default_lengths(alphabet: Alphabet, thorough: bool) -> tuple[int, int]:
    """(full_length, reduced_length): about 10^5 strings per alphabet by default, about 2*10^6 when thorough."""
    budget = 2_000_000 if thorough else 100_000
    full = 1
    while len(alphabet) ** (full + 1) <= budget:
        full += 1
    return full, (6 if thorough else 5)

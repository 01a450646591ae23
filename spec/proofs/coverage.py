"""Coverage: does a Split stage's regex match, at every position of every text, a non-empty string?

If it does, its matches tile the text with no gap between them, so `Split(regex, Removed, invert=true)` (which
keeps the matches and drops the gaps) and `Split(regex, Isolated)` (which keeps both) give the same pieces; this
is the premise on which olmo_3_7b's Removed + inverted stage is admitted (`spec.admission`, `TOTAL_STAGES` in
`spec.patterns`). Two z3 queries over the family's abstract alphabet prove it:

1. no empty match: the empty word is not in the over-approximated language (lookaheads read as the empty word,
   so every string the engine can match is in it); so every match the engine makes is non-empty;
2. every symbol starts a match whatever follows: each one-symbol word is in the under-approximated language
   (lookaheads read as the empty language, so a word in it is matched by a path without lookarounds, which the
   backtracking engine finds at that position whatever the next characters are).

Together: at every position the engine's leftmost search finds a non-empty match starting exactly there, and the
next search starts where it ended. A stage for which either query is satisfiable is not total, and the model is
the witness (a symbol no alternative matches alone, or the empty match).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from delta_suite.spec.families import stages_of
from delta_suite.spec.proofs.alphabet import Alphabet, family_alphabet
from delta_suite.spec.proofs.lazy_z3 import z3
from delta_suite.spec.proofs.regex import parse
from delta_suite.spec.proofs.z3_encoding import Encoder


@dataclass(frozen=True)
class Coverage:
    """The coverage verdict of one stage: `total`, and when not, why (`empty_match` or an uncovered symbol)."""

    family: str
    stage: int
    total: bool
    empty_match: bool
    uncovered: tuple[int, ...]  # abstract symbols whose one-symbol word no path without lookarounds matches
    witness: str | None  # a representative code point of the first uncovered symbol
    seconds: float


def stage_coverage(family: str, stage: int) -> Coverage:
    """Prove or refute that stage `stage` of `family` matches a non-empty string at every position."""
    return regex_coverage(stages_of(family)[stage], family, stage)


def regex_coverage(regex: str, family: str, stage: int = 0, alphabet: Alphabet | None = None) -> Coverage:
    """The coverage verdict of `regex` over `family`'s abstract alphabet, or over `alphabet` when given (its atoms
    must be among the alphabet's)."""
    alphabet = alphabet or family_alphabet(family)
    enc = Encoder(alphabet)
    ast = parse(regex)
    start = time.perf_counter()
    empty = z3.Solver()
    empty.add(z3.InRe(z3.StringVal(""), enc.regex(ast, "over")))
    empty_match = empty.check() != z3.unsat
    under = enc.regex(ast, "under")
    uncovered = []
    remaining = z3.Solver()
    w = z3.String("w")
    remaining.add(z3.Length(w) == 1, z3.InRe(w, enc.any_string()), z3.Not(z3.InRe(w, under)))
    while True:  # enumerate every uncovered symbol (each model is blocked in turn)
        answer = remaining.check()
        if answer == z3.unknown:
            raise RuntimeError(f"z3 returned unknown on the coverage of {family} stage {stage}")
        if answer == z3.unsat:
            break
        (symbol,) = enc.decode(remaining.model()[w])
        uncovered.append(symbol)
        remaining.add(w != z3.StringVal(enc.chars[symbol]))
    seconds = time.perf_counter() - start
    witness = alphabet.representative(uncovered[0]) if uncovered else None
    return Coverage(family, stage, not empty_match and not uncovered, empty_match, tuple(sorted(uncovered)), witness,
                    round(seconds, 3))


def family_coverage(family: str) -> list[Coverage]:
    """The coverage verdict of every stage of a family."""
    return [stage_coverage(family, i) for i in range(len(stages_of(family)))]

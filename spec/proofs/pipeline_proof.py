"""Pipeline-level proofs: a cut at an accepted transition leaves the pieces of the whole pre-tokenizer unchanged,
for every string over the abstract alphabet up to a length bound, decided by z3 on the encoding of
`spec.proofs.pipeline` (all Split stages in order, each with its behaviour, then the byte-level stage).

Claim, per family and per length n <= bound, for every cut p (0 < p < n) with (s[p-1], s[p]) an accepted
transition (carve-outs applied, `spec.transitions.is_accepted_pair`, a union of abstract symbols):

- end of input: the boundaries of pieces(s[:p]) are exactly the boundaries of pieces(s) in [0, p];
- right side: the boundaries of pieces(s[p:]) shifted by p are exactly those of pieces(s) in [p, n].

Together: pieces(s[:p]) + pieces(s[p:]) == pieces(s). Each is one z3 query per length (the cut and the pair are
free variables); unsat is the proof at that length. The bound is stated with every result: the split-level
obligations of `spec.proofs.prove` are unbounded but compositional; these are bounded but cover the pipeline
whole, including DeepSeek's three stages with no composition argument at all.

Every excluded pair gets the same query: a satisfying string is a pipeline-level counterexample, confirmed on the
reference pre-tokenizer; unsat to the bound is "sound to length n" (excluded conservatively).

The encoding is checked against the reference before anything is claimed (`faithfulness`): every string over the
reduced representatives up to a short length and seeded random strings over the whole alphabet up to the bound,
evaluated by the same code under the concrete algebra, must give the reference's own piece boundaries. A broken
encoding (a lookahead clause dropped, later stages not isolated to earlier pieces) fails there or in the proof.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field
from functools import cache

from delta_suite.frozen.errors import SuiteError
from delta_suite.spec.families import stages_of
from delta_suite.spec.proofs.alphabet import Alphabet, family_alphabet, partition
from delta_suite.spec.proofs.bounded import reduced_representatives
from delta_suite.spec.proofs.lazy_z3 import z3
from delta_suite.spec.proofs.pieces import Pieces, pieces_of, stages_pre_tokenizer
from delta_suite.spec.proofs.pipeline import ConcreteAlgebra, Pipeline, StageSemantics, Z3Algebra, pieces_to_boundaries
from delta_suite.spec.proofs.prove import PairSet, pair_sets
from delta_suite.spec.proofs.regex import atoms, parse

DEFAULT_BOUND = 8  # symbols per string: every string of up to 8 abstract symbols, cut anywhere
FAITHFUL_SHORT = 2  # every string over the reduced representatives up to this length
FAITHFUL_RANDOM = 1500  # seeded random strings over the whole alphabet, lengths 1..bound
SOLVER_TIMEOUT_MS = 300_000
SIDES = ("end_of_input", "right_side")
CORRECT = StageSemantics()


class PipelineInconclusive(SuiteError):
    """z3 answered unknown or timed out on a pipeline query."""


@dataclass(frozen=True)
class SideResult:
    """One side of the cut claim for one pair set, up to the bound: proved, or the first counterexample."""

    side: str
    proved_to: int  # the longest length proved (0: refuted at length 1 or 2)
    seconds: float
    witness: tuple[int, ...] | None = None
    cut: int | None = None


@dataclass
class PairProof:
    pair: PairSet
    sides: dict[str, SideResult]
    counterexample: str | None = None
    cut: int | None = None
    pieces_whole: list[str] | None = None
    pieces_split: list[str] | None = None
    confirmed: bool = False  # the reference's pieces change at the counterexample's cut
    side: str | None = None  # where the reference's boundaries change (side_of)

    @property
    def sound(self) -> bool:
        return all(r.witness is None for r in self.sides.values())


@dataclass
class Faithfulness:
    """The encoding under the concrete algebra against the reference, string by string."""

    strings: int = 0
    mismatches: list[dict] = field(default_factory=list)

    @property
    def faithful(self) -> bool:
        return self.strings > 0 and not self.mismatches


@dataclass
class PipelineProof:
    family: str
    bound: int
    symbols: int
    stages: int
    semantics: StageSemantics
    faithfulness: Faithfulness
    accepted: dict[str, SideResult] = field(default_factory=dict)  # the accepted set as a whole, per side
    accepted_counterexample: PairProof | None = None
    pairs: list[PairProof] = field(default_factory=list)  # each excluded pair set
    seconds: float = 0.0

    @property
    def accepted_proved(self) -> bool:
        sides = self.accepted.values()
        return bool(sides) and all(r.witness is None and r.proved_to == self.bound for r in sides)

    @property
    def holds(self) -> bool:
        """The claim is proved to the bound and the encoding agrees with the reference."""
        return self.accepted_proved and self.faithfulness.faithful and all(
            p.sound or p.confirmed for p in self.pairs)

    def summary(self) -> dict:
        return {
            "family": self.family,
            "bound": self.bound,
            "symbols": self.symbols,
            "stages": self.stages,
            "strings_covered": sum(self.symbols ** n for n in range(2, self.bound + 1)),
            "accepted_proved": self.accepted_proved,
            "sides": {side: {"proved_to": r.proved_to, "seconds": round(r.seconds, 3),
                             "counterexample": None if r.witness is None else list(r.witness), "cut": r.cut}
                      for side, r in self.accepted.items()},
            "accepted_counterexample": _cx(self.accepted_counterexample) if self.accepted_counterexample else None,
            "faithful": self.faithfulness.faithful,
            "faithfulness_strings": self.faithfulness.strings,
            "faithfulness_mismatches": self.faithfulness.mismatches[:5],
            "excluded_sound_to_bound": [p.pair.label for p in self.pairs if p.sound],
            "excluded_refuted": {p.pair.label: _cx(p) for p in self.pairs if not p.sound},
            "unconfirmed_refutations": [p.pair.label for p in self.pairs if not p.sound and not p.confirmed],
            "holds": self.holds,
            "seconds": round(self.seconds, 3),
        }


def _cx(p: PairProof) -> dict:
    return {"text": p.counterexample, "codepoints": [f"U+{ord(c):04X}" for c in p.counterexample or ""],
            "cut": p.cut, "pieces_whole": p.pieces_whole, "pieces_split": p.pieces_split, "confirmed": p.confirmed,
            "side": p.side}


class PipelineProver:
    """The bounded z3 queries of one pipeline encoding."""

    def __init__(self, pipeline: Pipeline, bound: int) -> None:
        self.pipeline, self.bound = pipeline, bound
        self.k = len(pipeline.alphabet)
        self._formulas: dict[int, tuple[Z3Algebra, list, dict[int, tuple[list, list]]]] = {}

    def formulas(self, n: int) -> tuple[Z3Algebra, list, dict[int, tuple[list, list]]]:
        """For length n: the algebra, the whole string's boundaries, and per cut p those of s[:p] and s[p:]."""
        if n not in self._formulas:
            alg = Z3Algebra(n, self.k)
            whole = self.pipeline.boundaries(alg, 0, n)
            halves = {p: (self.pipeline.boundaries(alg, 0, p), self.pipeline.boundaries(alg, p, n))
                      for p in range(1, n)}
            self._formulas[n] = (alg, whole, halves)
        return self._formulas[n]

    def differs(self, n: int, p: int, side: str) -> z3.BoolRef:
        alg, whole, halves = self.formulas(n)
        left, right = halves[p]
        left_side = [whole[j] != left[j] for j in range(p + 1)]
        right_side = [whole[j] != right[j - p] for j in range(p, n + 1)]
        return z3.Or(*{"end_of_input": left_side, "right_side": right_side, "pieces": left_side + right_side}[side])

    def side(self, pairs: list[PairSet], side: str) -> SideResult:
        """Lengths 2..bound: is there a string and a cut at a transition of one of `pairs` where `side` differs?
        One query per length: the cut position and the pair are free."""
        start, proved = time.perf_counter(), 1
        for n in range(2, self.bound + 1):
            alg = self.formulas(n)[0]
            s = z3.Solver()
            s.set("timeout", SOLVER_TIMEOUT_MS)
            s.add(*alg.domain)
            cut = z3.Int("cut")
            s.add(z3.Or(*[z3.And(cut == p, z3.Or(*[z3.And(alg.member(p - 1, pair.left), alg.member(p, pair.right))
                                                     for pair in pairs]), self.differs(n, p, side))
                          for p in range(1, n)]))
            answer = s.check()
            if answer == z3.unknown:
                raise PipelineInconclusive(f"z3 returned unknown at length {n} ({s.reason_unknown()})")
            if answer == z3.sat:
                m = s.model()
                word = tuple(m.eval(c, model_completion=True).as_long() for c in alg.chars)
                return SideResult(side, proved, time.perf_counter() - start, word, m.eval(cut).as_long())
            proved = n
        return SideResult(side, proved, time.perf_counter() - start)


def faithfulness(pipeline: Pipeline, pieces: Pieces, bound: int, seed: int = 0) -> Faithfulness:
    """The concrete evaluation of the encoding against the reference's piece boundaries (module docstring)."""
    alphabet = pipeline.alphabet
    reduced = [alphabet.symbol_of(ord(c)) for c in reduced_representatives(alphabet)]
    strings = [w for n in range(1, FAITHFUL_SHORT + 1) for w in itertools.product(reduced, repeat=n)]
    rng = random.Random(seed)
    for _ in range(FAITHFUL_RANDOM):
        strings.append(tuple(rng.randrange(len(alphabet)) for _ in range(rng.randint(1, bound))))
    out = Faithfulness()
    for word in strings:
        out.strings += 1
        text = alphabet.concretize(word)
        mine = [i for i, b in enumerate(pipeline.boundaries(ConcreteAlgebra(word), 0, len(word))) if b]
        reference = pieces_to_boundaries(pieces(text))
        if mine != reference:
            out.mismatches.append({"text": text, "codepoints": [f"U+{ord(c):04X}" for c in text],
                                   "encoding": mine, "reference": reference})
    return out


def _pair_proof(prover: PipelineProver, pieces: Pieces, pair: PairSet) -> PairProof:
    sides = {"pieces": prover.side([pair], "pieces")}  # both sides in one query: refuted or sound is all it asks
    proof = PairProof(pair, sides)
    refuted = next((r for r in sides.values() if r.witness is not None), None)
    if refuted is not None:
        alphabet = prover.pipeline.alphabet
        text, cut = alphabet.concretize(refuted.witness), refuted.cut
        proof.counterexample, proof.cut = text, cut
        proof.pieces_whole, proof.pieces_split = pieces(text), pieces(text[:cut]) + pieces(text[cut:])
        proof.confirmed = proof.pieces_whole != proof.pieces_split
        proof.side = side_of(pieces, text, cut)
    return proof


def side_of(pieces: Pieces, text: str, cut: int) -> str:
    """Which side of the cut the reference's boundaries change on: "end_of_input", "right_side", "both" or "none"."""
    whole = pieces_to_boundaries(pieces(text))
    left = pieces_to_boundaries(pieces(text[:cut]))
    right = [cut + b for b in pieces_to_boundaries(pieces(text[cut:]))]
    left_differs = [b for b in whole if b <= cut] != left
    right_differs = [b for b in whole if b >= cut] != right
    return {(True, True): "both", (True, False): "end_of_input", (False, True): "right_side"}.get(
        (left_differs, right_differs), "none")


def prove_pipeline(name: str, stages: tuple[str, ...], bound: int = DEFAULT_BOUND,
                   semantics: StageSemantics = CORRECT, accepted_extra: tuple[str, ...] = (),
                   alphabet: Alphabet | None = None) -> PipelineProof:
    """The pipeline claim for one sequence of Split stages: faithfulness, the accepted set (plus the pair labels
    in `accepted_extra`, a broken variant) on both sides to `bound`, and every other pair set refuted or sound."""
    start = time.perf_counter()
    asts = tuple(parse(regex) for regex in stages)
    alphabet = alphabet or partition(name, [a for ast in asts for a in atoms(ast)])
    pipeline = Pipeline(alphabet, asts, semantics)
    pieces = pieces_of(stages_pre_tokenizer(stages))
    prover = PipelineProver(pipeline, bound)
    sets = pair_sets(alphabet)
    accepted = [p for p in sets if p.accepted or p.label in accepted_extra]
    proof = PipelineProof(name, bound, len(alphabet), len(asts), semantics,
                          faithfulness(pipeline, pieces, bound))
    for side in SIDES:
        result = prover.side(accepted, side)
        proof.accepted[side] = result
        if result.witness is not None and proof.accepted_counterexample is None:
            text, cut = alphabet.concretize(result.witness), result.cut
            cx = PairProof(next(p for p in accepted if alphabet_pair_matches(p, result.witness, cut)), {side: result},
                           text, cut, pieces(text), pieces(text[:cut]) + pieces(text[cut:]))
            cx.confirmed, cx.side = cx.pieces_whole != cx.pieces_split, side_of(pieces, text, cut)
            proof.accepted_counterexample = cx
    for pair in sets:
        if pair not in accepted:
            proof.pairs.append(_pair_proof(prover, pieces, pair))
    proof.seconds = time.perf_counter() - start
    return proof


def alphabet_pair_matches(pair: PairSet, word: tuple[int, ...], cut: int) -> bool:
    return word[cut - 1] in pair.left and word[cut] in pair.right


@cache
def prove_family_pipeline(family: str, bound: int = DEFAULT_BOUND) -> PipelineProof:
    """`prove_pipeline` for one of the six families, over its abstract alphabet."""
    return prove_pipeline(family, stages_of(family), bound, alphabet=family_alphabet(family))


@dataclass(frozen=True)
class Resync:
    """The pre-tokenizer's re-synchronization lemma for one pattern, to a length bound: proved, or a string, a
    window start and a common boundary after which the two piece streams still differ."""

    family: str
    bound: int
    proved_to: int
    seconds: float
    witness: tuple[int, ...] | None = None
    window_start: int | None = None
    common: int | None = None

    def as_dict(self, alphabet: Alphabet) -> dict:
        text = alphabet.concretize(self.witness) if self.witness is not None else None
        return {"family": self.family, "bound": self.bound, "proved_to": self.proved_to,
                "seconds": round(self.seconds, 3), "holds": self.witness is None and self.proved_to == self.bound,
                "counterexample": text, "window_start": self.window_start, "common_boundary": self.common}


def prove_resync(pipeline: Pipeline, name: str, bound: int) -> Resync:
    """Lemma (the pre-tokenizer half of the repair's splice): for every string s of n <= bound symbols, every
    window start 0 < w < n and every position b with w < b < n that is a piece boundary both of s and of the window
    s[w:] (shifted by w), the two piece streams have the same boundaries on [b, n]. So once the whole encode and a
    window encode share one piece boundary, every later piece agrees; what the repair still has to establish is
    such a common boundary inside its matched run (the sync witness gives one; equal tokens alone need not)."""
    start, proved = time.perf_counter(), 1
    k = len(pipeline.alphabet)
    for n in range(3, bound + 1):
        alg = Z3Algebra(n, k)
        whole = pipeline.boundaries(alg, 0, n)
        s = z3.Solver()
        s.set("timeout", SOLVER_TIMEOUT_MS)
        s.add(*alg.domain)
        w_var, b_var = z3.Int("w"), z3.Int("b")
        cases = []
        for w in range(1, n - 1):
            window = pipeline.boundaries(alg, w, n)
            for b in range(w + 1, n):
                later = z3.Or(*[whole[j] != window[j - w] for j in range(b + 1, n)]) if b + 1 < n else None
                if later is not None:
                    cases.append(z3.And(w_var == w, b_var == b, whole[b], window[b - w], later))
        if not cases:
            proved = n
            continue
        s.add(z3.Or(*cases))
        answer = s.check()
        if answer == z3.unknown:
            raise PipelineInconclusive(f"z3 returned unknown at length {n} ({s.reason_unknown()})")
        if answer == z3.sat:
            m = s.model()
            word = tuple(m.eval(c, model_completion=True).as_long() for c in alg.chars)
            return Resync(name, bound, proved, time.perf_counter() - start, word, m.eval(w_var).as_long(),
                          m.eval(b_var).as_long())
        proved = n
    return Resync(name, bound, proved, time.perf_counter() - start)


@cache
def family_resync(family: str, bound: int = DEFAULT_BOUND) -> Resync:
    """`prove_resync` for one of the six families over its abstract alphabet."""
    alphabet = family_alphabet(family)
    return prove_resync(Pipeline(alphabet, tuple(parse(r) for r in stages_of(family))), family, bound)

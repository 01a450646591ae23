"""z3 proofs that every accepted class transition is a clean piece boundary under each split pattern, with an
end-of-input argument, and confirmed counterexamples for every transition outside the set.

Setting. A Split stage (Isolated) cuts a string into the leftmost-first, non-overlapping matches of its regex
and the unmatched gaps between them. Let s be any string with s[p-1] = x, s[p] = y. The stage is *clean* at
(x, y) if its pieces of s are its pieces of s[:p] followed by its pieces of s[p:], whatever surrounds x and y.
Three obligations, each an emptiness question over the abstract alphabet that z3 decides, make a stage clean:

1. `no_straddle`: no string of the stage's language, lookaheads read as the empty word (a superset of what the
   engine can match), has an x·y factor. So every match ends at or before p or starts at or after p, and
   among candidate matches from a start q < p the engine sees the same strings, in the same priority order,
   on s and on s[:p].
2. `gap_free`: for every x in X and y in Y, the one-character string y, or the one-character string x, is
   matched with lookaheads read as the empty language (so it is matched whatever follows). If y is, a match
   starts at p whenever the scan reaches p; if x is, a match starts at p-1 whenever the scan reaches it and by
   (1) ends at p. Either way no unmatched gap straddles p. No match is empty (`no_empty_match`), so the scan
   always advances.
3. `lookahead_end`: no lookahead is evaluated at p by a match that started before p: what a match consumes
   before each lookahead never ends in a symbol of X. Lookaheads are the only constructs that read past a
   match's end, the patterns have no lookbehind or anchors (the parser refuses them), and each lookahead
   reads one character (`lookahead_one_char`); so matches ending at or before p are the same on s and on
   s[:p] (end of input), and matching from p is the same on s and on s[p:].

A stage is *transparent* at (x, y) if its pieces of s and of the two halves differ at most by one piece of s
that the halves split at p: (1) and (3) give that (the only difference is a gap around p), and so does a
stage that is a single run C+ (its matches are the maximal C-runs). For a sequence of stages (DeepSeek) the
pair is sound if some stage is clean and every earlier stage is transparent: later stages act on each piece
alone, and the clean stage applied to the piece around p separates it exactly as the halves are separated.

A pair outside the accepted set either gets the same proof (it is sound for this pattern and excluded
conservatively) or a z3 witness of the failing obligation, which is mapped to real characters (one
representative per symbol), put into a small context if needed, and confirmed with the reference
pre-tokenizer: the cut must really change the pieces. Timeouts and `unknown` raise `ProofInconclusive`.
`examine_family` then says how deep each refutation reaches on the provisioned tokenizers of the pattern
(`spec.proofs.depth`): pieces only, the byte-level units, or the reference IDs, searching further z3 models of
the failing obligation (each found model blocked) and the tokenizers' vocabularies for a witness that changes the
IDs; a refuted pair without one is "excluded, conservative".
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cache, partial

from delta_suite.frozen.errors import SuiteError
from delta_suite.frozen.loader import FrozenTokenizer
from delta_suite.spec.classes import CLASS_NAMES
from delta_suite.spec.families import stages_of
from delta_suite.spec.patterns import RECONSTRUCTED
from delta_suite.spec.proofs.alphabet import Alphabet, partition
from delta_suite.spec.proofs.depth import (
    CONTEXT_BOUND,
    FIRST_CONTEXT_BOUND,
    MODEL_BOUND,
    NO_TOKENIZER,
    VOCABULARY_BOUND,
    Exclusion,
    contexts,
    family_tokenizers,
    find_witness,
)
from delta_suite.spec.proofs.lazy_z3 import z3
from delta_suite.spec.proofs.pieces import Pieces, cut_changes_pieces, pieces_of, stages_pre_tokenizer
from delta_suite.spec.proofs.regex import Node, atoms, is_single_run, lookaheads, parse
from delta_suite.spec.proofs.z3_encoding import Encoder
from delta_suite.spec.transitions import APOSTROPHE, CR_LF, is_accepted_pair

SOLVER_TIMEOUT_MS = 60_000
_CHAR_NAMES = {"\r": "CR", "\n": "LF", "'": "'"}


class ProofInconclusive(SuiteError):
    """z3 answered unknown (or timed out): a proof obligation is neither proved nor refuted."""


@dataclass(frozen=True)
class Obligation:
    """One emptiness question: proved (unsat) or refuted with a witness over abstract symbols."""

    name: str
    stage: int
    pair: str
    proved: bool
    seconds: float
    witness: tuple[int, ...] | None = None
    cut: int | None = None


@dataclass(frozen=True)
class PairSet:
    """A transition X -> Y as sets of abstract symbols, accepted or not by spec.transitions."""

    label: str
    left_cls: int
    right_cls: int
    left: frozenset[int]
    right: frozenset[int]
    accepted: bool


@dataclass
class PairResult:
    pair: PairSet
    sound: bool
    separating_stage: int | None
    obligations: list[Obligation]
    witness: Obligation | None = None
    counterexample: str | None = None  # real characters, confirmed by the reference
    counterexample_cut: int | None = None
    pieces_whole: list[str] | None = None
    pieces_split: list[str] | None = None
    exclusion: Exclusion | None = None  # how deep the refutation reaches on the pattern's tokenizers (examine_ids)

    @property
    def confirmed(self) -> bool:
        return self.counterexample is not None


@dataclass
class FamilyProof:
    family: str
    symbols: int
    stages: int
    stage_obligations: list[Obligation]
    pairs: list[PairResult] = field(default_factory=list)
    solver_seconds: float = 0.0
    wall_seconds: float = 0.0
    ids_tokenizers: tuple[str, ...] | None = None  # the tokenizers the exclusions were checked on (None: not checked)
    alphabet: Alphabet | None = field(default=None, repr=False)
    provers: list[StageProver] = field(default_factory=list, repr=False)
    pieces: Pieces | None = field(default=None, repr=False)

    @property
    def obligations(self) -> list[Obligation]:
        return self.stage_obligations + [o for r in self.pairs for o in r.obligations]

    @property
    def obligations_proved(self) -> int:
        return sum(o.proved for o in self.obligations)

    def accepted(self) -> list[PairResult]:
        return [r for r in self.pairs if r.pair.accepted]

    def excluded(self) -> list[PairResult]:
        return [r for r in self.pairs if not r.pair.accepted]

    def accepted_failures(self) -> list[PairResult]:
        return [r for r in self.accepted() if not r.sound]

    def unresolved_exclusions(self) -> list[PairResult]:
        """Excluded pairs with neither a proof nor a reference-confirmed counterexample."""
        return [r for r in self.excluded() if not r.sound and not r.confirmed]

    def summary(self) -> dict:
        return {
            "family": self.family,
            "symbols": self.symbols,
            "stages": self.stages,
            "obligations_proved": self.obligations_proved,
            "obligations_total": len(self.obligations),
            "accepted_pairs_proved": {r.pair.label: r.separating_stage for r in self.accepted() if r.sound},
            "accepted_pairs_failed": [r.pair.label for r in self.accepted_failures()],
            "excluded_sound_conservative": {r.pair.label: r.separating_stage for r in self.excluded() if r.sound},
            "counterexamples": {
                r.pair.label: {
                    "text": r.counterexample,
                    "codepoints": [f"U+{ord(c):04X}" for c in r.counterexample],
                    "cut": r.counterexample_cut,
                    "obligation": r.witness.name if r.witness else None,
                    "stage": r.witness.stage if r.witness else None,
                    "pieces_whole": r.pieces_whole,
                    "pieces_split": r.pieces_split,
                    "verdict": r.exclusion.verdict if r.exclusion else "confirmed on pieces (IDs not examined)",
                }
                for r in self.excluded()
                if r.confirmed
            },
            "unresolved_exclusions": [r.pair.label for r in self.unresolved_exclusions()],
            "solver_seconds": round(self.solver_seconds, 3),
            "reconstruction": RECONSTRUCTED.get(self.family),
            **self.ids_summary(),
        }

    def ids_summary(self) -> dict:
        """Where the refutations reach on the pattern's provisioned tokenizers: per refuted pair its verdict, the
        first counterexample's and the witness's IDs (`spec.proofs.depth.Exclusion.as_dict`), and the counts by
        deepest stage; empty when the IDs were not examined (`prove_family` alone, without `examine_ids`)."""
        if self.ids_tokenizers is None:
            return {}
        exclusions = {r.pair.label: r.exclusion for r in self.excluded() if r.exclusion is not None}
        depths = Counter(e.depth for e in exclusions.values())
        counts = {"ids": depths["ids"], "units": depths["units"], "pieces": depths["pieces"]}
        counts["conservative"] = counts["units"] + counts["pieces"] if self.ids_tokenizers else 0
        return {
            "ids_checked_on": list(self.ids_tokenizers),
            "ids_note": None if self.ids_tokenizers else NO_TOKENIZER,
            "exclusions": {label: e.as_dict() for label, e in exclusions.items()},
            "exclusion_depths": counts,
            "witness_search": {"first_word_contexts": FIRST_CONTEXT_BOUND,
                               "vocabulary_texts_per_tokenizer": VOCABULARY_BOUND, "z3_models": MODEL_BOUND,
                               "contexts_per_model": CONTEXT_BOUND},
        }


def _check(solver: z3.Solver) -> tuple[bool, float]:
    """(sat?, seconds); unknown is never an answer."""
    start = time.perf_counter()
    answer = solver.check()
    seconds = time.perf_counter() - start
    if answer == z3.unknown:
        raise ProofInconclusive(f"z3 returned unknown ({solver.reason_unknown()})")
    return answer == z3.sat, seconds


def _solver() -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", SOLVER_TIMEOUT_MS)
    return s


class StageProver:
    """The obligations of one Split stage over one alphabet."""

    def __init__(self, enc: Encoder, ast: Node, index: int) -> None:
        self.enc = enc
        self.ast = ast
        self.index = index
        self.over = enc.regex(ast, "over")
        self.under = enc.regex(ast, "under")
        self.looks = lookaheads(ast)

    def lookahead_reads_one_character(self) -> Obligation:
        """Every lookahead's body matches only one-character strings (so one evaluated before p reads before p)."""
        total = 0.0
        for look in self.looks:
            w = z3.String("w")
            s = _solver()
            s.add(z3.InRe(w, self.enc.regex(look.item, "over")), z3.Length(w) != 1)
            sat, sec = _check(s)
            total += sec
            if sat:
                return Obligation("lookahead_one_char", self.index, "", False, total, self.enc.decode(s.model()[w]))
        return Obligation("lookahead_one_char", self.index, "", True, total)

    def no_empty_match(self) -> Obligation:
        """The stage never matches the empty string (so Split's scan always advances)."""
        s = _solver()
        s.add(z3.InRe(z3.StringVal(""), self.over))
        sat, sec = _check(s)
        return Obligation("no_empty_match", self.index, "", not sat, sec, () if sat else None)

    def _straddle_query(self, pair: PairSet) -> tuple[z3.Solver, list[z3.SeqRef]]:
        """Satisfiable iff the over-approximated language has a string w with a factor x·y."""
        w = z3.String("w")
        factor = z3.Concat(self.enc.any_string(), self.enc.symbols(pair.left), self.enc.symbols(pair.right),
                           self.enc.any_string())
        s = _solver()
        s.add(z3.InRe(w, z3.Intersect(self.over, factor)))
        return s, [w]

    def _straddle_witnesses(self, pair: PairSet, word: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
        return [(word, k) for k in range(1, len(word)) if word[k - 1] in pair.left and word[k] in pair.right]

    def no_straddle(self, pair: PairSet) -> Obligation:
        """No string of the over-approximated language has a factor x·y with x in X, y in Y."""
        s, (w,) = self._straddle_query(pair)
        sat, sec = _check(s)
        if not sat:
            return Obligation("no_straddle", self.index, pair.label, True, sec)
        word, cut = self._straddle_witnesses(pair, self.enc.decode(s.model()[w]))[0]
        return Obligation("no_straddle", self.index, pair.label, False, sec, word, cut)

    def _gap_query(self, pair: PairSet) -> tuple[z3.Solver, list[z3.SeqRef]]:
        """Satisfiable iff some x in X and y in Y are both not matched whatever follows."""
        a, b = z3.String("a"), z3.String("b")
        s = _solver()
        s.add(z3.Length(a) == 1, z3.Length(b) == 1)
        s.add(z3.InRe(a, self.enc.symbols(pair.left)), z3.Not(z3.InRe(a, self.under)))
        s.add(z3.InRe(b, self.enc.symbols(pair.right)), z3.Not(z3.InRe(b, self.under)))
        return s, [a, b]

    def gap_free(self, pair: PairSet) -> Obligation:
        """For all x in X, y in Y: "y" or "x" is matched whatever follows (lookaheads read as failing)."""
        s, (a, b) = self._gap_query(pair)
        sat, sec = _check(s)
        if not sat:
            return Obligation("gap_free", self.index, pair.label, True, sec)
        m = s.model()
        word = self.enc.decode(m[a]) + self.enc.decode(m[b])
        return Obligation("gap_free", self.index, pair.label, False, sec, word, 1)

    def _lookahead_queries(self, pair: PairSet) -> list[tuple[z3.Solver, list[z3.SeqRef]]]:
        """Per lookahead: satisfiable iff a match can consume a string ending in X before evaluating it."""
        out = []
        for look in self.looks:
            u = z3.String("u")
            prefix = self.enc.before(self.ast, look)
            s = _solver()
            s.add(z3.InRe(u, z3.Intersect(prefix, z3.Concat(self.enc.any_string(), self.enc.symbols(pair.left)))))
            out.append((s, [u]))
        return out

    def lookahead_end(self, pair: PairSet) -> Obligation:
        """No lookahead can be evaluated right after a symbol of X (so never at p by a match started before p)."""
        total = 0.0
        for s, (u,) in self._lookahead_queries(pair):
            sat, sec = _check(s)
            total += sec
            if sat:
                word = self.enc.decode(s.model()[u])
                return Obligation("lookahead_end", self.index, pair.label, False, total,
                                  word + (min(pair.right),), len(word))
        return Obligation("lookahead_end", self.index, pair.label, True, total)

    def models(self, obligation: str, pair: PairSet, limit: int) -> Iterator[tuple[tuple[int, ...], int, str]]:
        """Up to `limit` witnesses (abstract word, cut, "z3 model k of OBLIGATION") of a failing obligation, each
        from a further z3 model: every model found is blocked (its variables may not all take the same values
        again) before the next check. A lookahead_end model yields one witness per symbol of Y after it."""
        if obligation == "no_straddle":
            queries = [self._straddle_query(pair)]
        elif obligation == "gap_free":
            queries = [self._gap_query(pair)]
        elif obligation == "lookahead_end":
            queries = self._lookahead_queries(pair)
        else:
            raise ValueError(f"no models for obligation {obligation!r}")
        found = 0
        for query, free in queries:
            # a fresh context per enumeration: the models z3 picks then depend on this query alone, not on what
            # the process solved before (the default context's history changes them)
            context = z3.Context()
            s, variables = query.translate(context), [v.translate(context) for v in free]
            while found < limit and _check(s)[0]:
                m = s.model()
                values = [m.eval(v, model_completion=True) for v in variables]
                s.add(z3.Or(*[v != val for v, val in zip(variables, values, strict=True)]))
                words = [self.enc.decode(val) for val in values]
                if obligation == "no_straddle":
                    witnesses = self._straddle_witnesses(pair, words[0])
                elif obligation == "gap_free":
                    witnesses = [(words[0] + words[1], 1)]
                else:
                    witnesses = [(words[0] + (y,), len(words[0])) for y in sorted(pair.right)]
                for word, cut in witnesses:
                    if found < limit:
                        found += 1
                        yield word, cut, f"z3 model {found} of {obligation}"

    def is_run(self) -> bool:
        return is_single_run(self.ast)


def pair_sets(alphabet: Alphabet) -> list[PairSet]:
    """Every class pair, split by spec.transitions into its accepted part and its carved-out part.

    spec.transitions reads the right character only through its carve-out characters (CR, LF, apostrophe), and
    each of those is a block of its own, so acceptance is the same for every member of a block.
    """
    for ch in (*CR_LF, APOSTROPHE):
        block = alphabet.blocks[alphabet.symbol_of(ord(ch))]
        if block.ranges != ((ord(ch), ord(ch) + 1),):
            raise ProofInconclusive(f"carve-out character U+{ord(ch):04X} shares its block: {block.describe()}")
    out = []
    for lc in range(len(CLASS_NAMES)):
        left = alphabet.symbols_of_class(lc)
        for rc in range(len(CLASS_NAMES)):
            right = alphabet.symbols_of_class(rc)
            ok = frozenset(b for b in right if is_accepted_pair(lc, rc, alphabet.representative(b)))
            rejected = right - ok
            name = f"{CLASS_NAMES[lc]}→{CLASS_NAMES[rc]}"
            if ok:
                out.append(PairSet(name, lc, rc, left, ok, True))
                if rejected:
                    chars = "/".join(_CHAR_NAMES.get(alphabet.representative(b), alphabet.representative(b))
                                     for b in sorted(rejected))
                    out.append(PairSet(f"{CLASS_NAMES[lc]}→{chars}", lc, rc, left, rejected, False))
            elif right and left:
                out.append(PairSet(name, lc, rc, left, right, False))
    return out


def prove_pair(stages: list[StageProver], pair: PairSet) -> PairResult:
    """Sound if some stage is clean (no_straddle, gap_free, lookahead_end) and every earlier one transparent."""
    obligations: list[Obligation] = []
    failing: Obligation | None = None
    for stage in stages:
        straddle = stage.no_straddle(pair)
        end = stage.lookahead_end(pair)
        gap = stage.gap_free(pair)
        obligations += [straddle, end, gap]
        if straddle.proved and end.proved and gap.proved:
            return PairResult(pair, True, stage.index, obligations)
        transparent = (straddle.proved and end.proved) or stage.is_run()
        first_failed = next(o for o in (straddle, end, gap) if not o.proved)
        if failing is None or not transparent:
            failing = first_failed
        if not transparent:
            break
    return PairResult(pair, False, None, obligations, witness=failing)


def confirm(pieces: Pieces, alphabet: Alphabet, result: PairResult) -> None:
    """Map the witness to real characters and find a context in which the reference's pieces change at the cut.

    A language-level witness can be spurious under leftmost-first priority (another alternative claims its
    first characters), which a context of up to two symbols before it resolves for these patterns.
    """
    w = result.witness
    if w is None or w.witness is None or w.cut is None:
        return
    core = alphabet.concretize(w.witness)
    for before, after in contexts(alphabet, result.pair.left, result.pair.right):
        text, cut = before + core + after, len(before) + w.cut
        if cut_changes_pieces(pieces, text, cut):
            result.counterexample, result.counterexample_cut = text, cut
            result.pieces_whole = pieces(text)
            result.pieces_split = pieces(text[:cut]) + pieces(text[cut:])
            return


@cache
def prove_stages(name: str, stages: tuple[str, ...]) -> FamilyProof:
    """Every obligation of every class pair for one sequence of Split stages, with counterexamples confirmed."""
    start = time.perf_counter()
    asts = [parse(regex) for regex in stages]
    alphabet = partition(name, [a for ast in asts for a in atoms(ast)])
    enc = Encoder(alphabet)
    provers = [StageProver(enc, ast, i) for i, ast in enumerate(asts)]
    stage_obligations = [o for s in provers for o in (s.no_empty_match(), s.lookahead_reads_one_character())]
    pieces = pieces_of(stages_pre_tokenizer(stages))
    proof = FamilyProof(name, len(alphabet), len(provers), stage_obligations, alphabet=alphabet, provers=provers,
                        pieces=pieces)
    for pair in pair_sets(alphabet):
        result = prove_pair(provers, pair)
        if not result.sound:
            confirm(pieces, alphabet, result)
        proof.pairs.append(result)
    proof.solver_seconds = sum(o.seconds for o in proof.obligations)
    proof.wall_seconds = time.perf_counter() - start
    return proof


def examine_ids(proof: FamilyProof, tokenizers: tuple[FrozenTokenizer, ...]) -> FamilyProof:
    """A copy of `proof` whose refuted (excluded, confirmed) pairs carry how deep their refutation reaches on
    `tokenizers` (`spec.proofs.depth.find_witness`: the first counterexample, then its word in more contexts, the
    tokenizers' vocabulary entries and further z3 models of the same failing obligation, until the reference IDs
    differ on one of them)."""
    start = time.perf_counter()
    pairs = []
    for r in proof.pairs:
        if (not r.pair.accepted and r.confirmed and r.witness is not None and proof.pieces is not None
                and proof.alphabet is not None):
            w = r.witness
            models = partial(proof.provers[w.stage].models, w.name, r.pair, MODEL_BOUND)
            first = (w.witness, w.cut, "first witness's word") if w.witness is not None and w.cut is not None else None
            r = replace(r, exclusion=find_witness(r.pair.label, tokenizers, proof.pieces, proof.alphabet,
                                                  r.pair.left, r.pair.right, r.counterexample,
                                                  r.counterexample_cut, first, models))
        pairs.append(r)
    return replace(proof, pairs=pairs, ids_tokenizers=tuple(t.name for t in tokenizers),
                   wall_seconds=proof.wall_seconds + time.perf_counter() - start)


def prove_family(family: str) -> FamilyProof:
    """`prove_stages` for one of the six pattern families of spec.patterns (pattern level: pieces only)."""
    return prove_stages(family, stages_of(family))


@cache
def examine_family(family: str) -> FamilyProof:
    """`prove_family` with every refutation examined on the family's provisioned tokenizers (`examine_ids`):
    its summary says per refuted pair how deep the counterexample reaches, with the IDs."""
    return examine_ids(prove_family(family), family_tokenizers(family))
